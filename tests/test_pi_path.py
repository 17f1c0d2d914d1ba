"""The Raspberry Pi path: the systemd unit and every command line of docs/raspberry-pi.md parse with the real
command line, and ``shotjudge doctor`` against the picamera2 and V4L2 fakes says exactly what it finds."""
import configparser
import re
import shlex
import shutil
from collections import namedtuple
from pathlib import Path

import pytest

import fake_cv2_capture as fcv
import fake_picamera2
from judge import doctor_checks
from judge.cli import build_parser, main

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "raspberry-pi.md"
UNIT = ROOT / "docs" / "systemd" / "shotjudge-live.service"


def _unit():
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str  # systemd keys are case-sensitive
    parser.read_string(UNIT.read_text(encoding="utf-8"))
    return parser


def test_unit_restarts_on_failure_and_runs_live_on_the_pi_camera_with_a_fixed_journal():
    unit = _unit()
    assert unit.sections() == ["Unit", "Service", "Install"]
    service = unit["Service"]
    assert service["Restart"] == "on-failure" and int(service["RestartSec"]) > 0
    assert service["User"] and service["WorkingDirectory"].startswith("/")
    assert "After" in unit["Unit"] and unit["Install"]["WantedBy"] == "multi-user.target"
    argv = shlex.split(service["ExecStart"])
    assert argv[0] == "/home/pi/shotjudge-venv/bin/shotjudge" and argv[1] == "live"
    args = build_parser().parse_args(argv[1:])
    assert args.source == "picam"
    assert args.journal.startswith("/") and args.clips.startswith("/")  # the same files whatever the cwd: a restart resumes
    pre = build_parser().parse_args(shlex.split(service["ExecStartPre"])[1:])
    assert pre.command == "doctor" and (pre.source, pre.fps, pre.size) == (args.source, args.fps, args.size)
    assert (pre.journal, pre.clips, pre.calibration) == (args.journal, args.clips, args.calibration)


def _doc_commands():
    """Every line of a fenced block in the doc that runs shotjudge (continuation lines joined)."""
    text = DOC.read_text(encoding="utf-8")
    found = []
    for block in re.findall(r"```[a-z]*\n(.*?)```", text, re.S):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if words and Path(words[0]).name == "shotjudge":
                found.append(words)
    return found


def test_every_shotjudge_command_in_the_doc_parses_with_the_real_command_line():
    commands = _doc_commands()
    assert {w[1] for w in commands} >= {"doctor", "calibrate", "markers", "live"}
    parser = build_parser()
    for words in commands:
        parser.parse_args(words[1:])  # a flag the CLI does not have exits with status 2 here
    assert str(UNIT.relative_to(ROOT)) in DOC.read_text(encoding="utf-8")  # the doc includes the unit by path


# ----- doctor against the fakes ----------------------------------------------------------------------------
Usage = namedtuple("Usage", "total used free")


@pytest.fixture
def calibrations(tmp_path):
    """Exact calibrations of the simulator's camera at the Pi camera's 1536x864 and the webcam's 1280x720."""
    from calibration.calfile import save_calibration
    from calibration.profile import default_profile
    from sim.render_settings import make_camera
    from sim.replay_inputs import exact_calibration

    profile = default_profile("novuss")
    out = {}
    for w, h in ((1536, 864), (1280, 720)):
        out[(w, h)] = save_calibration(exact_calibration(profile, make_camera(profile, w, h)), tmp_path / f"cal-{w}.json")
    return out


@pytest.fixture
def quiet_clock(monkeypatch):
    monkeypatch.setattr(doctor_checks, "ntp_synchronised", lambda: (True, ""))


def _doctor(capsys, *argv):
    rc = main(["doctor", *map(str, argv)])
    return rc, capsys.readouterr().out.splitlines()


