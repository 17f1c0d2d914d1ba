"""Instants as exact polynomial roots: every motion here is a quadratic in time (``vision.fit``), so the
instant two discs touch, a disc meets a line or leaves a rim is a real root of a low polynomial, taken exactly
(numpy's companion matrix), not searched for. Shared by ``vision.events`` and ``vision.lone_launch``."""
from __future__ import annotations

import numpy as np
from numpy.polynomial import polynomial as P

from .fit import Fit

__all__ = ["local", "apart", "beyond", "root"]


def local(f: Fit | np.ndarray, t0: float) -> np.ndarray:
    """(3, 2): a fit's position as a polynomial in ``s = t - t0`` (constant, linear and square terms per
    coordinate); a fixed point (an array of 2) as a constant one."""
    if isinstance(f, Fit):
        return np.stack([f.pos(t0), f.vel(t0), 0.5 * f.a])
    return np.stack([np.asarray(f, float), np.zeros(2), np.zeros(2)])


def apart(f: Fit, g: Fit | np.ndarray, t0: float, reach: float) -> np.ndarray:
    """Squared distance between ``f`` and ``g`` less ``reach`` squared, a quartic in ``s = t - t0``: of the sign
    of their distance less ``reach`` (touching discs, a piece over a pocket's or the pit's rim)."""
    d = local(f, t0) - local(g, t0)
    out = P.polyadd(P.polymul(d[:, 0], d[:, 0]), P.polymul(d[:, 1], d[:, 1]))
    out[0] -= reach * reach
    return out


def beyond(f: Fit, t0: float, axis: int, line: float) -> np.ndarray:
    """How far ``f`` is past a cushion line (along ``axis``, outwards), a quadratic in ``s = t - t0``."""
    c = local(f, t0)[:, axis].copy()
    c[0] -= line
    return c if line > 0 else -c


def root(poly: np.ndarray, lo: float, hi: float, first: bool, sign: int) -> float | None:
    """First (or last) crossing of zero in [lo, hi] of the polynomial ``poly`` (coefficients from the constant
    up, in ``s = t - lo``): every motion here is a quadratic in time, so the instants two discs touch, a disc
    meets a line or two stretches meet are its real roots, taken exactly (numpy's companion matrix), not
    searched for. ``sign`` -1 keeps only downward crossings, +1 upward, 0 either; a touch without crossing
    (a double root) is none."""
    span = hi - lo
    if not span > 0:
        return None
    c = np.asarray(poly, float) * span ** np.arange(len(poly))  # in u = s / span: the roots sought lie in [0, 1]
    big = np.abs(c).max()
    if not big > 0:
        return None
    top = len(c)
    while top > 1 and abs(c[top - 1]) <= 1e-13 * big:
        top -= 1
    c = c[:top]
    if top < 2:
        return None
    r = P.polyroots(c)
    u = np.sort(r.real[(np.abs(r.imag) <= 1e-9) & (r.real > 0.0) & (r.real < 1.0)])
    if not len(u):
        return None
    edges = np.concatenate([[0.0], u, [1.0]])
    side = np.sign(P.polyval(0.5 * (edges[:-1] + edges[1:]), c))  # the sign between consecutive roots
    order = range(len(u)) if first else range(len(u) - 1, -1, -1)
    for i in order:
        before, after = side[i], side[i + 1]
        if before == after or before == 0 or after == 0 or (sign and (after - before) * sign < 0):
            continue
        x, slope = float(u[i]), float(P.polyval(u[i], P.polyder(c)))
        if slope != 0:  # one Newton step polishes the eigenvalue
            x -= float(P.polyval(x, c)) / slope
        return lo + span * min(max(x, 0.0), 1.0)
    return None
