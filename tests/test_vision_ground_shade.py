"""Marbles of the ground's own shade (a clay marble on soil): found by their outline, not their colour.

bench/strata.py, *everything*, Cvrnkaná: player A's marbles were drawn within a few hundredths of the soil's
colour. A1, rolling in from out of view into the pit, was never seen at either frame rate (its difference
from the empty ground above the threshold only in scattered specks; its whole, sharp outlines nearer the
ground's colour than its class's), and at 60 frames/s A's colour was never measured at all (A2's outline on
the first frame was 0.46 whole), so A2 at rest was missed on every frame.
"""
from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from vision.blobs import grown_specks
from vision.colour_model import ColourModel

A, B = ("marble", "A"), ("marble", "B")
BOARD = np.array([0.28, 0.33, 0.39, 0.0])


def _labels(mask: np.ndarray):
    n, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8, ltype=cv2.CV_32S)
    return labels, stats[:, cv2.CC_STAT_AREA]


def test_a_speck_grows_over_the_faint_disc_around_it_noise_and_a_pieces_blob_do_not():
    high = np.zeros((40, 60), np.uint8)
    low = np.zeros_like(high)
    # a faint disc of 21 px above half the threshold, two specks of it above the threshold
    cv2.circle(low, (10, 10), 2, 255, -1)
    low[8:13, 7:14] = 255
    high[10, 10] = high[11, 12] = 255
    # noise: a speck whose faint surround is two pixels
    high[30, 5] = 255
    low[30, 5:7] = 255
    # a piece's own blob (over the speck limit) with a faint rim and a speck inside that rim
    high[20:26, 30:36] = 255
    low[18:28, 28:38] = 255
    high[18, 28] = 255
    # a long faint streak from a speck: larger than a piece
    high[35, 40] = 255
    low[34:37, 20:59] = 255
    labels, areas = _labels(high)
    grown = grown_specks(labels, areas, 6.0, low, 10.0, 60.0, cv2.CV_32S)
    assert grown is not None
    assert grown.sum() == int((low[:16, :20] > 0).sum())  # the faint disc only
    assert grown[10, 10] and grown[8, 7] and not grown[30, 5] and not grown[20, 30] and not grown[35, 40]
    # nothing to grow: no speck, or no region of a piece's size
    only_piece = np.zeros_like(high)
    only_piece[20:26, 30:36] = 255
    assert grown_specks(*_labels(only_piece), 6.0, low, 10.0, 60.0, cv2.CV_32S) is None
    assert grown_specks(labels, areas, 6.0, low, 200.0, 300.0, cv2.CV_32S) is None


def _model(a_colour) -> ColourModel:
    m = ColourModel()
    m.learn({A: [np.asarray(a_colour, float)] * 3, B: [np.array([0.24, 0.18, 0.56, -0.36])] * 3})
    return m


def test_a_class_of_the_grounds_shade_is_named_by_its_outline_only():
    clay = _model([0.268, 0.327, 0.391, -0.12])  # A as bench/strata.py's everything drew it
    assert clay.ground_shaded(BOARD) == [A]
    rolling = np.array([0.279, 0.327, 0.385, -0.06])  # A1 rolling in, as measured
    assert clay.classify(rolling[None, :], board=BOARD) == [None]  # nearer the ground than its class: texture?
    assert clay.by_outline(rolling, clay.ground_shaded(BOARD)) == A
    # a colour between the classes, or far from both, is no one's even with a whole outline
    assert clay.by_outline((clay.prototypes[A] + clay.prototypes[B]) / 2, [A]) is None
    assert clay.by_outline(np.array([0.6, 0.3, 0.1, 0.5]), [A]) is None
    # marbles unlike the ground: none is ground-shaded, and by_outline names only classes asked about
    glass = _model([0.64, 0.26, 0.09, 0.21])
    assert glass.ground_shaded(BOARD) == []
    assert glass.by_outline(glass.prototypes[A], []) is None
    assert glass.ground_shaded(None) == []


@pytest.mark.slow
@pytest.mark.parametrize("fps", [30, 60])
def test_a_clay_marble_rolling_in_from_out_of_view_into_the_pit_is_seen_and_called(fps):
    """*everything*, pit-entry: was 'shot 1 missed' at both rates."""
    from tests.test_vision_strata_floors import _clip

    s = _clip("everything", "cvrnkana", "pit-entry", fps)
    assert s["rulings"] == [True]
    assert s["rulings_flagged"] == 0 and s["rulings_wrong_silent"] == 0


@pytest.mark.slow
def test_a_class_whose_one_piece_on_view_showed_a_broken_outline_is_measured_on_the_next_frames():
    """*everything*, pit-skip, 60 frames/s (filmed as the full bench films it): A2, the one marble of A's on
    view, showed 0.46 of its outline on the first frame; A kept the profile's blue and A2, lying still in plain
    view, was missed on 336 of 336 frames. The layout's classes not measured are measured again on the next
    frames (one of which shows 0.55 of it). The shot itself stays missed: A1 crosses the view at 2.6 m/s,
    smeared over 33 mm, and no blob of it stands out of the noise."""
    from bench import scoring, strata
    from calibration import default_profile
    from sim.render_strata import stratum as look

    cv2.setNumThreads(1)
    profile = default_profile("cvrnkana")
    names = [n for n, _ in strata.scenarios("cvrnkana", False)]
    j = names.index("pit-skip")
    ep = strata.scenarios("cvrnkana", False)[j][1](profile, 1)
    seen = []

    def on_frame(fr, dets):
        if fr.t_s - ep.clip().t_start_s < 0.7:  # before the flick: A2 lies still at (300, -250)
            seen.append(any(d.owner == "A" and math.dist(d.centre_mm, (300.0, -250.0)) < 8.0 for d in dets.pieces()))

    s = scoring.new_stats()
    scoring.run_clip(profile, ep, 60, "classical", 1, s, settings=look("everything", j + 1, codec_fps=60.0),
                     on_frame=on_frame)
    assert len(seen) >= 40
    assert not any(seen[:2])  # the first frames: A's colour not yet measured
    assert sum(seen) >= len(seen) - 12  # then A2 is seen on every frame but the first few
    assert s["rulings_wrong_silent"] == 0
