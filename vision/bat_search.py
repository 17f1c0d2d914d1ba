"""Finding the Novuss bat before its colour is known: by its size, where it must be put down.

The bat is no part of the opening layout (a hand puts it down in the striker's zone before each stroke), and
a table's bat may be of any colour, so its colour is not taken from the profile: until it has been seen,
a disc of the bat's size lying sharp in a striking zone is the bat, whatever its colour, and its colour is
measured once it has lain there for two frames (at rest; a fit under the hand placing it is not sharp).

The size tells a bat from a pawn: a pawn fitted with the bat's radius finds its outline about the radius
difference (2 mm) inside it, the bat fitted with a pawn's that much outside (``RimFit.bias_mm``), so half
the difference separates them; blur widens an outline, which is why only a sharp fit counts. A real bat's
edge is rounded or chamfered and can look as small as a pawn: a disc whose colour no pawn class claims,
lying where the layout has no pawn, is taken down to a pawn's size (shape and place first, colour to tell
it from the pawns).
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["BatSearch"]


class BatSearch:
    """``could_be(fit)`` on a fit with a pawn's radius; ``is_bat(fit)`` on the fit again with the bat's;
    ``seen(centre_mm, colour, frame)`` for an unknown-coloured bat found; ``settled(dets, frame)``: the
    colour to learn once it lies still (or None)."""

    def __init__(self, spec, radius_mm, rest_mm: float = 1.0):
        self.active = spec.striker is not None
        self.rest_mm = float(rest_mm)
        self._pending: tuple[tuple[float, float], np.ndarray, int] | None = None
        if not self.active:
            return
        self.r_bat, self.r_pawn = radius_mm[spec.striker], radius_mm[spec.piece_kind]
        self.half_step_mm = 0.5 * (self.r_bat - self.r_pawn)
        # where the bat must start: each player's striking zone, its centre no farther out than the bat's
        # radius beyond the zone's lines
        self.zones = [spec.zone_rect(p) for p in ("A", "B")]
        self.half_x, self.half_y = spec.bounds_mm

    def in_zone(self, centre_mm) -> bool:
        """In a striking zone, and wholly on the playing surface (a disc over the cushion is in a hand)."""
        x, y = centre_mm
        r = self.r_bat
        if abs(x) > self.half_x - r or abs(y) > self.half_y - r:
            return False
        return any(x0 - r <= x <= x1 + r and y0 - r <= y <= y1 + r for x0, x1, y0, y1 in self.zones)

    def could_be(self, fit, max_rms_mm: float, strange: bool = False) -> bool:
        """A sharp outline larger than a pawn's, in a striking zone (fitted with a pawn's radius); or, for a
        ``strange`` disc (a colour no pawn class claims, where no pawn of the layout lies), one at least a
        pawn's size: a bat's rounded or chamfered edge can look a millimetre or two smaller than it is."""
        big = fit is not None and (fit.bias_mm > self.half_step_mm or strange and fit.bias_mm > -self.half_step_mm)
        return (self.active and big and fit.rays >= 0.7
                and fit.rms_mm <= 0.5 * max_rms_mm and self.in_zone(fit.centre_mm))

    def is_bat(self, fit, max_rms_mm: float, strange: bool = False) -> bool:
        """The outline is the bat's size (fitted with the bat's radius; a ``strange`` disc as in
        ``could_be``: down to a pawn's), sharp, in a striking zone."""
        low = -3 * self.half_step_mm if strange else -self.half_step_mm
        return (fit is not None and low < fit.bias_mm < self.half_step_mm and fit.rays >= 0.7
                and fit.rms_mm <= 0.5 * max_rms_mm and self.in_zone(fit.centre_mm))

    def seen(self, centre_mm, colour: np.ndarray, frame: int) -> None:
        if self._pending is None or math.dist(self._pending[0], centre_mm) > self.rest_mm:
            self._pending = ((float(centre_mm[0]), float(centre_mm[1])), np.asarray(colour).copy(), int(frame))

    def settled(self, bats, frame: int) -> np.ndarray | None:
        """The colour measured on the unknown-coloured bat if one of this frame's bat detections (``bats``)
        lies where it was found on an earlier frame; the search is then over."""
        if self._pending is None or frame <= self._pending[2]:
            return None
        at, colour, _ = self._pending
        if any(math.dist(d.centre_mm, at) <= self.rest_mm for d in bats):
            self._pending = None
            return colour
        if not bats:
            self._pending = None
        return None
