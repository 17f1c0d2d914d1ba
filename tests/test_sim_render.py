"""The synthetic camera: exact geometry, detectable markers, determinism, YOLO labels and video output."""
from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from calibration.camera import Camera
from calibration.profile import default_profile
from sim.frames import ClipRecorder, Occluder, PieceInfo, PieceState, SimFrame
from sim.render import Renderer, render_clip
from sim.render_geometry import apparent_point_mm, piece_top_z_mm
from sim.render_scene import marker_corners_mm
from sim.render_settings import RenderSettings, make_camera
from sim.video import VideoWriter, read_video_frames
from sim.yolo import CLASSES, export_yolo, yolo_boxes

NOVUSS = default_profile("novuss")
CVRNKANA = default_profile("cvrnkana")
PAINT = (255, 0, 0)  # flat piece colour far from the flat board colour


def pawn(pid, x, y, owner="A", z=0.0, angle=0.0, visible=True):
    return PieceState(pid, "pawn", owner, x, y, z, angle, NOVUSS["pawn_diameter_mm"] / 2, visible)


def bat(x, y, z=0.0):
    return PieceState("bat", "bat", None, x, y, z, 0.0, NOVUSS["bat_diameter_mm"] / 2, True)


def marble(pid, x, y, owner="A", z=0.0):
    return PieceState(pid, "marble", owner, x, y, z, 0.0, CVRNKANA["marble_diameter_mm"] / 2, True)


def frame(pieces, occluders=(), index=0, t_s=0.0):
    return SimFrame(index, t_s, tuple(pieces), tuple(occluders))


def tilted(width=640, height=360, tilt=15.0, dist=(-0.15, 0.03, 0.0, 0.0, 0.0), profile=NOVUSS):
    return make_camera(profile, width, height, RenderSettings(camera_tilt_deg=tilt, camera_yaw_deg=2.0, camera_dist=dist))


def weighted_centroid(img, empty, colour, centre_px, half_px):
    """Centroid of the flat-colour coverage near ``centre_px`` (linear unmixing against the empty frame)."""
    x0, y0 = int(centre_px[0] - half_px), int(centre_px[1] - half_px)
    a = img[y0:y0 + 2 * half_px + 1, x0:x0 + 2 * half_px + 1].astype(float)
    b = empty[y0:y0 + 2 * half_px + 1, x0:x0 + 2 * half_px + 1].astype(float)
    d = np.asarray(colour, float) - b
    w = np.clip(((a - b) * d).sum(-1) / np.maximum((d * d).sum(-1), 1e-9), 0, 1)
    ys, xs = np.mgrid[0:w.shape[0], 0:w.shape[1]]
    s = w.sum()
    return np.array([(w * xs).sum() / s + x0, (w * ys).sum() / s + y0]), w


def test_piece_centres_land_on_the_camera_projection():
    cam = tilted()
    st = RenderSettings.flat(pawn_a_bgr=PAINT, bat_bgr=PAINT)
    r = Renderer(cam, NOVUSS, st)
    empty = r.render(frame([]))
    cases = [pawn("A1", 200.0, 250.0), pawn("A2", -250.3, 150.7, angle=0.7), pawn("A3", 420.2, -250.9),
             pawn("A4", -430.0, -180.0, z=25.0), bat(-120.4, 300.6)]
    for p in cases:
        img = Renderer(cam, NOVUSS, st).render(frame([p]))
        want = cam.project([apparent_point_mm(NOVUSS, p)])[0]
        got, w = weighted_centroid(img, empty, PAINT, want, 14)
        assert np.linalg.norm(got - want) < 0.2, (p.id, got, want)
        # the board shows through the hole (2-3 px wide here): the centre pixel is only partly piece-coloured
        assert w[14, 14] < 0.8 * w.max()


def test_marble_centre_is_the_sphere_centre():
    cam = tilted(profile=CVRNKANA)
    st = RenderSettings.flat(marble_a_hue=120.0)
    r = Renderer(cam, CVRNKANA, st)
    empty = r.render(frame([]))
    for p in (marble("A1", 180.0, 120.0), marble("A2", -300.5, -200.2), marble("A3", 0.0, 30.0, z=-5.0)):
        img = Renderer(cam, CVRNKANA, st).render(frame([p]))
        want = cam.project([apparent_point_mm(CVRNKANA, p)])[0]
        diff = np.abs(img.astype(int) - empty.astype(int)).sum(-1)
        colour = img[int(round(want[1])), int(round(want[0]))]
        got, _ = weighted_centroid(img, empty, colour, want, 12)
        assert diff.max() > 60
        assert np.linalg.norm(got - want) < 0.2, (p.id, got, want)
    assert piece_top_z_mm(CVRNKANA, "marble") == CVRNKANA["marble_diameter_mm"] / 2


