"""The frame in the empty board's light, made only where it is read: the same pixels as dividing the whole
frame, and a rim fit reading its window of it samples what it sampled on the whole frame."""
import cv2
import numpy as np
import pytest

from vision.light_norm import LitFrame, scale_table
from vision.rim import _remap_window


@pytest.fixture
def frame():
    return np.random.default_rng(3).integers(0, 256, (720, 1280, 3), dtype=np.uint8)


@pytest.mark.parametrize("gain", [(0.97, 1.0, 1.03), (0.6, 0.8, 1.5), (1.31, 1.29, 0.71)])
def test_lit_frame_is_the_frame_divided_by_its_gain_whole_and_by_window(frame, gain):
    want = cv2.multiply(frame, tuple(float(1.0 / g) for g in np.float32(gain)) + (0.0,))  # as the detector did
    lit = LitFrame(frame, np.float32(gain))
    window = lit[100:173, 1201:1280]  # before the whole frame is made
    assert np.array_equal(window, want[100:173, 1201:1280])
    assert np.array_equal(lit.image, want)
    assert np.array_equal(lit[5:9, 0:3], want[5:9, 0:3])
    assert lit.shape == frame.shape and lit.corrected


def test_no_gain_is_the_frame_itself(frame):
    lit = LitFrame(frame, None)
    assert lit.image is frame and not lit.corrected
    assert np.array_equal(lit[0:4, 0:4], frame[0:4, 0:4])


@pytest.mark.parametrize("centre", [(640.3, 360.7), (3.2, 2.9), (1277.6, 717.1), (-40.0, 300.0), (1400.0, 800.0)])
def test_remap_on_the_window_samples_as_on_the_whole_frame(frame, centre):
    rng = np.random.default_rng(7)
    mx = (centre[0] + rng.uniform(-30, 30, (28, 26))).astype(np.float32)
    my = (centre[1] + rng.uniform(-30, 30, (28, 26))).astype(np.float32)
    gain = np.float32((0.9, 1.1, 1.05))
    whole = LitFrame(frame, gain).image
    want = cv2.remap(whole, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    assert np.array_equal(_remap_window(LitFrame(frame, gain), mx, my), want)
    assert np.array_equal(_remap_window(whole, mx, my), want)


def test_the_scale_table_gives_the_multiplys_pixels(frame):
    coarse = frame[:167, :167]
    for gain in [(1.02, 0.98, 1.1), (0.5, 1.7, 1.0)]:
        g = np.float32(gain)
        assert np.array_equal(cv2.LUT(coarse, scale_table(g)), cv2.multiply(coarse, tuple(float(v) for v in g) + (0.0,)))
