"""Learned detector: an ultralytics YOLO model exported to ONNX (or NCNN) in ``models/``.

ultralytics is imported only when a detector is built (it is an optional extra: ``pip install
'shotjudge[learned]'``); nothing is downloaded at run time - a missing or unreadable weights file is a
clear error that says how to get one. Boxes become board-mm detections through the calibration's
``PlaneMap.to_board_mm`` (``Detections.from_ultralytics``).

With ``refine=True`` (and the game's ``profile``) each piece's box centre is refined to a sub-pixel base
centre by the classical detector's rim fit (:mod:`vision.refine`), against the empty-board image
``background`` when given, else against the board around each box.
"""
from __future__ import annotations

from pathlib import Path
from typing import Mapping

import numpy as np

from .types import Detections, VisionError

__all__ = ["LearnedDetector", "DEFAULT_CLASSES"]

# model class name -> (kind, owner)
DEFAULT_CLASSES: Mapping[str, tuple[str, str | None]] = {
    "pawn_a": ("pawn", "A"), "pawn_b": ("pawn", "B"), "bat": ("bat", None),
    "marble_a": ("marble", "A"), "marble_b": ("marble", "B"), "hand": ("hand", None), "cue": ("cue", None),
}


class LearnedDetector:
    def __init__(self, weights: str | Path, plane, classes: Mapping[str, tuple[str, str | None]] = DEFAULT_CLASSES,
                 imgsz: int = 640, conf: float = 0.25, refine: bool = False, profile=None,
                 background: np.ndarray | None = None, drop_unfit: bool = False):
        path = Path(weights)
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
        self.plane, self.classes, self.imgsz, self.conf = plane, dict(classes), imgsz, conf
        self.background = background
        self.refiner = None
        if refine:
            from .refine import BoxRefiner

            self.refiner = BoxRefiner(plane, profile, drop_unfit=drop_unfit)

    def detect(self, image: np.ndarray, frame: int = 0, t_s: float = 0.0) -> Detections:
        result = self.model.predict(image, imgsz=self.imgsz, conf=self.conf, verbose=False)[0]
        dets = Detections.from_ultralytics(result, self.plane.to_board_mm, frame, t_s, self.classes, self.conf)
        if self.refiner is not None:
            dets = self.refiner.refine(image, dets, self.background)
        return dets
