"""bench/learned_misses.py on hand-made frames: each miss gets exactly the cause it has, false alarms their place."""
import math

import numpy as np

from bench.learned_misses import Candidate, MissLog, match
from calibration.profile import default_profile
from judge.training.data import Box, LabelledFrame

NOVUSS = default_profile("novuss")


def _box(cls, cx, cy, piece, half=9.0, visible=1.0):
    return Box(cls, (cx - half, cy - half, cx + half, cy + half), visible, piece)


def _frame(boxes):
    return LabelledFrame(np.zeros((720, 1280, 3), np.uint8), tuple(boxes), "novuss", 1, 0, False)


def _ctx(boxes, speed=0.0):
    # (x_mm, y_mm, r_mm, speed_mm_s, blur_mm, gap_mm, place): the circumstances are only carried through here
    return {b.piece: (0.0, 0.0, 16.0, speed, 0.0, 50.0, "open") for b in boxes}


def _cand(cls, cx, cy, score, half=9.0):
    return Candidate(cls, score, (cx - half, cy - half, cx + half, cy + half))


def test_match_is_greedy_nearest_first_within_half_the_box_and_ignores_low_scores():
    truth = [_box("pawn_a", 100, 100, "A1"), _box("pawn_a", 118, 100, "A2")]
    cands = [_cand("pawn_a", 109, 100, 0.9), _cand("pawn_a", 101, 100, 0.1)]  # the near one scores too low
    hit, used = match(truth, cands, 0.25)
    assert (hit, used) == ({0}, {0})  # 9 px from both: the first pair in distance order wins, A2 stays missed
    assert match(truth, cands, 0.05) == ({0, 1}, {0, 1})


def test_each_miss_gets_its_cause():
    boxes = [
        _box("pawn_a", 100, 100, "A1"),  # found as pawn_b: mix-up
        _box("pawn_b", 300, 100, "B1"), _box("pawn_b", 314, 100, "B2"),  # one box on both, B1's: B2 taken
        _box("bat", 500, 100, "bat"),  # a bat box 11 px off (tolerance 9): off-centre
        _box("pawn_a", 700, 100, "A2"),  # its class at 0.12 only: low-score
        _box("pawn_b", 900, 100, "B3"),  # nothing of its class anywhere near: nothing
        _box("pawn_a", 1100, 100, "A3", visible=0.3),  # mostly covered: not counted, never a miss
        _box("pawn_a", 100, 400, "A4"),  # found: no miss
    ]
    cands = [_cand("pawn_b", 101, 100, 0.8), _cand("pawn_a", 101, 101, 0.05),
             _cand("pawn_b", 305, 100, 0.7),
             _cand("bat", 511, 100, 0.6),
             _cand("pawn_a", 700, 101, 0.12),
             _cand("pawn_a", 1100, 100, 0.9),
             _cand("pawn_a", 100, 401, 0.95)]
    log = MissLog(0.25, 0.5)
    assert log.add(_frame(boxes), _ctx(boxes), cands, NOVUSS) == 5
    got = {m.piece: m.cause for m in log.misses}
    assert got == {"A1": "mix-up", "B2": "taken", "bat": "off-centre", "A2": "low-score", "B3": "nothing"}
    m = {m.piece: m for m in log.misses}
    assert (m["A1"].other_cls, m["A1"].other_score, m["A1"].own_score) == ("pawn_b", 0.8, 0.05)
    assert (m["A2"].own_score, m["A2"].best_cls) == (0.12, "pawn_a")
    assert m["B3"].best_cls == "" and math.isinf(m["B3"].best_offset)
    assert m["bat"].best_offset == round(11 / 9, 2)
    assert log.pieces[("pawn_a", "all")] == [3, 2] and log.pieces[("pawn_b", "all")] == [3, 2]
    # the pawn_b box on A1 hit nothing; the bat box hit nothing; the box on the covered A3 hit it (not false)
    assert log.false == {("pawn_b", "on a piece, other class"): 1, ("bat", "touching a piece's box"): 1}


def test_circumstances_are_counted_per_class_and_flag():
    boxes = [_box("pawn_a", 100, 100, "A1"), _box("pawn_a", 15, 300, "A2")]
    ctx = {"A1": (0.0, 0.0, 16.0, 2000.0, 20.0, 0.5, "cushion"), "A2": (0.0, 0.0, 16.0, 0.0, 0.0, 90.0, "open")}
    log = MissLog(0.25, 0.5)
    log.add(_frame(boxes), ctx, [_cand("pawn_a", 15, 300, 0.9), _cand("pawn_a", 400, 400, 0.9)], NOVUSS)
    assert [m.piece for m in log.misses] == ["A1"]
    for flag in ("touching", "moving", "blur > radius", "cushion"):
        assert log.pieces[("pawn_a", flag)] == [1, 1], flag
    assert log.pieces[("pawn_a", "at frame edge")] == [1, 0]  # A2's box is 6 px from the left border
    assert log.false == {("pawn_a", "on the board"): 1}
    rows = {line.split("  ")[0].strip(): line for line in log.tables().splitlines()}
    assert rows["touching"].split()[1:4] == ["1", "1", "100.0%"]
    assert rows["at frame edge"].split()[3:6] == ["1", "0", "0.0%"]
