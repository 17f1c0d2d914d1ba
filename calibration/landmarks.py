"""Named points and drawn lines of a table or field in board mm, from its profile: what the accuracy bench
checks the plane against and what the calibration preview draws back onto the image.

Novuss: pocket centres are taken at the corners of the playing surface (the pocket circle of
``pocket_radius_mm`` is cut into the cushion corner), striking zones are the strips ``zone_depth_mm`` deep
along the S and N cushions, ``zone_half_width_mm`` either side of the centre line x = 0."""
from __future__ import annotations

import numpy as np

from .profile import Profile

__all__ = ["landmarks_mm", "drawing_mm"]


def _circle(r: float, n: int = 120, centre=(0.0, 0.0)) -> np.ndarray:
    a = np.linspace(0, 2 * np.pi, n, endpoint=False)
    return np.column_stack([centre[0] + r * np.cos(a), centre[1] + r * np.sin(a)])


def landmarks_mm(profile: Profile) -> dict[str, tuple[float, float]]:
    """Named board points: pocket centres, zone corners, circle points, centre-line ends (Novuss); pit
    centre and rim, start-line ends (Cvrnkaná)."""
    spec = profile.spec
    g = spec.geometry
    out: dict[str, tuple[float, float]] = {}
    if spec.pockets_mm:  # a board: pockets at the corners, striking zones, centre circle and line
        h = spec.half_mm
        for name in ("SW", "SE", "NW", "NE"):  # the landmarks' own order (south row first)
            out[f"pocket_{name}"] = spec.pockets_mm[name]
        for side, sy in (("S", -1), ("N", 1)):
            inner = sy * (h - g.zone_depth_mm)
            for xs, xn in ((-1, "W"), (1, "E")):
                x = xs * g.zone_half_width_mm
                out[f"zone_{side}_{xn}_inner"] = (x, inner)
                out[f"zone_{side}_{xn}_cushion"] = (x, sy * h)
        for k, (x, y) in enumerate(_circle(g.circle_radius_mm, 8)):
            out[f"circle_{k * 45}"] = (float(x), float(y))
        out["centre"] = (0.0, 0.0)
        out["centre_line_S"] = (0.0, -h)
        out["centre_line_N"] = (0.0, h)
    if spec.has_pit:  # a field: the pit and the start lines
        out["pit_centre"] = (0.0, 0.0)
        for k, (x, y) in enumerate(_circle(spec.pit_radius_mm, 8)):
            out[f"pit_rim_{k * 45}"] = (float(x), float(y))
        for name, (outer, inner) in zip(("left", "right"), spec.start_lines_mm()):
            out[f"start_{name}_outer"] = outer
            out[f"start_{name}_inner"] = inner
    return out


def drawing_mm(profile: Profile) -> list[tuple[str, np.ndarray, bool]]:
    """Lines to draw back onto the image: ``(kind, (N,2) polyline in mm, closed)``; kinds are ``outline``,
    ``zone``, ``circle``, ``line``, ``pocket``, ``marker``. Polylines are densely sampled so that lens
    distortion bends them on the image as it bends the real lines."""
    from .markers import marker_corners_mm

    def seg(a, b, n=60):
        t = np.linspace(0, 1, n)[:, None]
        return np.asarray(a, float) + t * (np.asarray(b, float) - np.asarray(a, float))

    def rect(x0, y0, x1, y1):
        return np.concatenate([seg((x0, y0), (x1, y0)), seg((x1, y0), (x1, y1)), seg((x1, y1), (x0, y1)),
                               seg((x0, y1), (x0, y0))])

    spec = profile.spec
    g = spec.geometry
    out: list[tuple[str, np.ndarray, bool]] = []
    if spec.pockets_mm:  # a board: cushion lines and frame, striking zones, centre circle and line, pockets
        h = spec.half_mm
        out.append(("outline", rect(-h, -h, h, h), True))
        f = g.frame_mm / 2
        out.append(("outline", rect(-f, -f, f, f), True))
        for sy in (-1, 1):
            inner = sy * (h - g.zone_depth_mm)
            zx = g.zone_half_width_mm
            out.append(("zone", rect(-zx, min(inner, sy * h), zx, max(inner, sy * h)), True))
        out.append(("circle", _circle(g.circle_radius_mm), True))
        out.append(("line", seg((0, -h), (0, h)), False))
        for sx in (-1, 1):
            for sy in (-1, 1):
                out.append(("pocket", _circle(spec.pocket_radius_mm, 48, (sx * h, sy * h)), True))
    if spec.has_pit:  # a field: the pit and the start lines
        out.append(("circle", _circle(spec.pit_radius_mm), True))
        for outer, inner in spec.start_lines_mm():
            out.append(("line", seg(*sorted((outer, inner))), False))  # each line drawn left to right
    if profile.markers and profile.markers.get("centres_mm"):
        for corners in marker_corners_mm(profile).values():
            out.append(("marker", np.concatenate([seg(corners[i], corners[(i + 1) % 4], 12) for i in range(4)]), True))
    return out
