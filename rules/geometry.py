"""Plane geometry the rules need, in board millimetres (no pixels ever reach rules/)."""
from __future__ import annotations

import math
from typing import Iterable

__all__ = ["dist", "disc_fits_in_rect", "disc_touches_rect", "free_spot_on_line", "free_spot_on_circle"]

Point = tuple[float, float]


def dist(p: Point, q: Point) -> float:
    return math.hypot(p[0] - q[0], p[1] - q[1])


def disc_fits_in_rect(c: Point, r: float, x0: float, x1: float, y0: float, y1: float) -> bool:
    """The whole disc lies strictly inside the rectangle."""
    return x0 < c[0] - r and c[0] + r < x1 and y0 < c[1] - r and c[1] + r < y1


def disc_touches_rect(c: Point, r: float, x0: float, x1: float, y0: float, y1: float) -> bool:
    """The disc and the rectangle share at least one point."""
    dx = max(x0 - c[0], 0.0, c[0] - x1)
    dy = max(y0 - c[1], 0.0, c[1] - y1)
    return dx * dx + dy * dy <= r * r


def _blocked_intervals(y: float, r: float, others: Iterable[tuple[Point, float]]) -> list[tuple[float, float]]:
    out = []
    for (ox, oy), orad in others:
        reach = r + orad
        dy = abs(oy - y)
        if dy < reach:
            half = math.sqrt(reach * reach - dy * dy)
            out.append((ox - half, ox + half))
    return out


def free_spot_on_line(x_pref: float, y: float, r: float, others: Iterable[tuple[Point, float]],
                      direction: int, x_min: float, x_max: float) -> float | None:
    """Nearest x to ``x_pref`` (moving in ``direction`` = +1/-1, or 0 for x_pref only) where a disc of
    radius ``r`` centred at (x, y) overlaps none of ``others`` (centre, radius). None if no room."""
    blocked = sorted(_blocked_intervals(y, r, others))
    x = x_pref
    for _ in range(len(blocked) + 1):
        hit = next(((a, b) for a, b in blocked if a + 1e-9 < x < b - 1e-9), None)
        if hit is None:
            return x if x_min <= x <= x_max else None
        if direction == 0:
            return None
        x = hit[1] if direction > 0 else hit[0]  # touching is allowed, overlapping is not
    return None


def free_spot_on_circle(angle_pref: float, radius: float, r: float, others: Iterable[tuple[Point, float]],
                        step_deg: float = 1.0) -> Point | None:
    """Nearest point on a circle of ``radius`` around the origin, by angle from ``angle_pref``,
    where a disc of radius ``r`` overlaps nothing in ``others``."""
    others = list(others)
    for k in range(int(180 / step_deg) + 1):
        for sign in ((1,) if k == 0 else (1, -1)):
            a = angle_pref + sign * math.radians(k * step_deg)
            p = (radius * math.cos(a), radius * math.sin(a))
            if all(dist(p, o) >= r + orad - 1e-9 for o, orad in others):
                return p
    return None
