"""Where a piece that vanished in the open went (vision.departure.why_gone)."""
from __future__ import annotations

import numpy as np
import pytest

from calibration import default_profile
from vision.board import Surface
from vision.departure import struck_off, why_gone
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


def test_a_fit_creeping_past_the_cushion_line_at_rest_is_not_off_the_board():
    # a pawn at rest against the north cushion whose fit crept 5 mm past the line, read at 64 mm/s (the
    # independent renderer's opening: called off before the stroke, and the shot's record contradicted itself)
    pawn = _gone((111.2, 488.9), (-17.6, 64.6))
    assert why_gone(pawn, SURFACE, 3, 15.0, 0.0, 1 / 60, False) == ("lost", None)


def test_a_pawn_struck_at_rest_over_a_cushion_before_it_was_seen_moving():
    # opponent-off-direct on our own simulator: B1 at (0, 330) struck by A1 to 5.4 m/s straight north, over
    # the cushion line (500 - 15 mm) in under two frames: never seen moving
    side, t = struck_off((0.0, 330.0), 16.0, (0.0, 5400.0), 600.0, SURFACE)
    v_line = (5400.0 ** 2 - 2 * 600.0 * 154.0) ** 0.5
    assert side == "N" and t == pytest.approx(2 * 154.0 / (5400.0 + v_line), rel=1e-9)
    assert struck_off((0.0, 330.0), 16.0, (0.0, 900.0), 600.0, SURFACE) is None  # too slow: back off the cushion
    assert struck_off((0.0, -300.0), 16.0, (0.0, 1200.0), 600.0, SURFACE) is None  # slowed too much on the way
    # heading into the NE pocket's mouth: not this call (a drop, or the corner review)
    assert struck_off((400.0, 400.0), 16.0, (3000.0, 3000.0), 600.0, SURFACE) is None


@pytest.mark.slow
@pytest.mark.parametrize("fps", [60, 30])
def test_an_opponent_pawn_struck_off_before_it_was_seen_moving_is_called_off_through_the_pipeline(fps):
    """opponent-off-direct, filmed by our renderer and watched by the classical detector: B1, struck at rest by
    A1, crosses the north cushion between two frames, blurred on the one between; it was called lost from sight
    (flagged) and the penalty for sending the opponent's pawn off the board was missed."""
    from bench import scoring
    from sim.scenarios_novuss import SCENARIOS

    profile = default_profile("novuss")
    ep = SCENARIOS["opponent-off-direct"][0](profile, 1)
    st = scoring.new_stats()
    (rec,) = scoring.run_clip(profile, ep, fps, "classical", 1, st)
    off = [e for e in rec["events"] if e["kind"] == "off"]
    assert [(e["piece"], e["side"]) for e in off] == [("B1", "N")]
    truth = next(e for e in ep.shots[0].record["events"] if e["kind"] == "off")
    assert abs(off[0]["t"] - truth["t"]) < 1.0 / fps  # within a frame interval (60 fps: 0.3 ms, 30 fps: 10 ms)
    assert not (rec.get("meta") or {}).get("review")
    assert st["rulings"] == [True] and st["rulings_wrong_silent"] == 0


def test_a_piece_called_off_beside_a_pocket_whose_last_line_stays_on_the_board_asks_the_referee():
    """On the independent renderer at 30 frames/s (gap 8) A1 came off the north cushion beside the NE pocket and
    dropped into it; its last sighting, at the pocket's edge, was fitted 12 mm off, and the tracker's filtered
    velocity carried it over the cushion: called off the board, and not asked about, because the corner review
    ran the last line ahead, which stays on the board. Off beside a pocket, on a line that does not leave the
    board, is not what the camera saw: the referee is asked."""
    from vision.segmenter import ShotWindow
    from vision.shot import ShotAssembler
    from vision.types import Track, TrackState

    dt = 1 / 30
    rng = np.random.default_rng(1)

    def a1(k):
        if k <= 60:
            return np.array([30.8, 254.1])
        if k <= 87:
            return np.array([30.8, 254.1]) + (k - 60) * np.array([14.9, 8.3]) + rng.normal(0.0, 0.2, 2)
        return {88: np.array([443.6, 482.2]), 89: np.array([449.4, 465.6])}[k]  # off the cushion, last seen

    a1_track = Track("A1", "pawn", "A", 16.0, tuple(TrackState("A1", k, k * dt, tuple(float(v) for v in a1(k)))
                                                  for k in range(40, 90)),
                     left="off", left_t_s=89 * dt, left_where="N", left_frame=89)
    bat = Track("bat", "bat", None, 18.0, tuple(TrackState("bat", k, k * dt, (0.0, -420.0 + 40.0 * max(0, min(k - 59, 8))))
                                                for k in range(40, 110)))
    window = ShotWindow(59 * dt, 105 * dt, 59, 105, {}, {}, "bat")
    rec = ShotAssembler(default_profile("novuss")).assemble(window, {"bat": bat, "A1": a1_track}, "A").shot.to_dict()
    assert [(e["kind"], e["piece"]) for e in rec["events"] if e["kind"] in ("off", "pocket")] == [("off", "A1")]
    assert [(r["code"], r["piece"]) for r in rec["meta"]["review"] if r["code"] == "pocket_or_off"] == [("pocket_or_off", "A1")]
    assert "NE pocket" in next(r["reason"] for r in rec["meta"]["review"] if r["code"] == "pocket_or_off")
