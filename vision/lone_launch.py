"""A piece struck off its rest and seen once on its fast line before it struck another: that line, anchored at
the contact that set it off.

``vision.fit.split_track`` drops the first sighting after a rest that lies between the resting place and the
line that follows (``_straddles``): most often the frame was exposed while the piece set off, a blend of rest
and motion on neither. It is no blend where that line, run back, leaves the resting place well before the
piece was last seen lying there: the piece then went off fast, was seen once, and was slowed (a contact) before
the next frame. Dropped, its one sighting took with it the contact that slowed it, and a pawn struck over the
cushion between two frames became 'lost from sight' (#16: the harsher simulator's opponent-off-direct at
30 frames/s in six looks, the independent renderer's at 60: A1 struck by the bat at 5.6 m/s, seen once, stopped
by B1 30 ms later, B1 over the cushion before the next frame).

The sighting's own line needs a second point: the resting place at the instant of the contact that set the
piece off (solved from the striker's approach, which does not need this line). With it the stretch is a fit
like any other (the dispute view draws it; ``vision.shot`` reads the struck piece's push from it), and the
resting piece it reaches before the next sighting is the contact that slowed it. The shot's other events are
left as they were solved: only the contact the dropped sighting hid is added.

Where the frames never showed the piece on its fast line at all (a codec's smear of a fast disc, #16:
compressed-2mbit at 60 frames/s), the line it was next seen on, run back, still tells where it was slowed: at
touching distance from a resting piece, between the launch and that first sighting. The stretch between is
drawn from the resting place at the launch to that meeting (no sighting of its own), and the contact carries a
quarter of the unseen span as its error and half confidence: that it happened is sure, when is not.
"""
from __future__ import annotations

import math
from dataclasses import replace
from typing import Mapping, Sequence

import numpy as np

from rules.record import Event, Kind

from .fit import fit_stretch
from .roots import apart, root

__all__ = ["lone_launches"]


def lone_launches(motions: Mapping, events: Sequence[Event], sigma_mm: float, decel_mm_s2: float,
                  t_err_floor_s: float = 1e-4, k_sigma: float = 4.5, slack: float = 0.03) -> tuple[dict, list[Event]]:
    """The motions (piece -> ``Motion``) given the fast stretch they were struck onto, and the contacts that
    slowed them (where no contact of the piece was solved there)."""
    out, struck = {}, []
    for p, m in motions.items():
        late = _late_line(m, events)
        if late is None:
            continue
        k, launch = late
        rest, line = m.fits[k], m.fits[k + 1]
        s = line.i0
        travel = float(np.hypot(*(m.xy[s] - rest.p)))
        if float(np.hypot(*(m.xy[s] - line.pos(m.t[s])))) > k_sigma * sigma_mm + slack * travel:
            found = _seen_once(p, m, k, launch, motions, sigma_mm, decel_mm_s2, t_err_floor_s)
        else:
            found = _never_seen(p, m, k, launch, motions, sigma_mm, decel_mm_s2, t_err_floor_s)
        if found is None:
            continue
        fits, hit = found
        out[p] = replace(m, fits=fits)
        if hit is not None and not any(e.kind == Kind.CONTACT and p in e.pieces() and abs(e.t - hit.t) <= hit.t_err + 0.01
                                       for e in events if e is not launch):
            struck.append(hit)
    return out, struck


def _late_line(m, events):
    """(k, the launch contact): the first moving line after the rest ``k`` that, run back, leaves the resting
    place well before the piece was last seen lying there (no blend of rest and motion), with a contact
    of the piece between that last resting sighting and the line's first."""
    t = m.t
    dt = m.frame_dt()
    for k in range(len(m.fits) - 1):
        rest, line = m.fits[k], m.fits[k + 1]
        s = line.i0
        if not rest.rest or line.rest or line.i1 - s < 3 or rest.i1 != s:
            continue
        speed = float(np.hypot(*line.vel(t[s + 1])))
        if speed <= 0.0:
            continue
        t_leave = float(t[s + 1]) - float(np.hypot(*(line.pos(t[s + 1]) - rest.p))) / speed
        if t_leave >= rest.t_last - 0.5 * dt:
            continue  # the line could have come from the rest in time: a blend, rightly dropped
        launch = min((e for e in events if e.kind == Kind.CONTACT and m.track.piece in e.pieces()
                      and rest.t_last - 0.5 * dt <= e.t < t[s]), key=lambda e: e.t, default=None)
        if launch is not None:
            return k, launch
    return None


