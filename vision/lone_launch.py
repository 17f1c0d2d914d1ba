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
"""
from __future__ import annotations

import math
from dataclasses import replace
from typing import Mapping, Sequence

import numpy as np

from rules.record import Event, Kind

from .fit import fit_stretch

__all__ = ["lone_launches"]


def lone_launches(motions: Mapping, events: Sequence[Event], sigma_mm: float, decel_mm_s2: float,
                  t_err_floor_s: float = 1e-4, k_sigma: float = 4.5, slack: float = 0.03) -> tuple[dict, list[Event]]:
    """The motions (piece -> ``Motion``) given a lone launch stretch, and the contacts those stretches make
    with a resting piece before the next sighting (where no contact of the piece was solved there)."""
    out, struck = {}, []
    for p, m in motions.items():
        found = _with_lone_launch(m, events, sigma_mm, decel_mm_s2, k_sigma, slack)
        if found is None:
            continue
        fits, k = found
        out[p] = replace(m, fits=fits)
        t_next = fits[k + 1].t_first
        if any(e.kind == Kind.CONTACT and p in e.pieces() and fits[k].t_last <= e.t <= t_next for e in events):
            continue
        launch_err = next((e.t_err for e in events if e.kind == Kind.CONTACT and p in e.pieces()
                           and abs(e.t - fits[k].t_first) < 1e-9), 0.0)
        hit = _first_hit(p, fits[k], t_next, motions, launch_err, t_err_floor_s)
        if hit is not None:
            struck.append(hit)
    return out, struck


def _with_lone_launch(m, events, sigma_mm, decel_mm_s2, k_sigma, slack):
    """(the fits with the lone stretch put in, its index), or None."""
    t, xy = m.t, m.xy
    dt = float(np.median(np.diff(t))) if len(t) > 1 else 1 / 60
    for k in range(len(m.fits) - 1):
        rest, line = m.fits[k], m.fits[k + 1]
        s = line.i0
        if not rest.rest or line.rest or line.i1 - s < 3 or rest.i1 != s:
            continue
        travel = float(np.hypot(*(xy[s] - rest.p)))
        off = float(np.hypot(*(xy[s] - line.pos(t[s]))))
        if off <= k_sigma * sigma_mm + slack * travel:
            continue  # the sighting is on the line that follows: not dropped
        speed = float(np.hypot(*line.vel(t[s + 1])))
        if speed <= 0.0:
            continue
        t_leave = float(t[s + 1]) - float(np.hypot(*(line.pos(t[s + 1]) - rest.p))) / speed
        if t_leave >= rest.t_last - 0.5 * dt:
            continue  # the line could have come from the rest in time: a blend, rightly dropped
        launch = min((e for e in events if e.kind == Kind.CONTACT and m.track.piece in e.pieces()
                      and rest.t_last - 0.5 * dt <= e.t < t[s]), key=lambda e: e.t, default=None)
        if launch is None:
            continue  # nothing seen set it off: no instant to anchor the line at
        anchor_t = np.array([launch.t, float(t[s])])
        anchor_xy = np.stack([np.asarray(rest.p, float), np.asarray(xy[s], float)])
        f = fit_stretch(anchor_t, anchor_xy, 0, 2, sigma_mm, decel_mm_s2, t_ref=float(t[s]))
        if f.rest or f.speed <= speed:
            continue  # a contact slows a piece: the lone line must be the faster
        # it begins at the contact (its one sighting is its last)
        lone = replace(f, t_first=float(launch.t), t_last=float(t[s]), i0=s, i1=s + 1)
        rest_of_line = replace(line, t_first=float(t[s + 1]), i0=s + 1)
        return m.fits[:k + 1] + [lone, rest_of_line] + m.fits[k + 2:], k + 1
    return None


def _first_hit(p: str, lone, t_next: float, motions: Mapping, launch_err: float, t_err_floor_s: float) -> Event | None:
    """The first resting piece the lone line reaches (centres a sum of radii apart) after its sighting and
    before the next: the contact that slowed it, timed on that line (a few Newton steps from the straight
    line's root; the line's own error over its closing speed, as any approach)."""
    best = None
    for q, mq in motions.items():
        if q == p or mq.t[0] > lone.t_last or mq.t[-1] < lone.t_first:
            continue
        g = mq.fit_at(lone.t_last)
        if not g.rest or g.t_last < lone.t_first:
            continue
        reach = motions[p].radius + mq.radius
        t = _meet(lone, np.asarray(g.p, float), reach, lone.t_last, t_next)
        if t is not None and (best is None or t < best[0]):
            best = (t, q, g)
    if best is None:
        return None
    t, q, g = best
    d = lone.pos(t) - g.p
    closing = abs(float(d @ lone.vel(t))) / max(float(np.hypot(*d)), 1e-9)
    # the line's own error; the anchor's (the launch instant's error, carried past the sighting); and where a
    # fast piece's one blurred sighting lies along its way, known to an eighth of a frame's travel
    dt = t_next - lone.t_last
    carried = launch_err * (t - lone.t_last) / max(lone.t_last - lone.t_first, 1e-6)
    err = math.sqrt(lone.pos_var(t) + g.pos_var(t)) / max(closing, 1.0)
    err = math.sqrt(err ** 2 + carried ** 2 + (dt / 8) ** 2 + t_err_floor_s ** 2)
    a, b = sorted((p, q))
    return Event(t, Kind.CONTACT, a=a, b=b, t_err=err, confidence=0.9, note="struck on a line seen once")


def _meet(f, c: np.ndarray, reach: float, lo: float, hi: float) -> float | None:
    """The instant in [lo, hi] at which ``f`` comes within ``reach`` of the point ``c``, or None."""
    p0, v0 = f.pos(lo) - c, f.vel(lo)
    a, b, cc = float(v0 @ v0), 2.0 * float(p0 @ v0), float(p0 @ p0) - reach * reach
    if cc <= 0.0 or a <= 0.0 or b * b - 4 * a * cc < 0.0:
        return None  # already within reach at its sighting, or passing wide
    t = lo + (-b - math.sqrt(b * b - 4 * a * cc)) / (2 * a)
    for _ in range(3):  # the line slows a little: Newton on the fitted motion
        d = f.pos(t) - c
        g = float(d @ d) - reach * reach
        slope = 2.0 * float(d @ f.vel(t))
        if slope == 0.0:
            break
        t -= g / slope
    return t if lo <= t <= hi else None
