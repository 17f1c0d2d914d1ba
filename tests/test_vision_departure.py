"""Where a piece that vanished in the open went (vision.departure.why_gone)."""
from __future__ import annotations

import numpy as np
import pytest

from calibration import default_profile
from vision.board import Surface
from vision.departure import why_gone
from vision.tracker import _Live

SURFACE = Surface.from_profile(default_profile("novuss"))


def _gone(pos, vel) -> _Live:
    return _Live("A5", "pawn", "A", 15.0, np.array(pos, float), np.array(vel, float), 18.9, 1134)


@pytest.mark.parametrize("dt_s", [1 / 60, 7 / 60])
def test_a_pawn_heading_into_a_pocket_mouth_is_pocketed_whatever_the_frame_step(dt_s):
    # last seen 52 mm from the NE pocket's centre, moving into its 45 mm mouth; 7 frames since the last
    # update (nothing else moved, so the pipeline skipped them): the sampled path stepped over the mouth
    # and the pawn was called over the cushion (tests/test_one_referee.py's novuss-penalty, shot 6)
    pawn = _gone((471.4, 457.0), (624.1, 483.6))
    assert why_gone(pawn, SURFACE, 3, 15.0, 0.0, dt_s, False) == ("pocket", "NE")


def test_a_pawn_heading_past_the_pocket_goes_over_the_cushion():
    pawn = _gone((471.4, 300.0), (900.0, 40.0))  # to the east cushion, far from either pocket
    assert why_gone(pawn, SURFACE, 3, 15.0, 0.0, 7 / 60, False) == ("off", "E")
