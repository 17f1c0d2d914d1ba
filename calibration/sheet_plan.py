"""The small plan on the marker sheet: the board or the pit from above, to scale, every marker numbered where
it goes, so the layout can be seen at a glance before the words and numbers beside it are read.

Board mm become page millimetres through one scale (a round 1:N) and one centre, +y (away from player A) up
the page, the same convention the calibration and the printed markers use.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from PIL import ImageDraw

from .profile import Profile

__all__ = ["Plan", "draw_plan"]

_SCALES = (5, 10, 20, 25, 30, 40, 50, 100, 200, 250, 500, 1000)  # 1:N, the first that fits
_LABEL_ROOM_MM = 5.0  # page mm kept round the drawing for the markers' numbers and the players' names


@dataclass(frozen=True)
class Plan:
    """Where the plan lies on the page: its centre (page mm from the top-left corner) and its scale 1:N."""

    centre_mm: tuple[float, float]
    scale: int

    @classmethod
    def fit(cls, profile: Profile, box_mm: tuple[float, float, float, float]) -> "Plan":
        """The largest round scale at which the board (frame or camera view) and every marker fit ``box_mm``
        (x0, y0, x1, y1 page mm), numbers included."""
        hx, hy = _extent_mm(profile)
        w = box_mm[2] - box_mm[0] - 2 * _LABEL_ROOM_MM
        h = box_mm[3] - box_mm[1] - 2 * _LABEL_ROOM_MM
        need = max(2 * hx / w, 2 * hy / h)
        scale = next((n for n in _SCALES if n >= need), math.ceil(need))
        return cls(((box_mm[0] + box_mm[2]) / 2, (box_mm[1] + box_mm[3]) / 2), scale)

    def to_page(self, x_mm: float, y_mm: float) -> tuple[float, float]:
        """A board point in page mm (y down the page)."""
        return self.centre_mm[0] + x_mm / self.scale, self.centre_mm[1] - y_mm / self.scale


def _extent_mm(profile: Profile) -> tuple[float, float]:
    spec = profile.spec
    if spec.pockets_mm:
        hx = hy = spec.geometry.frame_mm / 2
    else:
        hx, hy = spec.bounds_mm
    s = float(profile.markers["size_mm"]) / 2
    for x, y in profile.markers["centres_mm"].values():
        hx, hy = max(hx, abs(float(x)) + s), max(hy, abs(float(y)) + s)
    return hx, hy


def _put(draw: ImageDraw.ImageDraw, xy: tuple[float, float], text: str, font, align: str) -> None:
    """Text placed by ``align`` (horizontal l/m/r, vertical t/m/b) at ``xy``: works with the bitmap font too."""
    x0, y0, x1, y1 = draw.textbbox((0, 0), text, font=font)
    dx = {"l": -x0, "m": -(x0 + x1) / 2, "r": -x1}[align[0]]
    dy = {"t": -y0, "m": -(y0 + y1) / 2, "b": -y1}[align[1]]
    draw.text((xy[0] + dx, xy[1] + dy), text, fill=0, font=font)


def draw_plan(draw: ImageDraw.ImageDraw, profile: Profile, plan: Plan, px_per_mm: float, font) -> None:
    """The board (Novuss: frame, cushion lines, pockets, centre circle and line; Cvrnkaná: the camera's view
    and the pit), the players' ends, and every marker as a black square of its true size at the plan's scale
    (at least 1.5 mm) with its id beside it."""
    def px(x_mm: float, y_mm: float) -> tuple[float, float]:
        u, v = plan.to_page(x_mm, y_mm)
        return u * px_per_mm, v * px_per_mm

    def rect(hx: float, hy: float, **kw) -> None:
        draw.rectangle([px(-hx, hy), px(hx, -hy)], **kw)

    def circle(x: float, y: float, r_mm: float, **kw) -> None:
        r = max(r_mm / plan.scale, 0.6) * px_per_mm
        u, v = px(x, y)
        draw.ellipse([u - r, v - r, u + r, v + r], **kw)

    line, gap = max(1, round(0.25 * px_per_mm)), 1.0 * px_per_mm
    spec = profile.spec
    if spec.pockets_mm:
        g, h = spec.geometry, spec.half_mm
        top = g.frame_mm / 2
        rect(top, top, outline=0, width=line)
        rect(h, h, outline=90, width=line)
        for x, y in spec.pockets_mm.values():
            circle(x, y, spec.pocket_radius_mm, outline=90, width=line)
        circle(0.0, 0.0, g.circle_radius_mm, outline=90, width=line)
        draw.line([px(0.0, -h), px(0.0, h)], fill=90, width=line)
        _put(draw, (px(0.0, top)[0], px(0.0, top)[1] - gap), "player B", font, "mb")
        below = "player A"
    else:
        top = spec.bounds_mm[1]
        rect(*spec.bounds_mm, outline=120, width=line)
        circle(0.0, 0.0, spec.pit_radius_mm, fill=0)
        _put(draw, (px(0.0, 0.0)[0] + (max(spec.pit_radius_mm / plan.scale, 0.6) + 1.0) * px_per_mm, px(0.0, 0.0)[1]),
             "pit", font, "lm")
        below = "start lines, player A"
    _put(draw, (px(0.0, -top)[0], px(0.0, -top)[1] + gap), below, font, "mt")
    half = max(float(profile.markers["size_mm"]) / 2 / plan.scale, 0.75) * px_per_mm
    outward = bool(spec.pockets_mm)  # a board's numbers go outside its frame, a field's inside the camera's view
    for key, (x, y) in sorted(profile.markers["centres_mm"].items(), key=lambda kv: int(kv[0])):
        u, v = px(float(x), float(y))
        draw.rectangle([u - half, v - half, u + half, v + half], fill=0)
        east, north = (float(x) >= 0) == outward, (float(y) >= 0) == outward
        off = half + 0.8 * px_per_mm
        _put(draw, (u + (off if east else -off), v - (off if north else -off)), str(int(key)), font,
             ("l" if east else "r") + ("b" if north else "t"))
