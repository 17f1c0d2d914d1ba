"""The Panda3D evaluation renderer (``sim.render_panda``): its camera is the calibration's camera (lens, pose
and distortion), an empty board is empty, a still frame filmed twice differs only by sensor noise, and a
seed gives the same pictures. Small renders (320x180) keep it fast."""
from __future__ import annotations

import cv2
import numpy as np
import pytest

pytest.importorskip("panda3d")

from calibration.profile import default_profile  # noqa: E402
from sim.frames import Occluder, PieceState, SimFrame  # noqa: E402
from sim.render_geometry import apparent_point_mm  # noqa: E402
from sim.render_panda import PandaRenderer  # noqa: E402
from sim.render_settings import RenderSettings, make_camera  # noqa: E402

NOV = default_profile("novuss")
CVR = default_profile("cvrnkana")
#: a tilted camera with strong barrel distortion, so the lens, pose and remap are all exercised
LOOK = dict(camera_tilt_deg=9.0, camera_yaw_deg=2.5, camera_dist=(-0.14, 0.04, 0.0, 0.0, 0.0))


def _renderer(profile=NOV, seed=3, size=(320, 180)):
    st = RenderSettings(seed=seed, **LOOK)
    cam = make_camera(profile, size[0], size[1], st)
    return PandaRenderer(cam, profile, st), cam


def _state(*pieces, occluders=(), t_s=0.0):
    return SimFrame(0, t_s, tuple(pieces), tuple(occluders))


def _piece(pid, kind, owner, x, y, profile=NOV, z=0.0, angle=0.4):
    r = profile.spec.piece_radii_mm[kind]
    return PieceState(pid, kind, owner, float(x), float(y), z, angle, r, True)


def _centroid(img, empty, near_px, half: int = 10):
    """Centre of the blob that differs from the empty render near ``near_px``: the pixels differing by
    more than 30 % of the largest difference there (a silhouette, so texture and holes do not weigh; it
    includes the side wall that faces the camera, a fraction of a pixel inwards at this size)."""
    d = np.abs(img.astype(float) - empty.astype(float)).sum(-1)
    x0, y0 = int(near_px[0]) - half, int(near_px[1]) - half
    win = d[y0:y0 + 2 * half + 1, x0:x0 + 2 * half + 1]
    ys, xs = np.nonzero(win > 0.3 * win.max())
    return np.array([xs.mean() + x0, ys.mean() + y0])


def test_the_panda_lens_and_the_remap_are_the_calibration_camera():
    r, cam = _renderer()
    h = NOV.spec.half_mm
    pts = np.array([[sx * h, sy * h, 0.0] for sx in (-1, 1) for sy in (-1, 1)] + [[0.0, 0.0, 0.0], [250.0, -310.0, 7.0]])
    px = cam.project(pts)
    assert np.abs(r.undistorted_px(pts) - cam.undistort_points(px)).max() < 0.02  # lens + pose
    # the distortion remap: the output pixel camera.project() gives samples the render where the lens put it
    at = np.float32(px[:, :1]).reshape(1, -1), np.float32(px[:, 1:]).reshape(1, -1)
    src = np.column_stack([cv2.remap(m, *at, cv2.INTER_LINEAR).ravel() for m in r._maps[:2]])
    assert np.abs(src - (r.undistorted_px(pts) + (r.margin_x, r.margin_y))).max() < 0.05


@pytest.mark.parametrize("kind,owner,where", [("pawn", "B", (0.0, 0.0)), ("pawn", "B", (330.0, -280.0)),
                                              ("bat", None, (-380.0, 360.0)), ("pawn", "B", (460.0, 455.0))])
def test_a_rendered_piece_lies_where_the_camera_projects_it(kind, owner, where):
    r, cam = _renderer()
    empty = r.render(_state())
    p = _piece("B1" if owner else "bat", kind, owner, *where)
    img = r.render(_state(p))
    want = cam.project(np.array([apparent_point_mm(NOV, p)]))[0]
    got = _centroid(img, empty, want)
    assert np.hypot(*(got - want)) < 1.5, (got, want)


def test_a_marble_lies_where_the_camera_projects_it():
    r, cam = _renderer(CVR)
    empty = r.render(_state())
    p = _piece("A1", "marble", "A", 210.0, -120.0, profile=CVR)
    want = cam.project(np.array([apparent_point_mm(CVR, p)]))[0]
    assert np.hypot(*(_centroid(r.render(_state(p)), empty, want) - want)) < 1.5


