"""Pieces smeared by their own motion during the exposure: measured as a streak, not fitted as a disc.

At strike speed a piece travels a good part of its diameter while the shutter is open (the Novuss bat at
4 m/s moves 32 mm in an 8 ms exposure), so the camera sees the piece's disc swept along its motion and
blended with the board: a *streak*, which no disc outline fits. A streak is as wide as the piece and as long
as the piece plus its travel, and its middle is where the piece was at mid-exposure, which is how the
pipeline reads a blurred centre (``vision.events``). :class:`StreakFinder` measures one candidate region
(what the disc fits of one blob left unexplained) with OpenCV:

* *foreground*: the shadow-blind strength against the empty board (:func:`vision.rim.foreground_strength`),
  thresholded at a share of the streak's own core level (a smear dilutes the contrast), holes closed, the
  largest connected part kept;
* *shape*: ``cv2.minAreaRect`` of its outline in board mm gives width and length; the width must be the
  piece's diameter, the length longer by at most the travel a piece can make in an exposure, and the area
  must fill the stadium they span (a hand's fingers or the cue's taper do not);
* *class*: each pixel's colour change against the board is unmixed as ``coverage x (piece - board)`` for
  every class prototype; the class whose colour explains the change best, clearly better than the next,
  and well enough overall (skin or a sleeve is not a blend of a piece with the board);
* *middle*: the strength-weighted centroid (``cv2.moments``): the smear is symmetric about the
  mid-exposure position; the piece's height is taken off as for a sharp piece (:mod:`vision.parallax`).

Only blobs that failed the disc fit come here, so the sharp-piece fast path pays nothing for it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

import cv2
import numpy as np

from .rim import foreground_strength

__all__ = ["Streak", "StreakFinder"]


@dataclass(frozen=True)
class Streak:
    """One smeared piece: its class, mid-exposure base centre and what it was judged on."""

    kind: str
    owner: str | None
    centre_mm: tuple[float, float]  # base centre at mid-exposure, board mm
    centre_px: tuple[float, float]  # image pixel of the streak's middle
    width_mm: float  # across the motion (seen plane)
    length_mm: float  # along the motion
    misfit: float  # share of the colour change the class's colour leaves unexplained
    coverage: float  # median share of the piece in the streak's core (1: not blended with the board)
    outline_px: np.ndarray  # (N, 2) image px, the streak's outline


class StreakFinder:
    """Settings in ``__init__``; ``could_be(...)`` (cheap, on the coarse region) then
    ``find(image, empty, part, box, scale, origin, prototypes) -> Streak | None``.

    ``radius_mm``, ``top_z_mm`` and ``walls`` are per piece kind (the profile's sizes and seen heights; a
    disc shows its side wall, a marble does not). ``max_smear_mm``: the longest travel during one exposure
    (10 m/s for 8 ms is 80 mm)."""

    def __init__(self, plane, parallax, radius_mm: Mapping[str, float], top_z_mm: Mapping[str, float],
                 walls: Mapping[str, bool], max_smear_mm: float = 90.0, level: float = 0.35,
                 width: tuple[float, float] = (0.72, 1.3), min_elongation: float = 1.12,
                 fill: tuple[float, float] = (0.75, 1.2), max_misfit: float = 0.45, margin: float = 0.7,
                 min_coverage: float = 0.2):
        self.plane, self.parallax = plane, parallax
        self.radius_mm, self.top_z_mm, self.walls = dict(radius_mm), dict(top_z_mm), dict(walls)
        self.max_smear_mm, self.level = float(max_smear_mm), float(level)
        self.width, self.min_elongation, self.fill = width, float(min_elongation), fill
        self.max_misfit, self.margin, self.min_coverage = float(max_misfit), float(margin), float(min_coverage)

    def could_be(self, area_mm2: float, width_mm: float, length_mm: float, cell_mm: float) -> bool:
        """Whether a candidate region, measured coarsely (its area; the sides of its ``cv2.minAreaRect``,
        each to within a cell of ``cell_mm``), can be a streak at all: from half the smallest disc to the
        longest smear of the largest piece, about a piece wide, and longer than wide. Cheap, so that
        hands, the cue and round leftovers are not measured."""
        r0, r1 = min(self.radius_mm.values()), max(self.radius_mm.values())
        d = 2.0 * self.width[1] * r1
        largest_mm2 = 1.5 * (d * (2.0 * r1 + self.max_smear_mm) + 0.25 * math.pi * d ** 2)
        if not 0.5 * math.pi * r0 ** 2 <= area_mm2 <= largest_mm2:
            return False
        return (2.0 * self.width[0] * r0 - cell_mm <= width_mm <= d + 2.0 * cell_mm
                and length_mm <= 2.0 * r1 + self.max_smear_mm + 2.0 * cell_mm
                and length_mm >= self.min_elongation * (width_mm - cell_mm))

    def find(self, image: np.ndarray, empty: np.ndarray, part: np.ndarray, box, scale: int, origin: tuple[int, int],
             prototypes: Mapping[tuple[str, str | None], np.ndarray]) -> Streak | None:
        """The streak among the pixels of ``part``: a mask over ``box`` (x, y, w, h) of the classical
        detector's coarse grid, ``scale`` image pixels a cell from image pixel ``origin``. ``prototypes``:
        class -> (B, G, R shares, log brightness vs the board), as the detector keeps them. None when it
        is not one piece's streak."""
        x, y, w, h = box
        q, (x0, y0) = scale, origin
        pad = 2
        region = cv2.copyMakeBorder(part.astype(np.uint8), pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=0)
        region = cv2.resize(cv2.dilate(region, np.ones((3, 3), np.uint8)), ((w + 2 * pad) * q, (h + 2 * pad) * q),
                            interpolation=cv2.INTER_NEAREST)
        xa, ya = x0 + (x - pad) * q, y0 + (y - pad) * q
        # the padded box may reach past the image: keep what is in it
        ca, ra = max(-xa, 0), max(-ya, 0)
        xa, ya = xa + ca, ya + ra
        xb, yb = min(xa + region.shape[1] - ca, image.shape[1]), min(ya + region.shape[0] - ra, image.shape[0])
        region = region[ra:ra + yb - ya, ca:ca + xb - xa]
        frame = image[ya:yb, xa:xb].astype(np.float32)
        board = empty[ya:yb, xa:xb].astype(np.float32)
        strength = cv2.blur(foreground_strength(frame, board), (3, 3))
        inside = region > 0
        if inside.sum() < 12:
            return None
        values = strength[inside]
        core_level = float(np.partition(values, int(0.95 * (values.size - 1)))[int(0.95 * (values.size - 1))])
        if core_level < 0.1:
            return None
        thr = self.level * core_level
        mask = ((strength > thr) & inside).astype(np.uint8)
        mid_mm = self.plane.to_board_mm([[(xa + xb) / 2, (ya + yb) / 2]])
        r_px = min(self.radius_mm.values()) / float(self.plane.mm_per_px(mid_mm)[0])
        k = int(2 * math.ceil(0.35 * r_px) + 1)
        mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k)))
        n, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
        if n < 2:
            return None
        big = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
        mask = (labels == big).astype(np.uint8)
        cnts, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
        outline_px = max(cnts, key=len).reshape(-1, 2).astype(np.float64) + (xa, ya)
        outline_mm = self.plane.to_board_mm(outline_px).astype(np.float32)
        (_, _), (rw, rh), _ = cv2.minAreaRect(outline_mm)
        wid, length = min(rw, rh), max(rw, rh)
        stadium = wid * (length - wid) + 0.25 * math.pi * wid ** 2
        filled = float(cv2.contourArea(outline_mm)) / max(stadium, 1e-9)
        kinds = [kd for kd in self.radius_mm if self._shape_fits(kd, wid, length, filled)]
        if not kinds:
            return None
        cls, misfit, coverage = self._colour(frame, board, mask, prototypes, kinds)
        if cls is None:
            return None
        # the middle: strength-weighted centroid over the streak and its soft fringe
        fringe = cv2.dilate(mask, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5)))
        weight = np.maximum(strength - 0.5 * thr, 0.0) * fringe
        m = cv2.moments(weight)
        if m["m00"] <= 0:
            return None
        c_px = (m["m10"] / m["m00"] + xa, m["m01"] / m["m00"] + ya)
        seen = self.plane.to_board_mm([c_px])[0]
        base = self._base(seen, cls[0])
        return Streak(cls[0], cls[1], (float(base[0]), float(base[1])), (float(c_px[0]), float(c_px[1])), float(wid),
                      float(length), misfit, coverage, outline_px)

    # ------------------------------------------------------------------ parts
    def _shape_fits(self, kind: str, wid: float, length: float, filled: float) -> bool:
        d = 2.0 * self.radius_mm[kind] * self.parallax.scale(self.top_z_mm[kind])
        return (self.width[0] * d <= wid <= self.width[1] * d and length >= self.min_elongation * wid
                and length <= d + self.max_smear_mm and self.fill[0] <= filled <= self.fill[1])

    def _colour(self, frame, board, mask, prototypes, kinds):
        """(class, misfit, coverage) of the best-explaining class among ``kinds``, or (None, ...).

        Per pixel, the change against the board is projected on (class colour - board) over this board
        pixel: the coefficient is the piece's coverage there, what is left over the change not explained."""
        sel = mask > 0
        f, e = frame[sel], board[sel]  # (N, 3)
        change = f - e
        total = float(np.sqrt((change * change).sum(1)).sum())
        if total <= 0 or not prototypes:
            return None, 1.0, 0.0
        classes = list(prototypes)
        protos = np.stack([prototypes[c] for c in classes]).astype(np.float32)
        piece = protos[:, None, :3] * np.exp(protos[:, None, 3:]) * (e.sum(1) + 3.0)[None, :, None]  # (C, N, 3)
        towards = piece - e[None]
        alpha = np.clip((towards * change[None]).sum(2) / np.maximum((towards * towards).sum(2), 1e-6), 0.0, 1.2)
        left = change[None] - alpha[..., None] * towards
        misfits = np.sqrt((left * left).sum(2)).sum(1) / total
        order = np.argsort(misfits)
        best = int(order[0])
        misfit = float(misfits[best])
        second = float(misfits[order[1]]) if len(order) > 1 else math.inf
        coverage = float(np.median(alpha[best]))
        cls = classes[best]
        if (cls[0] not in kinds or misfit > self.max_misfit or misfit > self.margin * second
                or coverage < self.min_coverage):
            return None, misfit, coverage
        return cls, misfit, coverage

    def _base(self, seen_mm: np.ndarray, kind: str) -> np.ndarray:
        """Base centre under a streak's seen middle: a disc's outline is the union of its top face (seen
        larger and pushed away from the nadir) and its base (the side wall), symmetric about their midpoint;
        a marble is seen at its centre's height."""
        k = self.parallax.scale(self.top_z_mm[kind])
        if self.walls.get(kind, True):
            k = 0.5 * (1.0 + k)
        n = np.asarray(self.parallax.centre_mm[:2])
        return n + (np.asarray(seen_mm, float) - n) / k
