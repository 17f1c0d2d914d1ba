"""Options checked where they enter: each bad value is one line naming the option, exit 2, nothing run."""
import json

import pytest

from judge import cli

LIVE = ["live", "--game", "novuss", "--source", "nothing.mp4", "--calibration", "nothing.json"]
REPLAY = ["replay", "nothing.mp4", "--game", "novuss", "--calibration", "nothing.json"]


@pytest.mark.parametrize("args, option, value", [
    (LIVE + ["--fps", "nan"], "--fps", "nan"), (LIVE + ["--fps", "inf"], "--fps", "inf"),
    (LIVE + ["--fps", "1e9"], "--fps", "1e9"), (LIVE + ["--fps", "0.001"], "--fps", "0.001"),
    (REPLAY + ["--fps", "-5"], "--fps", "-5"), (REPLAY + ["--fps", "thirty"], "--fps", "thirty"),
    (["demo", "--fps", "0"], "--fps", "0"),
])
def test_a_frame_rate_must_be_1_to_1000_frames_per_second(args, option, value, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_:
        cli.main(args)
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.endswith(f"error: argument {option}: must be frames per second from 1 to 1000, got {value!r}")
    assert list(tmp_path.iterdir()) == []  # nothing written


@pytest.mark.parametrize("option, value, bounds", [
    ("--queue", "0", "from 1 to 100000"), ("--queue", "-3", "from 1 to 100000"), ("--queue", "ten", "from 1 to 100000"),
    ("--overlay-port", "-1", "from 1 to 65535"), ("--overlay-port", "70000", "from 1 to 65535"),
    ("--max-reconnects", "-1", "from 0 to 1000"),
])
def test_counts_and_ports_are_checked(option, value, bounds, capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(LIVE + [option, value])
    assert exit_.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].endswith(
        f"error: argument {option}: must be a whole number {bounds}, got {value!r}")


@pytest.mark.parametrize("game, ruleset, message", [
    ("novuss", "bogus", "unknown ruleset 'bogus' (known: novuss, novuss-seed, cvrnkana)"),
    ("cvrnkana", "novuss-seed", "ruleset 'novuss-seed' is for novuss, not cvrnkana"),
    ("novuss", "cvrnkana", "ruleset 'cvrnkana' is for cvrnkana, not novuss"),
])
def test_a_ruleset_unknown_or_of_another_game_is_one_line(game, ruleset, message, capsys, tmp_path):
    records = tmp_path / "shots.json"
    records.write_text(json.dumps([]))
    assert cli.main(["referee", "--game", game, "--ruleset", ruleset, str(records)]) == 2
    assert capsys.readouterr().err.strip() == f"shotjudge referee: error: {message}"


def test_a_disk_that_refuses_a_write_is_one_line(monkeypatch, capsys, tmp_path):
    import errno

    import judge.cmd_referee

    def full(args):
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "out.json"))

    monkeypatch.setattr(judge.cmd_referee, "run", full)
    assert cli.main(["referee", "--game", "novuss", "x.json"]) == 2
    assert capsys.readouterr().err == f"shotjudge referee: error: {tmp_path / 'out.json'}: No space left on device\n"


def test_an_internal_bug_is_one_line_and_its_trace_is_kept_in_a_file(monkeypatch, capsys, tmp_path):
    import judge.cmd_referee

    def bug(args):
        return {}["no such key"]

    monkeypatch.setattr(judge.cmd_referee, "run", bug)
    monkeypatch.delenv("SHOTJUDGE_TRACEBACK", raising=False)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", None)  # TMPDIR is read again
    assert cli.main(["referee", "--game", "novuss", "x.json"]) == 70
    err = capsys.readouterr().err
    crash = sorted(tmp_path.glob("shotjudge-crash-*.txt"))
    assert len(crash) == 1 and err.count("\n") == 1
    assert err == (f"shotjudge referee: internal error: KeyError: 'no such key' (the full trace is in {crash[0]}; "
                   f"please report it)\n")
    assert "Traceback (most recent call last)" in crash[0].read_text() and "KeyError" in crash[0].read_text()
    monkeypatch.setenv("SHOTJUDGE_TRACEBACK", "1")  # a developer wants the trace itself
    with pytest.raises(KeyError):
        cli.main(["referee", "--game", "novuss", "x.json"])