def detect(img, dictionary="DICT_4X4_50"):
    params = cv2.aruco.DetectorParameters()
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    det = cv2.aruco.ArucoDetector(cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, dictionary)), params)
    corners, ids, _ = det.detectMarkers(cv2.cvtColor(img, cv2.COLOR_BGR2GRAY))
    return {int(i): c.reshape(4, 2) for i, c in zip(np.ravel(ids) if ids is not None else [], corners)}


@pytest.mark.parametrize("profile,settings", [
    (NOVUSS, RenderSettings(seed=3)),
    (NOVUSS, RenderSettings.randomised(5, camera_tilt_deg=15.0)),
    (CVRNKANA, RenderSettings(seed=4)),
    (CVRNKANA, RenderSettings.randomised(6, camera_tilt_deg=15.0)),
])
def test_markers_are_detected_where_the_camera_puts_them(profile, settings):
    cam = make_camera(profile, 1280, 720, settings)
    img = Renderer(cam, profile, settings).render(frame([], [Occluder("hand", 0.0, 0.0, 1.0, 60.0, radius_mm=45.0)]))
    found = detect(img)
    truth = marker_corners_mm(profile.markers)
    assert set(found) == set(truth)
    for mid, corners_mm in truth.items():
        err = np.linalg.norm(found[mid] - cam.project(corners_mm), axis=1)
        assert err.max() < 1.0, (mid, err)


def moving_clip(n=4, fps=60.0):
    """A bat crossing the board at 3 m/s, a pawn at rest, a cue then a hand."""
    def at(t, i=0):
        occ = (Occluder("cue", 50.0, -470.0 + 300 * t, math.pi / 2, 3.0),) if t < 2 / fps else \
              (Occluder("hand", -200.0, -350.0, math.pi / 2 + 0.3, 60.0, radius_mm=45.0),)
        return frame([pawn("A1", 100.0, 200.0), pawn("B1", -60.0, 20.0, "B"), bat(-300.0 + 3000.0 * t, -100.0)],
                     occ, i, t)
    return [at(i / fps, i) for i in range(n)], at


def test_same_settings_and_seed_give_identical_frames_in_any_order():
    cam = make_camera(NOVUSS, 320, 180)
    frames, at = moving_clip()
    st = RenderSettings.randomised(11, blur_samples=3, rolling_shutter_s=0.01, rolling_bands=4)
    a = [Renderer(cam, NOVUSS, st).render(f, at) for f in frames]  # fresh renderer per frame
    r = Renderer(cam, NOVUSS, st)
    b = [r.render(f, at) for f in frames]  # one renderer, warm caches
    for x, y in zip(a, b):
        assert x.tobytes() == y.tobytes()
    other = Renderer(cam, NOVUSS, RenderSettings.randomised(12, blur_samples=3)).render(frames[0], at)
    assert other.tobytes() != a[0].tobytes()
    assert not np.array_equal(a[0], a[1])  # the bat moved and the noise changed


def test_motion_blur_smears_along_the_motion_and_stays_centred():
    cam = Camera.overhead(640, 360, 1250, 1250, 1400)
    v = 4000.0  # mm/s along +x
    exposure = 0.01

    def at(t, i=0):
        return frame([pawn("A1", -100.0 + v * t, 80.0)], index=i, t_s=t)

    flat = RenderSettings.flat(pawn_a_bgr=PAINT, shadow_strength=0.0)
    empty = Renderer(cam, NOVUSS, flat).render(frame([]))
    sharp = Renderer(cam, NOVUSS, flat).render(at(0.0), at)
    blurred = Renderer(cam, NOVUSS, RenderSettings.flat(pawn_a_bgr=PAINT, blur_samples=8, exposure_s=exposure)).render(at(0.0), at)
    want = cam.project([apparent_point_mm(NOVUSS, at(0.0).pieces[0])])[0]
    spreads = []
    for img in (sharp, blurred):
        c, w = weighted_centroid(img, empty, PAINT, want, 24)
        assert np.linalg.norm(c - want) < 0.3
        ys, xs = np.mgrid[0:w.shape[0], 0:w.shape[1]]
        spreads.append(((w * (xs - xs.mean()) ** 2).sum() / w.sum(), (w * (ys - ys.mean()) ** 2).sum() / w.sum()))
    (sx0, sy0), (sx1, sy1) = spreads
    px_per_mm = np.linalg.norm(cam.project([[1.0, 0.0]]) - cam.project([[0.0, 0.0]]))
    streak = v * exposure * px_per_mm  # 40 mm of travel
    assert sx1 - sx0 > 0.5 * streak ** 2 / 12  # variance of a uniform smear is L^2/12
    assert abs(sy1 - sy0) < 0.15 * sy0