def test_doctor_on_the_pi_camera_reads_its_modes_and_fits_the_calibration(monkeypatch, capsys, tmp_path, calibrations,
                                                                           quiet_clock):
    fake_picamera2.install(monkeypatch)
    rc, lines = _doctor(capsys, "--source", "picam", "--fps", 60, "--colour-gains", "1.8,1.5",
                        "--calibration", calibrations[(1536, 864)], "--game", "novuss",
                        "--journal", tmp_path / "m.sqlite", "--clips", tmp_path / "clips", "--save-frame", tmp_path / "b.png")
    assert lines[0] == ("ok    camera picam: 1536x864 at 60 fps (sensor mode 1536x864/10bit; modes: 1536x864@120.13, "
                        "2304x1296@56.03, 4608x2592@14.35; exposure 2000 µs, gain 4.0, colour gains 1.8,1.5)")
    assert lines[1] == f"ok    camera picam picture: saved 1536x864 to {tmp_path / 'b.png'}"
    assert lines[2] == (f"ok    calibration {calibrations[(1536, 864)]}: novuss, 1536x864, fits the camera; "
                        f"plane residual 0.00 mm RMS")
    assert lines[3] == "ok    detector classical: built for novuss (it learns the empty board from --background at start)"
    assert re.fullmatch(rf"ok    disk: [\d.]+ GB free where the journal and the clips go \({tmp_path}, {tmp_path / 'clips'}\)",
                        lines[4])
    assert re.fullmatch(r"ok    clock: \d{4}-\d\d-\d\d \d\d:\d\d UTC, synchronised \(NTP\)", lines[5])
    assert len(lines) == 6 and rc == 0
    import cv2

    assert cv2.imread(str(tmp_path / "b.png")).shape == (864, 1536, 3)


def test_doctor_fails_a_calibration_made_for_another_size_naming_both(monkeypatch, capsys, tmp_path, calibrations,
                                                                      quiet_clock):
    fake_picamera2.install(monkeypatch)
    cal = calibrations[(1280, 720)]
    rc, lines = _doctor(capsys, "--source", "picam", "--fps", 60, "--colour-gains", "1.8,1.5", "--calibration", cal,
                        "--journal", tmp_path / "m.sqlite", "--clips", tmp_path)
    assert lines[0].startswith("ok    camera picam: 1536x864 at 60 fps")
    assert lines[1] == (f"FAIL  calibration {cal}: made for 1280x720 images but the frames are 1536x864 "
                        f"(re-calibrate at this resolution)")
    assert lines[2] == "ok    detector classical: built in, no model file (it learns the empty board from --background at start)"
    assert rc == 1
    checks, cal = doctor_checks.calibration(str(calibrations[(1536, 864)]), (1536, 864), "cvrnkana")
    assert [c.line() for c in checks] == [f"FAIL  calibration {calibrations[(1536, 864)]}: this calibration is for "
                                          f"novuss, not cvrnkana"] and cal is None


def test_doctor_on_a_webcam_lists_what_the_driver_gives(monkeypatch, capsys, tmp_path, calibrations, quiet_clock):
    fcv.install(monkeypatch, {0: fcv.Device()})
    rc, lines = _doctor(capsys, "--source", "usb:0", "--fps", 60, "--size", "1280x720",
                        "--calibration", calibrations[(1280, 720)], "--journal", tmp_path / "m.sqlite", "--clips", tmp_path)
    assert lines[:3] == [
        "ok    camera usb:0: 1280x720 at 60 fps (1280x720 at 60 fps MJPG, frames stamped by v4l2_buffer)",
        "ok    camera usb:0 modes: 640x480@30 YUYV, 1280x720@30 YUYV, 1280x720@60 MJPG",
        f"ok    calibration {calibrations[(1280, 720)]}: novuss, 1280x720, fits the camera; plane residual 0.00 mm RMS"]
    assert rc == 0


def test_doctor_fails_when_the_disk_is_nearly_full(monkeypatch, capsys, tmp_path, quiet_clock):
    fcv.install(monkeypatch, {0: fcv.Device()})
    monkeypatch.setattr(shutil, "disk_usage", lambda path: Usage(32e9, 31.6e9, 0.4e9))
    rc, lines = _doctor(capsys, "--source", "usb:0", "--fps", 60, "--journal", tmp_path / "m.sqlite", "--clips", tmp_path)
    assert f"FAIL  disk: 0.4 GB free where the journal and the clips go ({tmp_path}) (need 2 GB for a match's clips)" in lines
    assert "warn  calibration: none given (--calibration FILE): live needs one (shotjudge calibrate)" in lines
    assert rc == 1


