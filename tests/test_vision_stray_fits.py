"""A resting piece whose fit strays for a frame and comes back does not hold a shot open (``ShotSegmenter._strays_only``).

The independent renderer, opponent-off-direct at 60 frames/s (render seed 7): A8, resting against the east cushion,
was fitted 2-4 mm inside it on about one frame in ten. Every 0.3 s window held such a frame, the shot never ended,
B1 put back on the centre spot by hand was seen during it, took a spare name and the record was refused."""
from __future__ import annotations

import pytest

from vision.segmenter import ShotSegmenter
from vision.types import Detection, Detections

FPS = 60.0
REST = {"bat": (0.0, -445.0), "A1": (0.0, 100.0), "A8": (484.0, -40.0)}


def _run(a8_at, a1_after=lambda k: (0.0, 300.0)):
    """The bat struck north on frame 31, A1 struck (frame 36) and at rest from frame 40 at ``a1_after(k)``; A8
    at ``a8_at(k)``. The segmenter's windows, and the frame each was closed on."""
    seg = ShotSegmenter("novuss")
    seg.seed(REST)
    shots = []
    for k in range(1, 200):
        t = k / FPS
        bat_y = min(-445.0 + 60.0 * max(k - 30, 0), 50.0)
        a1 = REST["A1"] if k < 36 else ((0.0, 100.0 + 50.0 * (k - 35)) if k < 40 else a1_after(k))
        items = (Detection("bat", (0.0, bat_y), 18.0, frame=k, t_s=t, piece="bat"),
                 Detection("pawn", a1, 16.0, "A", frame=k, t_s=t, piece="A1"),
                 Detection("pawn", a8_at(k), 16.0, "A", frame=k, t_s=t, piece="A8"))
        w = seg.update(Detections(k, t, items))
        if w:
            shots.append((w, k))
    return shots, seg


def test_a_resting_pawns_fit_straying_3_mm_on_one_frame_in_ten_lets_the_shot_end_where_it_would_without():
    steady, _ = _run(lambda k: REST["A8"])
    strays, _ = _run(lambda k: (481.0, -41.0) if k % 10 == 3 else REST["A8"])
    assert [k for _, k in steady] == [k for _, k in strays] and len(steady) == 1
    (w, _), = strays
    assert w.after["A8"] == pytest.approx(REST["A8"], abs=0.5) and w.after["A1"] == pytest.approx((0.0, 300.0))


@pytest.mark.parametrize("a8_at,a1_after", [
    (lambda k: (481.0, -41.0) if k % 3 == 0 else REST["A8"], lambda k: (0.0, 300.0)),  # one frame in three
    (lambda k: (478.0, -40.0) if k % 10 == 3 else REST["A8"], lambda k: (0.0, 300.0)),  # 6 mm: what starts a shot
    (lambda k: REST["A8"], lambda k: (0.0, 300.0 + 0.3 * (k - 40))),  # A1 creeping on at 18 mm/s
])
def test_a_fit_straying_often_or_far_or_a_piece_creeping_on_keeps_the_shot_open(a8_at, a1_after):
    shots, seg = _run(a8_at, a1_after)
    assert shots == [] and seg.state == "moving"
