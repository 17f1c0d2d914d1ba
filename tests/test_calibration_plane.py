"""The plane: markers -> homography accurate to a fraction of a mm; pixel<->mm maps; rectified view."""
import numpy as np
import pytest

from calibration import default_profile
from calibration.camera import Camera
from calibration.errors import CalibrationError
from calibration.landmarks import landmarks_mm
from calibration.markers import MarkerDetector, marker_corners_mm
from calibration.plane import PlaneMap, Rectifier, fit_markers, from_points
from sim.synthetic_board import render_board

NOVUSS = default_profile("novuss")
LENS = (-0.12, 0.03, 0.0, 0.0, 0.0)


def _camera(tilt=0.0, dist=LENS, **kw):
    return Camera.overhead(1280, 720, view_w_mm=1300, view_h_mm=1300, height_mm=1500, tilt_deg=tilt, dist=dist, **kw)


def _landmark_errors(plane, cam):
    pts = np.array(list(landmarks_mm(NOVUSS).values()))
    return np.linalg.norm(plane.to_board_mm(cam.project(pts)) - pts, axis=1)


@pytest.mark.parametrize("tilt", [0.0, 15.0])
def test_markers_give_landmarks_within_half_a_millimetre(tilt):
    cam = _camera(tilt)
    fit = fit_markers(render_board(cam, NOVUSS), NOVUSS, cam.K, cam.dist)
    assert fit.marker_ids == (0, 1, 2, 3) and fit.points == 16
    err = _landmark_errors(fit.plane, cam)
    assert np.sqrt(np.mean(err ** 2)) < 0.5 and err.max() < 1.0
    assert fit.rms_mm < 1.0 and fit.rms_px < 0.5


def test_edge_refined_corners_beat_corner_only_refinement():
    cam = _camera(10.0, yaw_deg=3.0)
    det = MarkerDetector.for_profile(NOVUSS)(render_board(cam, NOVUSS))
    truth = marker_corners_mm(NOVUSS)
    err = np.concatenate([np.linalg.norm(c - cam.project(truth[i]), axis=1) for i, c in det.as_dict().items()])
    assert len(err) == 16 and np.sqrt(np.mean(err ** 2)) < 0.3
    raw = MarkerDetector.for_profile(NOVUSS, refine="none")(render_board(cam, NOVUSS))
    err_raw = np.concatenate([np.linalg.norm(c - cam.project(truth[i]), axis=1) for i, c in raw.as_dict().items()])
    assert np.sqrt(np.mean(err_raw ** 2)) > 1.5 * np.sqrt(np.mean(err ** 2))


def test_plane_map_round_trips_through_distortion():
    cam = _camera(12.0, dist=(-0.12, 0.03, 0.001, -0.002, 0.01))
    plane = PlaneMap((1280, 720), cam.K, np.array(cam.dist), np.linalg.inv(cam.board_to_undistorted()))
    pts = np.random.default_rng(1).uniform(-600, 600, (200, 2))
    np.testing.assert_allclose(plane.to_image_px(pts), cam.project(pts), atol=1e-6)
    np.testing.assert_allclose(plane.to_board_mm(cam.project(pts)), pts, atol=1e-5)
    assert plane.mm_per_px([[0, 0]])[0] == pytest.approx(1500 / cam.fx, rel=0.05)


def test_four_clicked_points_fit_exactly():
    cam = _camera(8.0)
    board = np.array([[-500, -500], [500, -500], [500, 500], [-500, 500]], float)
    fit = from_points(cam.project(board), board, (1280, 720), cam.K, cam.dist)
    assert fit.method == "manual" and fit.max_mm < 1e-3
    assert _landmark_errors(fit.plane, cam).max() < 1e-3
    with pytest.raises(CalibrationError, match="collinear"):
        from_points(cam.project(board)[[0, 1, 1, 0]] * [1, 1], [[0, 0], [1, 0], [2, 0], [3, 0]], (1280, 720), cam.K,
                    cam.dist)
    with pytest.raises(CalibrationError, match="at least 4"):
        from_points(cam.project(board)[:3], board[:3], (1280, 720), cam.K, cam.dist)


def test_too_few_markers_is_a_clear_error():
    cam = _camera(0.0)
    image = render_board(cam, NOVUSS)
    image[:, :640] = 60  # hide the two western markers
    with pytest.raises(CalibrationError, match="found 2 of the board's markers .* need at least 3"):
        fit_markers(image, NOVUSS, cam.K, cam.dist, min_markers=3)


def test_rectified_view_is_top_down_at_the_chosen_scale():
    cam = _camera(15.0)
    image = render_board(cam, NOVUSS)
    plane = PlaneMap((1280, 720), cam.K, np.array(cam.dist), np.linalg.inv(cam.board_to_undistorted()))
    rect = Rectifier(plane, px_per_mm=0.5, region_mm=(-600, -600, 600, 600))
    top = rect(image)
    assert top.shape == (600, 600, 3)
    np.testing.assert_allclose(rect.to_board_mm(rect.to_rect_px([[12.0, -34.0]])), [[12.0, -34.0]])
    # the pocket centres are dark, the middle of each striking zone is light, where the profile says
    for name in ("pocket_SW", "pocket_NE"):
        u, v = np.round(rect.to_rect_px([landmarks_mm(NOVUSS)[name]])[0]).astype(int)
        assert top[v, u, 0] < 40
    u, v = np.round(rect.to_rect_px([[200.0, -445.0]])[0]).astype(int)
    assert top[v, u, 0] > 180
    with pytest.raises(CalibrationError, match="frame is 640x360"):
        rect(image[:360, :640])


def test_singular_homography_is_refused():
    with pytest.raises(CalibrationError, match="singular"):
        PlaneMap((1280, 720), np.eye(3) * [800, 800, 1], np.zeros(5), np.array([[1, 2, 3], [2, 4, 6], [0, 0, 1.0]]))
