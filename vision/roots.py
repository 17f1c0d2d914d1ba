"""A bracketed root by Brent's method, as ``scipy.optimize.brentq`` finds it, without importing scipy.

Importing ``scipy.optimize`` cost about 0.35 s of a 3.5 s ``shotjudge replay`` (#20), for one root finder
used a few times per shot. This is the same iteration as scipy's ``brentq.c`` (Charles Harris's), step for
step in IEEE double arithmetic, so it returns the same root to the bit (``tests/test_vision_roots.py``
compares them): a replay's event times do not change.
"""
from __future__ import annotations

import math
from typing import Callable

__all__ = ["brentq"]

RTOL = 4 * 2.220446049250313e-16  # scipy's least (and default) relative tolerance, 4 * machine epsilon


def brentq(f: Callable[[float], float], a: float, b: float, xtol: float = 2e-12, rtol: float = RTOL,
           maxiter: int = 100) -> float:
    """A zero of ``f`` in [a, b], where ``f(a)`` and ``f(b)`` differ in sign; within ``xtol + rtol * |x|``.
    Raises ``ValueError`` as scipy does (no sign change, a NaN value, bad tolerances) and ``RuntimeError``
    when ``maxiter`` iterations do not converge."""
    if xtol <= 0:
        raise ValueError(f"xtol too small ({xtol:g} <= 0)")
    if rtol < RTOL:
        raise ValueError(f"rtol too small ({rtol:g} < {RTOL:g})")

    def fx(x: float) -> float:
        v = float(f(x))
        if math.isnan(v):
            raise ValueError(f"The function value at x={x} is NaN; solver cannot continue.")
        return v

    xpre, xcur = float(a), float(b)
    xblk = fblk = spre = scur = 0.0
    fpre, fcur = fx(xpre), fx(xcur)
    if fpre == 0:
        return xpre
    if fcur == 0:
        return xcur
    if math.copysign(1.0, fpre) == math.copysign(1.0, fcur):
        raise ValueError("f(a) and f(b) must have different signs")
    for _ in range(maxiter):
        if fpre != 0 and fcur != 0 and math.copysign(1.0, fpre) != math.copysign(1.0, fcur):
            xblk, fblk = xpre, fpre
            spre = scur = xcur - xpre
        if abs(fblk) < abs(fcur):
            xpre, xcur, xblk = xcur, xblk, xcur
            fpre, fcur, fblk = fcur, fblk, fcur
        delta = (xtol + rtol * abs(xcur)) / 2
        sbis = (xblk - xcur) / 2
        if fcur == 0 or abs(sbis) < delta:
            return xcur
        stry = _step(xpre, xcur, xblk, fpre, fcur, fblk) if abs(spre) > delta and abs(fcur) < abs(fpre) else None
        if stry is not None and 2 * abs(stry) < min(abs(spre), 3 * abs(sbis) - delta):  # a good short step
            spre, scur = scur, stry
        else:  # bisect
            spre = scur = sbis
        xpre, fpre = xcur, fcur
        xcur += scur if abs(scur) > delta else (delta if sbis > 0 else -delta)
        fcur = fx(xcur)
    raise RuntimeError(f"brentq: failed to converge after {maxiter} iterations, value is {xcur}")


def _step(xpre: float, xcur: float, xblk: float, fpre: float, fcur: float, fblk: float) -> float | None:
    """The interpolated (or extrapolated) step; None where C's division by zero gives an infinity or a NaN,
    which no step is shorter than, so C bisects there too. (Only the last divisor can be zero: ``xpre`` is
    never ``xcur``, nor ``xblk`` ``xcur`` once the bisection step is not below the tolerance, and the
    interpolation runs only where ``|fcur| < |fpre|``.)"""
    try:
        if xpre == xblk:  # interpolate
            return -fcur * (xcur - xpre) / (fcur - fpre)
        dpre = (fpre - fcur) / (xpre - xcur)  # extrapolate
        dblk = (fblk - fcur) / (xblk - xcur)
        return -fcur * (fblk * dblk - fpre * dpre) / (dblk * dpre * (fblk - fpre))
    except ZeroDivisionError:
        return None
