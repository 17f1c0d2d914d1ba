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

__all__ = ["slid", "rest_left", "came_back"]


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


def rest_left(fits: Sequence[Fit], launch_mm: float, decel_max_mm_s2: float = 4000.0) -> int:
    """The index of the resting stretch a piece set off from: the first, or a later rest the fits reached from
    it without a slide (within ``launch_mm``, or by a step longer than a slide could make in the time between,
    as ``slid`` reads it: the same resting disc fitted again). Its launch is timed from there (#16: on the
    independent renderer a pawn's resting fit moved 4 mm between two frames as the bat came near; its launch
    was timed at that refit, 0.27 s before the contact that set it off, and called outside interference)."""
    k = 0
    while k + 1 < len(fits) and fits[k].rest and fits[k + 1].rest:
        step = float(np.hypot(*(np.asarray(fits[k + 1].p, float) - np.asarray(fits[k].p, float))))
        span_s = fits[k + 1].t_first - fits[k].t_last
        if launch_mm < step <= 0.5 * decel_max_mm_s2 * span_s ** 2:
            break  # slid there between the two: it set off from this one
        k += 1
    return k


def came_back(fits: Sequence[Fit], xy_mm: np.ndarray, launch_mm: float, far_mm: float) -> bool:
    """Whether a piece's sightings, after its first rest, end within ``launch_mm`` of it (the last rest's place,
    or the last sighting) having never been farther than ``far_mm`` from it in a moving stretch: fit noise, not a
    slide. A slide cannot turn back to where it began without a contact, which would be seen (#16: on the
    independent renderer a pawn against a cushion was fitted anywhere between 480.7 and 489.2 mm while it lay
    at 484; two of its flickers were 3.0 and 3.2 mm off its first place, read as launches no contact explained,
    and a right call was flagged)."""
    xy = np.asarray(xy_mm, float).reshape(-1, 2)
    rest = np.asarray(fits[0].p, float)
    last = np.asarray(fits[-1].p, float) if fits[-1].rest else xy[fits[-1].i1 - 1]
    if float(np.hypot(*(last - rest))) > launch_mm:
        return False
    return all(float(np.hypot(*(xy[f.i0:f.i1] - rest).T).max()) <= far_mm for f in fits[1:] if not f.rest and f.i1 > f.i0)
