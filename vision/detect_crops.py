"""The learned detector in real time: the whole frame only to (re)acquire, crops where the picture changed.

A whole 1280x720 frame through the network costs 140-210 ms on one core here; a batch of four 128 px crops
about 13 ms. Between whole frames the network runs only where the picture differs from what it was when
the pieces there were last detected: a piece at rest keeps its detection (stamped with the new frame), a
moving piece is found again in a crop at the camera's resolution (the model was trained on full-resolution
tiles, so a crop shows pieces at the size it knows; nothing is shrunk). The picture each place is compared
with is refreshed only where a crop ran, so a piece creeping a fraction of a pixel a frame is looked at
again once it has moved far enough to show, and never silently left behind. A whole frame runs again when
the changes are too many or too wide for crops (a hand over the board, the light changing), and at least
every ``refresh_s`` seconds.

Crops are batched through a network that takes any input size (the shipped ``shotjudge-det-crops.onnx``
through ONNX Runtime, or ``.pt`` weights through PyTorch); the whole frames go through the detector it is
given (the shipped fixed-size ONNX file).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import cv2
import numpy as np

from .detect_learned import LearnedDetector, one_box_per_disc
from .types import OCCLUDERS, Detection, Detections, VisionError, _numpy

__all__ = ["CroppedDetector", "changed_boxes"]

EDGE_PX = 2.0  # a piece's box this close to a crop's inner edge is taken as cut by it


def changed_boxes(now_small: np.ndarray, ref_small: np.ndarray, level: int, grow: int) -> list[tuple[int, int, int, int]]:
    """Boxes (x0, y0, x1, y1, in the small image's pixels, end exclusive) around the places where the two
    grey pictures differ by more than ``level``, each grown by ``grow`` pixels (and clipped)."""
    diff = cv2.absdiff(now_small, ref_small)
    _, mask = cv2.threshold(diff, level, 255, cv2.THRESH_BINARY)
    if not cv2.countNonZero(mask):
        return []
    n, _, stats, _ = cv2.connectedComponentsWithStats(cv2.dilate(mask, np.ones((3, 3), np.uint8)), connectivity=8)
    h, w = mask.shape
    out = []
    for x, y, bw, bh, _ in stats[1:n]:
        out.append((max(0, int(x) - grow), max(0, int(y) - grow), min(w, int(x + bw) + grow), min(h, int(y + bh) + grow)))
    return _merged(out)


def _merged(boxes: list[tuple[int, int, int, int]]) -> list[tuple[int, int, int, int]]:
    """Overlapping boxes joined until none overlap (a moving piece's old and new place become one box)."""
    boxes = list(boxes)
    joined = True
    while joined and len(boxes) > 1:
        joined = False
        for i in range(len(boxes)):
            for j in range(i + 1, len(boxes)):
                a, b = boxes[i], boxes[j]
                if a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]:
                    boxes[i] = (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))
                    del boxes[j]
                    joined = True
                    break
            if joined:
                break
    return boxes