def test_the_empty_board_has_no_piece_and_a_piece_changes_only_its_place():
    r, cam = _renderer()
    empty, again = r.render(_state()).astype(float), r.render(_state()).astype(float)
    assert np.abs(empty - again).mean() < 4.0  # noise only
    p = _piece("B2", "pawn", "B", -150.0, 200.0)
    img = r.render(_state(p)).astype(float)
    d = np.abs(img - empty).sum(-1)
    u, v = cam.project(np.array([apparent_point_mm(NOV, p)]))[0]
    ys, xs = np.mgrid[0:cam.height, 0:cam.width]
    near = np.hypot(xs - u, ys - v) < 8  # the pawn is about 4 px across here
    assert d[near].max() > 60  # the pawn is there
    assert np.percentile(d[~near], 99.9) < 40  # and nothing else changed beyond the noise


def test_a_still_frame_filmed_twice_differs_only_by_the_noise():
    r, cam = _renderer()
    f = _state(_piece("B3", "pawn", "B", 120.0, -60.0), _piece("A3", "pawn", "A", -90.0, 40.0))
    a, b = r.render(f).astype(float), r.render(f).astype(float)
    d = a - b
    assert 0.3 < d.std() < 8.0  # a real sensor's noise, different each time
    assert abs(d.mean()) < 0.3
    smooth = np.abs(np.cumsum(np.cumsum(d.mean(-1), 0), 1))  # no structure: noise averages out over areas
    assert smooth[-1, -1] / d[..., 0].size < 0.3


def test_renders_are_deterministic_for_a_seed_and_differ_between_seeds():
    hand = Occluder("hand", 40.0, -420.0, np.pi / 2, 30.0, radius_mm=45.0)
    cue = lambda k: Occluder("cue", -200.0 + 5 * k, 100.0, 0.3, 5.0, length_mm=900.0, width_mm=12.0)  # noqa: E731
    frames = [_state(_piece("B1", "pawn", "B", 10.0 * k, 0.0), occluders=(hand, cue(k)), t_s=k / 60) for k in range(3)]
    first = [r.render(f) for r in [_renderer(seed=5)[0]] for f in frames]
    second = [r.render(f) for r in [_renderer(seed=5)[0]] for f in frames]
    other = _renderer(seed=6)[0].render(frames[0])
    assert all(np.array_equal(a, b) for a, b in zip(first, second))
    assert np.abs(first[0].astype(float) - other).mean() > 3.0


@pytest.mark.parametrize("profile", [NOV, CVR], ids=["novuss", "cvrnkana"])
def test_everything_is_drawn_in_the_scene_graphs_order_never_in_the_order_of_memory(profile):
    """Panda3D's default opaque bin sorts by render state, i.e. by the address each state happens to have; where
    two surfaces meet at one depth the first drawn shows, so a clip's frames depended on what had been rendered
    in the process before it (render seed 11 of opponent-off-direct, alone or after three other clips: other
    pictures, the same physics; the independent renderer's bench figures moved from run to run). Every piece of
    geometry, pieces and hands included, is drawn from a bin that keeps the scene graph's order (``fixed``)."""
    from panda3d.core import CullBinAttrib

    r, _ = _renderer(profile)
    hand = Occluder("hand", 40.0, -420.0, np.pi / 2, 30.0, radius_mm=45.0)
    kind = "pawn" if profile is NOV else "marble"
    r.render(_state(_piece("A1", kind, "A", 0.0, 0.0, profile=profile), occluders=(hand,)))
    geoms = r.scene.root.find_all_matches("**/+GeomNode")
    assert geoms.get_num_paths() > 5
    bins = {(g.get_net_state().get_attrib(CullBinAttrib) or CullBinAttrib.make("", 0)).get_bin_name()
            for g in geoms.get_paths()}
    assert bins == {"fixed"}


def test_motion_blur_smears_a_moving_piece_along_its_path():
    r, cam = _renderer(size=(640, 360))
    moving = lambda t: _state(_piece("B1", "pawn", "B", 8000.0 * t, 0.0), t_s=t)  # noqa: E731 - 8 m/s
    empty = r.render(_state())
    sharp = r.render(moving(0.0)).astype(float)
    blurred = r.render(moving(0.0), moving).astype(float)
    d_sharp = np.abs(sharp - empty).sum(-1)
    d_blur = np.abs(blurred - empty).sum(-1)
    cols = lambda d: np.nonzero((d > 0.3 * d.max()).any(0))[0]  # noqa: E731
    assert len(cols(d_blur)) > len(cols(d_sharp)) + 5  # 64 mm of travel in 8 ms: a streak
    assert d_blur.max() < d_sharp.max()
