"""The frame clock behind a live stream's stamps.

A USB camera or a network stream stamps each frame when the host gets it, so the stamps scatter by a
few milliseconds about the sensor's steady frame clock, which is what set the instants the pictures were
taken. Fitting that clock through the stamps (a local quadratic of the stamp against the frame's slot
on the clock, slots counted across dropped frames) gives each frame's capture time to a fraction of the
scatter. Only where every step between stamps is plainly a whole number of frames: a burst of frames
held up and delivered together, a repeat, or scatter near half an interval leave the stamps as they are.
Whether the stamps or the fitted clock tell the capture times is read from the pictures themselves: under the right times a moving piece runs smoothly, under the wrong ones it jerks. A stream
whose stamps are the capture times (a file, a folder, a sensor timestamp; a clock drifting in earnest)
keeps them.
"""
from __future__ import annotations

import math
from typing import Mapping

import numpy as np

__all__ = ["SteadyClock", "retime"]

Arrays = Mapping[str, tuple[np.ndarray, np.ndarray]]


class SteadyClock:
    """Fits a steady frame clock through frame stamps.

    ``half_width``: slots each side in a local fit; ``reject``: residuals beyond this many robust sigmas
    (and ``floor_s``) are frames off the clock (taken late, stamped early) and keep their stamp."""

    def __init__(self, half_width: int = 20, reject: float = 4.0, floor_s: float = 2e-4) -> None:
        self.half_width, self.reject, self.floor_s = half_width, reject, floor_s

    def fit(self, stamps: np.ndarray) -> tuple[np.ndarray, float] | None:
        """(capture times for the sorted unique ``stamps``, their standard error in seconds), or None
        where too few frames or no steady clock to fit."""
        s = np.unique(np.asarray(stamps, float))
        if len(s) < 12:
            return None
        slot = self._slots(s)
        if slot is None or slot[-1] - slot[0] < 8:
            return None
        first, _ = self._local(slot, s, np.ones(len(s), bool))
        r = s - first
        sigma = 1.4826 * float(np.median(np.abs(r - np.median(r))))
        keep = np.abs(r) <= max(self.reject * sigma, self.floor_s)
        times, lev = self._local(slot, s, keep)
        resid = (s - times)[keep]
        dof = max(int(keep.sum()) - 3, 1)
        scatter = math.sqrt(float(np.sum(resid ** 2)) / dof)
        times = np.where(keep, times, s)  # a frame off the clock keeps its stamp
        se = scatter * math.sqrt(float(np.mean(lev[keep]))) if keep.any() else 0.0
        return times, se

    @staticmethod
    def _slots(s: np.ndarray, slack: float = 0.4) -> np.ndarray | None:
        """Each stamp's slot on the clock, the typical interval counting the frames dropped between two
        stamps; None where a step is not near a whole number of intervals (within ``slack``), or two stamps
        would share a slot (a repeat, or frames held up and delivered in a burst): the slots are unsure,
        and a clock fitted on wrong slots would be worse than the stamps."""
        d = np.diff(s)
        period = float(np.median(d))
        if period <= 0:
            return None
        period = float(np.median(d[d > 0.5 * period]))
        steps = np.round(d / period)
        if np.any(steps < 1) or np.any(np.abs(d / period - steps) > slack):
            return None
        return np.concatenate([[0], np.cumsum(steps.astype(int))])

    def _local(self, slot: np.ndarray, s: np.ndarray, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each stamp's fitted clock time from the kept stamps within ``half_width`` slots (a quadratic:
        the rate may drift), and its leverage (the share of the scatter left in the fitted time)."""
        x = (slot[None, :] - slot[:, None]).astype(float)  # row i: every stamp's slot relative to stamp i's
        w = ((np.abs(x) <= self.half_width) & keep[None, :]).astype(float)
        m = np.stack([np.sum(w * x ** k, axis=1) for k in range(5)], axis=1)  # moments of x per row
        normal = np.stack([m[:, [4, 3, 2]], m[:, [3, 2, 1]], m[:, [2, 1, 0]]], axis=1)  # basis x^2, x, 1
        rhs = np.stack([np.sum(w * x ** k * s[None, :], axis=1) for k in (2, 1, 0)], axis=1)
        ok = (w.sum(axis=1) >= 4) & (np.abs(np.linalg.det(normal)) > 1e-9)  # slots are distinct (``_slots``)
        out, lev = s.copy(), np.ones(len(s))
        if ok.any():
            inv = np.linalg.inv(normal[ok])
            out[ok] = np.einsum("ij,ij->i", inv[:, 2, :], rhs[ok])
            lev[ok] = inv[:, 2, 2]
        return out, lev


def _jerk(arrays: Arrays, min_speed_mm_s: float) -> float | None:
    """The median change of acceleration between consecutive frames of the moving pieces: near zero under
    the true capture times (a sliding piece decelerates steadily between contacts), large where the times
    are off by stamp scatter (each stamp off kicks the velocity one way and back)."""
    jerks: list[np.ndarray] = []
    for t, xy in arrays.values():
        if len(t) < 5:
            continue
        dt = np.diff(t)
        ok = dt > 1e-6
        v = np.diff(xy, axis=0)[ok] / dt[ok, None]
        tv = ((t[1:] + t[:-1]) / 2)[ok]
        if len(v) < 4:
            continue
        speed = np.linalg.norm(v, axis=1)
        a = np.diff(v, axis=0) / np.maximum(np.diff(tv), 1e-6)[:, None]
        moving = (speed[2:] > min_speed_mm_s) & (speed[1:-1] > min_speed_mm_s) & (speed[:-2] > min_speed_mm_s)
        jerks.append(np.linalg.norm(np.diff(a, axis=0), axis=1)[moving])
    pooled = np.concatenate(jerks) if jerks else np.zeros(0)
    return float(np.median(pooled)) if len(pooled) >= 5 else None


def retime(arrays: Arrays, clock: SteadyClock, min_speed_mm_s: float,
           margin: float = 0.95) -> tuple[dict[str, tuple[np.ndarray, np.ndarray]], float] | None:
    """``arrays`` (piece -> (t, xy)) on the fitted clock and the fitted times' standard error, where the
    moving pieces run clearly smoother on it (their median jerk under ``margin`` of that on the stamps);
    None where the stamps stand (exact times, too little motion to tell, a clock that is not steady)."""
    ts = [t for t, _ in arrays.values() if len(t)]
    if not ts:
        return None
    stamps = np.unique(np.concatenate(ts))
    fitted = clock.fit(stamps)
    if fitted is None:
        return None
    times, se = fitted
    if float(np.max(np.abs(times - stamps))) < 1e-6:
        return None
    moved = {p: (times[np.searchsorted(stamps, t)], xy) for p, (t, xy) in arrays.items()}
    on_stamps, on_clock = _jerk(arrays, min_speed_mm_s), _jerk(moved, min_speed_mm_s)
    if on_stamps is None or on_clock is None or on_clock >= margin * on_stamps:
        return None
    return moved, se
