"""Events with sub-frame timing, reconstructed from the tracks of one shot.

Pieces move on straight lines between collisions (``vision.fit``). A contact is the instant two fitted
discs are a sum of radii apart; a cushion contact the instant a disc reaches the cushion line. Each event
time is estimated up to four ways, each with its own variance:

* *approach*: the incoming stretches of both pieces, solved forward to the touching distance;
* *departure*: the outgoing stretches, solved backward to the touching distance;
* *kink*: for each piece whose velocity changed, the instant its incoming and outgoing stretches meet
  (for a struck resting piece: the instant its outgoing line leaves its resting place).

An estimate is used only where its assumptions hold (the incoming stretch of a piece describes only its
first event within a frame interval, the outgoing stretch only its last, a kink only a lone event). The
estimates are combined by their variances and the spread between them inflates the stated ``t_err``,
so two contacts whose order the frames cannot settle come out as a close call, not as a guess.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np
from numpy.polynomial import polynomial as P

from rules.game import piece_key
from rules.record import Event, Kind

from .board import Surface
from .clock import SteadyClock, retime
from .fit import Fit, estimate_decel, fit_stretch, split_track, with_residuals
from .lone_launch import lone_launches
from .roots import apart as _apart
from .roots import beyond as _beyond
from .roots import local as _local
from .roots import root as _root
from .types import Track

__all__ = ["EventExtractor", "Extraction", "Motion", "estimate_sigma"]


@dataclass(frozen=True)
class Extraction:
    """What ``EventExtractor.extract`` read from one shot's tracks: the events, the fitted motions they
    were solved from (for the dispute view), the position noise it assumed and, where the frame times were
    taken from the steady clock behind a stream's stamps (``vision.clock``), that clock's own error."""

    events: tuple[Event, ...]
    motions: Mapping[str, "Motion"]
    sigma_mm: float
    clock_err_s: float = 0.0  # the fitted frame clock's error, common to events close in time (not in t_err)


@dataclass
class Motion:
    """One track as stretches of smooth motion."""

    track: Track
    t: np.ndarray
    xy: np.ndarray
    fits: list[Fit]

    @property
    def radius(self) -> float:
        return self.track.radius_mm

    def changes(self) -> list[tuple[int, float, float]]:
        """(k, t_a, t_b): the velocity changed between stretch k (last seen t_a) and k+1 (first seen t_b)."""
        return [(k, self.fits[k].t_last, self.fits[k + 1].t_first) for k in range(len(self.fits) - 1)]

    def fit_at(self, t: float) -> Fit:
        """The stretch in force at ``t`` (the earlier one across a change interval)."""
        for f in reversed(self.fits):
            if f.t_first <= t:
                return f
        return self.fits[0]

    def frame_dt(self) -> float:
        """The frame interval of the piece's sightings (their median step)."""
        return float(np.median(np.diff(self.t))) if len(self.t) > 1 else 1 / 60

    def change_near(self, t: float, dt: float) -> int | None:
        """The change interval nearest ``t``, within ``dt`` of it (of two within reach, a piece struck off its
        rest and seen once before it struck another, the one at the second contact)."""
        near = [(max(a - t, t - b, 0.0), k) for k, a, b in self.changes() if a - dt < t < b + dt]
        return min(near)[1] if near else None

    def change_in(self, ta: float, tb: float, slack_s: float = 0.0) -> int | None:
        """The change interval overlapping [ta, tb], if any; ``slack_s``: how far apart two pieces' sightings
        in one frame may be dated (their rows' delays, ``vision.rows``)."""
        for k, a, b in self.changes():
            if a < tb + 1e-9 + slack_s and b > ta - 1e-9 - slack_s:
                return k
        return None


def estimate_sigma(tracks: Mapping[str, Track], default_mm: float = 0.3, floor_mm: float = 0.05) -> float:
    """Position noise (mm, 1 sigma) from the frame-to-frame scatter of resting pieces."""
    d2 = []
    for tr in tracks.values():
        _, xy, _ = tr.arrays()
        if len(xy) < 3:
            continue
        step = np.hypot(*np.diff(xy, axis=0).T)
        sec = np.diff(xy, 2, axis=0)
        calm = (step[:-1] < 3.0) & (step[1:] < 3.0)
        d2.extend(sec[calm].ravel().tolist())
    if len(d2) < 8:
        return default_mm
    mad = float(np.median(np.abs(np.asarray(d2) - np.median(d2))))
    return max(1.4826 * mad / math.sqrt(6.0), floor_mm)


