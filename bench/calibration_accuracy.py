"""Calibration accuracy on synthetic frames with a known camera (issue 4's done-when figures).

Prints: landmark error of the recovered plane (pocket centres, zone corners, circle points, centre-line
ends) at 1280x720 for tilts 0-15 deg, straight and distorted lens, intrinsics known or from ChArUco, with
OpenCV's unrefined marker corners as the in-process baseline; drift detection of a 5 mm move and a steady
600-frame noisy clip; detection of the printed sheet photographed at an angle.

Run: python bench/calibration_accuracy.py   (about a minute on one core)
"""
from __future__ import annotations

import os
import sys
import time
from dataclasses import replace

import cv2
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from calibration import default_profile  # noqa: E402
from calibration.calfile import Calibration  # noqa: E402
from calibration.camera import Camera  # noqa: E402
from calibration.drift import DriftMonitor  # noqa: E402
from calibration.intrinsics import CharucoSpec, calibrate_intrinsics  # noqa: E402
from calibration.landmarks import landmarks_mm  # noqa: E402
from calibration.markers import MarkerDetector  # noqa: E402
from calibration.plane import fit_detection, fit_markers  # noqa: E402
from calibration.sheets import marker_pages  # noqa: E402
from sim.synthetic_board import charuco_texture, render_board, render_plane  # noqa: E402

W, H = 1280, 720
LENS = (-0.12, 0.03, 0.0, 0.0, 0.0)
NOVUSS = default_profile("novuss")
LANDMARKS = np.array(list(landmarks_mm(NOVUSS).values()))


def camera(tilt: float, dist) -> Camera:
    return Camera.overhead(W, H, view_w_mm=1400, view_h_mm=1400, height_mm=1500, tilt_deg=tilt, dist=dist)


def charuco_lens(true: Camera):
    tex, a = charuco_texture(CharucoSpec().board())
    poses = [(0, 0, (0, 0), 300), (25, 0, (0, 0), 300), (15, 30, (90, 50), 250), (15, -150, (-90, 50), 250),
             (15, 120, (90, -50), 250), (15, -60, (-90, -50), 250), (0, 90, (0, 0), 340), (30, 200, (0, 0), 330)]
    # same lens, board ~2x further away at twice the resolution of the test's 640x360 poses
    views = []
    for tilt, yaw, target, height in poses:
        pose = Camera.overhead(W, H, height_mm=height * 2, tilt_deg=tilt, yaw_deg=yaw, target_mm=target)
        cam = replace(pose, fx=true.fx, fy=true.fy, cx=true.cx, cy=true.cy, dist=true.dist)
        views.append(render_plane(cam, tex, a, background=128))
    return calibrate_intrinsics(views)


def landmark_errors(plane, cam) -> np.ndarray:
    return np.linalg.norm(plane.to_board_mm(cam.project(LANDMARKS)) - LANDMARKS, axis=1)


