"""Exact synthetic motion for the vision tests: discs sliding with constant friction deceleration,
elastic collisions and cushions solved event by event (contact instants to 1e-9 s), then sampled at a
frame rate with Gaussian position noise. Independent of ``sim/`` so vision can be tested on its own."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import brentq

from vision.types import Detection, Detections


@dataclass
class Disc:
    id: str
    kind: str
    owner: str | None
    r: float
    m: float
    p: np.ndarray
    v: np.ndarray
    gone: str | None = None


@dataclass
class Truth:
    events: list = field(default_factory=list)  # (t, kind, a, b_or_side)
    keys: list = field(default_factory=list)  # (t0, {id: (p, v, gone)}) piecewise states


class Synth:
    """Discs on a square board of half size ``half`` (None: no cushions) with pockets of radius ``pocket_r``."""

    def __init__(self, discs: list[Disc], decel: float = 1500.0, half: float | None = 500.0, pocket_r: float = 45.0,
                 e_pieces: float = 0.95, e_wall: float = 0.8):
        self.discs = {d.id: d for d in discs}
        self.decel, self.half, self.pocket_r, self.e_pieces, self.e_wall = decel, half, pocket_r, e_pieces, e_wall

    def _pos(self, d: Disc, p, v, tau):
        sp = float(np.hypot(*v))
        if sp == 0 or self.decel == 0:
            return p + v * tau
        stop = sp / self.decel
        tau = min(tau, stop)
        return p + v * tau - 0.5 * self.decel * tau * tau * v / sp

    def _vel(self, v, tau):
        sp = float(np.hypot(*v))
        if sp == 0:
            return v * 0
        if self.decel == 0:
            return v
        return v * max(sp - self.decel * tau, 0.0) / sp

    def run(self, t_end: float, step: float = 2e-4) -> Truth:
        truth = Truth()
        t = 0.0
        state = {k: (d.p.copy(), d.v.copy(), None) for k, d in self.discs.items()}
        truth.keys.append((t, dict(state)))
        ids = sorted(self.discs)
        while t < t_end:
            live = [k for k in ids if state[k][2] is None]

            def at(k, tt):
                p, v, _ = state[k]
                return self._pos(self.discs[k], p, v, tt - t)

            grid = np.arange(t, t_end + step, step)
            best = None
            for ai, a in enumerate(live):
                for b in live[ai + 1:]:
                    if not state[a][1].any() and not state[b][1].any():
                        continue
                    reach = self.discs[a].r + self.discs[b].r
                    f = lambda tt: float(np.hypot(*(at(a, tt) - at(b, tt)))) - reach  # noqa: E731
                    best = _first(f, grid, best, ("contact", a, b), down=True)
                if self.half is not None and state[a][1].any():
                    r = self.discs[a].r
                    for side, axis, c in (("E", 0, self.half - r), ("W", 0, -self.half + r),
                                          ("N", 1, self.half - r), ("S", 1, -self.half + r)):
                        s = 1 if c > 0 else -1
                        f = lambda tt, axis=axis, c=c, s=s: (float(at(a, tt)[axis]) - c) * s  # noqa: E731
                        best = _first(f, grid, best, ("cushion", a, side), down=False)
                    for name, cx, cy in (("SW", -1, -1), ("SE", 1, -1), ("NW", -1, 1), ("NE", 1, 1)):
                        c = np.array([cx * self.half, cy * self.half])
                        f = lambda tt, c=c: float(np.hypot(*(at(a, tt) - c))) - self.pocket_r  # noqa: E731
                        best = _first(f, grid, best, ("pocket", a, name), down=True)
            if best is None:
                break
            te, (kind, a, b) = best
            new = {k: (at(k, te), self._vel(state[k][1], te - t), state[k][2]) for k in ids}
            if kind == "contact":
                self._collide(new, a, b)
            elif kind == "cushion":
                p, v, g = new[a]
                if abs(p[0]) > self.half - self.pocket_r or abs(p[1]) > self.half - self.pocket_r:
                    pass
                axis = 0 if b in ("E", "W") else 1
                v = v.copy()
                v[axis] = -self.e_wall * v[axis]
                new[a] = (p, v, g)
            else:
                p, v, _ = new[a]
                new[a] = (p, v, "pocket")
            truth.events.append((te, kind, a, b))
            state = new
            t = te + 1e-9
            truth.keys.append((t, dict(state)))
        return truth

    def _collide(self, st, a, b):
        (pa, va, ga), (pb, vb, gb) = st[a], st[b]
        ma, mb = self.discs[a].m, self.discs[b].m
        n = (pb - pa) / np.hypot(*(pb - pa))
        rel = float((va - vb) @ n)
        if rel <= 0:
            return
        j = (1 + self.e_pieces) * rel / (1 / ma + 1 / mb)
        st[a] = (pa, va - j / ma * n, ga)
        st[b] = (pb, vb + j / mb * n, gb)

    def position(self, truth: Truth, piece: str, t: float):
        """(xy, present) of a piece at time t."""
        key = None
        for t0, st in truth.keys:
            if t0 <= t:
                key = (t0, st)
        t0, st = key
        p, v, gone = st[piece]
        if gone:
            return p, False
        return self._pos(self.discs[piece], p, v, t - t0), True


def _first(f, grid, best, tag, down):
    limit = best[0] if best is not None else grid[-1]
    vals = None
    g = grid[grid <= limit + 1e-12]
    if len(g) < 2:
        return best
    vals = np.array([f(x) for x in g])
    if down:
        idx = np.flatnonzero((vals[:-1] > 0) & (vals[1:] <= 0))
    else:
        idx = np.flatnonzero((vals[:-1] < 0) & (vals[1:] >= 0))
    if len(idx) == 0:
        return best
    i = idx[0]
    te = brentq(f, g[i], g[i + 1], xtol=1e-11)
    if te <= g[0] + 1e-7:
        return best
    if best is None or te < best[0]:
        return (te, tag)
    return best


def detections(synth: Synth, truth: Truth, fps: float, t_end: float, noise_mm: float = 0.3, seed: int = 0,
               phase: float = 0.0, drop=None):
    """Per-frame Detections (unnamed, shuffled) of the present discs, with Gaussian noise."""
    rng = np.random.default_rng(seed)
    out = []
    n = int(t_end * fps) + 1
    for k in range(n):
        t = phase + k / fps
        items = []
        for pid, d in synth.discs.items():
            xy, present = synth.position(truth, pid, t)
            if not present or (drop and drop(pid, k)):
                continue
            z = xy + rng.normal(0, noise_mm, 2)
            items.append(Detection(d.kind, (float(z[0]), float(z[1])), d.r, d.owner, 1.0, None, k, t))
        rng.shuffle(items)
        out.append(Detections(k, t, tuple(items)))
    return out


def disc(pid: str, xy, v=(0.0, 0.0), game: str = "novuss") -> Disc:
    if pid == "bat":
        return Disc("bat", "bat", None, 18.0, 20.0, np.array(xy, float), np.array(v, float))
    kind = "pawn" if game == "novuss" else "marble"
    r = 16.0 if game == "novuss" else 7.0
    return Disc(pid, kind, pid[0], r, 12.0 if game == "novuss" else 5.0, np.array(xy, float), np.array(v, float))


def two_contact_shot(gap_s: float, speed: float = 3000.0, seed: int = 0, own_first: bool = True):
    """The bat driven at a pawn of A and a pawn of B placed so the bat reaches them ``gap_s`` apart."""
    rng = np.random.default_rng(seed)
    ang = math.radians(90 + rng.uniform(-20, 20))
    u = np.array([math.cos(ang), math.sin(ang)])
    nrm = np.array([-u[1], u[0]])
    start = np.array([rng.uniform(-100, 100), -420.0])
    reach = 34.0
    s1 = 300.0 + rng.uniform(-40, 40)
    off1, off2 = rng.uniform(17, 27), -rng.uniform(17, 27)
    # contact along the (frictionless-approximated) path: distance travelled at time of contact
    def travel_time(dist):
        # solve dist = speed t - 0.5 decel t^2
        dec = 1500.0
        return (speed - math.sqrt(speed * speed - 2 * dec * dist)) / dec
    d1 = s1 - math.sqrt(reach * reach - off1 * off1)
    t1 = travel_time(d1)
    t2 = t1 + gap_s
    dec = 1500.0
    d2 = speed * t2 - 0.5 * dec * t2 * t2
    s2 = d2 + math.sqrt(reach * reach - off2 * off2)
    first, second = ("A1", "B1") if own_first else ("B1", "A1")
    p1 = start + u * s1 + nrm * off1
    p2 = start + u * s2 + nrm * off2
    return Synth([disc("bat", start, u * speed), disc(first, p1), disc(second, p2)], decel=dec), (first, second)


def shot_records(pipe, frames) -> list[dict]:
    """Feed ``frames`` (each a ``Detections``) to a started ``Pipeline`` and finish it: the shot records it made."""
    recs = []
    for dets in frames:
        seen = pipe.feed(dets)
        if seen is not None:
            recs.append(seen.shot.to_dict())
    fin = pipe.finish()
    if fin is not None:
        recs.append(fin.shot.to_dict())
    return recs