@dataclass
class _Est:
    """One estimate of an event instant: ``sigma`` from the measurements (independent between
    estimates), ``model`` the 1-sigma of the contact-lag model (shared by every estimate of one event
    read from outgoing motion, so it does not average away)."""

    t: float
    sigma: float
    how: str
    model: float = 0.0
    #: how far a frame-time error carries into this estimate, per unit of the stamp scatter: the fitted
    #: lines' error factor at the instant (an extrapolation over few or far frames carries it further;
    #: 0 where no line used moves)
    lev: float = 1.0

    @property
    def total(self) -> float:
        return math.hypot(self.sigma, self.model)


@dataclass
class _Cand:
    """A possible event between a piece and another piece (``other``) or a cushion (``side``)."""

    piece: str
    other: str | None
    side: str | None
    window: tuple[float, float]
    change: dict[str, int] = field(default_factory=dict)  # piece -> change interval index
    ests: dict[str, _Est] = field(default_factory=dict)
    t0: float = 0.0

    def members(self) -> tuple[str, ...]:
        return (self.piece,) if self.other is None else (self.piece, self.other)


class EventExtractor:
    """Tracks of one shot -> timed events (contacts, cushions, pockets, off the board, pit)."""

    def __init__(self, surface: Surface, sigma_mm: float | None = None, decel_mm_s2: float | None = None,
                 t_err_floor_s: float = 1e-4, reach_tol_mm: float = 4.0, window_pad: float = 0.3,
                 min_speed_mm_s: float = 30.0, contact_s: float = 1e-4, radius_sigma_mm: float = 0.05,
                 frame_model: float = 0.008, exposure_s: float | None = None):
        """``contact_s``: how long a contact takes to change the velocities. The pieces touch at the
        event instant, but their outgoing lines describe the motion after the impulse: extrapolated
        back, the kink lies up to ``contact_s`` and the departure (the instant the outgoing discs are a
        sum of radii apart, i.e. separation) up to twice that after the touch. Those estimates are moved
        back by the mean lag and carry its spread (uniform) as model error. A real contact lasts well
        under 0.1 ms, and the simulator now changes velocities at the contact instant itself. ``radius_sigma_mm``: how well
        each piece's radius is known (a grazing contact is timed from the distance of centres, so its
        time error grows as the closing speed falls). ``frame_model``: a model error of this fraction of
        the frame interval, for what a stretch of constant deceleration does not describe over the
        frames it is extrapolated across (spin, a blurred blob's centre, the contact itself); the
        longer the interval, the further each line is run to meet the other (0.008: the smallest that
        keeps >= 95 % of contact times within 2 ``t_err`` of the truth at 30 and 60 frames/s in
        ``bench/accuracy.py``: 95.8 / 96.2 % with the oracle detector, 100 % classical). ``exposure_s``: how long
        each frame is exposed (None: half the frame interval). A blurred disc is seen at its mean place
        over the exposure, which is its place at the frame's instant only while it moves on one line: a
        frame whose exposure straddles the piece's own event mixes both lines, so it is left out of both
        stretches when that event is timed."""
        self.surface = surface
        self.contact_s, self.radius_sigma_mm, self.frame_model = contact_s, radius_sigma_mm, frame_model
        self.sigma_mm, self.decel_mm_s2 = sigma_mm, decel_mm_s2
        self.t_err_floor_s, self.reach_tol_mm, self.window_pad = t_err_floor_s, reach_tol_mm, window_pad
        self.min_speed_mm_s = min_speed_mm_s
        self.exposure_s = exposure_s
        self.used_stamp_s = 0.0  # the frame-time scatter of the shot last extracted (``motions``)
        self.row_spread_s = 0.0  # how far apart its sightings of one frame are dated (their rows: ``vision.rows``)
        self.clock = SteadyClock()
        self.used_clock_s = 0.0  # how far the fitted frame clock of that shot may be off (0: the stamps stood)

    # -- the one method ----------------------------------------------------------------------------
    def extract(self, tracks: Mapping[str, Track]) -> "Extraction":
        """The shot's events in time order, with the motions they were solved from."""
        motions = self.motions(tracks)
        cands = self._contact_candidates(motions) + self._cushion_candidates(motions)
        events = self._resolve(cands, motions)
        events += self._departures(motions)
        # a piece seen once on the line it was struck onto (``vision.lone_launch``): that line, and what it struck
        lone, struck = lone_launches(motions, events, self.used_sigma_mm, self.used_decel_mm_s2 or 0.0,
                                     self.t_err_floor_s)
        motions, events = {**motions, **lone}, events + struck
        return Extraction(tuple(sorted(events, key=lambda e: (e.t, e.kind.value))), motions, float(self.used_sigma_mm),
                          self.used_clock_s)

    def motions(self, tracks: Mapping[str, Track]) -> dict[str, Motion]:
        sigma = self.sigma_mm if self.sigma_mm is not None else estimate_sigma(tracks)
        arrays = {p: tr.arrays()[:2] for p, tr in tracks.items() if tr.observed()}
        # the frames' own stamps, without each sighting's row delay (``vision.rows``): what a stream scatters
        rows = {p: tracks[p].rows() for p in arrays}
        stamped = {p: (t - rows[p], xy) for p, (t, xy) in arrays.items()}
        delays = np.concatenate([*rows.values(), np.zeros(1)])
        self.row_spread_s = float(delays.max() - delays.min())
        stamp = self._stamp_sigma([t for t, _ in stamped.values()])  # a moving line is not cut by its stamps
        self.used_clock_s = 0.0
        if stamp > 0.0:  # stamps that scatter: the capture times may be the steady clock behind them
            steady = retime(stamped, self.clock, self.min_speed_mm_s)
            if steady is not None:  # smooth times: what is left is the clock's own error, shared by all
                arrays = {p: (t + rows[p], xy) for p, (t, xy) in steady[0].items()}
                self.used_clock_s, stamp = steady[1], 0.0
        decel = self.decel_mm_s2
        if decel is None:
            rough = [split_track(t, xy, sigma, stamp_s=stamp) for t, xy in arrays.values()]
            decel = estimate_decel(rough, list(arrays.values()), sigma)
        self.used_sigma_mm, self.used_decel_mm_s2, self.used_stamp_s = sigma, decel, stamp
        return {p: Motion(tracks[p], t, xy, split_track(t, xy, sigma, decel, stamp_s=stamp)) for p, (t, xy) in arrays.items()}

    # -- candidates ----------------------------------------------------------------------------------
    def _frame_dt(self, motions: Mapping[str, Motion]) -> float:
        steps = [np.median(np.diff(m.t)) for m in motions.values() if len(m.t) > 1]
        return float(np.median(steps)) if steps else 1 / 60

    def _frame_dt_at(self, motions: Mapping[str, Motion], pieces, t: float) -> float:
        """The frame interval in force at ``t``: the longest gap between the sightings of ``pieces`` that
        brackets ``t`` (a dropped frame, a burst lost), never less than the typical (median) interval."""
        dt = self._frame_dt(motions)
        for p in pieces:
            m = motions.get(p)
            if m is None or len(m.t) < 2:
                continue
            i = int(np.searchsorted(m.t, t))
            if 0 < i < len(m.t):
                dt = max(dt, float(m.t[i] - m.t[i - 1]))
        return dt

    @staticmethod
    def _stamp_sigma(times) -> float:
        """How far the frame times scatter about a smooth clock (a live stream's jitter), from the second
        differences of the shot's frame times (a slow drift of the rate leaves them near zero; white stamp
        noise of sigma gives them sigma * sqrt(6)). Zero for exact times (a file, a folder)."""
        ts = [t for t in times if len(t) > 3]
        if not ts:
            return 0.0
        t = np.unique(np.concatenate(ts))
        if len(t) < 4:
            return 0.0
        d2 = np.diff(t, 2)
        d1 = np.diff(t)
        d2 = d2[(d1[1:] < 1.5 * np.median(d1)) & (d1[:-1] < 1.5 * np.median(d1))]  # not across a dropped frame
        if len(d2) < 3:
            return 0.0
        sig = 1.4826 * float(np.median(np.abs(d2 - np.median(d2)))) / math.sqrt(6.0)
        return sig if sig > 1e-6 else 0.0

    def _window(self, ta: float, tb: float, dt: float) -> tuple[float, float]:
        return ta - self.window_pad * dt, tb + self.window_pad * dt

    def _contact_candidates(self, motions: Mapping[str, Motion]) -> list[_Cand]:
        dt = self._frame_dt(motions)
        out: list[_Cand] = []
        seen: set = set()
        for pid, m in motions.items():
            for k, ta, tb in m.changes():
                for qid, q in motions.items():
                    if qid == pid or q.t[0] > tb + dt or q.t[-1] < ta - dt and q.track.left is None:
                        continue
                    if q.t[-1] < ta - 2 * dt:
                        continue
                    kq = q.change_in(ta, tb, self.row_spread_s)
                    lo, hi = ta, tb
                    if kq is not None:
                        _, qa, qb = q.changes()[kq]
                        lo, hi = min(lo, qa), max(hi, qb)
                    key = (min(pid, qid), max(pid, qid), k if pid < qid else kq, kq if pid < qid else k)
                    if key in seen:
                        continue
                    win = self._window(lo, hi, dt)
                    reach = m.radius + q.radius
                    if self._closest(m, q, win) > reach + self.reach_tol_mm + 6 * (self.used_sigma_mm or 0.3):
                        continue
                    seen.add(key)
                    change = {pid: k}
                    if kq is not None:
                        change[qid] = kq
                    out.append(_Cand(pid, qid, None, win, change))
        return out

    def _closest(self, m: Motion, q: Motion, win: tuple[float, float]) -> float:
        ts = np.linspace(win[0], win[1], 24)
        best = math.inf
        for fm in {id(f): f for f in (m.fit_at(win[0]), m.fit_at(win[1]))}.values():
            for fq in {id(f): f for f in (q.fit_at(win[0]), q.fit_at(win[1]))}.values():
                best = min(best, float(np.min(np.hypot(*(fm.pos(ts) - fq.pos(ts)).T))))
        return best

    def _cushion_candidates(self, motions: Mapping[str, Motion]) -> list[_Cand]:
        if not self.surface.walls:
            return []
        dt = self._frame_dt(motions)
        out = []
        for pid, m in motions.items():
            lines = self.surface.cushion_lines(m.radius)
            for k, ta, tb in m.changes():
                before, after = m.fits[k], m.fits[k + 1]
                win = self._window(ta, tb, dt)
                for side, (axis, c) in lines.items():
                    toward = 1.0 if c > 0 else -1.0
                    if before.vel(ta)[axis] * toward <= self.min_speed_mm_s or \
                            before.vel(before.t_first)[axis] * toward <= self.min_speed_mm_s or \
                            after.vel(tb)[axis] * toward > 0:
                        continue  # must come in towards the cushion (all along) and go out away from it
                    near = min(abs(before.pos(win[1])[axis] - c), abs(after.pos(win[0])[axis] - c),
                               abs(m.xy[before.i1 - 1][axis] - c), abs(m.xy[after.i0][axis] - c))
                    crossed = (before.pos(win[1])[axis] - c) * toward >= 0
                    if near <= self.reach_tol_mm + 20.0 or crossed:
                        out.append(_Cand(pid, None, side, win, {pid: k}))
        return out

    # -- timing -----------------------------------------------------------------------------------------
    def _resolve(self, cands: list[_Cand], motions: Mapping[str, Motion]) -> list[Event]:
        for c in cands:
            self._estimates(c, motions)
        alive = [c for c in cands if c.ests and (c.other is None or "approach" in c.ests or "departure" in c.ests)]
        for c in alive:
            first = c.ests.get("approach") or c.ests.get("departure")
            c.t0 = first.t if first else min(e.t for e in c.ests.values())
        valid: dict[int, dict[str, _Est]] = {}
        for _ in range(4):
            valid = self._validity(alive)
            strong = [c for c in alive if c.other is None and valid[id(c)]
                      or c.other is not None and ("approach" in valid[id(c)] or "departure" in valid[id(c)])]
            strong = self._drop_bystanders(strong, motions)
            covered = {(p, c.change.get(p)) for c in strong for p in c.members()}
            weak = [c for c in alive if c not in strong and c.other is not None and self._touching(c, motions)
                    and any(f"kink:{p}" in c.ests and (p, c.change.get(p)) not in covered for p in c.members())]
            kept = strong + weak
            if len(kept) == len(alive):
                break
            alive = kept
        events = []
        for c in alive:
            ev = self._combine(c, valid[id(c)], motions)
            if ev is not None:
                events.append(ev)
        return events

    def _touching(self, c: _Cand, motions: Mapping[str, Motion]) -> bool:
        """A contact read from velocity changes alone needs the two discs within reach at that instant
        (either piece on its incoming or its outgoing stretch): a third piece struck in the same frame
        interval is not evidence that these two touched."""
        kinks = [e.t for k, e in c.ests.items() if k.startswith("kink:")]
        if not kinks:
            return False
        t = float(np.mean(kinks))
        m, q = motions[c.piece], motions[c.other]
        reach = m.radius + q.radius

        def fits(mo, p):
            k = c.change.get(p)
            return (mo.fits[k], mo.fits[k + 1]) if k is not None else (mo.fit_at(t),)
        best = min((float(np.hypot(*(f.pos(t) - g.pos(t)))) - reach, f.pos_var(t) + g.pos_var(t))
                   for f in fits(m, c.piece) for g in fits(q, c.other))
        return best[0] <= self.reach_tol_mm + 3.0 * math.sqrt(best[1])

    @staticmethod
    def _validity(cands: list[_Cand]) -> dict[int, dict[str, _Est]]:
        """Which estimates of each candidate hold, given the other events of its pieces in the same interval."""
        groups: dict[tuple[str, int], list[_Cand]] = {}
        for c in cands:
            for p, k in c.change.items():
                groups.setdefault((p, k), []).append(c)
        for g in groups.values():
            g.sort(key=lambda c: c.t0)
        out = {}
        for c in cands:
            valid = dict(c.ests)
            for p in c.members():
                k = c.change.get(p)
                g = groups.get((p, k), [c]) if k is not None else [c]
                if len(g) > 1:
                    valid.pop(f"kink:{p}", None)
                    if g[0] is not c:
                        valid.pop("approach", None)
                    if g[-1] is not c:
                        valid.pop("departure", None)
            out[id(c)] = valid
        return out

    @staticmethod
    def _drop_bystanders(cands: list[_Cand], motions: Mapping[str, Motion]) -> list[_Cand]:
        """Two resting pieces struck in the same frame interval by a third look as if they touched
        each other (their outgoing lines, run backwards, converge). A contact between two pieces that were
        both resting is kept only if one of them has no other contact to explain its start (a chain)."""
        def resting(p, c):
            k = c.change.get(p)
            f = motions[p].fits[k] if k is not None else motions[p].fit_at(c.window[0])
            return f.rest

        def explained(p, c):
            return any(o is not c and o.other is not None and p in o.members() and o.change.get(p) == c.change.get(p)
                       and not (resting(o.piece, o) and resting(o.other, o)) for o in cands)

        return [c for c in cands if c.other is None or not (resting(c.piece, c) and resting(c.other, c))
                or not (explained(c.piece, c) and explained(c.other, c))]

    def _estimates(self, c: _Cand, motions: Mapping[str, Motion]) -> None:
        m = motions[c.piece]
        lo, hi = c.window
        k = c.change[c.piece]
        bm, am = m.fits[k], m.fits[k + 1]
        half = 0.5 * (self.exposure_s if self.exposure_s is not None else 0.5 * self._frame_dt(motions))
        bm, am, kink_m = self._unblurred(m, bm, am, lo, hi, half)
        if kink_m is not None:
            kink_m = self._lagged(kink_m, 1.0)
        if c.other is not None:
            q = motions[c.other]
            kq = c.change.get(c.other)
            bq, aq = (q.fits[kq], q.fits[kq + 1]) if kq is not None else (q.fit_at(lo), q.fit_at(hi))
            kink_q = None
            if kq is not None:
                bq, aq, kink_q = self._unblurred(q, bq, aq, lo, hi, half)
            if kink_q is not None:
                kink_q = self._lagged(kink_q, 1.0)
                c.ests[f"kink:{c.other}"] = kink_q
                bm, am = self._trimmed(m, bm, am, kink_q)
            if kink_m is not None and kq is not None:
                bq, aq = self._trimmed(q, bq, aq, kink_m)
            reach = m.radius + q.radius
            r_var = 2.0 * self.radius_sigma_mm ** 2
            t = _root(_apart(bm, bq, lo, reach), lo, hi, first=True, sign=-1)
            if t is not None:
                c.ests["approach"] = _Est(t, _pair_sigma(bm, bq, t, r_var), "approach", lev=_lev(t, bm, bq))
            t = _root(_apart(am, aq, lo, reach), lo, hi, first=False, sign=+1)
            if t is not None:
                c.ests["departure"] = self._lagged(_Est(t, _pair_sigma(am, aq, t, r_var), "departure", lev=_lev(t, am, aq)), 2.0)
        else:
            axis, line = self.surface.cushion_lines(m.radius)[c.side]
            t = _root(_beyond(bm, lo, axis, line), lo, hi, first=True, sign=0)
            if t is not None:
                c.ests["approach"] = _Est(t, _line_sigma(bm, axis, t), "approach", lev=_lev(t, bm))
            t = _root(_beyond(am, lo, axis, line), lo, hi, first=False, sign=0)
            if t is not None:
                c.ests["departure"] = self._lagged(_Est(t, _line_sigma(am, axis, t), "departure", lev=_lev(t, am)), 2.0)
        if kink_m is not None:
            c.ests[f"kink:{c.piece}"] = kink_m
        self._causal(c, motions)

    def _unblurred(self, m: Motion, before: Fit, after: Fit, lo: float, hi: float,
                   half_exposure_s: float) -> tuple[Fit, Fit, _Est | None]:
        """The kink of one piece, timed again without the frames whose exposure straddles it (their
        blurred centre lies on neither line), with the stretches refitted on the frames left."""
        kink = _kink(before, after, lo, hi)
        if kink is None:
            return before, after, None
        b2, a2 = self._trimmed(m, before, after, kink, half_exposure_s + kink.sigma)
        if b2 is before and a2 is after:
            return before, after, kink
        again = _kink(b2, a2, lo, hi)
        return (b2, a2, again) if again is not None else (before, after, kink)

    def _trimmed(self, m: Motion, before: Fit, after: Fit, other: _Est, margin: float | None = None) -> tuple[Fit, Fit]:
        """A small deflection can leave a frame taken after the touch in a piece's incoming stretch (or
        one taken before it in the outgoing stretch): the other piece's reaction (its kink) says when the
        touch was, so refit each stretch on the frames on its own side of it only (``margin`` beyond it)."""
        margin = 2.0 * other.total if margin is None else margin
        out = []
        for f, keep in ((before, m.t[before.i0:before.i1] < other.t - margin),
                        (after, m.t[after.i0:after.i1] > other.t + self.contact_s + margin)):
            idx = np.flatnonzero(keep) + f.i0
            if f.rest or len(idx) == f.n or len(idx) < 3:
                out.append(f)
                continue
            g = fit_stretch(m.t[idx], m.xy[idx], 0, len(idx), self.used_sigma_mm, self.used_decel_mm_s2)
            g = with_residuals(g, m.t[idx], m.xy[idx], np.arange(len(idx)))
            out.append(Fit(g.t_ref, g.p, g.v, g.a, g.cov, g.sigma_mm, float(m.t[idx[0]]), float(m.t[idx[-1]]),
                           int(idx[0]), int(idx[-1]) + 1, g.rest))
        return out[0], out[1]

    def _lagged(self, e: _Est, k: float) -> _Est:
        """An estimate read from the outgoing motion lags the touch by up to ``k * contact_s`` (uniform):
        take the mean lag off and add its spread to the variance."""
        lag = k * self.contact_s
        return _Est(e.t - lag / 2.0, e.sigma, e.how, lag / math.sqrt(12.0), e.lev)

    @staticmethod
    def _causal(c: _Cand, motions: Mapping[str, Motion]) -> None:
        """An outgoing line means nothing before the piece set off, an incoming one nothing after it
        stopped: drop roots that fall outside the span their stretches describe."""
        for p in c.members():
            k = c.change.get(p)
            kink = c.ests.get(f"kink:{p}")
            if k is None or kink is None:
                continue
            m = motions[p]
            slack = 3.0 * kink.total + 2e-4
            dep, app = c.ests.get("departure"), c.ests.get("approach")
            if dep is not None and m.fits[k].rest and dep.t < kink.t - slack:
                del c.ests["departure"]
            if app is not None and m.fits[k + 1].rest and app.t > kink.t + slack:
                del c.ests["approach"]

    def _combine(self, c: _Cand, valid: dict[str, _Est], motions) -> Event | None:
        lo, hi = c.window
        if c.other is not None and "approach" not in valid and "departure" not in valid and \
                f"kink:{c.other}" not in c.ests:
            return None  # the geometry never brings them together and the other piece did not react
        if c.other is not None and c.other not in c.change and motions[c.piece].fits[c.change[c.piece]].rest:
            # a resting piece set off beside one that never moved (the bat struck away from a pawn it
            # lay against): an unmoved piece cannot have pushed it, so its launch is no contact
            return None
        stamp = self.used_stamp_s  # the shot's, measured once in ``motions``
        if valid:
            # weighted by the measurement errors (a frame-time scatter carried in by each estimate's lines:
            # approach and departure rest on different frames); the lag model is common to the estimates, so its
            # weighted mean is added after averaging; estimates that disagree beyond their errors
            # (chi2 > 1) widen the result: something the model does not describe happened here
            ts = np.array([e.t for e in valid.values()])
            ss = np.array([max(math.hypot(e.sigma, stamp * e.lev), 1e-6) for e in valid.values()])
            ms = np.array([e.model for e in valid.values()])
            w = 1.0 / ss ** 2
            t = float(np.sum(w * ts) / np.sum(w))
            model = float(np.sum(w * ms) / np.sum(w))
            err = float(math.sqrt(1.0 / np.sum(w)))
            if len(ts) > 1:
                chi2 = float(np.sum((ts - t) ** 2 / (ss ** 2 + (ms - model) ** 2))) / (len(ts) - 1)
                if chi2 > 1.0:
                    err *= math.sqrt(chi2)
            err = math.hypot(err, model)
            confidence = 1.0 if len(ts) > 1 else 0.9
        else:
            guesses = [e.t for e in c.ests.values()]
            t = float(np.clip(np.mean(guesses), lo, hi))
            err = math.hypot((hi - lo) / math.sqrt(12.0), stamp)  # a stamp ``s`` off moves the guess by about ``s``
            confidence = 0.5
        # irregular frames widen it: the interval in force at the event (longer across dropped frames); the
        # scatter of the frame times is in each estimate's error above, as far as its lines carry it (``lev``)
        err = math.sqrt(err ** 2 + self.t_err_floor_s ** 2
                        + (self.frame_model * self._frame_dt_at(motions, c.members(), t)) ** 2)
        evidence = tuple(int(x) for p in c.members() for x in _frames_near(motions[p], t))
        how = ",".join(sorted(valid)) or "fallback"
        if c.other is not None:
            a, b = sorted((c.piece, c.other), key=piece_key)
            return Event(t, Kind.CONTACT, a=a, b=b, t_err=err, confidence=confidence, evidence=evidence, note=how)
        return Event(t, Kind.CUSHION, piece=c.piece, side=c.side, t_err=err, confidence=confidence, evidence=evidence,
                     note=how)

    # -- leaving the surface -----------------------------------------------------------------------------
    def _departures(self, motions: Mapping[str, Motion]) -> list[Event]:
        dt = self._frame_dt(motions)
        out = []
        for pid, m in motions.items():
            tr = m.track
            if tr.left not in ("pocket", "off", "pit"):
                continue
            if tr.left == "pocket":
                where = tr.left_where or min(self.surface.pockets, key=lambda n: math.dist(self.surface.pockets[n], m.xy[-1]))
                centre = np.asarray(self.surface.pockets[where], float)
                crossing = lambda f, t0: _apart(f, centre, t0, self.surface.pocket_radius_mm)  # noqa: E731
                sign = -1
            elif tr.left == "pit":
                crossing = lambda f, t0: _apart(f, np.zeros(2), t0, self.surface.pit_radius_mm)  # noqa: E731
                sign = -1
            else:
                axis, line = self.surface.cushion_lines(m.radius)[tr.left_where]
                crossing = lambda f, t0, axis=axis, line=line: _beyond(f, t0, axis, line)  # noqa: E731
                sign = 0
            t_hit, sig = None, dt / 2
            for f in m.fits:
                lo, hi = f.t_first - dt, f.t_last + dt
                t = _root(crossing(f, lo), lo, hi, first=True, sign=sign)
                if t is not None:
                    t_hit = t
                    sig = max(_speed_sigma(f, t), 1e-5)
                    break
            if t_hit is None:
                t_hit, sig = (tr.left_t_s or float(m.t[-1])) + dt / 2, dt / 2
            kind = tr.left
            unseen = tr.pit_unseen
            sig = math.hypot(sig, self.used_stamp_s)
            ev = Event(t_hit, Kind(kind), piece=pid, t_err=math.sqrt(sig ** 2 + self.t_err_floor_s ** 2),
                       confidence=0.5 if unseen else 1.0, side=tr.left_where if kind == "off" else None,
                       pocket=tr.left_where if kind == "pocket" else None,
                       evidence=tuple(int(x) for x in m.track.arrays()[2][-3:]),
                       note="went in under the hand, unseen" if unseen else "")
            out.append(ev)
        return out




