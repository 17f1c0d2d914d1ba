"""The bat's colour is measured where it is put down, only once it has lain there uncovered for a few frames
(``vision.bat_search.BatSearch``): a hand still over part of it would teach the detector a colour the bat
does not have, and the bat would then go unrecognised for the whole stroke."""
from __future__ import annotations

import numpy as np

from calibration import default_profile
from vision.bat_search import BatSearch
from vision.board import Surface
from vision.types import Detection

PROFILE = default_profile("novuss")
AT = (0.0, -445.0)  # in A's striking zone
BAT_COLOUR = np.array([0.19, 0.57, 0.22, -1.35])
HAND_MIXED = np.array([0.20, 0.40, 0.38, -1.30])


def _search(**kw):
    return BatSearch(PROFILE.spec, Surface.from_profile(PROFILE).radius_mm, **kw)


def _bat(at=AT):
    return Detection("bat", at, 18.0)


def test_the_colour_is_the_median_of_frames_it_lay_still_and_uncovered():
    search = _search(still_frames=3)
    got = []
    for k, c in enumerate([BAT_COLOUR + 0.01, BAT_COLOUR - 0.01, BAT_COLOUR, BAT_COLOUR + 0.002]):
        search.seen(AT, c, k)
        got.append(search.settled([_bat()], k))
    assert got[:2] == [None, None]  # the first frame, and two frames of three
    assert np.allclose(got[2], BAT_COLOUR)
    assert got[3] is None  # the search is over


def test_a_hand_over_it_starts_the_measurement_again():
    search = _search(still_frames=3)
    covered = {0, 1, 2}  # the hand placing the bat leaves its outline sharp while fingers cover its top
    learnt = None
    for k in range(8):
        search.seen(AT, HAND_MIXED if k in covered else BAT_COLOUR, k)
        learnt = search.settled([_bat()], k, lambda at, k=k: k in covered)
        if learnt is not None:
            break
    assert k == 5 and np.allclose(learnt, BAT_COLOUR)  # frames 3, 4, 5 uncovered: the hand's colour never counts


def test_a_bat_that_moved_or_vanished_is_measured_again_where_it_lies_next():
    search = _search(still_frames=2)
    search.seen(AT, BAT_COLOUR, 0)
    assert search.settled([_bat((0.0, -430.0))], 1) is None  # moved on: not where it was found
    search.seen((0.0, -430.0), BAT_COLOUR, 1)
    assert search.settled([], 2) is None  # not found: forgotten
    search.seen(AT, BAT_COLOUR, 3)
    search.seen(AT, BAT_COLOUR, 4)
    assert np.allclose(search.settled([_bat()], 4), BAT_COLOUR)
