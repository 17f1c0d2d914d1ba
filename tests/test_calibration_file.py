"""The calibration file: round trip, strict refusal of bad files, and the calibrate/markers commands."""
import json

import cv2
import numpy as np
import pytest

from calibration import default_profile
from calibration.calfile import Calibration, load_calibration, save_calibration
from calibration.camera import Camera
from calibration.errors import CalibrationError
from calibration.overlay import draw_overlay
from calibration.plane import fit_markers
from judge.cli import main
from sim.synthetic_board import render_board

NOVUSS = default_profile("novuss")
CAM = Camera.overhead(1280, 720, view_w_mm=1300, view_h_mm=1300, height_mm=1500, tilt_deg=10)


@pytest.fixture(scope="module")
def image():
    return render_board(CAM, NOVUSS)


@pytest.fixture(scope="module")
def calibration(image):
    return Calibration.from_fit(NOVUSS, fit_markers(image, NOVUSS, CAM.K, CAM.dist), "known", None,
                                created="2025-01-01T00:00:00+00:00")


def test_round_trip_keeps_everything(tmp_path, calibration):
    path = save_calibration(calibration, tmp_path / "cal.json")
    back = load_calibration(path, expected_image_size=(1280, 720))
    assert back.to_dict() == calibration.to_dict()
    assert back.profile.geometry == NOVUSS.geometry and back.marker_ids == (0, 1, 2, 3)
    pts = np.array([[100.0, -200.0], [-450.0, 430.0]])
    np.testing.assert_allclose(back.plane.to_board_mm(CAM.project(pts)), pts, atol=0.5)
    assert [p.name for p in tmp_path.iterdir()] == ["cal.json"]  # no temp file left behind


def _write(tmp_path, calibration, edit):
    data = calibration.to_dict()
    edit(data)
    path = tmp_path / "cal.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize("edit, message", [
    (lambda d: d.update(schema="shotjudge.calibration/0"), "schema must be 'shotjudge.calibration/1'"),
    (lambda d: d.update(homography_image_to_board=[[1, 2, 3], [2, 4, 6], [0, 0, 1]]), "singular"),
    (lambda d: d.update(homography_image_to_board=[[1, 0], [0, 1]]), "3x3"),
    (lambda d: d["profile"].pop("geometry"), None),  # a reference to a shipped profile is fine
    (lambda d: d.update(profile={"name": "no-such-table"}), "profile 'no-such-table' does not exist"),
    (lambda d: d["profile"]["geometry"].pop("pawn_diameter_mm"), "geometry.pawn_diameter_mm is missing"),
    (lambda d: d.update(game="cvrnkana"), "profile: .*geometry.pit_diameter_mm is missing"),
    (lambda d: d.update(distortion=[0.1, 0.2]), "distortion"),
    (lambda d: d.update(image_size=[1280]), "image_size"),
    (lambda d: d["homography_image_to_board"][0].__setitem__(0, -d["homography_image_to_board"][0][0]), "mirrors"),
])
def test_inconsistent_files_are_refused(tmp_path, calibration, edit, message):
    path = _write(tmp_path, calibration, edit)
    if message is None:
        assert load_calibration(path).profile.name == "novuss-default"
        return
    with pytest.raises(CalibrationError, match=message):
        load_calibration(path)


def test_missing_truncated_and_wrong_size_files(tmp_path, calibration):
    with pytest.raises(CalibrationError, match="does not exist"):
        load_calibration(tmp_path / "nope.json")
    path = save_calibration(calibration, tmp_path / "cal.json")
    text = path.read_text()
    path.write_text(text[: len(text) // 2])
    with pytest.raises(CalibrationError, match="truncated or not JSON"):
        load_calibration(path)
    save_calibration(calibration, path)
    with pytest.raises(CalibrationError, match="made for 1280x720 images but the frames are 1920x1080"):
        load_calibration(path, expected_image_size=(1920, 1080))
    with pytest.raises(CalibrationError, match="folder .* does not exist"):
        save_calibration(calibration, tmp_path / "missing" / "cal.json")


def test_overlay_draws_the_board_where_it_is(image, calibration):
    out = draw_overlay(image, calibration)
    assert out.shape == image.shape and not np.array_equal(out, image)
    # the zone line colour (255,128,0) appears exactly along the S zone's inner line
    u, v = np.round(CAM.project([[200.0, -390.0]])[0]).astype(int)
    patch = out[v - 2:v + 3, u - 2:u + 3].reshape(-1, 3)
    assert any(tuple(p) == (255, 128, 0) for p in patch)


def test_calibrate_command_writes_file_and_preview(tmp_path, image, capsys):
    src = tmp_path / "table.png"
    cv2.imwrite(str(src), image)
    out, preview = tmp_path / "calibration.json", tmp_path / "preview.png"
    rc = main(["calibrate", "--game", "novuss", "--source", str(src), "--out", str(out), "--preview", str(preview),
               "--hfov", str(2 * np.degrees(np.arctan(640 / CAM.fx)))])
    assert rc == 0
    cal = load_calibration(out, expected_image_size=(1280, 720))
    assert cal.method == "markers" and cal.marker_ids == (0, 1, 2, 3) and cal.rms_mm < 1.0
    assert cv2.imread(str(preview)).shape == (720, 1280, 3)
    assert "residual" in capsys.readouterr().out
    # manual fallback: the four surface corners clicked
    corners = CAM.project([[-500, -500], [500, -500], [500, 500], [-500, 500]])
    pts = ";".join(f"{u:.3f},{v:.3f}" for u, v in corners)
    assert main(["calibrate", "--game", "novuss", "--source", str(src), "--out", str(out), "--points", pts,
                 "--hfov", str(2 * np.degrees(np.arctan(640 / CAM.fx)))]) == 0
    assert load_calibration(out).method == "manual"


@pytest.mark.parametrize("source, message", [
    ("0", "a webcam is named usb:N (usb:0 for /dev/video0)"),
    ("missing.png", "does not exist"),
    ("blank.png", "found 0 of the board's markers"),
    ("notes.txt", "no frames could be read"),
])
def test_calibrate_command_refuses_bad_sources(tmp_path, capsys, monkeypatch, source, message):
    monkeypatch.chdir(tmp_path)
    cv2.imwrite("blank.png", np.full((720, 1280, 3), 128, np.uint8))
    (tmp_path / "notes.txt").write_text("hello")
    rc = main(["calibrate", "--game", "novuss", "--source", source, "--out", "cal.json"])
    err = capsys.readouterr().err
    assert rc == 2 and message in err and err.startswith("shotjudge calibrate: error:")
    assert not (tmp_path / "cal.json").exists()


def test_written_files_match_the_published_schemas(tmp_path, calibration):
    import pathlib

    import jsonschema

    docs = pathlib.Path(__file__).resolve().parent.parent / "docs" / "schemas"
    cal_schema = json.loads((docs / "calibration.schema.json").read_text())
    prof_schema = json.loads((docs / "profile.schema.json").read_text())
    jsonschema.validate(json.loads(save_calibration(calibration, tmp_path / "c.json").read_text()), cal_schema)
    for game in ("novuss", "cvrnkana"):
        jsonschema.validate(default_profile(game).to_dict(), prof_schema)
    bad = calibration.to_dict()
    bad["image_size"] = [1280]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, cal_schema)
