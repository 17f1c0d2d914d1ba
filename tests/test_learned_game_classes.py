"""LearnedDetector's game classes and NMS threshold: only the game's classes compete for a box, and no two
kept boxes of one class overlap more than the NMS IoU allows."""
from __future__ import annotations

import importlib.util
import math

import numpy as np
import pytest

from calibration.plane import PlaneMap
from judge.training.data import make_renderer
from judge.weights import shipped_weights
from sim.frames import PieceState, SimFrame
from vision.detectors import load_learned, make_detector
from vision.types import VisionError

SHIPPED = shipped_weights()

pytestmark = pytest.mark.skipif(importlib.util.find_spec("ultralytics") is None,
                                reason="ultralytics not installed (pip install '.[learned]')")


def _plane(cam) -> PlaneMap:
    return PlaneMap((cam.width, cam.height), cam.K, np.array(cam.dist), np.linalg.inv(cam.board_to_undistorted()))


@pytest.fixture(scope="module")
def novuss_scene():
    profile, cam, renderer = make_renderer("novuss", 777_011)  # a look no training renderer had
    g = profile.geometry
    r = g["pawn_diameter_mm"] / 2
    spots = [(-300, 200), (-100, -150), (150, 250), (350, -300), (0, 0), (2 * r + 0.5, 0)]
    pcs = [PieceState("bat", "bat", None, -250.0, -300.0, 0.0, 0.0, g["bat_diameter_mm"] / 2, True)]
    pcs += [PieceState(f"{'AB'[k % 2]}{k // 2 + 1}", "pawn", "AB"[k % 2], float(x), float(y), 0.0, 0.0, r, True)
            for k, (x, y) in enumerate(spots)]
    frame = SimFrame(0, 0.0, tuple(pcs), ())
    return profile, _plane(cam), renderer.render(frame), frame


def test_a_game_keeps_to_its_own_classes(novuss_scene):
    profile, plane, image, frame = novuss_scene
    own = load_learned(SHIPPED, plane, conf=0.05, game="novuss")
    other = load_learned(SHIPPED, plane, conf=0.05, game="cvrnkana")
    kinds = {d.kind for d in own.detect(image).items}
    assert kinds <= {"pawn", "bat", "hand", "cue"} and {"pawn", "bat"} <= kinds
    # told it watches marbles, the same network reports no pawn, bat or cue at all (marbles at most)
    assert {d.kind for d in other.detect(image).items} <= {"marble", "hand"}
    # and with its own game every piece is still found once, of the right class
    found = list(own.detect(image).pieces())
    for p in frame.pieces:
        u, v = plane.to_image_px(np.array([[p.x_mm, p.y_mm]]))[0]
        near = [d for d in found if math.dist(d.centre_px, (u, v)) < 12 and d.score >= 0.25]
        assert [(d.kind, d.owner) for d in near] == [(p.kind, p.owner)], p.id


def test_make_detector_takes_the_game_and_the_nms_threshold(novuss_scene):
    profile, plane, image, _ = novuss_scene
    assert make_detector("learned", plane, profile, SHIPPED).game == "novuss"  # by default, the profile's game
    assert make_detector("learned", plane, profile, SHIPPED, game=None).game is None  # every class competes
    det = make_detector("learned", plane, profile, SHIPPED, iou=0.3, conf=0.01)
    assert (det.game, det.iou) == ("novuss", 0.3)
    r = det.predict(image, conf=0.01, max_det=1000)
    xyxy, cls = r.boxes.xyxy.numpy(), r.boxes.cls.numpy()
    assert len(xyxy) > 7 and set(cls.tolist()) <= {0.0, 1.0, 2.0, 5.0, 6.0}
    for i in range(len(xyxy)):  # class-aware NMS at 0.3: no two boxes of one class overlap more
        for j in range(i + 1, len(xyxy)):
            if cls[i] == cls[j]:
                w = min(xyxy[i, 2], xyxy[j, 2]) - max(xyxy[i, 0], xyxy[j, 0])
                h = min(xyxy[i, 3], xyxy[j, 3]) - max(xyxy[i, 1], xyxy[j, 1])
                inter = max(w, 0) * max(h, 0)
                area = lambda b: (b[2] - b[0]) * (b[3] - b[1])  # noqa: E731
                assert inter / (area(xyxy[i]) + area(xyxy[j]) - inter) <= 0.3 + 1e-6


def test_an_unknown_game_is_a_one_line_error(novuss_scene):
    _, plane, _, _ = novuss_scene
    with pytest.raises(VisionError, match="game must be one of novuss, cvrnkana, got 'chess'"):
        load_learned(SHIPPED, plane, game="chess")
