"""Whether a piece's stretches away from its rest are a slide or a fit that changed.

A resting piece that is set off slides and slows under friction: it cannot jump to a new place and stand
there from one frame to the next. A step between two rests, longer than any deceleration a sliding
disc has allows in the time between them, is the detector fitting the same resting disc two ways
(#16: on the independent renderer a pawn against a cushion fits 4-6 mm apart as the light over it changes,
and each flip read as a launch with no contact: outside interference, for the referee).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np

if TYPE_CHECKING:
    from .fit import Fit

__all__ = ["slid"]


def slid(fits: Sequence[Fit], xy_mm: np.ndarray, launch_mm: float, decel_max_mm_s2: float = 4000.0) -> bool:
    """Whether a piece's stretches (``fits``, the first at rest) show it sliding farther than ``launch_mm``
    from that rest: a sighting that far in a moving stretch, or a later rest that far reached from a moving
    stretch, or from a rest by a step a slide could make: one set off at the last sighting of the first rest
    and stopped by the first of the next covers no more than ``decel_max_mm_s2`` x T^2 / 2 in the time T
    between them (sliding friction on a Novuss board is about 1200 mm/s^2; a piece or cushion that stops
    it sooner is a contact, which explains the launch anyway)."""
    xy = np.asarray(xy_mm, float).reshape(-1, 2)
    rest = np.asarray(fits[0].p, float)
    for prev, f in zip(fits, fits[1:]):
        if not f.rest:
            if f.i1 > f.i0 and float(np.hypot(*(xy[f.i0:f.i1] - rest).T).max()) > launch_mm:
                return True
            continue
        if float(np.hypot(*(np.asarray(f.p, float) - rest))) <= launch_mm:
            continue
        span_s = f.t_first - prev.t_last
        if not prev.rest or float(np.hypot(*(np.asarray(f.p, float) - prev.p))) <= 0.5 * decel_max_mm_s2 * span_s ** 2:
            return True
    return False
