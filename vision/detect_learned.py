"""Learned detector: an ultralytics YOLO model exported to ONNX (or NCNN) in ``models/``.

ultralytics is imported only when a detector is built (it is an optional extra: ``pip install
'shotjudge[learned]'``); nothing is downloaded at run time - a missing or unreadable weights file is a
clear error that says how to get one. Boxes become board-mm detections through the calibration's
``PlaneMap.to_board_mm`` (``Detections.from_ultralytics``).

With ``refine=True`` (and the game's ``profile``) each piece's box centre is refined to a sub-pixel base
centre by the classical detector's rim fit (:mod:`vision.refine`), against the empty-board image
``background`` when given, else against the board around each box.

With ``game`` set, only that game's classes compete for each box (a Cvrnkaná frame has no pawns or bat,
a Novuss frame no marbles): the other classes' scores are zeroed before non-maximum suppression, so a
marble the network half took for a pawn comes out as the marble class it scored next, and a pebble read
as a pawn in a marble game is gone (``bench/learned_remedies.py``, 200 unseen frames: 69 misses instead of
73, 166 false alarms instead of 255). ``iou`` is the NMS overlap threshold (ultralytics' 0.7 by default;
0.5 halves the second boxes on one piece at no loss of touching pieces in the same bench).
"""
from __future__ import annotations

from pathlib import Path
from typing import Mapping

import numpy as np

from rules.game import GAMES

from .types import Detections, VisionError, lowest_threshold

__all__ = ["LearnedDetector", "DEFAULT_CLASSES", "GAME_KINDS", "one_box_per_disc"]

# model class name -> (kind, owner)
DEFAULT_CLASSES: Mapping[str, tuple[str, str | None]] = {
    "pawn_a": ("pawn", "A"), "pawn_b": ("pawn", "B"), "bat": ("bat", None),
    "marble_a": ("marble", "A"), "marble_b": ("marble", "B"), "hand": ("hand", None), "cue": ("cue", None),
}

# what can be on the surface in each game (the rest of a model's classes never compete there)
GAME_KINDS: Mapping[str, frozenset[str]] = {name: frozenset(game.seen_kinds()) for name, game in GAMES.items()}


def _predictor_keeping(keep: frozenset[str]):
    """ultralytics' detection predictor with the scores of classes not named in ``keep`` zeroed before NMS
    (its ``classes`` option filters only after each box took its best class)."""
    from ultralytics.models.yolo.detect import DetectionPredictor

    class GamePredictor(DetectionPredictor):
        def postprocess(self, preds, img, orig_imgs, **kwargs):
            raw = preds[0] if isinstance(preds, (list, tuple)) else preds
            names = self.model.names  # the loaded file's own class names, by index
            nc = len(names)
            if raw.dim() == 3 and raw.shape[1] == 4 + nc:  # (batch, 4 + classes, anchors); not end-to-end heads
                raw[:, [4 + k for k in range(nc) if names[k] not in keep]] = 0.0
            return super().postprocess(preds, img, orig_imgs, **kwargs)

    return GamePredictor


