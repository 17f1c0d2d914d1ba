"""The replay path's stand-ins for scipy give scipy's answers: ``vision.roots.brentq`` the same root to the bit
as ``scipy.optimize.brentq``, and ``vision.assign.assign`` the same gated pairs as the tracker took from
``scipy.optimize.linear_sum_assignment`` (random gated matrices, with ties); and a replay does not import
scipy at all (it cost a third of a second of ``shotjudge replay``, #20)."""
from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

from vision import assign as assign_mod
from vision.assign import assign
from vision.roots import brentq

scipy_optimize = pytest.importorskip("scipy.optimize")
BIG = 1e9


def _functions():
    out = [lambda t, c=c: math.sin(3 * t + c) * (1 + c) - 0.3 * c for c in np.linspace(-1, 1, 15)]
    out += [lambda t, a=a: (t - a) * (t - 2.5) * (t + 1.7) for a in np.linspace(-0.9, 0.9, 9)]
    out += [lambda t, a=a: math.hypot(120 * t - a, 30.0) - 45.0 for a in np.linspace(-100, 100, 15)]  # a contact
    out += [lambda t, a=a: np.float64(t ** 3 - a) for a in np.linspace(-0.8, 0.8, 9)]
    return out


def test_brentq_gives_scipys_root_to_the_bit():
    rng = np.random.default_rng(3)
    tried = 0
    for f in _functions():
        for _ in range(10):
            ts = np.linspace(*sorted(rng.uniform(-1, 1, 2)), 40)
            for a, b in zip(ts[:-1], ts[1:]):
                if f(a) * f(b) <= 0:
                    for xtol in (1e-9, 1e-11, 2e-12):
                        assert _outcome(brentq, f, a, b, xtol) == _outcome(scipy_optimize.brentq, f, a, b, xtol)
                        tried += 1
    assert tried > 500


def _outcome(solver, f, a, b, xtol):
    """The root, or the kind of error (a root at 0 within a cubic's flat bottom does not converge)."""
    try:
        return solver(f, a, b, xtol=xtol)
    except (ValueError, RuntimeError) as exc:
        return type(exc)


def test_brentq_refuses_as_scipy_does():
    with pytest.raises(ValueError):
        brentq(lambda t: t * t + 1.0, -1.0, 1.0)
    with pytest.raises(ValueError):
        brentq(lambda t: float("nan"), -1.0, 1.0)
    assert brentq(lambda t: t - 0.25, 0.25, 1.0) == 0.25


def _gated(rng):
    """A tracker-like cost matrix: tracks and detections near them, gated, by class; some distances
    rounded to make ties."""
    nr, nc = rng.integers(1, 9, 2)
    tracks = rng.uniform(0, 300, (nr, 2))
    dets = tracks[rng.integers(0, nr, nc)] + rng.normal(0, rng.choice([2, 10, 40]), (nc, 2))
    d = np.hypot(*(tracks[:, None] - dets[None]).transpose(2, 0, 1))
    same = rng.integers(0, 3, nr)[:, None] == rng.integers(0, 3, nc)[None]
    cost = np.where((d <= rng.choice([15, 40, 100, 400])) & same, d, BIG)
    if rng.random() < 0.1:
        cost = np.where(cost < BIG, np.round(cost / 10) * 10, BIG)
    return cost


def test_assign_gives_the_pairs_scipy_gives(monkeypatch):
    decided = []
    monkeypatch.setattr(assign_mod, "_scipy", lambda cost, big: decided.append(1) or _scipy_pairs(cost, big))
    rng = np.random.default_rng(0)
    for _ in range(3000):
        cost = _gated(rng)
        got = assign(cost, BIG)
        assert got == _scipy_pairs(cost, BIG)
        assert list(got) == sorted(got)
    assert 0 < len(decided) < 300  # ties and large groups are scipy's; most matrices are not


def _scipy_pairs(cost, big):
    rows, cols = scipy_optimize.linear_sum_assignment(cost)
    return {int(r): int(c) for r, c in zip(rows, cols) if cost[r, c] < big}


def test_replay_modules_do_not_import_scipy():
    code = ("import sys, judge.cli, judge.cmd_replay, judge.replay, vision.pipeline, vision.detectors; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'scipy'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
