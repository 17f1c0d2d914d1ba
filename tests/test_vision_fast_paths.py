"""The classical detector's and the motion splitter's shortcuts give exactly what the plain code gives.

Replay speed (``bench/replay.py``) rests on them; these tests make sure no shortcut changes a result:
``split_track``'s runs of surely-agreeing frames against its frame-by-frame loop, the per-plane
foreground strength against the formula, the cheap medians, centroids and 16-bit labels against numpy's
and OpenCV's own.
"""
from __future__ import annotations

import cv2
import numpy as np
import pytest

import vision.fit as fit_mod
from vision.blobs import _centroids, _median, label_type
from vision.fit import split_track
from vision.rim import _median_rows, foreground_strength


def _track(rng):
    """A noisy track: rests, straight runs at speeds around the rest limit and far above it, sudden turns
    (collisions), glitches, and skipped frames."""
    n = int(rng.integers(2, 130))
    t = np.cumsum(np.full(n, 1 / 60) * rng.choice([1, 1, 1, 2], n)) + rng.uniform(0, 10)
    sigma = float(rng.choice([0.2, 0.3, 0.5]))
    xy = np.zeros((n, 2))
    p, v = rng.uniform(-500, 500, 2), np.zeros(2)
    for i in range(n):
        if rng.random() < 0.05:
            v = rng.normal(0, rng.choice([5.0, 14.0, 15.0, 16.0, 300.0, 2500.0]), 2)
        if rng.random() < 0.02:
            v = np.zeros(2)
        if i:
            p = p + v * (t[i] - t[i - 1])
        xy[i] = p + rng.normal(0, sigma * rng.choice([0.5, 1.0, 2.0, 4.0]), 2)
        if rng.random() < 0.02:
            xy[i] += rng.normal(0, 20, 2)
    return t, xy, sigma, float(rng.choice([0.0, 350.0]))


def _same_fits(a, b) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if (x.i0, x.i1, x.rest, x.t_ref, x.sigma_mm, x.t_first, x.t_last) != \
                (y.i0, y.i1, y.rest, y.t_ref, y.sigma_mm, y.t_first, y.t_last):
            return False
        if not all(np.array_equal(getattr(x, k), getattr(y, k)) for k in ("p", "v", "a", "cov")):
            return False
    return True


def test_split_track_runs_find_exactly_the_stretches_of_the_frame_by_frame_loop(monkeypatch):
    rng = np.random.default_rng(5)
    tracks = [_track(rng) for _ in range(120)]
    fast = [split_track(t, xy, s, d) for t, xy, s, d in tracks]
    monkeypatch.setattr(fit_mod, "_rest_run", lambda *a, **k: 0)
    monkeypatch.setattr(fit_mod, "_moving_run", lambda *a, **k: 0)
    monkeypatch.setattr(fit_mod, "_SPEED_MARGIN_MM_S", float("inf"))  # fit_stretch's rest shortcut off too
    plain = [split_track(t, xy, s, d) for t, xy, s, d in tracks]
    assert sum(len(f) > 1 for f in plain) > 40  # the tracks do change motion
    bad = [i for i, (a, b) in enumerate(zip(fast, plain)) if not _same_fits(a, b)]
    assert bad == []


def test_rest_and_moving_runs_pass_frames_only_when_sure():
    t = np.arange(40) / 60.0
    still = np.tile([120.0, -40.0], (40, 1)) + np.random.default_rng(1).normal(0, 0.2, (40, 2))
    assert fit_mod._rest_run(t, still, np.arange(5), 5, 0.3, 4.5) == 35
    moving = np.column_stack([100.0 + 800.0 * t, -40.0 + 0 * t])
    assert fit_mod._rest_run(t, moving, np.arange(5), 5, 0.3, 4.5) == 0
    assert fit_mod._moving_run(t, moving, np.arange(5), 5, 0.3, 0.0, 4.5, 0.03) == 35
    turned = moving.copy()
    turned[20:, 1] += 300.0 * (t[20:] - t[19])  # a collision at frame 20 turns it
    assert fit_mod._moving_run(t, turned, np.arange(5), 5, 0.3, 0.0, 4.5, 0.03) == 20 - 5


def test_foreground_strength_is_the_formula_to_the_bit():
    rng = np.random.default_rng(2)
    for shape in [(1, 28, 26, 3), (3, 28, 26, 3), (57, 91, 3), (4, 3)]:
        frame = rng.integers(0, 256, shape).astype(np.float32)
        empty = rng.integers(0, 256, shape).astype(np.float32)
        s_f = frame.sum(-1) + 3.0
        s_e = empty.sum(-1) + 3.0
        chroma = np.abs(frame * (s_e / s_f)[..., None] - empty).sum(-1) / s_e
        gain = s_f / s_e
        want = chroma + 0.5 * np.maximum(gain - 1.6, 0.0) + np.maximum(0.3 - gain, 0.0)
        got = foreground_strength(frame, empty)
        assert got.shape == want.shape and got.dtype == np.float32
        assert np.array_equal(got, want)


@pytest.mark.parametrize("shape", [(3, 196), (2, 168, 3), (4, 7)])
def test_medians_are_numpys(shape):
    a = np.random.default_rng(3).normal(size=shape).astype(np.float32)
    assert np.array_equal(_median_rows(a), np.median(a, axis=1))
    flat = a.ravel()
    for m in (flat, flat[:-1]):
        assert _median(m) == np.median(m)


def test_centroids_and_16_bit_labels_are_opencvs():
    rng = np.random.default_rng(4)
    for _ in range(20):
        mask = (rng.random((60, 90)) < rng.uniform(0.02, 0.5)).astype(np.uint8) * 255
        n, labels, stats, cents = cv2.connectedComponentsWithStats(mask, connectivity=8)
        n16, labels16, stats16, cents16 = cv2.connectedComponentsWithStats(mask, connectivity=8,
                                                                          ltype=label_type(mask.shape))
        assert n16 == n and np.array_equal(labels16, labels) and np.array_equal(stats16, stats)
        assert np.array_equal(cents16[1:], cents[1:])
        assert np.array_equal(_centroids(labels, mask, n)[1:], cents[1:])
    assert label_type((167, 167)) == cv2.CV_16U and label_type((1000, 1000)) == cv2.CV_32S
