"""``shotjudge setup`` against the fake cameras: exposure locked, calibration, empty board and piece colours
that ``live`` accepts, equipment checked. The fakes show pictures of the board rendered by the simulator's
camera, whose lens the set-up reuses (``--lens-from``) as a club would after a ChArUco calibration."""
from __future__ import annotations

import builtins
import dataclasses
import json
import re

import cv2
import numpy as np
import pytest

import fake_cv2_capture as fcv
import fake_picamera2
import rules
from calibration import default_profile
from calibration.calfile import CameraSettings, load_calibration, save_calibration
from calibration.errors import CalibrationError
from judge import cli
from judge.setup import check_calibration
from judge.setup_camera import settings_for_live
from sim.frames import PieceState, SimFrame
from sim.render import Renderer
from sim.render_settings import RenderSettings, make_camera
from sim.replay_inputs import exact_calibration

SIZE = (640, 360)
CV_FIELD = {"A1": (150.0, 80.0), "A2": (-200.0, 120.0), "B1": (180.0, -120.0), "B2": (-150.0, -90.0)}


def _scene(game, tmp_path, pieces, radius_mm):
    """(empty board, the pieces at ``pieces``, lens file) as the simulator's camera films them."""
    profile = default_profile(game)
    settings = RenderSettings(seed=1)
    camera = make_camera(profile, *SIZE, settings)
    renderer = Renderer(camera, profile, settings)
    kind = "pawn" if game == "novuss" else "marble"
    shown = tuple(PieceState(k, kind, k[0], x, y, 0.0, 0.0, radius_mm.get(k, radius_mm["*"]), True)
                  for k, (x, y) in pieces.items())
    lens = save_calibration(exact_calibration(profile, camera), tmp_path / "lens.json")
    return renderer.render(SimFrame(0, 0.0, (), ())), renderer.render(SimFrame(0, 0.0, shown, ())), lens


def _setup(game, source, out, lens, *extra):
    return ["setup", "--game", game, "--source", source, "--out", str(out), "--size", f"{SIZE[0]}x{SIZE[1]}",
            "--fps", "30", "--lens-from", str(lens), "--settle-frames", "6", "--frames", "2", *extra]


def _live(game, source, out, tmp_path):
    return ["live", "--game", game, "--source", source, "--calibration", str(out / "calibration.json"),
            "--background", str(out / "empty-board.png"), "--no-overlay", "--no-clips", "--max-reconnects", "0",
            "--journal", str(tmp_path / "match.sqlite")]