def _frames_near(m: Motion, t: float) -> list[int]:
    _, _, fr = m.track.arrays()
    idx = np.searchsorted(m.t, t)
    return [int(fr[i]) for i in (idx - 1, idx) if 0 <= i < len(fr)]


def _pair_sigma(f: Fit, g: Fit, t: float, extra_var_mm2: float = 0.0) -> float:
    """1-sigma of the instant two fitted discs are a sum of radii apart: the variance of their distance
    (both fits, plus ``extra_var_mm2`` for the radii) over the closing speed, so a grazing contact, whose
    distance changes slowly, is timed poorly."""
    d = f.pos(t) - g.pos(t)
    rel = f.vel(t) - g.vel(t)
    dist = float(np.hypot(*d))
    closing = abs(float(d @ rel)) / max(dist, 1e-9)
    var = f.pos_var(t) + g.pos_var(t) + extra_var_mm2
    return math.sqrt(var) / max(closing, 1.0)


def _lev(t: float, *fits: Fit) -> float:
    """How far a frame-time error carries into an instant solved from ``fits`` at ``t``: a frame stamped
    ``e`` off puts a moving piece ``speed * e`` off along its line, which the fit spreads as it spreads a
    position error, so the instant moves by ``e`` times the fit's error factor there (its position
    variance over one sighting's). The largest of the moving lines; 0 if none moves."""
    return max((math.sqrt(max(f.pos_var(t), 0.0)) / f.sigma_mm for f in fits if not f.rest and f.sigma_mm > 0), default=0.0)


