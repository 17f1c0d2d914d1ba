"""A bad game state, calibration or profile says which field is wrong, in one line: never a traceback, a
silent default or a size the rules do not allow."""
import json
import math

import pytest

from calibration import default_profile
from calibration.calfile import load_calibration
from calibration.errors import CalibrationError
from calibration.profile import ProfileError, profile_from_dict
from judge import cli
from judge.errors import UserError
from judge.replay import load_state
from rules import engine_for
from test_live import live_setup, write_calibration  # noqa: F401 - the live command's fixture

NOVUSS = engine_for("novuss", default_profile("novuss").geometry)
CVRNKANA = engine_for("cvrnkana", default_profile("cvrnkana").geometry)


def _edit(doc, path, value):
    """``doc`` with the value at ``path`` (keys and indexes) replaced, or removed where ``value`` is ``...``."""
    doc = json.loads(json.dumps(doc))
    at = doc
    for key in path[:-1]:
        at = at[key]
    if value is ...:
        del at[path[-1]]
    else:
        at[path[-1]] = value
    return doc


NOVUSS_CASES = [
    (("positions", "A3", 0), "x", "positions.A3[0]: must be a finite number, got 'x'"),
    (("positions", "A3", 1), math.nan, "positions.A3[1]: must be a finite number, got nan"),
    (("positions", "A3"), [1], "positions.A3: must be [x_mm, y_mm], got [1]"),
    (("positions",), [], "positions: must be an object, got []"),
    (("positions", "Z9"), [0, 0], "positions.Z9: unknown piece 'Z9' for novuss"),
    (("positions", "A3"), [1e9, 0], "positions.A3: (1e+09, 0) mm is off the novuss surface (at most 545 mm from its centre)"),
    (("pocketed",), "A3", "pocketed: must be a list of piece ids, got 'A3'"),
    (("pocketed",), ["A3"], "pocketed[0]: A3 is also in positions (a pawn in two places)"),
    (("debt", "A"), -5, "debt.A: must be a whole number from 0 to 10000, got -5"),
    (("debt",), ..., "debt: is missing"),
    (("to_move",), "C", "to_move: must be 'A' or 'B', got 'C'"),
    (("shot",), 10 ** 30, "shot: must be a whole number from 0 to 1000000, got 1000000000000000000000000000000"),
    (("shot",), 1.5, "shot: must be a whole number from 0 to 1000000, got 1.5"),
    (("outcome",), {"x": 1}, "outcome.result: must be one of win, draw, replay, got None"),
    (("outcome",), {"result": "win", "winner": None, "reason": "x"}, "outcome.winner: must be 'A' or 'B', got None"),
    (("game",), "cvrnkana", "game: must be 'novuss', got 'cvrnkana'"),
]
CVRNKANA_CASES = [
    (("field", "A1"), [1], "field.A1: must be [x_mm, y_mm], got [1]"),
    (("field", "A1"), [0, 99999], "field.A1: (0, 99999) mm is off the cvrnkana surface (at most 6000 mm from its centre)"),
    (("marbles", "B"), ..., "marbles.B: must be a whole number from 0 to 40, got None"),
    (("final_flick",), "yes", "final_flick: must be true or false, got 'yes'"),
    (("game_number",), 0, "game_number: must be a whole number from 1 to 1000, got 0"),
    (("behind", 0), "A99", "behind[0]: unknown piece 'A99' for cvrnkana"),
    (("behind", 1), "A2", "behind[1]: A2 is listed twice"),
]


def _state_file(tmp_path, doc):
    path = tmp_path / "start.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


@pytest.mark.parametrize("engine, path, value, message", [(NOVUSS, *c) for c in NOVUSS_CASES]
                         + [(CVRNKANA, *c) for c in CVRNKANA_CASES])
def test_a_bad_state_names_the_field(tmp_path, engine, path, value, message):
    good = engine.initial().to_dict()
    if engine is CVRNKANA:
        good = _edit(_edit(good, ("field",), {"A1": [100.0, 200.0]}), ("behind",), good["behind"][1:])
        assert engine.state_from_dict(good).to_dict() == good  # the base case is a good state
    state = _state_file(tmp_path, _edit(good, path, value))
    with pytest.raises(ValueError) as exc:
        load_state(engine, state)
    assert str(exc.value) == f"--state {state}: {message}"


@pytest.mark.parametrize("text, message", [
    pytest.param("[1, 2]", "state: must be a JSON object, got list", id="list"),
    pytest.param("[" * 100_000 + "]" * 100_000, "JSON nested too deeply to be a game state", id="deep"),
    pytest.param('{"shot": ' + "9" * 5000 + "}", "not a JSON state file (Exceeds the limit", id="5000-digits"),
    pytest.param("{", "not a JSON state file (Expecting property name", id="cut"),
])
def test_a_state_file_that_is_no_state_at_all(tmp_path, text, message):
    state = tmp_path / "start.json"
    state.write_text(text)
    with pytest.raises((ValueError, UserError)) as exc:
        load_state(NOVUSS, state)
    assert str(exc.value).startswith(f"--state {state}: {message}")


def test_live_with_a_bad_state_is_one_line_and_starts_no_journal(live_setup, capsys):  # noqa: F811
    tmp_path, args, _, _ = live_setup
    state = _state_file(tmp_path, _edit(NOVUSS.initial().to_dict(), ("positions", "A3", 0), "x"))
    assert cli.main(args + ["--state", str(state)]) == 2
    assert capsys.readouterr().err == (f"shotjudge live: error: --state {state}: positions.A3[0]: must be a finite "
                                       f"number, got 'x'\n")
    assert not (tmp_path / "j.sqlite").exists()