def test_setup_step_by_step_on_the_pi_camera_locks_the_exposure_and_live_reuses_it(tmp_path, monkeypatch, capsys):
    fake = fake_picamera2.install(monkeypatch)
    profile = default_profile("novuss")
    opening = rules.engine_for("novuss", profile.geometry).initial().to_dict()["positions"]
    empty, pieces, lens = _scene("novuss", tmp_path, opening, {"*": profile["pawn_diameter_mm"] / 2})
    out = tmp_path / "setup"
    fake.image = pieces  # the markers are found with the pieces standing
    assert cli.main(_setup("novuss", "picam", out, lens, "--step", "camera")) == 0
    text = capsys.readouterr().out
    metered = {"AeEnable": False, "AwbEnable": False, "ExposureTime": fake_picamera2.AUTO_EXPOSURE_US,
               "AnalogueGain": fake_picamera2.AUTO_GAIN, "ColourGains": fake_picamera2.AUTO_GAINS}
    assert [c[1] for c in fake.instances[0].calls if c[0] == "set_controls"] == [
        {"AeEnable": True, "AwbEnable": True}, metered]
    assert ("camera: picam 640x360 at 30 fps; metered over 6 frames: exposure 33000 µs, gain 2.50, colour gains "
            "1.91,1.63; locked: exposure, gain, white balance\n") in text
    assert "markers: found 0, 1, 2, 3 of 4; board residual" in text
    assert sorted(p.name for p in out.iterdir()) == ["calibration.json", "setup-view.png"]
    cal = check_calibration(str(out / "calibration.json"), SIZE, "novuss")
    # the rolling shutter's readout in the 1536x864 mode the 640x360 picture is scaled from: at most a frame at
    # its 120.13 frames/s (vision dates each sighting by its row: vision.rows)
    assert cal.camera == CameraSettings("picam", SIZE, 30.0, exposure_us=33000, analogue_gain=2.5,
                                        colour_gains=(1.91, 1.63), readout_s=round(1 / 120.13, 6))
    assert json.loads((out / "calibration.json").read_text())["camera"] == cal.camera.to_dict()
    assert cv2.imread(str(out / "setup-view.png")).shape == (360, 640, 3)

    fake.image = empty
    assert cli.main(_setup("novuss", "picam", out, lens, "--step", "empty")) == 0
    assert "empty board: median of 2 frames, 640x360" in capsys.readouterr().out
    controls = fake.instances[-1].calls[0][1]["controls"]  # opened locked, as live will open it
    assert {k: controls[k] for k in ("AeEnable", "ExposureTime", "AnalogueGain", "AwbEnable", "ColourGains")} == \
        {"AeEnable": False, "ExposureTime": 33000, "AnalogueGain": 2.5, "AwbEnable": False, "ColourGains": (1.91, 1.63)}
    assert cv2.imread(str(out / "empty-board.png")).shape == (360, 640, 3)

    fake.image = pieces
    assert cli.main(_setup("novuss", "picam", out, lens, "--step", "pieces")) == 0
    text = capsys.readouterr().out
    assert "equipment: nothing measured (the pieces touch in this layout" in text
    command = (f"shotjudge live --game novuss --source picam --calibration {out / 'calibration.json'} --background "
               f"{out / 'empty-board.png'} --size 640x360 --fps 30 --exposure-us 33000 --colour-gains 1.91,1.63")
    assert f"next: {command}\n" in text
    cal = load_calibration(out / "calibration.json", expected_image_size=SIZE)
    assert set(cal.appearance.pieces) == {"pawn_A", "pawn_B"} and cal.camera.exposure_us == 33000
    a, b = cal.appearance.pieces["pawn_A"].rgb, cal.appearance.pieces["pawn_B"].rgb
    assert min(a) > 150 and b[0] > 2 * b[1]  # ivory; dark red

    # live, given only the size and rate: the rest of the camera's settings come from the calibration
    fake.die_after = 40  # the camera stalls after 40 frames: live ends, having judged them
    monkeypatch.setenv("COLUMNS", "400")
    before = len(fake.instances)
    assert cli.main(_live("novuss", "picam", out, tmp_path) + ["--size", "640x360", "--fps", "30"]) == 2
    text, err = capsys.readouterr()
    assert (f"camera settings from {out / 'calibration.json'}: exposure_us 33000, analogue_gain 2.5, "
            f"colour_gains 1.91,1.63") in text
    opened = fake.instances[before:]
    assert opened and all(c.calls[0][1]["controls"]["ExposureTime"] == 33000 and
                          c.calls[0][1]["controls"]["AnalogueGain"] == 2.5 for c in opened)
    assert "0 shot(s) judged" in text and "no frame for 2 s" in err