def main() -> None:
    t0 = time.perf_counter()
    lens = charuco_lens(camera(0.0, LENS))
    print(f"ChArUco lens at {W}x{H}: {lens.views} views, reprojection {lens.rms_px:.3f} px rms, "
          f"f={lens.camera_matrix[0, 0]:.1f} (true {camera(0.0, LENS).fx:.1f}), "
          f"k1={lens.distortion[0]:+.4f} (true {LENS[0]:+.2f}), k2={lens.distortion[1]:+.4f} (true {LENS[1]:+.2f})")
    print()
    print(f"{'tilt':>4} {'lens':>9} {'intrinsics':>10} {'markers':>7} {'fit rms mm':>10} "
          f"{'landmark rms mm':>15} {'max mm':>7} {'baseline rms mm':>15} {'ratio':>6}")
    worst = 0.0
    for tilt in (0.0, 5.0, 10.0, 15.0):
        for dist, intr in ((None, "known"), (LENS, "known"), (LENS, "charuco")):
            cam = camera(tilt, dist or (0.0,) * 5)
            image = render_board(cam, NOVUSS)
            k, d = (cam.K, cam.dist) if intr == "known" else (lens.camera_matrix, lens.distortion)
            fit = fit_markers(image, NOVUSS, k, d)
            err = landmark_errors(fit.plane, cam)
            raw = fit_detection(MarkerDetector.for_profile(NOVUSS, refine="none")(image), NOVUSS, (W, H), k, d)
            base = landmark_errors(raw.plane, cam)
            rms, rms_base = np.sqrt(np.mean(err ** 2)), np.sqrt(np.mean(base ** 2))
            worst = max(worst, rms)
            print(f"{tilt:>4.0f} {'k1=-0.12' if dist else 'straight':>9} {intr:>10} {len(fit.marker_ids):>7} "
                  f"{fit.rms_mm:>10.3f} {rms:>15.3f} {err.max():>7.3f} {rms_base:>15.3f} {rms_base / rms:>6.1f}")
    print(f"worst landmark RMS: {worst:.3f} mm (target < 1 mm); baseline = OpenCV corners without refinement")
    print()

    cam = camera(5.0, LENS)
    still = render_board(cam, NOVUSS)
    cal = Calibration.from_fit(NOVUSS, fit_markers(still, NOVUSS, cam.K, cam.dist), "known")
    rng = np.random.default_rng(11)
    base = still[..., 0].astype(np.float32)
    noise = [rng.normal(0, 3.0, base.shape).astype(np.float32) for _ in range(8)]
    monitor = DriftMonitor(cal, interval_s=0.0)  # check every frame: the harshest setting
    alarms = 0
    for k in range(600):
        gain = 1.0 + 0.15 * np.sin(2 * np.pi * 100.0 * k / 60.0 / 7.3)
        frame = np.clip(base * gain + noise[k % 8], 0, 255).astype(np.uint8)
        alarms += monitor.check(frame, k / 60.0) is not None
    shifts = np.array([c.shift_mm for c in monitor.checks if c.shift_mm is not None])
    print(f"steady clip: 600 frames, noise sigma 3, flicker +-15%, checked every frame: {alarms} alarms, "
          f"median shift {np.median(shifts):.3f} mm, max {shifts.max():.3f} mm (threshold 2 mm)")
    print(f"{'camera move':>16} {'measured shift mm':>17} {'alarm':>6} {'recalibrated':>12} {'residual mm':>11}")
    for move in ((5.0, 0.0, 0.0), (0.0, 5.0, 0.0), (0.0, 0.0, 5.0), (1.0, 0.0, 0.0), (2.5, 2.5, 0.0)):
        monitor = DriftMonitor(cal, interval_s=0.0)
        monitor.check(still, 0.0)
        alarm = monitor.check(render_board(cam.moved(*move), NOVUSS), 1.0)
        shift = monitor.checks[-1].shift_mm
        print(f"{str(move):>16} {shift:>17.2f} {'yes' if alarm else 'no':>6} "
              f"{('yes' if alarm.recalibrated else 'no') if alarm else '-':>12} "
              f"{(alarm.residual_mm if alarm and alarm.residual_mm is not None else float('nan')):>11.2f}")
    print()

    (page,) = marker_pages(NOVUSS, 150)
    gray = np.asarray(page)
    h, w = gray.shape
    src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    print(f"{'sheet photo (corners)':>44} {'ids found':>12}")
    for dst in ([[220, 60], [1010, 140], [1120, 900], [90, 840]], [[400, 100], [900, 100], [1200, 900], [100, 900]],
                [[100, 300], [1100, 50], [1180, 700], [60, 880]]):
        photo = cv2.warpPerspective(gray, cv2.getPerspectiveTransform(src, np.float32(dst)), (1280, 960),
                                    flags=cv2.INTER_AREA, borderValue=90)
        ids = MarkerDetector.for_profile(NOVUSS)(photo).ids
        print(f"{str(dst):>44} {str(ids):>12}")
    print(f"\ntotal {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
