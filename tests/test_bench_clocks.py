"""The frame-clock stratum of the accuracy bench (``bench/accuracy.py --clocks``, ``bench.clocks``): its
schedules are what they say, its shot-by-shot comparison counts what it says, and on a fast subset of
clips a live stream's clock (3 ms jitter and 5 % drops with a burst) leaves no call confidently wrong."""
from __future__ import annotations

import io

import numpy as np
import pytest

from bench import clocks


def test_the_schedules_keep_true_capture_times_and_report_what_a_stream_would():
    fps = 30.0
    exact = clocks.exact(300, fps)
    assert exact[:3] == [(0.0, 0.0), (1 / fps, 1 / fps), (2 / fps, 2 / fps)]
    jit = clocks.jitter(exact, 3.0, seed=5)
    off = np.array([s - t for t, s in jit])
    assert off[0] == 0.0 and 0.0025 < np.abs(off).max() <= 0.003 and [t for t, _ in jit] == [t for t, _ in exact]
    kept = clocks.drop(exact, 0.05, seed=5, burst_at=100)
    lost = sorted(set(range(300)) - {round(t * fps) for t, _ in kept})
    assert lost[:3] == [1, 2, 3] and set(range(100, 105)) <= set(lost) and 8 <= len(lost) <= 30
    rep = clocks.repeats(100, fps, seed=5)
    assert rep[18] == (None, None)  # frame 17 again, same time (odd k)
    assert rep[36][0] is None and 0.002 <= rep[36][1] - 34 / fps <= 0.006  # frame 34 again, a new time
    back = next(j for j, (t, s) in enumerate(rep) if j and t is not None and rep[j - 1][1] is not None and s < rep[j - 1][1])
    assert rep[back - 1] == (41 / fps, 41 / fps) and rep[back] == pytest.approx((41.5 / fps, 40.7 / fps))  # a time going back
    drift = clocks.drifting(200, fps, 0.10)
    steps = np.diff([t for t, _ in drift]) * fps
    assert steps.max() == pytest.approx(1.10, abs=0.002) and steps.min() == pytest.approx(0.90, abs=0.002)


def test_compare_pairs_shots_by_start_and_counts_lost_invented_and_newly_flagged_calls():
    base = [(1.0, ("a",), "B", False), (3.0, ("b",), "A", False), (5.0, ("c",), "B", True), (7.0, ("d",), "A", False)]
    got = [(1.02, ("a",), "B", False),  # same
           (3.01, ("b",), "A", True),  # the same call, newly flagged: counted flagged
           (5.2, ("x",), "A", True),  # differs, flagged
           (9.0, ("e",), "B", False),  # invented, unflagged
           (9.5, ("f",), "B", True)]  # invented, flagged: the referee is asked
    notes: list = []
    assert clocks.compare(base, got, notes) == (1, 2, 2)  # the shot at 7.0 is lost, the one at 9.0 invented
    assert ((7.0, ("d",), "A", False), None) in notes and (None, (9.0, ("e",), "B", False)) in notes
    assert clocks.compare(base, base) == (4, 0, 0)


@pytest.fixture(scope="module")
def stratum():
    from bench import scoring
    from calibration import default_profile
    profiles = {g: default_profile(g) for g in ("novuss", "cvrnkana")}
    built = [(group, game, name, seed, builder(profiles[game], seed))
             for group, game, name, seed, builder in scoring.clips(True, 6)]
    out = io.StringIO()
    rows = clocks.run(built, profiles, [60], ["exact", "jitter 3 ms + drop 5 %"], out=out)
    return {(cond, what): clocks.figures(st) for cond, _, what, st in rows}, out.getvalue()


def test_a_live_streams_clock_leaves_no_call_confidently_wrong(stratum):
    figs, text = stratum
    assert text.count("\n") == 2 + 2 * 4  # the header, and per condition: 2 Novuss groups, their total, 1 Cvrnkaná group
    for game in ("novuss (all)", "cvr hard"):
        exact, live = figs[("exact", game)], figs[("jitter 3 ms + drop 5 %", game)]
        assert exact["n"] == live["n"] and exact["n"] >= 2
        assert exact["wrong_silent"] == 0 and live["wrong_silent"] == 0, game
        assert live["exact_silent"] == 0, game  # every call differing from the exact-time run is flagged
        assert live["exact_same"] + live["exact_newly"] >= 0.9 * live["exact_n"], game
    assert figs[("jitter 3 ms + drop 5 %", "novuss (all)")]["first_p95"] < 4.0  # ms: jitter and drops cost little
