"""The values passed between the vision stages: detections and tracks (events are ``rules.Event``).

Positions are board millimetres (``_mm``) everywhere after calibration; a detection also keeps
its image pixel centre (``_px``) for drawing and for refinement, but no stage past the detector
converts between the two (only ``calibration/`` does). Everything is frozen so a stage can never
change what an earlier stage saw.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np

__all__ = ["KINDS", "OCCLUDERS", "Detection", "Detections", "TrackState", "Track", "VisionError",
           "class_threshold", "lowest_threshold"]

KINDS = ("pawn", "bat", "marble", "hand", "cue")
OCCLUDERS = ("hand", "cue")
OWNERS = ("A", "B")


class VisionError(ValueError):
    """Bad input to a vision stage (a missing model, a frame of the wrong size...)."""


@dataclass(frozen=True)
class Detection:
    """One thing seen in one frame. ``piece`` is empty until the tracker names it.

    Occluders (hand, cue) carry their outline on the board (``outline_mm``, a polygon) so the tracker
    can tell which pieces are hidden under them; pieces carry a centre and a radius.
    """

    kind: str
    centre_mm: tuple[float, float]
    radius_mm: float
    owner: str | None = None
    score: float = 1.0
    centre_px: tuple[float, float] | None = None
    frame: int = 0
    t_s: float = 0.0
    piece: str | None = None
    outline_mm: tuple[tuple[float, float], ...] = ()
    #: when its row was read, after the frame's time (``t_s``, the middle row's): a rolling shutter reads
    #: the rows one after another, so a piece low in the picture is seen later than one high in it
    #: (``vision.rows``); 0 for a global shutter
    row_after_s: float = 0.0

    def __post_init__(self):
        if self.kind not in KINDS:
            raise VisionError(f"detection kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
        if self.owner is not None and self.owner not in OWNERS:
            raise VisionError(f"detection owner must be 'A', 'B' or None, got {self.owner!r}")

    @property
    def is_occluder(self) -> bool:
        return self.kind in OCCLUDERS

    @property
    def cls(self) -> tuple[str, str | None]:
        """What must agree for a detection to continue a track: kind and owner."""
        return (self.kind, self.owner)

    def named(self, piece: str) -> "Detection":
        return replace(self, piece=piece)


def _inside(poly: np.ndarray, x: float, y: float, margin: float) -> bool:
    import cv2

    return cv2.pointPolygonTest(poly, (float(x), float(y)), True) >= -margin


@dataclass(frozen=True)
class Detections:
    """Everything one frame showed: pieces and occluders, stamped with the frame index and time."""

    frame: int
    t_s: float
    items: tuple[Detection, ...] = ()

    def __iter__(self) -> Iterator[Detection]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def pieces(self) -> list[Detection]:
        return [d for d in self.items if not d.is_occluder]

    def occluders(self) -> list[Detection]:
        return [d for d in self.items if d.is_occluder]

    def occluded(self, centre_mm: Sequence[float], margin_mm: float = 0.0) -> str | None:
        """The kind of occluder ('hand'/'cue') covering ``centre_mm`` (within ``margin_mm``), or None."""
        for occ in self.occluders():
            if len(occ.outline_mm) >= 3:
                poly = np.asarray(occ.outline_mm, np.float32).reshape(-1, 1, 2)
                if _inside(poly, centre_mm[0], centre_mm[1], margin_mm):
                    return occ.kind
            elif math.dist(occ.centre_mm, centre_mm) <= occ.radius_mm + margin_mm:
                return occ.kind
        return None

    @classmethod
    def from_ultralytics(cls, result: Any, to_board: Callable[[np.ndarray], np.ndarray], frame: int, t_s: float,
                         names: Mapping[str, tuple[str, str | None]],
                         min_score: float | Mapping[str, float] = 0.25) -> "Detections":
        """Convert one ``ultralytics`` ``Results`` (boxes in image px) to board-mm detections.

        ``to_board`` is the calibration's pixel→mm mapping (N,2 px → N,2 mm); ``names`` maps the model's
        class names to (kind, owner), e.g. ``{"pawn_a": ("pawn", "A"), "hand": ("hand", None)}``.
        ``min_score``: one threshold, or one per class name (a class not named takes the lowest given).
        A piece's radius is half the mean box side measured in mm; an occluder keeps its box as outline.
        """
        boxes = getattr(result, "boxes", None)
        if boxes is None or len(boxes) == 0:
            return cls(frame, t_s, ())
        xyxy = np.asarray(_numpy(boxes.xyxy), float).reshape(-1, 4)
        conf = np.asarray(_numpy(boxes.conf), float).reshape(-1)
        class_ids = np.asarray(_numpy(boxes.cls), int).reshape(-1)
        model_names = result.names
        items = []
        for (x0, y0, x1, y1), score, cid in zip(xyxy, conf, class_ids):
            name = model_names[int(cid)]
            if score < class_threshold(min_score, name):
                continue
            if name not in names:
                raise VisionError(f"model class {name!r} has no meaning here (known: {', '.join(names)})")
            kind, owner = names[name]
            corners_px = np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1], [(x0 + x1) / 2, (y0 + y1) / 2]])
            mm = np.asarray(to_board(corners_px), float)
            centre = (float(mm[4, 0]), float(mm[4, 1]))
            if kind in OCCLUDERS:
                outline = tuple((float(x), float(y)) for x, y in mm[:4])
                radius = float(np.max(np.hypot(*(mm[:4] - mm[4]).T)))
                items.append(Detection(kind, centre, radius, None, float(score), ((x0 + x1) / 2, (y0 + y1) / 2),
                                       frame, t_s, outline_mm=outline))
            else:
                w = math.dist(mm[0], mm[1]) + math.dist(mm[3], mm[2])
                h = math.dist(mm[0], mm[3]) + math.dist(mm[1], mm[2])
                items.append(Detection(kind, centre, (w + h) / 8.0, owner, float(score),
                                       (float((x0 + x1) / 2), float((y0 + y1) / 2)), frame, t_s))
        return cls(frame, t_s, tuple(items))


def class_threshold(conf: float | Mapping[str, float], name: str) -> float:
    """The score a box of class ``name`` needs: one threshold for all, or one per class name (a class not
    named takes the lowest given)."""
    return float(conf.get(name, lowest_threshold(conf))) if isinstance(conf, Mapping) else float(conf)


def lowest_threshold(conf: float | Mapping[str, float]) -> float:
    return float(min(conf.values())) if isinstance(conf, Mapping) else float(conf)


def _numpy(value: Any) -> np.ndarray:
    if hasattr(value, "cpu"):
        value = value.cpu()
    if hasattr(value, "numpy"):
        value = value.numpy()
    return np.asarray(value)


@dataclass(frozen=True)
class TrackState:
    """A named piece at one frame: measured (``observed``) or predicted while hidden or missed."""

    piece: str
    frame: int
    t_s: float
    centre_mm: tuple[float, float]
    velocity_mm_s: tuple[float, float] = (0.0, 0.0)
    observed: bool = True
    occluded: str | None = None
    #: the share of ``t_s`` that is its row's delay (``Detection.row_after_s``): ``t_s - row_after_s`` is the
    #: frame's own stamp, which is what a stream's clock scatters (``vision.clock``)
    row_after_s: float = 0.0

    @property
    def speed_mm_s(self) -> float:
        return math.hypot(*self.velocity_mm_s)


@dataclass(frozen=True)
class Track:
    """A piece's history through a shot and, if it left the surface, how and when."""

    piece: str
    kind: str
    owner: str | None
    radius_mm: float
    states: tuple[TrackState, ...] = ()
    left: str | None = None  # 'pocket' | 'off' | 'pit' | 'lost' | 'pickup'
    left_t_s: float | None = None
    left_where: str | None = None  # pocket name, cushion side, or "hand" (into the pit under a hand, unseen)
    left_frame: int | None = None
    left_hidden_by: str | None = None  # the occluder ("hand", "cue") it was under when its track ended, if any

    @property
    def pit_unseen(self) -> bool:
        """Called in the pit because it vanished under a hand that reached the pit (inferred, not seen)."""
        return self.left == "pit" and self.left_where == "hand"

    def observed(self) -> list[TrackState]:
        return [s for s in self.states if s.observed]

    def rows(self) -> np.ndarray:
        """The row delays (``TrackState.row_after_s``) of the observed states, in the order of ``arrays``."""
        return np.array([s.row_after_s for s in self.observed()], float)

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(t_s, xy_mm, frame) of the observed states, as arrays for fitting."""
        obs = self.observed()
        t = np.array([s.t_s for s in obs], float)
        xy = np.array([s.centre_mm for s in obs], float).reshape(-1, 2)
        fr = np.array([s.frame for s in obs], int)
        return t, xy, fr
