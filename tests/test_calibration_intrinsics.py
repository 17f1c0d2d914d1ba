"""Lens calibration from synthetic ChArUco views rendered through a known distorted camera."""
from dataclasses import replace

import cv2
import numpy as np
import pytest

from calibration.camera import Camera
from calibration.errors import CalibrationError
from calibration.intrinsics import CharucoCalibrator, CharucoSpec, calibrate_intrinsics
from sim.synthetic_board import charuco_texture, render_plane

W, H = 640, 360
TRUE = Camera.overhead(W, H, view_w_mm=1300, view_h_mm=1300, height_mm=1500, dist=(-0.12, 0.03, 0.0, 0.0, 0.0))
# (tilt, yaw, target, height): the board near each image corner and at several slants
POSES = [(0, 0, (0, 0), 300), (25, 0, (0, 0), 300), (15, 30, (90, 50), 250), (15, -150, (-90, 50), 250),
         (15, 120, (90, -50), 250), (15, -60, (-90, -50), 250), (0, 90, (0, 0), 340), (30, 200, (0, 0), 330)]


def _views(spec=CharucoSpec()):
    tex, a = charuco_texture(spec.board())
    for tilt, yaw, target, height in POSES:
        pose = Camera.overhead(W, H, height_mm=height, tilt_deg=tilt, yaw_deg=yaw, target_mm=target)
        cam = replace(pose, fx=TRUE.fx, fy=TRUE.fy, cx=TRUE.cx, cy=TRUE.cy, dist=TRUE.dist)
        yield render_plane(cam, tex, a, background=128)


def test_charuco_recovers_focal_length_and_distortion():
    intr = calibrate_intrinsics(_views())
    assert intr.views == len(POSES) and intr.source == "charuco" and intr.image_size == (W, H)
    assert intr.rms_px < 0.3
    k = intr.camera_matrix
    assert k[0, 0] == pytest.approx(TRUE.fx, rel=0.01) and k[1, 1] == pytest.approx(TRUE.fy, rel=0.01)
    assert abs(k[0, 2] - TRUE.cx) < 2 and abs(k[1, 2] - TRUE.cy) < 2
    assert intr.distortion[0] == pytest.approx(-0.12, abs=0.015)
    # what matters for the plane: the estimated lens straightens the image like the true one, up to a
    # homography (which the marker fit absorbs) - within half a pixel out to the image corners
    grid = np.array([[u, v] for u in np.linspace(0, W - 1, 9) for v in np.linspace(0, H - 1, 5)])
    est = Camera(W, H, k[0, 0], k[1, 1], k[0, 2], k[1, 2], tuple(intr.distortion), TRUE.rvec, TRUE.tvec)
    a, b = est.undistort_points(grid), TRUE.undistort_points(grid)
    h, _ = cv2.findHomography(a, b, 0)
    q = np.column_stack([a, np.ones(len(a))]) @ h.T
    assert np.max(np.linalg.norm(q[:, :2] / q[:, 2:] - b, axis=1)) < 0.5


def test_too_few_views_and_mixed_sizes_are_refused():
    cal = CharucoCalibrator()
    blank = np.full((H, W), 128, np.uint8)
    assert cal.add(blank) == 0
    with pytest.raises(CalibrationError, match="found in 0 image"):
        cal.calibrate()
    with pytest.raises(CalibrationError, match="differ in size"):
        cal.add(np.full((100, 100), 128, np.uint8))