def test_rolling_shutter_shows_lower_rows_later():
    cam = Camera.overhead(640, 360, 1250, 1250, 1400)
    v, readout = 3000.0, 0.02

    def at(t, i=0):
        return frame([pawn("A1", v * t, -400.0)], index=i, t_s=t)  # low in the picture

    st = RenderSettings.flat(pawn_a_bgr=PAINT, rolling_shutter_s=readout, rolling_bands=36)
    r = Renderer(cam, NOVUSS, st)
    img = r.render(at(0.0), at)
    empty = Renderer(cam, NOVUSS, RenderSettings.flat()).render(frame([]))
    p0 = cam.project([apparent_point_mm(NOVUSS, at(0.0).pieces[0])])[0]
    got, _ = weighted_centroid(img, empty, PAINT, p0 + [4, 0], 16)
    row_time = readout * (p0[1] / cam.height - 0.5)  # the middle row is read at t_s
    want = cam.project([apparent_point_mm(NOVUSS, at(row_time).pieces[0])])[0]
    assert want[0] - p0[0] > 5.0
    assert abs(got[0] - want[0]) < 0.5


def test_zone_line_shows_through_the_bat_hole_only_when_under_it():
    cam = make_camera(NOVUSS, 1280, 720, RenderSettings(camera_dist=(0.0,) * 5))
    st = RenderSettings(seed=2, noise_sigma=0.0, flicker=0.0, flicker_jitter=0.0, bat_bgr=(230, 230, 230))
    zone_y = -NOVUSS["surface_mm"] / 2 + NOVUSS["zone_depth_mm"]
    darkest = []
    renderer = Renderer(cam, NOVUSS, st)
    for y in (zone_y, zone_y + 20.0):
        b = bat(150.0, y)
        img = cv2.cvtColor(renderer.render(frame([b])), cv2.COLOR_BGR2GRAY)
        # the board seen through the hole: between the top opening and the bottom opening
        top, bottom = cam.project([apparent_point_mm(NOVUSS, b), (b.x_mm, b.y_mm, 0.0)])
        u, v = np.round((top + bottom) / 2).astype(int)
        darkest.append(int(img[v - 1:v + 2, u - 1:u + 2].min()))
    assert darkest[0] < 70 < 100 < darkest[1]


def test_yolo_boxes_match_the_rendered_pieces(tmp_path):
    cam = tilted(width=480, height=270)
    hidden = pawn("B2", -200.0, -350.0, "B")
    pieces = [pawn("A1", 200.0, 250.0), pawn("B1", -250.0, 150.0, "B"), bat(-120.0, 300.0),
              pawn("A2", 0.0, 0.0, visible=False), hidden]
    hand = Occluder("hand", -200.0, -350.0, math.pi / 2, 60.0, radius_mm=45.0)
    f = frame(pieces, [hand])
    st = RenderSettings.flat(pawn_a_bgr=PAINT, pawn_b_bgr=PAINT, bat_bgr=PAINT)
    assert export_yolo([f], cam, NOVUSS, st, tmp_path, prefix="t") == 1
    rows = [line.split() for line in (tmp_path / "labels" / "train" / "t_000000.txt").read_text().splitlines()]
    classes = sorted(CLASSES[int(r[0])] for r in rows)
    assert classes == ["bat", "hand", "pawn_a", "pawn_b"]  # A2 invisible, B2 under the hand
    assert "names:" in (tmp_path / "data.yaml").read_text() and "6: cue" in (tmp_path / "data.yaml").read_text()
    img = cv2.imread(str(tmp_path / "images" / "train" / "t_000000.png"))
    empty = Renderer(cam, NOVUSS, st).render(frame([]))
    mask = (np.abs(img.astype(int) - empty.astype(int)).sum(-1) > 60).astype(np.uint8)
    for row in rows:
        c, cx, cy, w, h = int(row[0]), *map(float, row[1:])
        if CLASSES[c] == "hand":
            continue
        x0, x1 = (cx - w / 2) * cam.width, (cx + w / 2) * cam.width
        y0, y1 = (cy - h / 2) * cam.height, (cy + h / 2) * cam.height
        sub = mask[int(y0) - 3:int(y1) + 4, int(x0) - 3:int(x1) + 4]
        ys, xs = np.nonzero(sub)
        # the flat render draws top faces only, so the box (top and bottom rims) may exceed it by the parallax
        assert abs(xs.min() + int(x0) - 3 - x0) < 1.5 and abs(xs.max() + int(x0) - 3 + 1 - x1) < 1.5
        assert abs(ys.min() + int(y0) - 3 - y0) < 1.5 and abs(ys.max() + int(y0) - 3 + 1 - y1) < 1.5
    boxes = yolo_boxes(f, cam, NOVUSS)
    assert len(boxes) == 4  # without occluders nothing hides B2


