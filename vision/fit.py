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
    # direction of travel for the friction prior: from a straight-line fit
    lin = np.vstack([np.ones(n), tau]).T
    coef_lin, *_ = np.linalg.lstsq(lin, ps, rcond=None)
    v_lin = coef_lin[1]
    span = float(np.hypot(*(ps.max(axis=0) - ps.min(axis=0))))
    if np.hypot(*v_lin) < rest_speed_mm_s and span < 6.0 * sigma_mm + 1.0:
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
    cov = np.linalg.inv(rows.T @ rows)
    return Fit(t_ref, coef[0], coef[1], coef[2], cov, sigma_mm, float(ts[0]), float(ts[-1]), i0, i1)


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


def _ssr(t, xy, i0, i1, sigma, decel):
    if i1 - i0 <= 2:
        return 0.0
    f = fit_stretch(t, xy, i0, i1, sigma, decel)
    return float(np.sum((f.pos(t[i0:i1]) - xy[i0:i1]) ** 2))


def split_track(t: np.ndarray, xy: np.ndarray, sigma_mm: float, decel_mm_s2: float = 0.0, k_sigma: float = 4.5,
                slack: float = 0.03) -> list[Fit]:
    """Split observations into stretches of smooth motion and fit each.

    A stretch grows while the next observation agrees with its extrapolation (within ``k_sigma`` of the
    prediction's uncertainty, plus ``slack`` x the distance travelled, for blur and friction).
    A lone disagreeing observation followed by agreeing ones is an outlier and is dropped. Each boundary
    is then moved by a frame either way if that fits better.
    """
    n = len(t)
    if n == 0:
        return []
    keep = np.ones(n, bool)
    bounds = [0]
    s = 0
    e = 1
    while e < n:
        idx = np.flatnonzero(keep[s:e]) + s
        if len(idx) < 2:
            e += 1
            continue
        f = _fit_idx(t, xy, idx, sigma_mm, decel_mm_s2)
        if _agrees(f, t[e], xy[e], sigma_mm, k_sigma, slack):
            e += 1
            continue
        if e + 1 < n and len(idx) >= 3 and _agrees(f, t[e + 1], xy[e + 1], sigma_mm, k_sigma, slack):
            keep[e] = False  # a glitch, not a change of motion
            e += 1
            continue
        bounds.append(e)
        s, e = e, e + 1
    bounds.append(n)
    bounds = _refine(t, xy, bounds, sigma_mm, decel_mm_s2)
    fits = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        idx = np.flatnonzero(keep[a:b]) + a
        if len(idx) == 0:
            idx = np.arange(a, b)
        f = _fit_idx(t, xy, idx, sigma_mm, decel_mm_s2)
        f = with_residuals(f, t[idx], xy[idx], np.arange(len(idx)))
        fits.append(Fit(f.t_ref, f.p, f.v, f.a, f.cov, f.sigma_mm, float(t[a]), float(t[b - 1]), a, b, f.rest))
    return fits


def _fit_idx(t, xy, idx, sigma, decel) -> Fit:
    return fit_stretch(t[idx], xy[idx], 0, len(idx), sigma, decel)


def _agrees(f: Fit, t: float, z: np.ndarray, sigma: float, k: float, slack: float) -> bool:
    tol = k * math.sqrt(sigma ** 2 + f.pos_var(t)) + slack * f.speed * max(t - f.t_last, 0.0)
    return float(np.hypot(*(z - f.pos(t)))) <= tol


def _refine(t, xy, bounds: list[int], sigma, decel) -> list[int]:
    """Move each boundary by one observation where that fits clearly better (by 9 sigma^2)."""
    out = list(bounds)
    for k in range(1, len(out) - 1):
        def cost(cand):
            return _ssr(t, xy, out[k - 1], cand, sigma, decel) + _ssr(t, xy, cand, out[k + 1], sigma, decel)
        best, best_cost = out[k], cost(out[k])
        for cand in (out[k] - 1, out[k] + 1):
            if cand - out[k - 1] < 2 or out[k + 1] - cand < 2:
                continue
            c = cost(cand)
            if c < best_cost - 9.0 * sigma ** 2:
                best, best_cost = cand, c
        out[k] = best
    return out


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