class LearnedDetector:
    #: the 1-sigma error of a box centre (None: the event extractor estimates it from the tracks)
    position_sigma_mm: float | None = None

    def __init__(self, weights: str | Path, plane, classes: Mapping[str, tuple[str, str | None]] = DEFAULT_CLASSES,
                 imgsz: int = 640, conf: float | Mapping[str, float] = 0.25, refine: bool = False, profile=None,
                 background: np.ndarray | None = None, drop_unfit: bool = False, game: str | None = None,
                 iou: float = 0.7):
        path = Path(weights)
        if game is not None and game not in GAME_KINDS:
            raise VisionError(f"learned detector: game must be one of {', '.join(GAME_KINDS)}, got {game!r}")
        if refine and profile is None:
            raise VisionError("learned detector: refine=True needs the game's profile (piece sizes and heights)")
        if not path.exists():
            raise VisionError(f"learned detector: weights {path} not found (train them with 'shotjudge train' "
                              f"or use the classical detector)")
        try:
            import os
            os.environ.setdefault("YOLO_OFFLINE", "1")
            from ultralytics import YOLO
        except ImportError:
            raise VisionError("learned detector: ultralytics is not installed (pip install 'shotjudge[learned]')") from None
        try:
            self.model = YOLO(str(path), task="detect")
        except Exception as exc:  # a corrupt file: ultralytics raises many kinds
            raise VisionError(f"learned detector: cannot load {path}: {exc}") from None
        if isinstance(conf, Mapping):
            unknown = set(conf) - set(classes)
            if unknown or not conf:
                raise VisionError(f"learned detector: confidence thresholds for unknown classes: "
                                  f"{', '.join(sorted(unknown)) or 'none given'} (known: {', '.join(classes)})")
            conf = dict(conf)
        self.plane, self.classes, self.imgsz, self.conf, self.iou = plane, dict(classes), imgsz, conf, float(iou)
        self.game = game
        self._predictor = None
        if game is not None:
            self._predictor = _predictor_keeping(frozenset(n for n, (kind, _) in self.classes.items()
                                                           if kind in GAME_KINDS[game]))
        self.background = background
        self.refiner = None
        if refine:
            from .refine import BoxRefiner

            self.refiner = BoxRefiner(plane, profile, drop_unfit=drop_unfit)

    def predict(self, image: np.ndarray, conf: float | None = None, max_det: int = 300):
        """The network's boxes for one image (an ultralytics ``Results``), down to ``conf`` (default: the
        detector's lowest threshold), with this detector's game classes and NMS."""
        floor = lowest_threshold(self.conf if conf is None else conf)
        return self.model.predict(image, imgsz=self.imgsz, conf=floor, iou=self.iou,
                                  max_det=max_det, verbose=False, predictor=self._predictor)[0]

    def expect(self, layout) -> None:
        """The pieces on the surface now: the network needs no colours, so nothing to learn (the classical
        detector measures them here)."""

    def predict_batch(self, images: list[np.ndarray], imgsz: int) -> list:
        """The network's boxes for several images of one size at once (crops: ``vision.detect_crops``), one
        ``Results`` each; needs weights that take any input size (``.pt``, NCNN), not the fixed ONNX file."""
        floor = lowest_threshold(self.conf)
        return list(self.model.predict(images, imgsz=imgsz, conf=floor, iou=self.iou, max_det=300, verbose=False,
                                       predictor=self._predictor))

    def detections_of(self, result, frame: int, t_s: float) -> Detections:
        """One ``Results`` (boxes in the whole image's px) as board-mm detections, one box per disc."""
        return one_box_per_disc(Detections.from_ultralytics(result, self.plane.to_board_mm, frame, t_s, self.classes,
                                                            self.conf))

    def refined(self, image: np.ndarray, dets: Detections) -> Detections:
        """``dets`` with sub-pixel centres by the rim fit where this detector refines (else as they are)."""
        return dets if self.refiner is None else self.refiner.refine(image, dets, self.background)

    def detect(self, image: np.ndarray, frame: int = 0, t_s: float = 0.0) -> Detections:
        return self.refined(image, self.detections_of(self.predict(image), frame, t_s))


def one_box_per_disc(dets: Detections) -> Detections:
    """Drop a piece box whose centre lies within the smaller radius of a higher-scoring box of the same
    class: two discs cannot overlap that far, so it is a second box on one piece (NMS keeps boxes that
    overlap less than its IoU, and a low threshold lets the weaker ones through). The smaller radius,
    because a smeared piece's box is long: its neighbour is no duplicate."""
    kept: list = []
    dropped: set[int] = set()
    for d in sorted(dets.pieces(), key=lambda d: -d.score):
        if any(k.kind == d.kind and k.owner == d.owner and
               np.hypot(k.centre_mm[0] - d.centre_mm[0], k.centre_mm[1] - d.centre_mm[1]) < min(k.radius_mm, d.radius_mm)
               for k in kept):
            dropped.add(id(d))
        else:
            kept.append(d)
    return Detections(dets.frame, dets.t_s, tuple(d for d in dets.items if id(d) not in dropped))
