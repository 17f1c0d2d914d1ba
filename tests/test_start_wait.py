"""``live --start-from-board`` never waits in silence: a reminder a minute, and ``--confirm-timeout`` ends the wait
with a one-line error naming the flag (on a fake gate and clock: no minute passes for real)."""
from __future__ import annotations

import io

import pytest
from rich.console import Console

from judge import cli
from judge.cmd_live import StartNotConfirmed, _wait_for_start


class Clock:
    def __init__(self):
        self.now_s = 500.0

    def __call__(self) -> float:
        return self.now_s


class Gate:
    """Confirmed once the clock reaches ``confirm_at_s`` (None: never); waiting moves the clock on."""

    def __init__(self, clock: Clock, confirm_at_s: float | None = None):
        self.clock, self.confirm_at_s, self.waits = clock, confirm_at_s, []

    def wait(self, timeout_s: float) -> bool:
        assert 0.0 <= timeout_s <= 0.5
        self.waits.append(timeout_s)
        self.clock.now_s += timeout_s
        return self.confirm_at_s is not None and self.clock.now_s >= self.confirm_at_s


class Server:
    url = "http://127.0.0.1:8080/"


def _console():
    out = io.StringIO()
    return Console(file=out, width=300, highlight=False), out


def test_a_reminder_each_minute_until_the_referee_confirms():
    clock = Clock()
    gate = Gate(clock, confirm_at_s=500.0 + 150.25)
    console, out = _console()
    _wait_for_start(gate, Server(), console, None, clock=clock)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("waiting for the referee to confirm the start state: on the overlay page "
                               "http://127.0.0.1:8080/ (referee mode), or POST http://127.0.0.1:8080/api/referee/start-state")
    assert lines[1:] == ["still waiting for the referee to confirm the start state (1 min)...",
                         "still waiting for the referee to confirm the start state (2 min)...",
                         "start state confirmed by the referee"]
    assert clock.now_s == pytest.approx(650.5)  # half-second waits: confirmed within one of them


def test_the_wait_ends_at_the_timeout_naming_the_flag():
    clock = Clock()
    gate = Gate(clock)
    console, out = _console()
    with pytest.raises(StartNotConfirmed) as exc:
        _wait_for_start(gate, Server(), console, 61.2, clock=clock)
    assert str(exc.value) == "the referee did not confirm the start state within 61.2 s (--confirm-timeout 61.2)"
    assert clock.now_s == pytest.approx(561.2)  # not a wait past the limit
    assert out.getvalue().splitlines()[1:] == ["still waiting for the referee to confirm the start state (1 min)..."]


def test_confirmed_in_time_is_no_error():
    clock = Clock()
    console, out = _console()
    _wait_for_start(Gate(clock, confirm_at_s=501.0), Server(), console, 2.0, clock=clock)
    assert out.getvalue().splitlines()[-1] == "start state confirmed by the referee"


@pytest.mark.parametrize("value", ["0", "-3", "nan", "soon"])
def test_a_bad_timeout_is_a_one_line_error(value, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["live", "--game", "novuss", "--source", "x", "--calibration", "c.json", "--start-from-board",
                  "--confirm-timeout", value])
    assert exc.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"shotjudge live: error: argument --confirm-timeout: must be a number of seconds above 0, got {value!r}")


def test_a_timeout_without_start_from_board_is_refused(capsys):
    assert cli.main(["live", "--game", "novuss", "--source", "x", "--calibration", "c.json",
                     "--confirm-timeout", "30"]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "shotjudge live: error: --confirm-timeout is how long live waits for the referee to confirm "
        "--start-from-board's proposal: give --start-from-board, or drop --confirm-timeout")