def _seen_once(p, m, k, launch, motions, sigma_mm, decel_mm_s2, t_err_floor_s):
    """The dropped sighting ``s`` is the fast line's one: anchored at the launch, it runs on to the first
    resting piece it reaches before the next sighting."""
    rest, line = m.fits[k], m.fits[k + 1]
    s = line.i0
    f = _line(launch.t, rest.p, float(m.t[s]), m.xy[s], sigma_mm, decel_mm_s2)
    if f is None or f.speed <= float(np.hypot(*line.vel(m.t[s + 1]))):
        return None  # a contact slows a piece: the fast line must be the faster
    lone = replace(f, t_first=float(launch.t), t_last=float(m.t[s]), i0=s, i1=s + 1)
    after = replace(line, t_first=float(m.t[s + 1]), i0=s + 1)
    t_next = after.t_first
    hit = _first_hit(p, lone, t_next, motions)
    event = None
    if hit is not None:
        t, q, g = hit
        d = lone.pos(t) - g.p
        closing = abs(float(d @ lone.vel(t))) / max(float(np.hypot(*d)), 1e-9)
        # the line's own error; the anchor's (the launch instant's error, carried past the sighting); and where a
        # fast piece's one blurred sighting lies along its way, known to an eighth of a frame's travel
        carried = launch.t_err * (t - lone.t_last) / max(lone.t_last - lone.t_first, 1e-6)
        err = math.sqrt(lone.pos_var(t) + g.pos_var(t)) / max(closing, 1.0)
        err = math.sqrt(err ** 2 + carried ** 2 + ((t_next - lone.t_last) / 8) ** 2 + t_err_floor_s ** 2)
        a, b = sorted((p, q))
        event = Event(t, Kind.CONTACT, a=a, b=b, t_err=err, confidence=0.9, note="struck on a line seen once")
    return m.fits[:k + 1] + [lone, after] + m.fits[k + 2:], event


def _never_seen(p, m, k, launch, motions, sigma_mm, decel_mm_s2, t_err_floor_s):
    """No sighting on the fast line: the line next seen, run back, meets a resting piece at touching distance
    between the launch and its first sighting; the fast stretch runs from the rest at the launch to there."""
    rest, line = m.fits[k], m.fits[k + 1]
    lo, hi = float(launch.t), float(line.t_first)
    best = None
    for q, mq in motions.items():
        g = mq.fit_at(lo)
        if q == p or mq.t[0] > lo or not g.rest or not rest.t_last <= g.t_last <= hi + mq.frame_dt():
            continue  # (it must have lain there until the launch, and left its rest by the next sighting)
        # the line run back from where the struck piece had lain (it has gone): the last instant it was a sum of radii
        # from that place before its first sighting
        t = root(apart(line, np.asarray(g.p, float), lo, m.radius + mq.radius), lo, hi, first=False, sign=0)
        if t is not None and (best is None or t > best[0]):
            best = (t, q)
    if best is None:
        return None
    t, q = best
    f = _line(lo, rest.p, t, line.pos(t), sigma_mm, decel_mm_s2)
    if f is None or f.speed <= float(np.hypot(*line.vel(t))):
        return None
    s = line.i0
    unseen = replace(f, t_first=lo, t_last=t, i0=s, i1=s)  # (no sighting of its own)
    a, b = sorted((p, q))
    err = math.hypot((hi - lo) / 4, t_err_floor_s)
    event = Event(t, Kind.CONTACT, a=a, b=b, t_err=err, confidence=0.5, note="struck on a line not seen")
    return m.fits[:k + 1] + [unseen, replace(line, t_first=hi)] + m.fits[k + 2:], event


def _line(t0, p0, t1, p1, sigma_mm, decel_mm_s2):
    """The stretch through ``p0`` at ``t0`` and ``p1`` at ``t1`` (friction drawn towards the shot's), or None."""
    if not t1 > t0:
        return None
    f = fit_stretch(np.array([float(t0), float(t1)]), np.stack([np.asarray(p0, float), np.asarray(p1, float)]),
                    0, 2, sigma_mm, decel_mm_s2, t_ref=float(t1))
    return None if f.rest else f


def _first_hit(p: str, lone, t_next: float, motions: Mapping):
    """(instant, piece, its rest fit): the first resting piece the line reaches (centres a sum of radii apart)
    after its sighting and before the next (``vision.roots``)."""
    best = None
    for q, mq in motions.items():
        if q == p or mq.t[0] > lone.t_last or mq.t[-1] < lone.t_first:
            continue
        g = mq.fit_at(lone.t_last)
        if not g.rest or not lone.t_first <= g.t_last <= t_next + mq.frame_dt():
            continue  # (it must have lain there until the launch, and left its rest by the next sighting)
        reach = motions[p].radius + mq.radius
        gap = apart(lone, np.asarray(g.p, float), lone.t_last, reach)
        t = root(gap, lone.t_last, t_next, first=True, sign=-1) if gap[0] > 0.0 else None  # (not already within reach)
        if t is not None and (best is None or t < best[0]):
            best = (t, q, g)
    return best

