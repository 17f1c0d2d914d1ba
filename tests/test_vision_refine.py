"""Learned-style boxes refined by the rim fit (vision.refine) on a frame rendered by the simulator's camera.

The YOLO part is faked: boxes are built directly, their centres 2 mm off each piece (as the learned model's
are), so the test needs no ultralytics."""
from __future__ import annotations

import importlib.util
import math

import numpy as np
import pytest

from bench.vision_detect import setup
from calibration import default_profile
from judge.weights import shipped_weights
from sim.scenarios_novuss import SCENARIOS as NOVUSS
from vision.detect_learned import LearnedDetector
from vision.detectors import load_learned
from vision.parallax import seen_height_mm
from vision.refine import BoxRefiner
from vision.types import Detection, Detections, VisionError


@pytest.fixture(scope="module")
def scene():
    """A Novuss frame (two touching pawns mid-board, four against the cushions) and boxes 2 mm off."""
    profile = default_profile("novuss")
    clip = NOVUSS["touching"][0](profile, 1).clip()
    renderer, det = setup(profile, clip, 60.0, 1, "straight", colours="appearance")
    frame = clip.frame(0, 60.0)
    image = renderer.render(frame, clip.states_at)
    refiner = BoxRefiner(det.plane, profile)
    rng = np.random.default_rng(3)
    items, truth = [], {}
    for p in frame.pieces:
        if not p.visible:
            continue
        kind = "bat" if p.id == "bat" else "pawn"
        a = rng.uniform(0.0, 2.0 * math.pi)
        off_base = np.array([p.x_mm + 2.0 * math.cos(a), p.y_mm + 2.0 * math.sin(a)])
        seen = refiner.parallax.seen(off_base, seen_height_mm(profile, kind))[0]  # a box frames what is seen
        u, v = det.plane.to_image_px(seen[None])[0]
        items.append(Detection(kind, (float(seen[0]), float(seen[1])), 16.5, p.id[0] if kind == "pawn" else None,
                               0.9, (float(u), float(v)), 0, frame.t_s, p.id))
        truth[p.id] = (p.x_mm, p.y_mm)
    return profile, det, image, refiner, Detections(0, frame.t_s, tuple(items)), truth


def _errors(dets, truth):
    return {d.piece: math.dist(d.centre_mm, truth[d.piece]) for d in dets}


def test_boxes_2mm_off_are_refined_to_half_a_millimetre_against_the_empty_board(scene):
    profile, det, image, refiner, boxes, truth = scene
    before = _errors(boxes, truth)
    assert len(before) == 6 and min(before.values()) > 1.0  # each box really is off (2 mm, plus or minus parallax)
    for d in boxes:
        assert math.dist(refiner.parallax.base(d.centre_mm, seen_height_mm(profile, d.kind))[0], truth[d.piece]) == \
            pytest.approx(2.0, abs=1e-6)
    out = refiner.refine(image, boxes, det.background)
    after = _errors(out, truth)
    assert after["A1"] <= 0.5 and after["A2"] <= 0.5  # the touching pair mid-board
    assert max(after.values()) <= 1.0  # the pawns against a cushion too
    for b, d in zip(boxes, out):  # only the centre changes
        assert (d.kind, d.owner, d.piece, d.score, d.radius_mm) == (b.kind, b.owner, b.piece, b.score, b.radius_mm)
        u, v = det.plane.to_image_px(np.array([refiner.parallax.seen(d.centre_mm, seen_height_mm(profile, d.kind))[0]]))[0]
        assert math.dist((u, v), d.centre_px) < 0.05  # centre_px: where the refined top face is seen


def test_without_an_empty_board_the_board_around_each_box_stands_in(scene):
    _, _, image, refiner, boxes, truth = scene
    after = _errors(refiner.refine(image, boxes), truth)
    assert max(after.values()) <= 0.5


def test_a_fit_that_moves_too_far_or_finds_nothing_keeps_the_box(scene):
    profile, det, image, refiner, boxes, truth = scene
    a1 = next(d for d in boxes if d.piece == "A1")
    # a box on bare board (no piece within reach) and a box 10 mm off A1 towards the free side
    bare_seen = (0.0, -250.0)
    far_seen = (a1.centre_mm[0], a1.centre_mm[1] - 10.0)
    px = det.plane.to_image_px(np.array([bare_seen, far_seen]))
    bare = Detection("pawn", bare_seen, 16.0, "A", 0.5, tuple(map(float, px[0])), 0, 0.0, "X1")
    far = Detection("pawn", far_seen, 16.0, "A", 0.5, tuple(map(float, px[1])), 0, 0.0, "X2")
    hand = Detection("hand", (100.0, 100.0), 60.0, None, 0.8, (640.0, 300.0), 0, 0.0, None,
                     ((40.0, 40.0), (160.0, 40.0), (160.0, 160.0), (40.0, 160.0)))
    got = refiner.refine(image, Detections(0, 0.0, (bare, far, hand)), det.background)
    assert got.items == (bare, far, hand)  # A1 lies 10 mm away: more than half a radius, so the box stays
    near = Detection("pawn", (a1.centre_mm[0], a1.centre_mm[1] - 1.0), 16.0, "A", 0.5,
                     tuple(map(float, det.plane.to_image_px(np.array([[a1.centre_mm[0], a1.centre_mm[1] - 1.0]]))[0])))
    assert math.dist(refiner.refine(image, Detections(0, 0.0, (near,)), det.background).items[0].centre_mm,
                     truth["A1"]) <= 0.5  # while the same piece, seen from a box nearby, is found


def test_refine_needs_the_profile():
    with pytest.raises(VisionError, match="profile"):
        LearnedDetector("no-such-weights.onnx", None, refine=True)


@pytest.mark.skipif(importlib.util.find_spec("ultralytics") is None, reason="ultralytics not installed (pip install '.[learned]')")
def test_shipped_model_with_refine_gives_sub_millimetre_centres(scene):
    profile, det, image, _, _, truth = scene
    plain = load_learned(shipped_weights(), det.plane)
    refined = load_learned(shipped_weights(), det.plane, refine=True, profile=profile, background=det.background)

    def errors(found):
        pcs = list(found.pieces())
        return [min(math.dist(d.centre_mm, t) for d in pcs) for t in truth.values()]

    before, after = errors(plain.detect(image)), errors(refined.detect(image))
    assert max(after) <= 1.0  # every piece found, and found to a millimetre
    assert math.sqrt(np.mean(np.square(after))) < 0.5 * math.sqrt(np.mean(np.square(before)))


def test_drop_unfit_removes_piece_boxes_with_no_rim_but_keeps_occluders(scene):
    profile, det, image, _, boxes, truth = scene
    strict = BoxRefiner(det.plane, profile, drop_unfit=True)
    bare_seen = (0.0, -250.0)
    bare = Detection("pawn", bare_seen, 16.0, "A", 0.5, tuple(map(float, det.plane.to_image_px(np.array([bare_seen]))[0])))
    hand = Detection("hand", (100.0, 100.0), 60.0, None, 0.8, (640.0, 300.0), 0, 0.0, None,
                     ((40.0, 40.0), (160.0, 40.0), (160.0, 160.0), (40.0, 160.0)))
    got = strict.refine(image, Detections(0, 0.0, boxes.items + (bare, hand)), det.background)
    assert [d.piece for d in got] == [d.piece for d in boxes] + [None] and got.items[-1] == hand