def _tiles(box: tuple[int, int, int, int], size: int, width: int, height: int, overlap: int) -> list[tuple[int, int]]:
    """Top-left corners of ``size`` px crops covering ``box`` (whole-image px), neighbours sharing
    ``overlap`` px (so a piece on the seam lies whole in one of them), each inside the image."""
    def starts(lo: int, hi: int, limit: int) -> list[int]:
        top = max(0, limit - size)
        span = hi - lo
        if span <= size:
            return [min(max(0, (lo + hi) // 2 - size // 2), top)]
        k = math.ceil((span - size) / max(size - overlap, 1)) + 1
        return [min(max(0, round(lo + i * (span - size) / (k - 1))), top) for i in range(k)]

    return [(x, y) for y in starts(box[1], box[3], height) for x in starts(box[0], box[2], width)]


@dataclass(frozen=True)
class _Boxes:
    """An ultralytics ``Results``' boxes moved from a crop into the whole image (what
    ``Detections.from_ultralytics`` reads)."""
    xyxy: np.ndarray
    conf: np.ndarray
    cls: np.ndarray

    def __len__(self) -> int:
        return len(self.xyxy)


@dataclass(frozen=True)
class _Shifted:
    boxes: _Boxes
    names: dict


def _whole_in_crop(result, corner: tuple[int, int], size: int, image_wh: tuple[int, int], occluders: frozenset[str],
                   edge_px: float = EDGE_PX) -> _Shifted:
    """A crop's boxes in the whole image's px, without the boxes that touch the crop's edge where the
    image goes on beyond it: a piece cut by the crop's edge gets a box of its visible part (its centre
    off), and the crops overlap so that it lies whole in another; an occluder is kept however cut."""
    b = result.boxes
    xyxy = _numpy(b.xyxy).astype(float).reshape(-1, 4)
    conf, cls = _numpy(b.conf).astype(float).reshape(-1), _numpy(b.cls).astype(float).reshape(-1)
    x, y = corner
    lo = np.array([0 if x == 0 else edge_px, 0 if y == 0 else edge_px])
    hi = np.array([size if x + size >= image_wh[0] else size - edge_px, size if y + size >= image_wh[1] else size - edge_px])
    whole = (xyxy[:, 0] >= lo[0]) & (xyxy[:, 1] >= lo[1]) & (xyxy[:, 2] <= hi[0]) & (xyxy[:, 3] <= hi[1])
    names = result.names
    keep = whole | np.array([names[int(c)] in occluders for c in cls], bool)
    return _Shifted(_Boxes(xyxy[keep] + np.array([x, y, x, y], float), conf[keep], cls[keep]), names)


class CroppedDetector:
    """Settings in ``__init__``; ``detect(image, frame, t_s) -> Detections``, as the detector it wraps.

    ``full``: the learned detector for whole frames; ``crops``: one on weights of any input size for the
    crops (same classes, thresholds and game); ``piece_mm``: the largest piece's diameter (the margin kept
    round a change, and what a crop must hold whole). ``crop_px``: a crop's side; ``shrink``: the change is looked
    for on a picture this many times smaller; ``level``: grey levels of change that count; ``refresh_s``:
    the longest time between whole frames; ``max_crops`` / ``max_changed``: more crops, or a changed share
    of the picture above this, and the whole frame runs instead. A frame's crops share one side, the
    smallest multiple of 32 px that holds its widest change, up to ``crop_px`` (wider changes are tiled)."""

    def __init__(self, full: LearnedDetector, crops: LearnedDetector, piece_mm: float, crop_px: int = 128,
                 shrink: int = 4, level: int = 12, refresh_s: float = 5.0, max_crops: int = 10,
                 max_changed: float = 0.10):
        if crop_px % 32:
            raise VisionError(f"crop side must be a multiple of 32 px (the network's stride), got {crop_px}")
        self.full, self.crops = full, crops
        self.crop_px, self.shrink, self.level = int(crop_px), int(shrink), int(level)
        self.refresh_s, self.max_crops, self.max_changed = float(refresh_s), int(max_crops), float(max_changed)
        self.position_sigma_mm = full.position_sigma_mm
        self.plane = full.plane
        self._occluders = frozenset(name for name, (kind, _) in crops.classes.items() if kind in OCCLUDERS)
        centre_mm_per_px = float(np.asarray(self.plane.mm_per_px(np.zeros((1, 2)))).reshape(-1)[0])
        self.piece_px = float(piece_mm) / centre_mm_per_px
        self._ref: np.ndarray | None = None  # the small grey picture as it was when each place was last detected
        self._items: tuple[Detection, ...] = ()
        self._full_t_s = -math.inf
        self.whole_frames = 0  # counts, for the bench: whole frames run, crops run
        self.crops_run = 0
        self.crop_px_run = 0  # and the pixels of those crops

    def expect(self, layout) -> None:
        """Vision starts from a state (the first frame, a refused shot, a referee's correction): look at the
        whole picture again."""
        self.full.expect(layout)
        self._ref = None

    def detect(self, image: np.ndarray, frame: int = 0, t_s: float = 0.0) -> Detections:
        small = self._small(image)
        height, width = image.shape[:2]
        if self._ref is None or self._ref.shape != small.shape or t_s - self._full_t_s >= self.refresh_s \
                or t_s < self._full_t_s:
            return self._whole(image, small, frame, t_s)
        s = self.shrink
        boxes = changed_boxes(small, self._ref, self.level, 1)  # a moving piece: its old and new centre lie in them
        if not boxes:
            return Detections(frame, t_s, self._restamped(frame, t_s))
        changed = sum((b[2] - b[0]) * (b[3] - b[1]) for b in boxes) / float(small.size)
        full_boxes = [(b[0] * s, b[1] * s, min(width, b[2] * s), min(height, b[3] * s)) for b in boxes]
        half = math.ceil(self.piece_px / 2 + EDGE_PX + 1)  # a piece centred in a box lies whole inside a crop
        grown = [(b[0] - half, b[1] - half, b[2] + half, b[3] + half) for b in full_boxes]
        # one crop side for the frame's batch: the smallest the network takes that holds the widest change
        c = min(self.crop_px, 32 * math.ceil(max(max(g[2] - g[0], g[3] - g[1]) for g in grown) / 32))
        tiles = [t for g in grown for t in _tiles(g, c, width, height, 2 * half)]
        if changed > self.max_changed or len(tiles) > self.max_crops:
            return self._whole(image, small, frame, t_s)
        results = self.crops.predict_batch([np.ascontiguousarray(image[y:y + c, x:x + c]) for x, y in tiles], imgsz=c)
        self.crops_run += len(tiles)
        self.crop_px_run += len(tiles) * c * c
        found = [d for (x, y), result in zip(tiles, results)
                 for d in self.crops.detections_of(_whole_in_crop(result, (x, y), c, (width, height), self._occluders), frame, t_s).items
                 if d.centre_px is not None and any(_within(d.centre_px, b) for b in full_boxes)]
        new = self.crops.refined(image, one_box_per_disc(Detections(frame, t_s, tuple(found))))
        kept = tuple(d for d in self._restamped(frame, t_s)
                     if d.centre_px is None or not any(_within(d.centre_px, b) for b in full_boxes))
        dets = one_box_per_disc(Detections(frame, t_s, kept + new.items))
        for b in boxes:  # those places are now as detected
            self._ref[b[1]:b[3], b[0]:b[2]] = small[b[1]:b[3], b[0]:b[2]]
        self._items = dets.items
        return dets

    # -- parts --------------------------------------------------------------------------------------------
    def _whole(self, image: np.ndarray, small: np.ndarray, frame: int, t_s: float) -> Detections:
        dets = self.full.detect(image, frame, t_s)
        self.whole_frames += 1
        self._ref, self._items, self._full_t_s = small, dets.items, t_s
        return dets

    def _small(self, image: np.ndarray) -> np.ndarray:
        h, w = image.shape[:2]
        grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image
        return cv2.resize(grey, (w // self.shrink, h // self.shrink), interpolation=cv2.INTER_AREA)

    def _restamped(self, frame: int, t_s: float) -> tuple[Detection, ...]:
        return tuple(replace(d, frame=frame, t_s=t_s) for d in self._items)


def _within(px: tuple[float, float], box: tuple[int, int, int, int]) -> bool:
    return box[0] <= px[0] < box[2] and box[1] <= px[1] < box[3]
