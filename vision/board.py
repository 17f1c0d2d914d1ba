"""The surface the pieces move on, as vision needs it: piece radii, cushion lines, pockets, the pit.

Built from the table profile (``calibration.profile``) so every size comes from one place.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

import numpy as np

from rules.game import POCKETS

__all__ = ["Surface", "POCKET_NAMES"]

POCKET_NAMES = POCKETS  # the one pocket order (``rules.game.POCKETS``)


@dataclass(frozen=True)
class Surface:
    """Board (Novuss) or field (Cvrnkaná) geometry in board millimetres."""

    game: str
    radius_mm: Mapping[str, float]  # by kind: pawn, bat, marble
    half_x_mm: float  # cushion lines (Novuss) or the camera's view (Cvrnkaná) at +-half
    half_y_mm: float
    pockets: Mapping[str, tuple[float, float]]  # name -> centre
    pocket_radius_mm: float = 0.0
    pit_radius_mm: float = 0.0
    walls: bool = True  # Novuss: pieces bounce off cushions; Cvrnkaná: the view edge is not a wall
    zones: tuple[tuple[float, float, float, float], ...] = ()  # the striking zones (x0, x1, y0, y1), if any

    @classmethod
    def from_profile(cls, profile) -> "Surface":
        spec = profile.spec
        half_x, half_y = spec.bounds_mm
        zones = tuple(spec.zone_rect(p) for p in ("A", "B")) if spec.striker else ()
        return cls(spec.name, spec.piece_radii_mm, half_x, half_y, spec.pockets_mm, spec.pocket_radius_mm,
                   spec.pit_radius_mm, walls=spec.walls, zones=zones)

    def radius(self, kind: str) -> float:
        return self.radius_mm[kind]

    def in_zone(self, xy: tuple[float, float], radius_mm: float) -> bool:
        """A disc of ``radius_mm`` in a striking zone (its centre no farther out than its radius beyond the zone's
        lines) and wholly on the playing surface (a disc over a cushion is in a hand)."""
        x, y = xy
        r = radius_mm
        if abs(x) > self.half_x_mm - r or abs(y) > self.half_y_mm - r:
            return False
        return any(x0 - r <= x <= x1 + r and y0 - r <= y <= y1 + r for x0, x1, y0, y1 in self.zones)

    def pocket_at(self, xy: tuple[float, float], slack_mm: float = 0.0) -> str | None:
        """The pocket whose capture circle contains the centre ``xy``."""
        for name, c in self.pockets.items():
            if math.dist(c, xy) <= self.pocket_radius_mm + slack_mm:
                return name
        return None

    def pocket_on(self, a, b) -> str | None:
        """The first pocket whose capture circle the straight path from ``a`` to ``b`` enters (a path
        sampled at frame steps can step over a mouth)."""
        a, d = np.asarray(a, float), np.asarray(b, float) - np.asarray(a, float)
        span = float(d @ d)
        best: tuple[float, str] | None = None
        for name, c in self.pockets.items():
            u = 0.0 if span == 0 else min(max(float((np.asarray(c) - a) @ d) / span, 0.0), 1.0)
            if math.dist(c, tuple(a + u * d)) <= self.pocket_radius_mm and (best is None or u < best[0]):
                best = (u, name)
        return best[1] if best else None

    def in_pit(self, xy: tuple[float, float], slack_mm: float = 0.0) -> bool:
        return self.pit_radius_mm > 0 and math.hypot(*xy) <= self.pit_radius_mm + slack_mm

    def outside_side(self, xy: tuple[float, float], margin_mm: float = 0.0) -> str | None:
        """The side ('N','S','E','W') beyond which the centre lies, or None when over the surface."""
        x, y = xy
        over = {"E": x - self.half_x_mm, "W": -self.half_x_mm - x, "N": y - self.half_y_mm, "S": -self.half_y_mm - y}
        side, by = max(over.items(), key=lambda kv: kv[1])
        return side if by > margin_mm else None

    def cushion_lines(self, radius_mm: float) -> dict[str, tuple[int, float]]:
        """Where a disc's centre is when it touches each cushion: side -> (axis 0=x/1=y, coordinate)."""
        if not self.walls:
            return {}
        return {"E": (0, self.half_x_mm - radius_mm), "W": (0, -self.half_x_mm + radius_mm),
                "N": (1, self.half_y_mm - radius_mm), "S": (1, -self.half_y_mm + radius_mm)}

