"""Piecewise motion: split a track where its velocity changes and fit each stretch.

Between collisions a sliding disc moves on a straight line with constant friction deceleration, so
each stretch is fitted as ``p + v*tau + a*tau^2/2`` by least squares, with the deceleration drawn
towards a prior (the table's friction, estimated from the long stretches of the same shot) so a stretch
of two or three frames still extrapolates well. The fit keeps its covariance: an event time solved from
it comes with an honest uncertainty.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

__all__ = ["Fit", "fit_stretch", "split_track", "estimate_decel", "with_residuals"]


@dataclass(frozen=True)
class Fit:
    """Motion of one stretch: position at ``t_ref`` and its time derivatives; ``cov`` is the (3,3)
    covariance of (p, v, a) per coordinate in units of the position variance ``sigma_mm**2``."""

    t_ref: float
    p: np.ndarray
    v: np.ndarray
    a: np.ndarray
    cov: np.ndarray
    sigma_mm: float
    t_first: float
    t_last: float
    i0: int
    i1: int  # observed indices [i0, i1)
    rest: bool = False

    @property
    def n(self) -> int:
        return self.i1 - self.i0

    def pos(self, t) -> np.ndarray:
        tau = np.asarray(t, float)[..., None] - self.t_ref
        return self.p + self.v * tau + 0.5 * self.a * tau * tau

    def vel(self, t) -> np.ndarray:
        tau = np.asarray(t, float)[..., None] - self.t_ref
        return self.v + self.a * tau

    def pos_var(self, t: float) -> float:
        """Variance (mm^2) of one coordinate of the fitted position at ``t``."""
        tau = t - self.t_ref
        g = np.array([1.0, tau, 0.5 * tau * tau])
        return float(g @ self.cov @ g) * self.sigma_mm ** 2

    @property
    def speed(self) -> float:
        return float(np.hypot(*self.v))


def fit_stretch(t: np.ndarray, xy: np.ndarray, i0: int, i1: int, sigma_mm: float, decel_mm_s2: float = 0.0,
                decel_sigma_mm_s2: float = 500.0, rest_speed_mm_s: float = 15.0, t_ref: float | None = None) -> Fit:
    """Least-squares fit of the observations ``[i0, i1)``; a stretch slower than ``rest_speed_mm_s`` is a rest."""
    ts, ps = t[i0:i1], xy[i0:i1]
    n = len(ts)
    if t_ref is None:
        t_ref = float(ts[-1])
    if n == 1:
        big = np.diag([1.0, 1e12, 1e12])
        return Fit(t_ref, ps[0].astype(float), np.zeros(2), np.zeros(2), big, sigma_mm, float(ts[0]), float(ts[-1]),
                   i0, i1)
    tau = ts - t_ref
    span = float(np.hypot(*(ps.max(axis=0) - ps.min(axis=0))))
    small = span < 6.0 * sigma_mm + 1.0
    if small and _slope_speed(tau, ps) < rest_speed_mm_s - _SPEED_MARGIN_MM_S:
        # clearly at rest (a piece is still most of a shot, and split_track refits each growing stretch):
        # the decision lstsq below would take, without its cost
        return Fit(t_ref, ps.mean(axis=0), np.zeros(2), np.zeros(2), np.diag([1.0 / n, 0.0, 0.0]), sigma_mm,
                   float(ts[0]), float(ts[-1]), i0, i1, rest=True)
    # direction of travel for the friction prior: from a straight-line fit
    lin = np.vstack([np.ones(n), tau]).T
    coef_lin, *_ = np.linalg.lstsq(lin, ps, rcond=None)
    v_lin = coef_lin[1]
    if np.hypot(*v_lin) < rest_speed_mm_s and small:
        cov = np.diag([1.0 / n, 0.0, 0.0])
        return Fit(t_ref, ps.mean(axis=0), np.zeros(2), np.zeros(2), cov, sigma_mm, float(ts[0]), float(ts[-1]),
                   i0, i1, rest=True)
    speed = float(np.hypot(*v_lin))
    a_prior = -decel_mm_s2 * v_lin / speed if speed > 0 else np.zeros(2)
    w_prior = sigma_mm / max(decel_sigma_mm_s2, 1e-6)  # prior row scaled to position units
    design = np.vstack([np.ones(n), tau, 0.5 * tau * tau]).T
    rows = np.vstack([design, [0.0, 0.0, w_prior]])
    rhs = np.vstack([ps, w_prior * a_prior])
    coef, *_ = np.linalg.lstsq(rows, rhs, rcond=None)
    # a whisker of ridge: sightings all at one instant (a start layout, then its own frame) leave the
    # velocity free, and its variance must then say so instead of the inversion failing
    cov = np.linalg.inv(rows.T @ rows + np.diag([0.0, 1e-12, 0.0]))
    return Fit(t_ref, coef[0], coef[1], coef[2], cov, sigma_mm, float(ts[0]), float(ts[-1]), i0, i1)


# The closed-form slope below and lstsq's agree to ~1e-10 mm/s on these stretches (seconds long, board
# millimetres); only a speed this much under the rest threshold takes the shortcut, so the decision is
# always the one lstsq gives.
_SPEED_MARGIN_MM_S = 1e-3


def _slope_speed(tau: np.ndarray, ps: np.ndarray) -> float:
    """Speed of the least-squares straight line through ``ps`` over ``tau`` (closed form)."""
    dt = tau - tau.mean()
    den = float(dt @ dt)
    if den <= 0.0:
        return math.inf
    v = (dt @ (ps - ps.mean(axis=0))) / den
    return math.hypot(float(v[0]), float(v[1]))


def with_residuals(f: Fit, t: np.ndarray, xy: np.ndarray, idx: np.ndarray, prior_dof: float = 4.0) -> Fit:
    """The same fit with ``sigma_mm`` raised to what its own residuals show.

    The noise estimated from resting pieces understates a moving piece's scatter (a blurred blob's
    centre wanders along the streak), and an event time solved from the fit is only as honest as the
    fit's covariance. The residual variance is pooled with the prior noise (``prior_dof`` pseudo
    observations) so a two- or three-frame stretch does not claim too much either way; it never
    lowers ``sigma_mm``."""
    if f.rest or len(idx) < 3:
        return f
    res = f.pos(t[idx]) - xy[idx]
    dof = 2 * len(idx) - 5  # two coordinates, p and v free per coordinate, a held by the friction prior
    if dof <= 0:
        return f
    var = (float(np.sum(res * res)) + prior_dof * f.sigma_mm ** 2) / (dof + prior_dof)
    return replace(f, sigma_mm=max(f.sigma_mm, math.sqrt(var)))


def _speed(t, xy, i0, i1, sigma, decel) -> float:
    """The speed of the fit over observations ``[i0, i1)`` (0 for a single one)."""
    return fit_stretch(t, xy, i0, i1, sigma, decel).speed if i1 - i0 >= 2 else 0.0


def _ssr(t, xy, i0, i1, sigma, decel):
    if i1 - i0 <= 2:
        return 0.0
    f = fit_stretch(t, xy, i0, i1, sigma, decel)
    return float(np.sum((f.pos(t[i0:i1]) - xy[i0:i1]) ** 2))


def split_track(t: np.ndarray, xy: np.ndarray, sigma_mm: float, decel_mm_s2: float = 0.0, k_sigma: float = 4.5,
                slack: float = 0.03, stamp_s: float = 0.0) -> list[Fit]:
    """Split observations into stretches of smooth motion and fit each.

    A stretch grows while the next observation agrees with its extrapolation (within ``k_sigma`` of the
    prediction's uncertainty, plus ``slack`` x the distance travelled, for blur and friction).
    A lone disagreeing observation followed by agreeing ones is an outlier and is dropped. Each boundary
    is then moved by a frame either way if that fits better. Runs of observations that surely agree are
    passed at once (``_rest_run``, ``_moving_run``): the same stretches as fitting every step, found in a
    fraction of the time (a replay splits every track of every shot twice). ``stamp_s``: how far the frame
    times scatter (1 sigma, a live stream's jitter): a piece moving at ``speed`` is then seen up to
    ``speed * stamp_s`` ahead of or behind its line's place at the stated time, which the tolerance along the
    line takes in (not across it: a graze still cuts the line), so a fast
    line is not cut into pieces by its frames' stamps.
    """
    n = len(t)
    if n == 0:
        return []
    keep = np.ones(n, bool)
    bounds = [0]
    s = 0
    e = 1
    at_rest: bool | None = True  # whether the last fit of this stretch was a rest; None: fit the next step
    while e < n:
        idx = np.flatnonzero(keep[s:e]) + s
        if len(idx) < 2:
            e += 1
            continue
        if at_rest is not None:  # pass a whole run of frames that surely agree at once (same stretches)
            run = _rest_run(t, xy, idx, e, sigma_mm, k_sigma) if at_rest else \
                _moving_run(t, xy, idx, e, sigma_mm, decel_mm_s2, k_sigma, slack, stamp_s=stamp_s)
            at_rest = None
            if run:
                e += run
                continue
        f = _fit_idx(t, xy, idx, sigma_mm, decel_mm_s2)
        at_rest = f.rest
        if _agrees(f, t[e], xy[e], sigma_mm, k_sigma, slack, stamp_s):
            e += 1
            continue
        if e + 1 < n and len(idx) >= 3 and _agrees(f, t[e + 1], xy[e + 1], sigma_mm, k_sigma, slack, stamp_s):
            keep[e] = False  # a glitch, not a change of motion
            e += 1
            continue
        if len(idx) == 2 and idx[0] == s and len(bounds) >= 2 and \
                _straddles(t, xy, keep, bounds[-2], s, e, sigma_mm, decel_mm_s2, k_sigma, slack, stamp_s):
            keep[s] = False  # the frame exposed while the piece set off: on neither the rest nor the line
            e += 1
            continue
        bounds.append(e)
        s, e = e, e + 1
    bounds.append(n)
    bounds = _refine(t, xy, bounds, sigma_mm, decel_mm_s2, stamp_s, k_sigma)
    fits = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        idx = np.flatnonzero(keep[a:b]) + a
        if len(idx) == 0:
            idx = np.arange(a, b)
        f = _settled(_fit_idx(t, xy, idx, sigma_mm, decel_mm_s2), t[idx], xy[idx], sigma_mm)
        f = with_residuals(f, t[idx], xy[idx], np.arange(len(idx)))
        fits.append(Fit(f.t_ref, f.p, f.v, f.a, f.cov, f.sigma_mm, float(t[a]), float(t[b - 1]), a, b, f.rest))
    return fits


def _settled(f: Fit, ts: np.ndarray, ps: np.ndarray, sigma: float, rest_speed_mm_s: float = 15.0, min_n: int = 8,
             scatter: float = 1.5) -> Fit:
    """A long stretch that ``fit_stretch`` calls a motion only because its span (the noise's extremes,
    which grow with the number of frames) passed ``6 sigma + 1`` is a rest: its straight line slower than
    a rest and its sightings within ``scatter`` sigma (RMS per coordinate) of their mean. A piece nudged
    or creeping a few mm lies farther from its mean and stays a motion."""
    n = len(ts)
    if f.rest or n < min_n or _slope_speed(ts - ts[-1], ps) >= rest_speed_mm_s:
        return f
    mean = ps.mean(axis=0)
    if math.sqrt(float(np.mean((ps - mean) ** 2))) > scatter * sigma:
        return f
    return Fit(f.t_ref, mean, np.zeros(2), np.zeros(2), np.diag([1.0 / n, 0.0, 0.0]), sigma, f.t_first, f.t_last,
               f.i0, f.i1, rest=True)


def _straddles(t, xy, keep, r0: int, s: int, e: int, sigma, decel, k: float, slack: float, stamp_s: float = 0.0) -> bool:
    """Whether observation ``s``, the first after a rest ``[r0, s)``, is a blend of the rest and the
    motion that follows (its exposure began before the piece set off): the line through ``s+1`` and
    ``e`` runs on to ``e+1``, and ``s`` lies on that line's path between the resting place and it."""
    if e + 1 >= len(t):
        return False
    rest_idx = np.flatnonzero(keep[r0:s]) + r0
    if len(rest_idx) < 2 or not _fit_idx(t, xy, rest_idx, sigma, decel).rest:
        return False
    line = _fit_idx(t, xy, np.array([s + 1, e]), sigma, decel)
    if not _agrees(line, t[e + 1], xy[e + 1], sigma, k, slack, stamp_s):
        return False
    d = line.vel(t[s + 1])
    d = d / max(float(np.hypot(*d)), 1e-9)
    off = xy[s] - xy[s + 1]
    across = abs(float(off[0] * d[1] - off[1] * d[0]))
    return across <= k * sigma + slack * float(np.hypot(*off)) and float(off @ d) < 0.0


def _rest_run(t, xy, idx, e, sigma, k, rest_speed_mm_s: float = 15.0, margin_mm: float = 1e-6) -> int:
    """How many of the next steps of ``split_track``'s growing loop from ``e`` surely end in 'agrees' with a
    rest fit: each step fits the observations ``idx`` plus those from ``e`` up to it, and checks the next one.

    The same test as fitting each step (``fit_stretch``: span and straight-line speed under the rest
    limits; then ``_agrees`` with the mean, whose variance is sigma^2/n and speed nil), for all steps at
    once from cumulative sums. A step whose numbers lie within a hair of a threshold ends the run, and
    the loop decides it exactly, so the stretches found are exactly those of the step-by-step loop."""
    tt = np.concatenate([t[idx], t[e:]])
    pp = np.concatenate([xy[idx], xy[e:]])
    b, n = len(idx), len(tt)
    m = np.arange(b, n, dtype=float)  # observations in each step's fit
    hi = np.maximum.accumulate(pp, axis=0)[b - 1:n - 1]
    lo = np.minimum.accumulate(pp, axis=0)[b - 1:n - 1]
    span = np.hypot(hi[:, 0] - lo[:, 0], hi[:, 1] - lo[:, 1])
    tau = tt - tt[0]
    q = pp - pp[0]
    c1 = np.cumsum(tau)[b - 1:n - 1]
    c2 = np.cumsum(tau * tau)[b - 1:n - 1]
    cq = np.cumsum(q, axis=0)[b - 1:n - 1]
    ctq = np.cumsum(tau[:, None] * q, axis=0)[b - 1:n - 1]
    den = m * c2 - c1 * c1
    with np.errstate(divide="ignore", invalid="ignore"):
        v = (m[:, None] * ctq - c1[:, None] * cq) / den[:, None]
    speed = np.hypot(v[:, 0], v[:, 1])
    off = pp[b:] - (pp[0] + cq / m[:, None])
    dist = np.hypot(off[:, 0], off[:, 1])
    tol = k * np.sqrt(sigma ** 2 + sigma ** 2 / m)
    sure = ((den > 0) & (span < 6.0 * sigma + 1.0 - margin_mm) & (speed < rest_speed_mm_s - _SPEED_MARGIN_MM_S)
            & (dist < tol - margin_mm))
    return len(sure) if sure.all() else int(np.argmin(sure))


def _moving_run(t, xy, idx, e, sigma, decel, k, slack, max_steps: int = 48, rest_speed_mm_s: float = 15.0,
                decel_sigma_mm_s2: float = 500.0, margin_mm: float = 1e-6, stamp_s: float = 0.0) -> int:
    """Like ``_rest_run``, for steps whose fit is a motion (``fit_stretch``'s quadratic with the friction
    prior): the fits of up to ``max_steps`` steps at once, as batched normal equations in a centred,
    scaled time basis per step (the prediction, its variance and the speed do not depend on the basis).
    A step that may be a rest, or whose agreement lies within a hair of the tolerance, ends the run."""
    stop = min(len(t), e + max_steps)
    tt = np.concatenate([t[idx], t[e:stop]])
    pp = np.concatenate([xy[idx], xy[e:stop]])
    b, n = len(idx), len(tt)
    if n <= b:
        return 0
    m = np.arange(b, n)  # observations in each step's fit: the first m; the step tests observation m
    hi = np.maximum.accumulate(pp, axis=0)[b - 1:n - 1]
    lo = np.minimum.accumulate(pp, axis=0)[b - 1:n - 1]
    span = np.hypot(hi[:, 0] - lo[:, 0], hi[:, 1] - lo[:, 1])
    inside = np.arange(n)[None, :] < m[:, None]  # (J, n): the observations of each step's fit
    w = inside.astype(float)
    cnt = m.astype(float)
    q = pp - pp[0]
    t_ref = tt[m - 1]
    centre = (w @ tt) / cnt
    half = np.maximum(0.5 * (t_ref - tt[0]), 1e-9)
    sx = (tt[None, :] - centre[:, None]) / half[:, None] * w  # (J, n) scaled time, 0 outside the fit
    s2 = sx * sx
    mom = [cnt, sx.sum(1), s2.sum(1), (s2 * sx).sum(1), (s2 * s2).sum(1)]
    r0, r1, r2 = w @ q, sx @ q, s2 @ q  # (J, 2)
    # straight line (the prior's direction and the rest test): slope in mm per scaled time unit
    den = mom[0] * mom[2] - mom[1] * mom[1]
    with np.errstate(divide="ignore", invalid="ignore"):
        v_lin = (mom[0][:, None] * r1 - mom[1][:, None] * r0) / (den * half)[:, None]
    speed_lin = np.hypot(v_lin[:, 0], v_lin[:, 1])
    moving = (den > 1e-12) & ((span >= 6.0 * sigma + 1.0 + margin_mm)
                              | (speed_lin > rest_speed_mm_s + _SPEED_MARGIN_MM_S))  # surely not a rest
    if decel:
        moving &= speed_lin > 1.0  # the prior's direction well defined
    j = len(moving) if moving.all() else int(np.argmin(moving))  # the run ends at a step that may be a rest
    if j == 0:
        return 0
    m, half, centre, t_ref, v_lin, speed_lin = m[:j], half[:j], centre[:j], t_ref[:j], v_lin[:j], speed_lin[:j]
    mom, r0, r1, r2 = [x[:j] for x in mom], r0[:j], r1[:j], r2[:j]
    with np.errstate(divide="ignore", invalid="ignore"):
        a_prior = -decel * v_lin / speed_lin[:, None]
    a_prior[~np.isfinite(a_prior)] = 0.0
    w_prior = sigma / max(decel_sigma_mm_s2, 1e-6)
    pr = 2.0 * w_prior / (half * half)  # the prior row on the s^2 coefficient: a = 2 c2 / half^2
    a = np.empty((len(m), 3, 3))
    for r in range(3):
        for c in range(3):
            a[:, r, c] = mom[r + c]
    a[:, 2, 2] += pr * pr
    rhs = np.stack([r0, r1, r2 + (pr * w_prior)[:, None] * a_prior], 1)  # (J, 3, 2)
    t_test = tt[m]
    st = (t_test - centre) / half
    g = np.stack([np.ones_like(st), st, st * st], 1)  # (J, 3)
    try:
        with np.errstate(all="ignore"):
            sol = np.linalg.solve(a, np.concatenate([rhs, g[:, :, None]], 2))  # coefficients, and A^-1 g
    except np.linalg.LinAlgError:  # a degenerate step (no noise, no prior): leave it to the exact fits
        return 0
    coef, ag = sol[:, :, :2], sol[:, :, 2]
    pred = (g[:, :, None] * coef).sum(1) + pp[0]
    var = (g * ag).sum(1)
    sr = (t_ref - centre) / half
    vel = (coef[:, 1] + 2.0 * coef[:, 2] * sr[:, None]) / half[:, None]
    speed = np.hypot(vel[:, 0], vel[:, 1])
    drift = slack * speed * np.maximum(t_test - t_ref, 0.0)
    across = k * np.sqrt(sigma ** 2 + var * sigma ** 2) + drift  # as _agrees
    along = k * np.sqrt(sigma ** 2 + var * sigma ** 2 + (speed * stamp_s) ** 2) + drift
    sure = _off_line(pp[m] - pred, vel, across, along) < across - margin_mm
    return len(sure) if sure.all() else int(np.argmin(sure))


def _off_line(off: np.ndarray, vel: np.ndarray, across, along):
    """How far an observation lies off its prediction, in the units of the tolerance ``across`` the line:
    the component along the motion scaled by ``across / along``. A frame stamped off puts a moving piece
    ahead of or behind its place, never beside it, so only the along-track tolerance takes the stamp
    scatter in; a graze that turns a line by a little still shows across it."""
    off, vel = np.asarray(off, float), np.asarray(vel, float)
    norm = np.hypot(vel[..., 0], vel[..., 1])
    moving = norm > 1e-9
    with np.errstate(divide="ignore", invalid="ignore"):
        u = np.where(moving[..., None], vel / np.where(moving, norm, 1.0)[..., None], 0.0)
        ratio = np.where(np.asarray(along) > 0, np.asarray(across) / np.asarray(along), 1.0)
    a = (off * u).sum(-1)
    c = off[..., 0] * u[..., 1] - off[..., 1] * u[..., 0]
    return np.where(moving, np.hypot(a * ratio, c), np.hypot(off[..., 0], off[..., 1]))  # at rest: no direction


def _fit_idx(t, xy, idx, sigma, decel) -> Fit:
    return fit_stretch(t[idx], xy[idx], 0, len(idx), sigma, decel)


def _agrees(f: Fit, t: float, z: np.ndarray, sigma: float, k: float, slack: float, stamp_s: float = 0.0) -> bool:
    drift = slack * f.speed * max(t - f.t_last, 0.0)
    across = k * math.sqrt(sigma ** 2 + f.pos_var(t)) + drift
    if stamp_s <= 0.0:
        return float(np.hypot(*(z - f.pos(t)))) <= across
    along = k * math.sqrt(sigma ** 2 + f.pos_var(t) + (f.speed * stamp_s) ** 2) + drift
    return float(_off_line(z - f.pos(t), f.vel(t), across, along)) <= across


def _refine(t, xy, bounds: list[int], sigma, decel, stamp_s: float = 0.0, k_sigma: float = 4.5) -> list[int]:
    """Move each boundary by one observation where that fits clearly better (by 9 sigma^2; with scattered
    frame times, 9 times the scatter they give the faster of the two stretches: ``(speed * stamp_s)^2``
    more, or a fast line's stamps would pull the frame a piece set off in onto its rest). Never onto a rest
    an observation lying beyond ``k_sigma`` of the resting place (``_onto_rest``)."""
    out = list(bounds)
    for k in range(1, len(out) - 1):
        def cost(cand):
            return _ssr(t, xy, out[k - 1], cand, sigma, decel) + _ssr(t, xy, cand, out[k + 1], sigma, decel)
        var = sigma ** 2
        if stamp_s > 0:
            speed = max(_speed(t, xy, out[k - 1], out[k], sigma, decel), _speed(t, xy, out[k], out[k + 1], sigma, decel))
            var += (speed * stamp_s) ** 2
        best, best_cost = out[k], cost(out[k])
        for cand in (out[k] - 1, out[k] + 1):
            if cand - out[k - 1] < 2 or out[k + 1] - cand < 2:
                continue
            c = cost(cand)
            if c < best_cost - 9.0 * var and _onto_rest(t, xy, out[k - 1], out[k], out[k + 1], cand, sigma, decel, k_sigma):
                best, best_cost = cand, c
        out[k] = best
    return out


def _onto_rest(t, xy, a: int, b: int, c: int, cand: int, sigma, decel, k_sigma: float) -> bool:
    """Whether the boundary ``b`` between stretches ``[a, b)`` and ``[b, c)`` may move to ``cand``: the
    observation that changes sides may join a rest only where it lies within ``k_sigma`` of the resting place
    (as ``split_track`` grows a stretch). A piece at rest does not move: a sighting off its place is of the
    piece already moving, or of a frame exposed while it set off (or stopped), its blurred centre on neither
    stretch; on the rest it would put the change a frame late, past the contact that caused it (#16, the
    independent renderer at 60 frames/s: a pawn struck 5.6 ms before a frame, seen there 3.7 mm from its resting
    place, 6 sigma, was put on the rest, which its drifting held places let a slow line fit better; the contact,
    then before the change's interval, was only guessed, and the first-contact call flagged)."""
    lo, hi, i = (a, b, b) if cand > b else (b, c, b - 1)  # the stretch that takes the observation ``i``
    rest = fit_stretch(t, xy, lo, hi, sigma, decel)
    return not rest.rest or float(np.hypot(*(xy[i] - rest.p))) <= k_sigma * math.sqrt(sigma ** 2 + rest.pos_var(t[i]))


def estimate_decel(stretches: list[list[Fit]], t_xy: list[tuple[np.ndarray, np.ndarray]], sigma_mm: float,
                   default_mm_s2: float = 0.0, min_points: int = 10) -> float:
    """Friction deceleration (mm/s^2) as the median of free quadratic fits over the long moving stretches."""
    values = []
    for fits, (t, xy) in zip(stretches, t_xy):
        for f in fits:
            if f.rest or f.n < min_points:
                continue
            free = fit_stretch(t, xy, f.i0, f.i1, sigma_mm, 0.0, decel_sigma_mm_s2=1e9)
            sp = free.speed
            if sp > 50.0:
                values.append(-float(free.a @ free.v) / sp)
    return float(np.median(values)) if values else default_mm_s2