def _line_sigma(f: Fit, axis: int, t: float) -> float:
    return math.sqrt(f.pos_var(t)) / max(abs(float(f.vel(t)[axis])), 1.0)


def _speed_sigma(f: Fit, t: float) -> float:
    return math.sqrt(f.pos_var(t)) / max(float(np.hypot(*f.vel(t))), 1.0)


def _kink(before: Fit, after: Fit, lo: float, hi: float) -> _Est | None:
    """The instant the incoming and outgoing stretches of one piece meet."""
    d = _local(before, lo) - _local(after, lo)  # their separation; its derivative is the difference of velocities
    g = P.polyadd(*(P.polymul(d[:, k], P.polyder(d[:, k])) for k in range(2)))  # separation . its rate
    t = _root(g, lo, hi, first=True, sign=+1)
    if t is None:
        return None
    gap = float(np.hypot(*(before.pos(t) - after.pos(t))))
    var = before.pos_var(t) + after.pos_var(t)
    if gap > 4.0 * math.sqrt(var) + 1.0:
        return None  # the two stretches do not meet: more happened here than one event
    dv = float(np.hypot(*(before.vel(t) - after.vel(t))))
    return _Est(t, math.sqrt(var) / max(dv, 1.0), "kink", lev=_lev(t, before, after))
