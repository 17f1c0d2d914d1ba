"""How a track ended: where a piece that vanished went, and how long one missed in the open is waited for.

A piece the tracker stops seeing in the open is given some patience (``resting_patience``: one at rest
is only moved by a hand, so a few missed frames are the detector's), then ``why_gone`` says where it went,
as ``(left, where)`` of ``vision.types.Track``: ``pocket`` (and which), ``off`` a cushion / out of the
``view`` (and the side), into the ``pit`` (``where`` "hand": flicked in under a hand, unseen), ``pickup``
(a hand took it) or ``lost`` (taken by something unseen; it comes back under its own id).

Once the shot is read, ``pocket_in_reach``, ``struck_off`` and ``lost_before_shot`` say what a track that ended
``lost`` means for the call: a pocket it was about to enter, a cushion it was struck over before it was seen
moving, or a piece the detector missed at rest that nothing could move.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Container, Sequence

import numpy as np

from .board import Surface
from .types import Detections, Track

if TYPE_CHECKING:
    from .tracker import _Live

#: the slowest a piece seen moving leaves the board over a cushion (slower, it comes back off the cushion)
OFF_MIN_SPEED_MM_S = 500.0

__all__ = ["under_hand_to_pit", "hand_reaches_pit", "at_pit_rim", "resting_patience", "why_gone", "pocket_in_reach",
           "struck_off", "lost_before_shot"]


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
        if side and surface.walls and float(np.hypot(*l.vel)) < OFF_MIN_SPEED_MM_S:
            # too slow to jump a cushion (it comes back off it, and is seen): a fit of a piece against the cushion
            # that crept past its line (on the independent renderer, a pawn at rest there read 64 mm/s and was
            # called off the board before the stroke, and the shot's record contradicted itself)
            return "lost", None
        if side:
            return ("off" if surface.walls else "view"), side
    return "lost", None


def pocket_in_reach(tr: Track, surface: Surface, rest_speed_mm_s: float = 50.0, frames: float = 1.0) -> str | None:
    """The pocket a track that ended ``lost`` was entering: its last sighting lay, moving, within ``frames``
    frames' travel of the pocket's capture circle, heading for it. Speed and heading come from the last few
    sightings (the median step and the chord), not from the tracker's velocity, which a cushion just before
    lags (#16, the independent renderer, gap 18: a pawn off the cushion beside a pocket, last seen 4 mm short
    of its mouth at 450 mm/s; the filter's velocity after the bounce pointed past it). Within one frame it
    would have been over the mouth, where the camera loses a dropping piece anyway; farther, it stays lost."""
    obs = tr.observed()[-6:]
    if tr.left != "lost" or len(obs) < 3 or not surface.pockets:
        return None
    t = np.array([s.t_s for s in obs], float)
    xy = np.array([s.centre_mm for s in obs], float)
    dt = np.diff(t)
    if (dt <= 0).any() or float(dt.max()) > 2.5 * float(np.median(dt)):
        return None  # sightings with a hole in them: no speed to trust
    speed = float(np.median(np.hypot(*np.diff(xy, axis=0).T) / dt))
    if speed <= rest_speed_mm_s:
        return None
    reach_mm, heading = speed * float(np.median(dt)) * frames, xy[-1] - xy[-4 if len(xy) >= 4 else 0]
    for name, centre in surface.pockets.items():
        to = np.asarray(centre, float) - xy[-1]
        if float(np.hypot(*to)) - surface.pocket_radius_mm <= reach_mm and float(heading @ to) > 0:
            return name
    return None


def struck_off(rest_xy, radius_mm: float, velocity_mm_s, decel_mm_s2: float, surface: Surface,
               min_speed_mm_s: float = 2 * OFF_MIN_SPEED_MM_S) -> tuple[str, float] | None:
    """(side, seconds from the contact) of the cushion a piece struck at rest went over before the camera saw it
    move: its centre, sent from ``rest_xy`` at ``velocity_mm_s`` (its partner's change of momentum at the
    contact) and slowing at ``decel_mm_s2``, reaches a cushion line still faster than ``min_speed_mm_s`` (twice
    the least a piece seen moving needs: this one's speed is inferred, not seen), with no pocket's mouth on the
    way (a drop or a jump beside it is the corner review's). For a track that ended ``lost``, never seen after the contact: on our own
    simulator a pawn struck at 5.4 m/s crossed the 138 mm to the cushion between two frames, blurred on the one
    between, and was never seen again; it was called lost from sight, and the penalty for sending an
    opponent's pawn off the board with it. None where the piece stops short, slows below the limit or heads
    for a pocket."""
    v = np.asarray(velocity_mm_s, float)
    speed = float(np.hypot(*v))
    if not surface.walls or speed <= min_speed_mm_s:
        return None
    start, u = np.asarray(rest_xy, float), v / speed
    best = None
    for side, (axis, line) in surface.cushion_lines(radius_mm).items():
        if u[axis] == 0.0 or (line - start[axis]) / u[axis] <= 0.0:
            continue
        d = (line - start[axis]) / u[axis]
        if best is None or d < best[1]:
            best = (side, d)
    if best is None:
        return None
    side, d = best
    left = speed * speed - 2.0 * max(decel_mm_s2, 0.0) * d
    if left <= min_speed_mm_s ** 2 or surface.pocket_on(start, start + u * (d + radius_mm)):
        return None
    t = 2.0 * d / (speed + left ** 0.5)  # the mean speed over the way, uniformly slowing
    return side, t


def lost_before_shot(tr: Track, others: Sequence[Track], surface: Surface, t0_s: float, t1_s: float,
                     moved_mm: float = 3.0, margin_mm: float = 10.0) -> bool:
    """A piece given up at rest before the shot began (the detector missed it: a pawn against a cushion, on
    the independent renderer, never found in a whole clip), not under a hand or the cue when given up, not
    at a pocket's mouth, and which no piece that moved during the shot came within touching distance (plus
    ``margin_mm``) of, along the straight steps between its sightings: nothing could have moved it, so it
    lies where it lay and no call depends on it. A piece that vanishes during the shot, one a moving piece
    came near, or any where another piece was lost from sight during the shot (its way unseen), still asks
    the referee."""
    obs = tr.observed()
    if tr.left != "lost" or tr.left_hidden_by is not None or not obs or (tr.left_t_s or 0.0) > t0_s:
        return False
    xy = np.asarray(obs[-1].centre_mm, float)
    if surface.pocket_at(tuple(xy), tr.radius_mm):
        return False
    for q in others:
        if q.piece == tr.piece:
            continue
        if q.left in ("lost", "pickup") and t0_s <= (q.left_t_s or 0.0) <= t1_s:
            return False
        seen = np.asarray([s.centre_mm for s in q.observed() if t0_s <= s.t_s <= t1_s], float).reshape(-1, 2)
        if len(seen) < 2 or float(np.hypot(*(seen - seen[0]).T).max()) <= moved_mm:
            continue  # at rest through the shot: it set nothing off
        if nearest_on_steps(seen, xy) <= tr.radius_mm + q.radius_mm + margin_mm:
            return False
    return True


def nearest_on_steps(path: np.ndarray, xy: np.ndarray) -> float:
    """How close the straight steps between consecutive points of ``path`` come to ``xy``."""
    a, d = path[:-1], np.diff(path, axis=0)
    span = np.maximum((d * d).sum(axis=1), 1e-12)
    u = np.clip(((xy - a) * d).sum(axis=1) / span, 0.0, 1.0)
    return float(np.hypot(*(a + u[:, None] * d - xy).T).min())
