"""Drift: a 5 mm knock of the camera is caught, a steady camera over a long noisy clip never alarms."""
import numpy as np
import pytest

from calibration import default_profile
from calibration.calfile import Calibration
from calibration.camera import Camera
from calibration.drift import DriftMonitor
from calibration.plane import fit_markers
from sim.synthetic_board import noisy, render_board

NOVUSS = default_profile("novuss")
CAM = Camera.overhead(1280, 720, view_w_mm=1300, view_h_mm=1300, height_mm=1500, tilt_deg=5)


@pytest.fixture(scope="module")
def still():
    return render_board(CAM, NOVUSS)


@pytest.fixture(scope="module")
def calibration(still):
    return Calibration.from_fit(NOVUSS, fit_markers(still, NOVUSS, CAM.K, CAM.dist), "known")


def test_steady_camera_never_alarms_over_600_noisy_flickering_frames(still, calibration):
    rng = np.random.default_rng(7)
    base = still[..., 0].astype(np.float32)  # grey frames: same test, a third of the arithmetic
    noise = [rng.normal(0, 3.0, base.shape).astype(np.float32) for _ in range(6)]
    monitor = DriftMonitor(calibration, interval_s=0.25)
    fps = 60.0
    for k in range(600):
        gain = 1.0 + 0.15 * np.sin(2 * np.pi * 100.0 * k / fps / 7.3)  # mains flicker aliased by the frame rate
        frame = np.clip(base * gain + noise[k % 6], 0, 255).astype(np.uint8)
        assert monitor.check(frame, k / fps) is None
    assert len(monitor.checks) == 40 and all(c.markers == 4 for c in monitor.checks)
    assert max(c.shift_mm for c in monitor.checks[1:]) < 0.3  # after the first check: movement alone
    assert monitor.alarms == [] and monitor.review_windows == () and not monitor.needs_review(9.0)


def test_a_5mm_move_is_caught_recalibrated_and_marked_for_review(still, calibration):
    moved = render_board(CAM.moved(5.0, 0.0, 0.0), NOVUSS)
    monitor = DriftMonitor(calibration, interval_s=0.5)
    alarms = []
    rng = np.random.default_rng(3)
    for k in range(0, 181, 6):  # 3 s at 60 fps, every sixth frame; knocked at t = 1.2 s
        t = k / 60.0
        frame = noisy(moved if t >= 1.2 else still, rng)
        alarm = monitor.check(frame, t)
        if alarm:
            alarms.append(alarm)
    assert len(alarms) == 1
    alarm = alarms[0]
    assert alarm.t_s == pytest.approx(1.5) and alarm.review_from_s == pytest.approx(1.0)
    assert 4.0 < alarm.shift_mm < 6.0 and alarm.recalibrated and alarm.residual_mm < 1.0
    assert "MOVED by 5" in str(alarm)
    assert monitor.review_windows == ((1.0, 1.5),)
    assert monitor.needs_review(1.2) and not monitor.needs_review(0.9) and not monitor.needs_review(2.0)
    # the new calibration maps the moved view right
    pts = np.array([[0.0, 0.0], [300.0, -420.0]])
    cam = CAM.moved(5.0, 0.0, 0.0)
    np.testing.assert_allclose(monitor.calibration.plane.to_board_mm(cam.project(pts)), pts, atol=0.7)


def test_small_moves_hidden_markers_and_no_recalibration(still, calibration):
    monitor = DriftMonitor(calibration, interval_s=0.0, threshold_mm=2.0)
    assert monitor.check(render_board(CAM.moved(1.0, 0.0, 0.0), NOVUSS), 0.0) is None
    assert 0.6 < monitor.checks[-1].shift_mm < 1.4
    hidden = still.copy()
    hidden[:, :] = 60
    assert monitor.check(hidden, 1.0) is None and monitor.checks[-1].shift_mm is None
    stuck = DriftMonitor(calibration, interval_s=0.0, recalibrate=False)
    moved = render_board(CAM.moved(0.0, 5.0, 0.0), NOVUSS)
    assert stuck.check(still, 0.0) is None
    first, second = stuck.check(moved, 1.0), stuck.check(moved, 2.0)
    assert first and second and not first.recalibrated and "run shotjudge calibrate again" in str(second)
    assert stuck.review_windows == ((0.0, None),) and stuck.needs_review(100.0)
