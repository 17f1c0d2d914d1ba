"""Why the learned detector misses pieces: every missed piece with its circumstances and the detection nearest it.

Used by ``bench/learned.py --misses FILE``. A piece is *missed* exactly as ``learned.py`` counts it: at least
half its top face shows and no detection of its class at the operating confidence has its centre within
half the piece's box size (one detection per piece, nearest first). For each miss the detector's output at
a floor confidence (0.01) says what it made of the piece:

* ``mix-up``      a detection of another piece class at operating confidence lies on it (wrong player, or
                  pawn/bat) - a miss, never relabelled;
* ``taken``       a detection of its class lies on it but was matched to a neighbour (one box for two
                  touching pieces);
* ``off-centre``  a detection of its class overlaps its box (IoU >= 0.1) but its centre is too far;
* ``low-score``   a detection of its class lies on it below the operating confidence (its score is kept);
* ``nothing``     no detection of its class on it even at the floor.

The circumstances come from replaying the scene generator (``random_scene`` with the same seeded rng as
``render_labelled``), so speed, gaps and distances are the truth in millimetres, not guesses from the image.
"""
from __future__ import annotations

import csv
import math
import os
import tempfile
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass

import numpy as np

from judge.training.data import PIECE_CLASSES, random_scene
from vision.types import class_threshold

__all__ = ["FLOOR_CONF", "Candidate", "MissLog", "candidates", "scene_context"]

FLOOR_CONF = 0.01
TOUCH_MM = 2.0  # the scene generator puts "touching" pieces 0-1.5 mm apart
NEAR_MM = 15.0  # "near" a cushion, pocket or the pit: the piece's edge within this of it
EDGE_PX = 12.0  # "at the frame edge": the piece's box within this of the border
CAUSES = ("mix-up", "taken", "off-centre", "low-score", "nothing")


@dataclass(frozen=True)
class Candidate:
    cls: str
    score: float
    xyxy: tuple[float, float, float, float]

    @property
    def centre_px(self) -> tuple[float, float]:
        return (self.xyxy[0] + self.xyxy[2]) / 2.0, (self.xyxy[1] + self.xyxy[3]) / 2.0


@dataclass(frozen=True)
class Miss:
    game: str
    seed: int
    frame: int
    piece: str
    cls: str
    cause: str
    visible: float
    speed_mm_s: float
    blur_px: float
    gap_mm: float  # to the nearest other piece (edge to edge); inf when alone
    edge_px: float  # box to the nearest frame border (0 = cut by it)
    place: str  # open / cushion / pocket / pit (what the piece's edge is within NEAR_MM of)
    size_mm: float  # diameter
    box_px: float  # the box's larger side
    best_cls: str  # best-overlapping detection at the floor confidence ('' if none)
    best_score: float
    best_iou: float
    best_offset: float  # its centre's distance in units of the hit tolerance
    own_score: float  # highest score of a detection of the right class within tolerance (0 if none)
    other_cls: str  # the highest-scoring detection of another piece class within tolerance ('' if none)
    other_score: float


def candidates(detector, image: np.ndarray) -> list[Candidate]:
    """Every piece detection down to ``FLOOR_CONF`` (the ``LearnedDetector``'s own classes and NMS)."""
    r = detector.predict(image, conf=FLOOR_CONF, max_det=2000)
    names = r.names
    out = []
    for (x0, y0, x1, y1), s, c in zip(r.boxes.xyxy.tolist(), r.boxes.conf.tolist(), r.boxes.cls.tolist()):
        name = names[int(c)]
        if name in PIECE_CLASSES:
            out.append(Candidate(name, float(s), (x0, y0, x1, y1)))
    return out


