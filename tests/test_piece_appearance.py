"""Piece colours as calibration data: profile defaults, measured colours in the calibration file, merging."""
from __future__ import annotations

import dataclasses
import json

import cv2
import numpy as np
import pytest

from calibration import ProfileError, default_profile
from calibration.appearance import appearance_from_dict
from calibration.calfile import Calibration, load_calibration, save_calibration
from calibration.errors import CalibrationError
from calibration.plane import PlaneMap
from calibration.profile import profile_from_dict


def test_shipped_profiles_have_every_class_and_round_trip():
    for game, classes in (("novuss", {"pawn_A", "pawn_B", "bat"}), ("cvrnkana", {"marble_A", "marble_B"})):
        p = default_profile(game)
        assert set(p.appearance.pieces) == classes
        again = profile_from_dict(json.loads(json.dumps(p.to_dict())), "again")
        assert again.appearance == p.appearance
    green = default_profile("novuss").appearance.pieces["bat"].rgb
    assert green[1] > green[0] and green[1] > green[2]  # the bat is green


@pytest.mark.parametrize("change, message", [
    (lambda a: a["pieces"].pop("bat"), "pieces.bat is missing"),
    (lambda a: a["pieces"].update(marble_A={"rgb": [1, 2, 3], "spread": 0.1}), "not a novuss class"),
    (lambda a: a["pieces"]["pawn_A"].update(rgb=[300, 0, 0]), "pieces.pawn_A.rgb must be"),
    (lambda a: a["pieces"]["pawn_B"].update(spread=0), "spread must be a number in (0, 1]"),
])
def test_bad_appearance_in_a_profile_is_a_one_line_error(change, message):
    d = default_profile("novuss").to_dict()
    change(d["appearance"])
    with pytest.raises(ProfileError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        profile_from_dict(d, "club.json")


def _calibration(profile, size=(640, 360)):
    from sim.render_settings import RenderSettings, make_camera

    cam = make_camera(profile, size[0], size[1], RenderSettings(seed=1))
    plane = PlaneMap((cam.width, cam.height), cam.K, np.asarray(cam.dist, float), np.linalg.inv(cam.board_to_undistorted()))
    return Calibration(profile, plane, 0.0, 0.0, 0.0, 4, "manual", (), "known", None, "test"), cam


def test_measured_colours_are_kept_in_the_calibration_file_and_merged_with_the_profile(tmp_path):
    profile = default_profile("novuss")
    cal, _ = _calibration(profile)
    measured = appearance_from_dict({"board_rgb": [101, 80, 53], "pieces": {"pawn_A": {"rgb": [200, 200, 190],
                                     "spread": 0.09}}, "source": "measured"}, "novuss", complete=False)
    path = save_calibration(cal.with_appearance(measured), tmp_path / "cal.json")
    back = load_calibration(path)
    assert back.appearance == measured and back.profile.appearance == profile.appearance
    merged = back.piece_appearance()
    assert merged.pieces["pawn_A"] == measured.pieces["pawn_A"]
    # classes not measured: the profile's, rescaled to the measured board's white balance (half as bright)
    assert merged.pieces["bat"].rgb == pytest.approx(tuple(v / 2 for v in profile.appearance.pieces["bat"].rgb), abs=0.6)
    data = json.loads(path.read_text())
    data["appearance"]["pieces"]["pawn_A"]["rgb"] = [1, 2]
    path.write_text(json.dumps(data))
    with pytest.raises(CalibrationError, match="pieces.pawn_A.rgb"):
        load_calibration(path)


def test_old_calibration_without_colours_gets_the_shipped_defaults(tmp_path):
    profile = dataclasses.replace(default_profile("novuss"), appearance=None)
    cal, _ = _calibration(profile)
    back = load_calibration(save_calibration(cal, tmp_path / "cal.json"))
    assert back.profile.appearance is None
    assert back.piece_appearance() == default_profile("novuss").appearance


def test_calibrate_pieces_measures_the_opening_layout(tmp_path):
    """``shotjudge calibrate --pieces``: colours of both players' pawns measured on the opening layout."""
    import rules
    from judge.cmd_calibrate import measure_pieces
    from judge.errors import UserError
    from sim.render import Renderer
    from sim.render_settings import RenderSettings

    profile = default_profile("novuss")
    cal, cam = _calibration(profile)
    renderer = Renderer(cam, profile, RenderSettings(seed=1))
    layout = {k: tuple(v) for k, v in rules.engine_for("novuss", profile.geometry).initial().to_dict()["positions"].items()}
    cv2.imwrite(str(tmp_path / "empty.png"), renderer.render(_frame(profile, {})))
    cv2.imwrite(str(tmp_path / "opening.png"), renderer.render(_frame(profile, layout)))
    got = measure_pieces(cal, str(tmp_path / "opening.png"), str(tmp_path / "empty.png")).appearance
    assert got.source == "measured" and set(got.pieces) == {"pawn_A", "pawn_B"}
    a, b = got.pieces["pawn_A"].rgb, got.pieces["pawn_B"].rgb
    assert min(a) > 150 and b[0] > 2 * b[1]  # ivory; dark red
    with pytest.raises(UserError, match="needs --background"):
        measure_pieces(cal, str(tmp_path / "opening.png"), None)


def _frame(profile, layout):
    from sim.frames import PieceState, SimFrame

    r = {"pawn": profile["pawn_diameter_mm"] / 2}
    return SimFrame(0, 0.0, tuple(PieceState(k, "pawn", k[0], x, y, 0.0, 0.0, r["pawn"], True)
                                  for k, (x, y) in layout.items()), ())