def test_setup_in_one_go_on_a_webcam_reports_a_refused_control_and_a_marble_too_big(tmp_path, monkeypatch, capsys):
    radius = {"*": 7.0, "A2": 9.0}  # 14 mm marbles, and one of 18 mm
    empty, pieces, lens = _scene("cvrnkana", tmp_path, CV_FIELD, radius)
    device = fcv.Device(modes=[(*SIZE, 30.0, "MJPG")], refuse=(cv2.CAP_PROP_AUTO_WB,), image=pieces)
    fcv.install(monkeypatch, {0: device})
    engine = rules.engine_for("cvrnkana", default_profile("cvrnkana").geometry)
    state = engine.initial().to_dict()
    state["field"] = {k: list(v) for k, v in CV_FIELD.items()}
    state["behind"] = [m for m in state["behind"] if m not in CV_FIELD]
    (tmp_path / "state.json").write_text(json.dumps(state))
    shown = iter([empty, pieces])  # what the operator puts in front of the camera at each prompt
    prompts = []
    monkeypatch.setattr(builtins, "input", lambda text: (prompts.append(text), setattr(device, "image", next(shown)))[0])
    out = tmp_path / "setup"
    assert cli.main(_setup("cvrnkana", "usb:0", out, lens, "--state", str(tmp_path / "state.json"))) == 1
    text = capsys.readouterr().out
    assert [p.split(":")[0] for p in prompts] == ["empty", "pieces"]
    assert ("metered over 6 frames: exposure 166 (webcam units), gain 32, white balance 4600 K; locked: exposure, gain; "
            "REFUSED by the camera: white balance (left automatic: pictures may drift)") in text
    sets = FakeSets(fcv.FakeVideoCapture.instances[0].sets)
    assert sets.after(cv2.CAP_PROP_AUTO_EXPOSURE, 3.0) == [(cv2.CAP_PROP_AUTO_WB, 1.0, False),
                                                            (cv2.CAP_PROP_AUTO_EXPOSURE, 1.0, True),
                                                            (cv2.CAP_PROP_EXPOSURE, 166.0, True),
                                                            (cv2.CAP_PROP_GAIN, 32.0, True),
                                                            (cv2.CAP_PROP_AUTO_WB, 0.0, False)]
    fixes = [line for line in text.splitlines() if line.startswith("fix: ")]
    assert len(fixes) == 1, fixes
    found = re.fullmatch(r"fix: marble A2 at \(-20\d, 1[12]\d\) mm measures (\d+\.\d) mm: allowed 10\.0-16\.5 mm: "
                         r"use marbles the rules allow", fixes[0])
    assert found and 17.0 < float(found.group(1)) < 20.0, fixes[0]
    equipment = next(line for line in text.splitlines() if line.startswith("equipment: "))
    for marble in ("A1", "B1", "B2"):
        mm = float(equipment.split(f"marble {marble} ")[1].split(" mm")[0])
        assert 12.5 < mm < 16.0
    pit = float(equipment.split("pit ")[1].split(" mm")[0])
    assert 97 <= pit <= 103
    assert "the set-up is written, but fix the equipment above before a match" in text
    assert sorted(p.name for p in out.iterdir()) == ["calibration.json", "empty-board.png", "setup-pieces.png",
                                                     "setup-view.png"]
    cal = check_calibration(str(out / "calibration.json"), SIZE, "cvrnkana")
    assert cal.camera == CameraSettings("usb", SIZE, 30.0, exposure=166.0, gain=32.0, refused=("white balance",))
    assert set(cal.appearance.pieces) == {"marble_A", "marble_B"}
    assert cv2.imread(str(out / "empty-board.png")).shape == (360, 640, 3)

    device.image, device.gone_after = empty, device.frames + 25  # the webcam is unplugged after 25 frames
    monkeypatch.setenv("COLUMNS", "400")
    assert cli.main(_live("cvrnkana", "usb:0", out, tmp_path)) == 2
    text = capsys.readouterr().out
    assert f"camera settings from {out / 'calibration.json'}: fps 30.0, size 640x360, exposure 166.0" in text
    live_open = fcv.FakeVideoCapture.instances[-1]
    assert (cv2.CAP_PROP_AUTO_EXPOSURE, 1.0, True) in live_open.sets and (cv2.CAP_PROP_EXPOSURE, 166.0, True) in live_open.sets
    assert "0 shot(s) judged" in text


class FakeSets(list):
    def after(self, prop, value):
        """The sets after the last time ``prop`` was set to ``value``."""
        last = max(i for i, (p, v, _) in enumerate(self) if p == prop and v == value)
        return self[last + 1:]