def scene_context(game: str, seed: int, n_frames: int, profile, settings) -> dict:
    """{frame index: {piece id: (x_mm, y_mm, r_mm, speed_mm_s, blur_mm, gap_mm, place)}}, replaying the
    scenes ``render_labelled(game, seed, n_frames)`` draws (same rng, same order)."""
    rng = np.random.default_rng([seed, 0x7A1])
    blur = settings.blur_samples > 1 or settings.rolling_shutter_s > 0
    spec = profile.spec
    out = {}
    for i in range(n_frames):
        frame, states_at = random_scene(game, profile, rng, i, i * 1.0)
        later = {p.id: p for p in states_at(i * 1.0 + 1.0).pieces}
        pcs = frame.pieces
        ctx = {}
        for p in pcs:
            q = later[p.id]
            speed = math.hypot(q.x_mm - p.x_mm, q.y_mm - p.y_mm)
            gap = min((math.hypot(p.x_mm - o.x_mm, p.y_mm - o.y_mm) - p.radius_mm - o.radius_mm
                       for o in pcs if o.id != p.id), default=math.inf)
            ctx[p.id] = (p.x_mm, p.y_mm, p.radius_mm, speed, speed * settings.exposure_s if blur else 0.0, gap,
                         _place(spec, p.x_mm, p.y_mm, p.radius_mm))
        out[i] = ctx
    return out


def _place(spec, x: float, y: float, r: float) -> str:
    """Where a piece of radius ``r`` at (x, y) lies on the game's surface (``spec``: ``rules.game``):
    near a pocket, a cushion or the pit, or in the open."""
    if spec.pockets_mm:
        h = spec.half_mm
        if math.hypot(abs(x) - h, abs(y) - h) - spec.pocket_radius_mm - r < NEAR_MM:
            return "pocket"
        return "cushion" if h - max(abs(x), abs(y)) - r < NEAR_MM else "open"
    return "pit" if math.hypot(x, y) - spec.pit_radius_mm - r < NEAR_MM else "open"


def _iou(a, b) -> float:
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    if w <= 0 or h <= 0:
        return 0.0
    inter = w * h
    return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter)


def _tol(b) -> float:
    return 0.5 * max(b.xyxy[2] - b.xyxy[0], b.xyxy[3] - b.xyxy[1])


def conf_text(conf: float | dict) -> str:
    return ",".join(f"{k}={v:g}" for k, v in conf.items()) if isinstance(conf, dict) else f"{conf:g}"


def match(truth, cands, conf: float | dict) -> tuple[set[int], set[int]]:
    """Indices of ``truth`` hit at ``conf`` and of the ``cands`` that hit them (``learned.score``'s greedy
    nearest-first matching)."""
    pairs = []
    for j, c in enumerate(cands):
        if c.score < class_threshold(conf, c.cls):
            continue
        for i, b in enumerate(truth):
            if b.cls == c.cls:
                d = math.dist(c.centre_px, b.centre_px)
                if d <= _tol(b):
                    pairs.append((d, i, j))
    used_t, used_d = set(), set()
    for d, i, j in sorted(pairs):
        if i not in used_t and j not in used_d:
            used_t.add(i)
            used_d.add(j)
    return used_t, used_d


