"""Where a hand may put a piece: never on top of another one.

Pieces are discs, and a spot is free for a disc of radius ``r`` when every other piece's centre is at
least the sum of the radii (plus a clearance) away; touching is allowed. When the wanted spot is taken,
:func:`nearest_free_spot` searches a fine grid over the rectangle the disc's centre may occupy (the
striking zone for the bat, the surface for a returned pawn), so its answer is the nearest free spot to
within half a grid step.
"""
from __future__ import annotations

import math
from typing import Iterable

import numpy as np

__all__ = ["overlapping", "nearest_free_spot"]

Other = tuple[tuple[float, float], float]  # centre (mm), radius (mm)


def overlapping(xy: tuple[float, float], r_mm: float, others: Iterable[Other], clearance_mm: float = 0.0,
                tol_mm: float = 1e-6) -> list[int]:
    """Indices of the ``others`` a disc of radius ``r_mm`` at ``xy`` would overlap."""
    return [i for i, (c, r) in enumerate(others)
            if math.hypot(xy[0] - c[0], xy[1] - c[1]) < r_mm + r + clearance_mm - tol_mm]


def nearest_free_spot(want: tuple[float, float], r_mm: float, others: Iterable[Other],
                      rect: tuple[float, float, float, float], clearance_mm: float = 0.0,
                      step_mm: float = 1.0) -> tuple[float, float] | None:
    """The free spot nearest ``want`` for a centre inside ``rect`` = (x0, x1, y0, y1); ``want`` itself
    when it is free and inside. None when the rectangle has no free spot."""
    others = list(others)
    x0, x1, y0, y1 = rect
    inside = x0 <= want[0] <= x1 and y0 <= want[1] <= y1
    if inside and not overlapping(want, r_mm, others, clearance_mm):
        return (float(want[0]), float(want[1]))
    xs = np.linspace(x0, x1, max(2, int(math.ceil((x1 - x0) / step_mm)) + 1))
    ys = np.linspace(y0, y1, max(2, int(math.ceil((y1 - y0) / step_mm)) + 1))
    gx, gy = np.meshgrid(xs, ys)
    free = np.ones(gx.shape, dtype=bool)
    for (cx, cy), r in others:
        free &= np.hypot(gx - cx, gy - cy) >= r_mm + r + clearance_mm
    if not free.any():
        return None
    d = np.where(free, np.hypot(gx - want[0], gy - want[1]), np.inf)
    i = np.unravel_index(int(np.argmin(d)), d.shape)
    return (float(gx[i]), float(gy[i]))