def test_replay_refused_after_judging_says_only_its_line(tmp_path, capsys):
    """No progress bar for a script reading stderr: a refusal is its one line."""
    from bench.fuzz_inputs import blank_video, write_calibration as calibrate_96x64

    video = blank_video(tmp_path / "video")
    calibrate_96x64(tmp_path / "cal.json", "novuss")
    assert cli.main(["replay", str(video), "--fps", "30", "--game", "novuss", "--calibration", str(tmp_path / "cal.json"),
                     "--background", str(video / "f0.png"), "--shot", "1"]) == 2
    assert capsys.readouterr().err == "shotjudge replay: error: --shot 1: the video has 0 judged shot(s)\n"


# ----- calibration files ----------------------------------------------------------------------------------
@pytest.fixture
def calibration(tmp_path):
    path = tmp_path / "cal.json"
    write_calibration(path, (96, 64))
    return path, json.loads(path.read_text())


@pytest.mark.parametrize("path, value, message", [
    (("distortion", 2), "x", "distortion[2]: must be a finite number, got 'x'"),
    (("distortion", 0), {}, "distortion[0]: must be a finite number, got {}"),
    (("camera_matrix", 0, 0), True, "camera_matrix[0][0]: must be a finite number, got True"),
    (("camera_matrix", 1, 2), 10 ** 400, "camera_matrix[1][2]: must be a finite number, got 1000000000000000000000"),
    (("camera_matrix", 2, 2), 2, "camera_matrix: must be [[fx, skew, cx], [0, fy, cy], [0, 0, 1]]"),
    (("camera_matrix", 0, 0), -1, "camera_matrix: the focal lengths [0][0] and [1][1] must be positive"),
    (("camera_matrix", 0, 2), 5000, "camera_matrix: the principal point (5000, 32) px lies outside the 96x64 picture"),
    (("homography_image_to_board", 1), [0, 0, 0], "homography_image_to_board: image->board homography is singular"),
    (("homography_image_to_board", 1, 1), "x", "homography_image_to_board[1][1]: must be a finite number, got 'x'"),
    (("image_size", 0), 10 ** 19, "image_size must be [width, height] in pixels, got [10000000000000000000, 64]"),
    (("intrinsics",), "x", "intrinsics must be an object with source and rms_px, got 'x'"),
    (("intrinsics", "source"), 5, "intrinsics.source must be one of charuco, nominal, file, known, got 5"),
    (("created",), 5, "created must be a date as text, got 5"),
    (("residuals", "points"), 10 ** 30, "residuals.points must be a whole number from 4 to 1000000, got 1000000000000"),
    (("profile", "geometry", "pawn_height_mm"), "x", "profile: novuss-default: geometry.pawn_height_mm must be a "
                                                     "positive number, got 'x'"),
    (("profile", "defaults_unconfirmed"), "x", "profile: novuss-default: defaults_unconfirmed must be true or false"),
    (("profile", "geometry", "pawn_diameter_mm"), 1e19, "profile: novuss-default: geometry.pawn_diameter_mm (1e+19 mm) "
                                                        "must be smaller than a pocket (2 x pocket_radius_mm = 90 mm)"),
])
def test_a_bad_calibration_names_the_field(calibration, path, value, message):
    file, good = calibration
    file.write_text(json.dumps(_edit(good, path, value)))
    with pytest.raises(CalibrationError) as exc:
        load_calibration(file)
    assert str(exc.value).startswith(f"{file}: {message}")
    assert "\n" not in str(exc.value)


def test_live_with_a_bad_calibration_is_one_line(live_setup, capsys):  # noqa: F811
    tmp_path, args, _, _ = live_setup
    cal = tmp_path / "cal.json"
    cal.write_text(json.dumps(_edit(json.loads(cal.read_text()), ("distortion", 1), "x")))
    assert cli.main(args) == 2
    assert capsys.readouterr().err == f"shotjudge live: error: {cal}: distortion[1]: must be a finite number, got 'x'\n"
    assert not (tmp_path / "j.sqlite").exists()


# ----- sizes: the rules' limits on the equipment ----------------------------------------------------------
@pytest.mark.parametrize("game, key, value, message", [
    ("cvrnkana", "marble_max_mm", 20.0, "geometry.marble_max_mm must be 10-16.5 mm (rules clause 5), got 20"),
    ("cvrnkana", "marble_min_mm", 5.0, "geometry.marble_min_mm must be 10-16.5 mm (rules clause 5), got 5"),
    ("cvrnkana", "pit_diameter_mm", 130.0, "geometry.pit_diameter_mm must be 50-120 mm (rules clause 6), got 130"),
    ("novuss", "bat_diameter_mm", 95.0, "geometry.bat_diameter_mm (95 mm) must be smaller than a pocket"),
    ("novuss", "pocket_radius_mm", 600.0, "geometry.pocket_radius_mm must be less than half the board's surface_mm"),
])
def test_a_profile_with_sizes_the_rules_do_not_allow_is_refused(game, key, value, message):
    doc = default_profile(game).to_dict()
    doc["geometry"][key] = value
    with pytest.raises(ProfileError) as exc:
        profile_from_dict(doc, "club.json")
    assert str(exc.value).startswith(f"club.json: {message}")


def test_referee_with_a_profile_of_impossible_sizes_is_one_line(tmp_path, capsys):
    doc = default_profile("cvrnkana").to_dict()
    doc["geometry"].update(marble_max_mm=30.0, marble_diameter_mm=25.0)
    profile, shots = tmp_path / "club.json", tmp_path / "shots.jsonl"
    profile.write_text(json.dumps(doc))
    shots.write_text("")
    assert cli.main(["referee", "--game", "cvrnkana", "--profile", str(profile), str(shots)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "geometry.marble_max_mm must be 10-16.5 mm (rules clause 5), got 30" in err
