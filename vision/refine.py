"""Sub-pixel centres for a learned detector's boxes, by the classical detector's rim fit.

A YOLO box finds a piece reliably but its centre is only as good as the box edges (a couple of
millimetres), and it is the centre of what the camera sees, not of the piece's base. The rim fit of
:mod:`vision.rim` measures the outline to a fraction of a pixel and removes the parallax of the piece's
height; the box gives it what it needs to start: where to look (the box centre) and what shape to expect
(the box's class: pawn, bat or marble, with the profile's radius and height).

The fit needs the board as it looks without the piece. With the empty-board image (the judge always has
one: ``--background``) the strength is exactly the classical detector's. Without one, the board around
each box stands in for it: the median colour of a ring just outside the box, which holds on a board of
one colour (lines and marks near a piece weaken the fit, and then the box centre is kept).

A fit that fails, looks unlike a piece (few rim rays, large residual, implausible edge bias) or would move
the centre by more than ``max_shift`` of the radius keeps the box's centre: the box is then the better
evidence, and the detection is passed on unchanged.
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from .board import Surface
from .parallax import Parallax, seen_height_mm
from .rim import RimFitter, RimSeed
from .types import Detection, Detections

__all__ = ["BoxRefiner"]


class BoxRefiner:
    """Settings in ``__init__``; ``refine(image, detections, background=None) -> Detections``."""

    def __init__(self, plane, profile, max_shift: float = 0.5, min_rays: float = 0.55, max_rms_mm: float = 1.6,
                 ring: tuple[float, float] = (1.6, 2.2), drop_unfit: bool = False):
        self.plane = plane
        self.surface = Surface.from_profile(profile)
        self.parallax = Parallax.from_plane(plane)
        self.rim = RimFitter(plane, self.parallax)
        self.top_z = {k: seen_height_mm(profile, k) for k in self.surface.radius_mm}
        self.max_shift, self.min_rays, self.max_rms_mm = float(max_shift), float(min_rays), float(max_rms_mm)
        self.ring = ring  # board ring around a box (in box half-sizes) that stands in for a missing empty board
        self.drop_unfit = bool(drop_unfit)  # experimental: a piece box with no plausible rim is dropped, not kept

    def _seed(self, seen_mm, kind: str) -> RimSeed:
        return RimSeed((float(seen_mm[0]), float(seen_mm[1])), self.surface.radius(kind), self.top_z[kind],
                       kind != "marble")

    def refine(self, image: np.ndarray, detections: Detections, background: np.ndarray | None = None) -> Detections:
        todo = [i for i, d in enumerate(detections.items)
                if d.kind in self.surface.radius_mm and d.centre_px is not None]
        if not todo:
            return detections
        items = list(detections.items)
        dets = [items[i] for i in todo]
        seen = self.plane.to_board_mm(np.array([d.centre_px for d in dets], float).reshape(-1, 2))
        empty = background if background is not None else self._local_board(image, dets)
        seeds = [self._seed(s, d.kind) for s, d in zip(seen, dets)]
        fits = self.rim.fit(image, empty, seeds)
        # the colour ring is partly off the piece when the box was far off: fit again from the first fit
        again = [j for j, f in enumerate(fits) if f is not None
                 and math.dist(f.seen_mm, seen[j]) > 0.15 * seeds[j].radius_mm]
        if again:
            for j, f in zip(again, self.rim.fit(image, empty, [self._seed(fits[j].seen_mm, dets[j].kind) for j in again])):
                fits[j] = f
        moved = [j for j, f in enumerate(fits) if f is not None and self._plausible(f, seeds[j], seen[j])]
        if self.drop_unfit:
            gone = {todo[j] for j in range(len(todo)) if j not in set(moved)}
            items = [d if i not in gone else None for i, d in enumerate(items)]
        if not moved and not self.drop_unfit:
            return detections
        px = self.plane.to_image_px(np.array([fits[j].seen_mm for j in moved], float).reshape(-1, 2))
        for j, (u, v) in zip(moved, px):
            items[todo[j]] = replace(dets[j], centre_mm=fits[j].centre_mm, centre_px=(float(u), float(v)))
        return replace(detections, items=tuple(d for d in items if d is not None))

    def _plausible(self, fit, seed: RimSeed, seen_mm) -> bool:
        r = seed.radius_mm
        return (fit.rays >= self.min_rays and fit.rms_mm <= self.max_rms_mm and -0.25 * r < fit.bias_mm < 0.9 * r
                and math.dist(fit.seen_mm, seen_mm) <= self.max_shift * r)

    def _local_board(self, image: np.ndarray, dets: list[Detection]) -> np.ndarray:
        """An empty-board stand-in: around each box, the median colour of a ring of pixels outside it."""
        h, w = image.shape[:2]
        empty = image.copy()
        for d in dets:
            r_px = self._radius_px(d)
            cx, cy = d.centre_px
            outer = self.ring[1] * r_px
            x0, x1 = max(0, int(cx - outer)), min(w, int(math.ceil(cx + outer)) + 1)
            y0, y1 = max(0, int(cy - outer)), min(h, int(math.ceil(cy + outer)) + 1)
            if x1 <= x0 or y1 <= y0:
                continue
            yy, xx = np.mgrid[y0:y1, x0:x1]
            dist = np.hypot(xx - cx, yy - cy)
            ring = (dist >= self.ring[0] * r_px) & (dist <= outer)
            if ring.sum() < 8:
                continue
            board = np.median(image[y0:y1, x0:x1][ring].reshape(-1, 3), axis=0)
            empty[y0:y1, x0:x1][dist < outer] = board.astype(image.dtype)
        return empty

    def _radius_px(self, det: Detection) -> float:
        """The piece's radius in image pixels around its box centre (from the calibration, not the box)."""
        seen = self.plane.to_board_mm(np.array([det.centre_px], float))[0]
        r = self.surface.radius(det.kind) * self.parallax.scale(self.top_z[det.kind])
        px = self.plane.to_image_px(np.array([seen, seen + (r, 0.0), seen + (0.0, r)], float))
        return 0.5 * (math.dist(px[0], px[1]) + math.dist(px[0], px[2]))