class MissLog:
    """Collects every counted piece's circumstances and every miss; ``tables()`` prints the summary."""

    FLAGS = ("partly covered", "touching", "moving", "blur > radius", "at frame edge", "cushion", "pocket",
             "pit", "odd-size marble")

    def __init__(self, conf: float | dict, count_visible: float):
        self.conf, self.count_visible = conf, count_visible
        self.misses: list[Miss] = []
        self.pieces = defaultdict(lambda: [0, 0])  # (cls, flag) -> [n, missed]
        self.false = Counter()  # (detected class, where) -> count

    def add(self, lf, context: dict, cands: list[Candidate], profile) -> int:
        """Score one labelled frame; returns its number of misses."""
        truth = [b for b in lf.boxes if b.cls in PIECE_CLASSES]
        hit, used = match(truth, cands, self.conf)
        self._false_alarms(lf, truth, cands, used)
        h, w = lf.image.shape[:2]
        marble_mm = profile.geometry.get("marble_diameter_mm")
        n_miss = 0
        for i, b in enumerate(truth):
            if b.visible < self.count_visible:
                continue
            x, y, r, speed, blur_mm, gap, place = context[b.piece]
            size_px = max(b.xyxy[2] - b.xyxy[0], b.xyxy[3] - b.xyxy[1])
            px_per_mm = min(b.xyxy[2] - b.xyxy[0], b.xyxy[3] - b.xyxy[1]) / (2 * r)  # the unsmeared side, roughly
            blur_px = blur_mm * px_per_mm
            edge = min(b.xyxy[0], b.xyxy[1], w - b.xyxy[2], h - b.xyxy[3])
            kind = b.cls.split("_")[0]
            flags = {"all": True, "partly covered": b.visible < 0.99, "touching": gap <= TOUCH_MM, "moving": speed > 0,
                     "blur > radius": blur_mm > r, "at frame edge": edge < EDGE_PX, "cushion": place == "cushion",
                     "pocket": place == "pocket", "pit": place == "pit",
                     "odd-size marble": kind == "marble" and abs(2 * r - marble_mm) > 0.5}
            missed = i not in hit
            for f, on in flags.items():
                if on:
                    self.pieces[(b.cls, f)][0] += 1
                    self.pieces[(b.cls, f)][1] += missed
            if not missed:
                continue
            n_miss += 1
            self.misses.append(self._miss(lf, truth, i, cands, hit, dict(
                visible=round(b.visible, 3), speed_mm_s=round(speed, 1), blur_px=round(blur_px, 1),
                gap_mm=round(gap, 1), edge_px=round(edge, 1), place=place, size_mm=round(2 * r, 1),
                box_px=round(size_px, 1))))
        return n_miss

    def _false_alarms(self, lf, truth, cands, used) -> None:
        """Where each detection that hit no piece lies (the ones ``learned.py`` counts as false)."""
        occluders = [b for b in lf.boxes if b.cls not in PIECE_CLASSES]
        for j, c in enumerate(cands):
            if c.score < class_threshold(self.conf, c.cls) or j in used:
                continue
            near = [b for b in truth if math.dist(c.centre_px, b.centre_px) <= _tol(b)]
            if any(b.cls == c.cls and b.visible >= self.count_visible for b in near):
                where = "2nd box, same class"
            elif any(b.cls == c.cls for b in near):
                where = "2nd box, covered piece"
            elif near:
                where = "on a piece, other class"
            elif any(_iou(c.xyxy, b.xyxy) > 0 for b in truth):
                where = "touching a piece's box"
            elif any(o.xyxy[0] <= c.centre_px[0] <= o.xyxy[2] and o.xyxy[1] <= c.centre_px[1] <= o.xyxy[3]
                     for o in occluders):
                where = "on the hand or cue"
            else:
                where = "on the board"
            self.false[(c.cls, where)] += 1

    def _miss(self, lf, truth, i, cands, hit, circumstances) -> Miss:
        b, tol = truth[i], _tol(truth[i])
        best, best_key = None, (0.0, 0.0)
        own = 0.0
        other, other_score = "", 0.0
        taken = off = False
        others = [k for k in range(len(truth)) if k != i]
        for c in cands:
            iou = _iou(c.xyxy, b.xyxy)
            off_by = math.dist(c.centre_px, b.centre_px) / tol
            if (iou, c.score) > best_key and (iou > 0 or off_by <= 1):
                best, best_key = c, (iou, c.score)
            if off_by <= 1 and c.cls != b.cls and c.score > other_score:
                other, other_score = c.cls, c.score
            if c.cls == b.cls:
                if off_by <= 1:
                    own = max(own, c.score)
                    if c.score >= class_threshold(self.conf, c.cls):
                        taken = taken or any(truth[k].cls == b.cls and k in hit
                                             and math.dist(c.centre_px, truth[k].centre_px) <= _tol(truth[k])
                                             for k in others)
                elif c.score >= class_threshold(self.conf, c.cls) and iou >= 0.1:
                    off = True
        cause = ("mix-up" if other and other_score >= class_threshold(self.conf, other) else "taken" if taken else "off-centre" if off
                 else "low-score" if own > 0 else "nothing")
        return Miss(lf.game, lf.seed, lf.index, b.piece, b.cls, cause, **circumstances,
                    best_cls=best.cls if best else "", best_score=round(best.score, 3) if best else 0.0,
                    best_iou=round(best_key[0], 3),
                    best_offset=round(math.dist(best.centre_px, b.centre_px) / tol, 2) if best else math.inf,
                    own_score=round(own, 3), other_cls=other, other_score=round(other_score, 3))

    def write(self, path: str) -> None:
        """CSV of every miss, written whole or not at all."""
        fields = list(Miss.__dataclass_fields__)
        d = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(dir=d, suffix=".tmp")
        try:
            with os.fdopen(fd, "w", newline="") as f:
                wr = csv.DictWriter(f, fieldnames=fields)
                wr.writeheader()
                for m in self.misses:
                    wr.writerow(asdict(m))
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise

    def tables(self) -> str:
        lines = [f"misses at conf {conf_text(self.conf)}: {len(self.misses)}; cause per class "
                 f"(mix-up: other class on it; taken: its box matched a neighbour; off-centre; low-score: "
                 f"its class below conf; nothing: not even at {FLOOR_CONF})"]
        lines.append(f"{'class':<10} {'n':>5} {'missed':>6}  " + " ".join(f"{c:>10}" for c in CAUSES))
        by = defaultdict(Counter)
        for m in self.misses:
            by[m.cls][m.cause] += 1
        for cls in PIECE_CLASSES + ("total",):
            cnt = by[cls] if cls != "total" else sum(by.values(), Counter())
            n = sum(self.pieces[(k, "all")][0] for k in (PIECE_CLASSES if cls == "total" else (cls,)))
            if n:
                lines.append(f"{cls:<10} {n:5d} {sum(cnt.values()):6d}  " + " ".join(f"{cnt[c]:10d}" for c in CAUSES))
        mixes = Counter((m.cls, m.other_cls) for m in self.misses if m.cause == "mix-up")
        if mixes:
            lines.append("mix-ups (truth -> detected): "
                         + ", ".join(f"{a}->{b} {n}" for (a, b), n in mixes.most_common()))
        low = sorted(m.own_score for m in self.misses if m.cause == "low-score")
        if low:
            q = np.percentile(low, [25, 50, 75])
            lines.append(f"low-score misses: own-class score quartiles {q[0]:.3f} / {q[1]:.3f} / {q[2]:.3f} "
                         f"({sum(s >= 0.1 for s in low)} of {len(low)} at >= 0.10)")
        wheres = ("2nd box, same class", "2nd box, covered piece", "on a piece, other class", "touching a piece's box",
                  "on the hand or cue", "on the board")
        lines.append(f"false alarms at conf {conf_text(self.conf)}: {sum(self.false.values())}, by detected class and place")
        lines.append(f"{'class':<10} " + " ".join(f"{w[:14]:>14}" for w in wheres))
        for cls in PIECE_CLASSES:
            if any(self.false[(cls, w)] for w in wheres):
                lines.append(f"{cls:<10} " + " ".join(f"{self.false[(cls, w)]:14d}" for w in wheres))
        lines.append("miss rate by circumstance (a piece may have several): n pieces, missed, rate")
        lines.append(f"{'circumstance':<16} " + " ".join(f"{c:>18}" for c in PIECE_CLASSES))
        for f in ("all",) + self.FLAGS:
            cells = []
            for cls in PIECE_CLASSES:
                n, k = self.pieces[(cls, f)]
                cells.append(f"{n:5d} {k:4d} {100 * k / n:6.1f}%" if n else f"{'-':>18}")
            if any(self.pieces[(cls, f)][0] for cls in PIECE_CLASSES):
                lines.append(f"{f:<16} " + " ".join(cells))
        return "\n".join(lines)
