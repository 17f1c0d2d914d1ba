"""``shotjudge sim --out DIR`` then ``shotjudge replay`` with exactly the files sim wrote: the calls from the
video are the simulator's own, shot by shot; the calibration sim writes is its camera, exactly; and
``calibrate`` on the sim's video, given that lens, fits the markers without the over-1-mm warning."""
from __future__ import annotations

import contextlib
import errno
import io
import json
import pathlib
import shlex

import numpy as np
import pytest

from calibration.calfile import load_calibration
from calibration.camera import Camera
from calibration.profile import default_profile
from judge.cli import main
from sim.replay_inputs import start_state
from sim.scenarios import build

SIZE = "640x360"  # 60 fps (sim's default): contacts are told apart; small frames keep the test short
#: a mid-game Novuss layout (the replay is wrong without the start state) and a Cvrnkaná flick into the pit
CASES = [("novuss", "two-pocketed"), ("cvrnkana", "pit-entry")]
FILES = ["calibration.json", "empty-board.png", "start-state.json", "truth.json", "video.mp4"]


@pytest.fixture(scope="module", params=CASES, ids=[f"{g}-{s}" for g, s in CASES])
def simulated(request, tmp_path_factory):
    """(game, scenario, sim's output folder, the lines sim printed), one sim run per case."""
    game, scenario = request.param
    out = tmp_path_factory.mktemp("sim") / "d"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(["sim", game, "--scenario", scenario, "--size", SIZE, "--out", str(out)]) == 0
    return game, scenario, out, printed.getvalue().splitlines()


def _calls(ruling) -> tuple[list[str], str | None]:
    return [c["code"] for c in ruling["calls"]], ruling.get("next_player")


@pytest.mark.slow
def test_sim_then_replay_gives_the_truths_calls(simulated):
    game, _, out, lines = simulated
    assert sorted(p.name for p in out.iterdir()) == FILES
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".")]  # no staging folder left
    # the command sim prints is the one that replays it: the same files, in the same places
    hint = next(line for line in lines if line.startswith("judge it: "))
    argv = shlex.split(hint.removeprefix("judge it: "))
    assert argv == ["shotjudge", "replay", str(out / "video.mp4"), "--game", game,
                    "--calibration", str(out / "calibration.json"), "--background", str(out / "empty-board.png"),
                    "--state", str(out / "start-state.json"), "--report", str(out / "report.json")]
    assert main([*argv[1:], "--quiet"]) == 0
    truth = json.loads((out / "truth.json").read_text())
    report = json.loads((out / "report.json").read_text())
    want = [_calls(s["ruling"]) for s in truth["shots"]]
    got = [_calls(s["ruling"]) for s in report["shots"]]
    assert len(want) >= 1 and got == want
    assert report["start"]["from"] == str(out / "start-state.json")


@pytest.mark.slow
def test_sim_writes_its_exact_camera_and_start_state(simulated, tmp_path, capsys):
    game, scenario, out, _ = simulated
    truth = json.loads((out / "truth.json").read_text())
    camera = Camera.from_dict(truth["camera"])
    cal = load_calibration(out / "calibration.json")
    assert cal.profile.to_dict()["geometry"] == default_profile(game).to_dict()["geometry"]
    assert (cal.rms_mm, cal.max_mm, cal.intrinsics_source) == (0.0, 0.0, "known")
    # board points projected by the sim's camera come back to the same millimetres through the calibration
    grid = np.array([(x, y) for x in (-400.0, 0.0, 300.0) for y in (-300.0, 0.0, 250.0)])
    np.testing.assert_allclose(cal.plane.to_board_mm(camera.project(grid)), grid, atol=1e-6)
    ep = build(game, scenario, default_profile(game), truth["seed"])
    assert json.loads((out / "start-state.json").read_text()) == json.loads(json.dumps(start_state(ep.session)))
    # calibrating from the sim's own video with the sim's lens: the markers agree with the camera, no warning
    assert main(["calibrate", "--game", game, "--source", str(out / "video.mp4"), "--lens-from",
                 str(out / "calibration.json"), "--out", str(tmp_path / "fitted.json"), "--max-frames", "1"]) == 0
    said = capsys.readouterr().out
    assert "warning" not in said and "residual" in said
    fitted = load_calibration(tmp_path / "fitted.json")
    assert fitted.rms_mm < 1.0  # corner detection at ~0.3 px/mm (640x360), the lens exact: no warning
    np.testing.assert_allclose(fitted.plane.to_board_mm(camera.project(grid)), grid, atol=1.0)


def test_a_replay_input_that_cannot_be_written_leaves_the_older_output(tmp_path, monkeypatch, capsys):
    import sim.replay_inputs

    out = tmp_path / "d"
    base = ["sim", "novuss", "--scenario", "bat-off", "--fps", "30", "--size", "320x180", "--out", str(out)]
    assert main(base) == 0
    capsys.readouterr()
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert sorted(before) == FILES

    def full(calibration, path):  # half the file, then the disk is full
        pathlib.Path(path).write_text('{"schema": ')
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(sim.replay_inputs, "save_calibration", full)
    assert main(base[:-2] + ["--seed", "2", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err == f"shotjudge sim: error: cannot write {out / 'calibration.json'}: No space left on device\n"
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert [p.name for p in tmp_path.iterdir()] == ["d"]  # no staging folder left