def test_a_failed_set_up_leaves_nothing_and_steps_need_the_earlier_ones(tmp_path, monkeypatch, capsys):
    fake = fake_picamera2.install(monkeypatch)
    fake.image = np.full((SIZE[1], SIZE[0], 3), 120, np.uint8)  # no markers in view
    out = tmp_path / "setup"
    lens = tmp_path / "none.json"
    args = ["setup", "--game", "novuss", "--source", "picam", "--out", str(out), "--size", "640x360", "--fps", "30",
            "--settle-frames", "3", "--frames", "1", "--hfov", "70"]
    assert cli.main(args + ["--step", "camera"]) == 2
    assert "found 0 of the board's markers" in capsys.readouterr().err
    assert not out.exists()
    out.mkdir()
    assert cli.main(args + ["--step", "empty"]) == 2
    assert capsys.readouterr().err.strip() == (f"shotjudge setup: error: {out / 'calibration.json'}: not there yet: "
                                               f"run shotjudge setup --step camera first")
    assert cli.main(["setup", "--game", "novuss", "--source", "match.mp4", "--out", str(out)]) == 2
    assert "setup needs a camera (picam, picam:N or usb:N)" in capsys.readouterr().err
    assert list(out.iterdir()) == [] and not lens.exists()


def test_camera_block_is_optional_checked_and_only_used_for_the_same_kind_of_camera(tmp_path):
    profile = default_profile("novuss")
    cal = exact_calibration(profile, make_camera(profile, *SIZE, RenderSettings(seed=1)))
    plain = save_calibration(cal, tmp_path / "old.json")
    assert load_calibration(plain).camera is None and "camera" not in json.loads(plain.read_text())
    assert settings_for_live(str(plain), "picam", None, None, {}) == ({"fps": None, "size": None}, None)
    locked = CameraSettings("picam", SIZE, 50.0, exposure_us=4000, analogue_gain=3.0, colour_gains=(2.0, 1.5))
    path = save_calibration(dataclasses.replace(cal, camera=locked), tmp_path / "cal.json")
    assert load_calibration(path).camera == locked
    got, note = settings_for_live(str(path), "picam", None, None, {"exposure_us": 3000})
    assert got == {"fps": 50.0, "size": SIZE, "exposure_us": 3000, "analogue_gain": 3.0, "colour_gains": (2.0, 1.5)}
    assert note == f"camera settings from {path}: fps 50.0, size 640x360, analogue_gain 3.0, colour_gains 2.0,1.5"
    assert settings_for_live(str(path), "usb:0", 30.0, None, {}) == ({"fps": 30.0, "size": None}, None)
    assert settings_for_live(str(path), "match.mp4", None, None, {}) == ({"fps": None, "size": None}, None)
    data = json.loads(path.read_text())
    data["camera"]["colour_gains"] = [2.0]
    path.write_text(json.dumps(data))
    with pytest.raises(CalibrationError, match=r"cal\.json: camera\.colour_gains must be \[red, blue\] or null"):
        load_calibration(path)
    data["camera"]["colour_gains"], data["camera"]["readout_s"] = [2.0, 1.5], 0.012
    path.write_text(json.dumps(data))
    assert load_calibration(path).camera == dataclasses.replace(locked, readout_s=0.012)
    data["camera"]["readout_s"] = 0.021  # longer than a frame at 50 frames/s (20 ms): no sensor reads so slowly
    path.write_text(json.dumps(data))
    with pytest.raises(CalibrationError, match=r"cal\.json: camera\.readout_s must be at most a frame \(0\.02 s at 50 "
                                               r"frames/s\), got 0\.021$"):
        load_calibration(path)
    data["camera"]["readout_s"] = -0.01
    path.write_text(json.dumps(data))
    with pytest.raises(CalibrationError, match=r"camera\.readout_s must be a non-negative number, got -0\.01"):
        load_calibration(path)