def test_sim_yolo_classes_are_the_learned_detectors_in_its_order():
    """A dataset from ``shotjudge sim --yolo`` trains a model whose names the learned detector reads."""
    from vision.detect_learned import DEFAULT_CLASSES
    from judge.training.data import CLASSES as TRAINED

    assert CLASSES == TRAINED and set(CLASSES) == set(DEFAULT_CLASSES)


def test_render_clip_writes_a_readable_video_and_pngs(tmp_path):
    cam = make_camera(NOVUSS, 160, 90)
    frames, at = moving_clip(5)
    out = tmp_path / "clip.mp4"
    n = render_clip(frames, cam, NOVUSS, RenderSettings(seed=1, blur_samples=2), out, fps=60.0, png_dir=tmp_path / "png")
    assert n == 5
    back = read_video_frames(out)
    assert len(back) == 5 and back[0].shape == (90, 160, 3)
    assert sorted(p.name for p in (tmp_path / "png").iterdir()) == [f"frame_{i:06d}.png" for i in range(5)]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary files left


def test_write_clip_hook_renders_a_physics_clip_with_its_camera(tmp_path):
    from sim.render_video import write_clip

    rec = ClipRecorder((PieceInfo("bat", "bat", None, 18.0), PieceInfo("A1", "pawn", "A", 16.0)))
    rec.sample(0.0, {"bat": (0.0, -400.0, 0.0, 0.0, True), "A1": (0.0, 300.0, 0.0, 0.0, True)})
    rec.sample(0.1, {"bat": (0.0, -100.0, 0.0, 0.5, True)})

    class Episode:
        def clip(self):
            return rec.clip()

    got = write_clip(Episode(), NOVUSS, 50.0, (160, 90), tmp_path, seed=3)
    assert got["video_frames"] == rec.clip().n_frames(50.0) == 6
    assert len(read_video_frames(tmp_path / got["video"])) == 6
    cam = Camera.from_dict(got["camera"])
    h = np.asarray(got["homography"])
    p = h @ [120.0, -80.0, 1.0]
    assert np.allclose(cam.undistort_points(cam.project([[120.0, -80.0]]))[0], p[:2] / p[2], atol=1e-3)


def test_video_writer_leaves_nothing_behind_on_failure(tmp_path):
    out = tmp_path / "bad.mp4"
    with pytest.raises(ValueError):
        with VideoWriter(out, 30.0, (64, 48)) as v:
            v.write(np.zeros((48, 64, 3), np.uint8))
            v.write(np.zeros((10, 10, 3), np.uint8))
    assert list(tmp_path.iterdir()) == []


def test_settings_reject_nonsense_and_randomise_within_ranges():
    with pytest.raises(ValueError, match="blur_samples"):
        RenderSettings(blur_samples=0)
    with pytest.raises(ValueError, match="fps"):
        VideoWriter("x.mp4", 0, (10, 10))
    a, b = RenderSettings.randomised(1), RenderSettings.randomised(2)
    assert a != b and a == RenderSettings.randomised(1)
    for s in (a, b):
        assert 0 <= s.camera_tilt_deg <= 15 and 1 <= s.blur_samples <= 8
        assert s.pawn_a_bgr[2] > 150  # player A stays light
