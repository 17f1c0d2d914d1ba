"""The two exact shortcuts the replay takes instead of importing scipy.optimize on every run (#20 item 3):
the tracker's assignment without a solver where no two tracks want one detection, and event instants as
polynomial roots. Each is checked against what it replaces."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linear_sum_assignment

from vision.events import _apart, _beyond, _root
from vision.fit import Fit
from vision.tracker import _BIG, _assignment


def _pairs(cost, rows, cols):
    return {(int(r), int(c)) for r, c in zip(rows, cols) if cost[r, c] < _BIG}


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 7), st.integers(1, 7), st.integers(0, 2**32 - 1), st.floats(0.0, 0.7))
def test_the_assignment_is_scipys_with_or_without_the_solver(n, m, seed, infeasible):
    rng = np.random.default_rng(seed)
    cost = rng.uniform(0.0, 100.0, (n, m))
    cost[rng.uniform(size=(n, m)) < infeasible] = _BIG
    rows, cols = linear_sum_assignment(cost)
    got = _assignment(cost)
    assert _pairs(cost, *got) == _pairs(cost, rows, cols)


def test_a_frame_where_each_track_has_its_own_detection_needs_no_solver(monkeypatch):
    import scipy.optimize

    def refuse(cost):
        raise AssertionError("the solver was called")

    monkeypatch.setattr(scipy.optimize, "linear_sum_assignment", refuse)
    cost = np.array([[0.4, 31.0, _BIG], [29.0, 0.2, 60.0]])
    rows, cols = _assignment(cost)
    assert (rows.tolist(), cols.tolist()) == ([0, 1], [0, 1])
    tall = cost.T.copy()  # more tracks than detections: each detection its own track
    rows, cols = _assignment(tall)
    assert (rows.tolist(), cols.tolist()) == ([0, 1], [0, 1])
    with_rival = np.array([[0.4, 31.0], [0.3, 60.0]])  # both want detection 0: the solver decides
    with pytest.raises(AssertionError, match="the solver was called"):
        _assignment(with_rival)


def _line(p, v, a=(0.0, 0.0), t_ref=0.0):
    return Fit(t_ref, np.array(p, float), np.array(v, float), np.array(a, float), np.eye(3), 0.5, -1.0, 1.0, 0, 5)


@settings(max_examples=200, deadline=None)
@given(st.floats(200.0, 4000.0), st.floats(-0.02, 0.02), st.floats(30.0, 36.0), st.floats(-3000.0, 0.0))
def test_two_discs_touch_when_their_distance_is_the_sum_of_radii(speed, t_touch, reach, decel):
    # the bat comes along x at ``speed`` decelerating, a pawn rests where it arrives at ``t_touch``
    bat = _line((0.0, 0.0), (speed, 0.0), (decel, 0.0), t_ref=t_touch)
    pawn = _line((reach, 0.0), (0.0, 0.0))
    lo, hi = t_touch - 0.03, t_touch + 0.03
    t = _root(_apart(bat, pawn, lo, reach), lo, hi, first=True, sign=-1)
    assert t is not None and abs(t - t_touch) < 1e-9
    # moving apart is an upward crossing: none downward after the touch
    assert _root(_apart(bat, pawn, t_touch + 1e-4, reach), t_touch + 1e-4, hi, first=True, sign=-1) is None


def test_a_disc_meets_a_line_and_a_graze_without_crossing_is_no_instant():
    f = _line((0.0, 0.0), (0.0, 1000.0))  # y = 1000 t
    assert math.isclose(_root(_beyond(f, -0.1, 1, 50.0), -0.1, 0.1, first=True, sign=0), 0.05, abs_tol=1e-12)
    assert math.isclose(_root(_beyond(f, -0.1, 1, -50.0), -0.1, 0.1, first=True, sign=0), -0.05, abs_tol=1e-12)
    # decelerating to a stop exactly on the line: a double root, the disc never goes beyond it
    graze = _line((0.0, 0.0), (0.0, 0.0), (0.0, -2000.0))  # y = -1000 t^2, at most 0 at t = 0
    assert _root(_beyond(graze, -0.1, 1, 0.0), -0.1, 0.1, first=True, sign=0) is None
    # two crossings, first and last
    arc = _line((0.0, 10.0), (0.0, 0.0), (0.0, -2000.0))  # y = 10 - 1000 t^2: 0 at t = +-0.1
    assert math.isclose(_root(_beyond(arc, -0.2, 1, 0.0), -0.2, 0.2, first=True, sign=0), -0.1, abs_tol=1e-12)
    assert math.isclose(_root(_beyond(arc, -0.2, 1, 0.0), -0.2, 0.2, first=False, sign=0), 0.1, abs_tol=1e-12)
