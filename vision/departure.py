"""How a track ended: where a piece that vanished went, and how long one missed in the open is waited for.

A piece the tracker stops seeing in the open is given some patience (``resting_patience``: one at rest
is only moved by a hand, so a few missed frames are the detector's), then ``why_gone`` says where it went,
as ``(left, where)`` of ``vision.types.Track``: ``pocket`` (and which), ``off`` a cushion / out of the
``view`` (and the side), into the ``pit`` (``where`` "hand": flicked in under a hand, unseen), ``pickup``
(a hand took it) or ``lost`` (taken by something unseen; it comes back under its own id).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Container

import numpy as np

from .board import Surface
from .types import Detections

if TYPE_CHECKING:
    from .tracker import _Live

__all__ = ["under_hand_to_pit", "hand_reaches_pit", "at_pit_rim", "resting_patience", "why_gone"]


def under_hand_to_pit(l: _Live, expected: Container[str], sent_back: Container[str]) -> bool:
    """Cvrnkaná: a marble last seen going under a hand that reached the pit, and not in the open since:
    in the pit, most likely, flicked in under the hand (the record asks the referee). One the rules
    have a hand carry off (a return in ``expected``, a marble ``sent_back`` behind its line) was picked up
    instead."""
    return (l.hidden_by == "hand" and l.hand_at_pit and l.piece not in expected
            and l.piece not in sent_back)


def hand_reaches_pit(l: _Live, dets: Detections, pit_radius_mm: float, margin_mm: float) -> bool:
    """Whether a hand over this hidden marble (within its radius plus ``margin_mm``) also reaches the pit's
    rim: it may have been flicked in under it, unseen the whole way."""
    for o in dets.occluders():
        one = Detections(dets.frame, dets.t_s, (o,))
        if o.kind == "hand" and one.occluded(l.pos, l.radius_mm + margin_mm) \
                and one.occluded((0.0, 0.0), pit_radius_mm + l.radius_mm):
            return True
    return False


def at_pit_rim(l: _Live, surface: Surface, knock_mm: float) -> bool:
    """Within two radii plus ``knock_mm`` (the knock speed x one frame) of the pit's rim: one frame's knock
    sends it in."""
    return surface.in_pit(tuple(l.pos), 2.0 * l.radius_mm + knock_mm)


def resting_patience(l: _Live, t_s: float, surface: Surface, rest_miss_s: float, rest_speed_mm_s: float,
                     to_pit: bool) -> bool:
    """Whether a piece missed in the open is still given time: one at rest (and not last seen under a
    hand, which may have lifted it, nor at a pocket, the pit or the open edge of the view, over which
    it may have crept) for up to ``rest_miss_s`` after it was last seen. ``to_pit``: it went under a hand
    that reached the pit (``under_hand_to_pit``); it is seen clear for a while before it is called in."""
    if to_pit:
        return l.open_since_s is None or t_s - l.open_since_s < rest_miss_s
    if l.hidden_by == "hand" or float(np.hypot(*l.vel)) > rest_speed_mm_s:
        return False
    xy, s = (float(l.pos[0]), float(l.pos[1])), surface
    if s.pocket_at(xy, l.radius_mm) or (s.pit_radius_mm and s.in_pit(xy, l.radius_mm)) \
            or (not s.walls and s.outside_side(xy, -2.0 * l.radius_mm)):
        return False
    return t_s - l.t_obs_s < rest_miss_s


def why_gone(l: _Live, surface: Surface, miss_max: int, still_mm_s: float, knock_mm: float, dt_s: float,
             to_pit: bool) -> tuple[str, str | None]:
    """Where a piece that vanished in the open went: judged from its last seen position and the
    straight path it was on (a pocketed piece enters the pocket region, then disappears). ``miss_max``:
    the frames it was missed; ``knock_mm`` see ``at_pit_rim``; ``dt_s``: one frame; ``to_pit`` see
    ``resting_patience``."""
    if to_pit:
        return "pit", "hand"
    if l.hidden_by == "hand":
        return "pickup", None
    seen = [st.centre_mm for st in l.states[-(miss_max + 3):] if st.observed][-3:]
    for xy in seen + [tuple(l.pos)]:
        pk = surface.pocket_at(tuple(xy))
        if pk:  # its centre was over a pocket's mouth when last seen: it dropped (struck there, or rolling in)
            return "pocket", pk
    if surface.pit_radius_mm and at_pit_rim(l, surface, knock_mm):
        # vanished in the open beside the rim: knocked in within a frame, before its speed was seen
        return "pit", None
    if float(np.hypot(*l.vel)) <= still_mm_s:
        # a piece at rest (not even creeping) does not roll into a pocket or over a cushion by itself: something took it
        # (a hand the camera did not see, the cue), and it comes back under its own name
        return "lost", None
    last = l.pos
    path = [last + l.vel * k * dt_s for k in range(0, 7)]
    pk = surface.pocket_on(last, last + l.vel * 6 * dt_s)  # the whole line: a long step must not skip a mouth
    if pk:
        return "pocket", pk
    for p in path:
        if surface.pit_radius_mm and surface.in_pit(tuple(p)):
            return "pit", None
    for p in path:
        side = surface.outside_side(tuple(p), -l.radius_mm)
        if side:
            return ("off" if surface.walls else "view"), side
    return "lost", None