def test_calibrate_reads_a_camera_through_the_hardware_layer(tmp_path, monkeypatch, capsys):
    fake = fake_picamera2.install(monkeypatch)
    empty, _, lens = _scene("novuss", tmp_path, {}, {"*": 16.0})
    fake.image = empty
    out = tmp_path / "cal.json"
    assert cli.main(["calibrate", "--game", "novuss", "--source", "picam", "--size", "640x360", "--fps", "30",
                     "--out", str(out), "--lens-from", str(lens), "--max-frames", "2"]) == 0
    assert load_calibration(out, expected_image_size=SIZE).marker_ids == (0, 1, 2, 3)
    assert fake.instances[0].closed


def test_the_set_up_page_shows_the_status_and_the_pictures_while_it_runs(tmp_path, monkeypatch, capsys):
    import httpx

    fake = fake_picamera2.install(monkeypatch)
    profile = default_profile("novuss")
    opening = rules.engine_for("novuss", profile.geometry).initial().to_dict()["positions"]
    empty, pieces, lens = _scene("novuss", tmp_path, opening, {"*": profile["pawn_diameter_mm"] / 2})
    fake.image = pieces
    seen, printed, views = [], [], []

    def operator(prompt):  # looks at the page, then arranges the board for the next picture
        printed.append(capsys.readouterr().out)
        url = next(line.split(": ", 1)[1] for line in "".join(printed).splitlines() if line.startswith("set-up page: "))
        status = httpx.get(url + "status").json()
        picture = httpx.get(url + "pictures/setup-view.png")
        views.append(picture.content)
        seen.append((status["pictures"], status["lines"][-1], picture.status_code, picture.headers["content-type"],
                     "<h1>shotjudge setup</h1>" in httpx.get(url).text))
        fake.image = empty if prompt.startswith("empty") else pieces

    monkeypatch.setattr(builtins, "input", operator)
    out = tmp_path / "setup"
    assert cli.main(_setup("novuss", "picam", out, lens, "--page", "0")) == 0
    assert seen[0] == (["setup-view.png"], seen[0][1], 200, "image/png", True)
    assert seen[0][1].startswith("markers: found 0, 1, 2, 3 of 4")
    assert seen[1][0] == ["empty-board.png", "setup-view.png"] and seen[1][1].startswith("empty board: median of 2")
    assert cv2.imdecode(np.frombuffer(views[0], np.uint8), cv2.IMREAD_COLOR).shape == (360, 640, 3)
    assert sorted(p.name for p in out.iterdir()) == ["calibration.json", "empty-board.png", "setup-pieces.png",
                                                     "setup-view.png"]


def test_an_exposure_longer_than_a_frame_is_shortened_and_the_gain_raised_to_match(tmp_path, monkeypatch, capsys):
    fake = fake_picamera2.install(monkeypatch)
    empty, _, lens = _scene("novuss", tmp_path, {}, {"*": 16.0})
    fake.image = empty
    out = tmp_path / "setup"
    args = _setup("novuss", "picam", out, lens, "--step", "camera")
    assert cli.main([a if a != "30" else "60" for a in args]) == 0
    text = capsys.readouterr().out
    gain = fake_picamera2.AUTO_GAIN * fake_picamera2.AUTO_EXPOSURE_US / 16667
    assert f"exposure 16667 µs, gain {gain:.2f}," in text
    assert f"locked: exposure, gain, white balance; exposure shortened to 16667 µs to fit a frame, gain raised to {gain:.2f}" in text
    lock = [c[1] for c in fake.instances[0].calls if c[0] == "set_controls"][-1]
    assert lock["ExposureTime"] == 16667 and lock["AnalogueGain"] == pytest.approx(gain)
    camera = load_calibration(out / "calibration.json").camera
    assert (camera.exposure_us, camera.fps) == (16667, 60.0) and camera.analogue_gain == pytest.approx(gain, abs=1e-4)