def test_doctor_without_the_camera_is_a_fail_line_not_a_traceback(monkeypatch, capsys, tmp_path, quiet_clock):
    fcv.install(monkeypatch, {0: fcv.Device()})
    rc, lines = _doctor(capsys, "--source", "usb:7", "--journal", tmp_path / "m.sqlite", "--clips", tmp_path)
    assert lines[0] == ("FAIL  camera usb:7: cannot open the webcam /dev/video7 (not connected, no permission, "
                        "or in use by another program)")
    assert lines[1] == "warn  calibration: none given (--calibration FILE): live needs one (shotjudge calibrate)"
    assert rc == 1
    fake_picamera2.install(monkeypatch).cameras = 0
    rc, lines = _doctor(capsys, "--source", "picam", "--journal", tmp_path / "m.sqlite", "--clips", tmp_path)
    assert lines[0] == ("FAIL  camera picam: no Raspberry Pi camera number 0 found (ribbon cable, camera enabled?): "
                        "list index out of range")
    assert rc == 1


def test_doctor_says_in_one_line_when_libcamera_or_ultralytics_is_missing(monkeypatch, capsys, tmp_path, calibrations,
                                                                          quiet_clock):
    import sys

    # pip's picamera2 without apt's libcamera (a venv made without --system-site-packages): its import fails inside
    fake = tmp_path / "site" / "picamera2"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("import libcamera\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.delitem(sys.modules, "picamera2", raising=False)
    monkeypatch.setitem(sys.modules, "libcamera", None)
    monkeypatch.setitem(sys.modules, "ultralytics", None)
    rc, lines = _doctor(capsys, "--source", "picam", "--detector", "learned", "--calibration", calibrations[(1280, 720)],
                        "--journal", tmp_path / "m.sqlite", "--clips", tmp_path)
    assert lines[0] == ("FAIL  camera picam: picamera2 is installed but libcamera's Python bindings are not visible "
                        "(on Raspberry Pi OS: sudo apt install python3-libcamera, and make the venv with "
                        "--system-site-packages)")
    assert lines[1] == (f"warn  calibration {calibrations[(1280, 720)]}: novuss, 1280x720, not compared with a camera "
                        f"(no camera checked); plane residual 0.00 mm RMS")
    assert lines[2] == ("FAIL  detector learned: ultralytics is not installed (pip install '.[learned]'), "
                        "or use --detector classical")
    assert rc == 1
    monkeypatch.delitem(sys.modules, "picamera2", raising=False)
    monkeypatch.setitem(sys.modules, "picamera2", None)  # not installed at all
    assert doctor_checks.camera("picam")[0][0].line() == (
        "FAIL  camera picam: the picamera2 package is not installed (on Raspberry Pi OS: sudo apt install python3-picamera2)")


def test_clock_never_set_fails_and_unsynchronised_or_unknown_warns(monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(doctor_checks.time, "time", lambda: 86400.0 * 3)
        assert doctor_checks.clock(0.0).line() == ("FAIL  clock: reads 1970-01-04 00:00 UTC: the time was never set "
                                                   "(connect to a network with time service, or set it with sudo date)")
    with monkeypatch.context() as m:
        m.setattr(doctor_checks, "ntp_synchronised", lambda: (False, ""))
        assert doctor_checks.clock(0.0).line().endswith(", not synchronised (NTP): the journal's times may be off; "
                                                        "frame times use the monotonic clock and are unaffected")
    monkeypatch.setattr(doctor_checks.shutil, "which", lambda name: None)
    line = doctor_checks.clock(0.0).line()
    assert line.startswith("warn  clock: ") and line.endswith(", synchronisation unknown: no timedatectl to ask")
