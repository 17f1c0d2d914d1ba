"""A pawn struck off at speed and classed the other player's is still that pawn (``vision.struck_blurred``).

The independent renderer, opponent-off-direct at 60 frames/s (render seeds 2, 7 and 10 of eleven): A1, struck by
the bat, hit B1 head-on and stopped; B1 flew off over the north cushion, smeared over the board and classed A's pawn
on its last two frames. A1's track, predicted onwards at speed, took that disc; A1 itself, stopped, was a newcomer
with a spare name, and the record was refused ('A2 appears but was not on the board')."""
from __future__ import annotations

import pytest

from calibration import default_profile
from vision.board import Surface
from vision.pipeline import Pipeline, hints_for
from vision.tracker import Tracker
from vision.types import Detection, Detections
from vision_synth import shot_records

PROFILE = default_profile("novuss")
FPS = 60.0
LAYOUT = {"bat": (0.0, -445.0), "A1": (0.0, 100.0), "B1": (0.0, 331.0), "A7": (-484.0, -40.0), "B7": (-484.0, 40.0)}
A1_AFTER = {65: 188.0, 66: 289.0, 67: 302.0, 68: 307.0, 69: 311.0, 70: 315.0, 71: 318.0, 72: 320.0}
B1_FLYING = {67: 412.0, 68: 490.0}  # then over the north cushion, unseen


def _frames(stopped_at: float = 302.0):
    """The bat rests a second, is struck north at 100 mm a frame, hits A1 (frame 64) and slows to a stop; A1 hits
    B1 head-on (frame 66) and stops at ``stopped_at`` on frame 67 (touching B1's place at 302, a pawn's diameter
    behind it); B1 flies off north, seen twice as A's pawn. The frames, as the detector gave them."""
    frames = []
    for k in range(1, 170):
        t = k / FPS
        bat = min(-445.0 + 100.0 * max(k - 59, 0), 55.0 + 22.0 * max(k - 64, 0), 200.0)
        a1 = 100.0 if k < 65 else A1_AFTER.get(k, 322.0)
        if k == 67:
            a1 = stopped_at
        items = [Detection("bat", (0.0, bat), 18.0, frame=k, t_s=t),
                 Detection("pawn", (0.0, a1), 16.0, "A", frame=k, t_s=t),
                 Detection("pawn", LAYOUT["A7"], 16.0, "A", frame=k, t_s=t),
                 Detection("pawn", LAYOUT["B7"], 16.0, "B", frame=k, t_s=t)]
        if k < 67:
            items.append(Detection("pawn", LAYOUT["B1"], 16.0, "B", frame=k, t_s=t))
        elif k in B1_FLYING:
            items.append(Detection("pawn", (0.0, B1_FLYING[k]), 16.0, "A", frame=k, t_s=t, score=0.7))
        frames.append(Detections(k, t, tuple(items)))
    return frames


def _named(frames):
    tracker = Tracker(Surface.from_profile(PROFILE))
    tracker.start(LAYOUT, 0, 0.0)
    return {dets.frame: {d.piece: d.centre_mm[1] for d in tracker.update(dets).pieces()} for dets in frames}


def test_the_struck_pawn_classed_the_strikers_colour_keeps_its_name_and_the_striker_stops_where_it_hit():
    named = _named(_frames())
    assert [(k, named[k].get("B1")) for k in (67, 68)] == [(67, 412.0), (68, 490.0)]
    assert [k for k in range(65, 169) if named[k].get("A1") != pytest.approx(A1_AFTER.get(k, 322.0))] == []
    assert {p for k in named for p in named[k]} == {"bat", "A1", "B1", "A7", "B7"}  # no spare name taken
    pipe = Pipeline(PROFILE)
    pipe.start(hints_for(LAYOUT), 0, 0.0)
    (rec,) = shot_records(pipe, _frames())
    assert sorted(rec["after"]) == ["A1", "A7", "B7", "bat"]
    assert rec["after"]["A1"] == pytest.approx([0.0, 322.0], abs=0.5)
    assert [(e["kind"], e.get("piece"), e.get("side")) for e in rec["events"] if e["kind"] == "off"] == [("off", "B1", "N")]
    contacts = [(e["a"], e["b"]) for e in rec["events"] if e["kind"] == "contact"]
    assert contacts[:2] == [("bat", "A1"), ("A1", "B1")]


def test_a_disc_of_the_strikers_colour_not_at_touching_distance_behind_the_struck_pawn_is_not_the_striker_stopped():
    """Only a striker stopped where it touched explains the other colour: 60 mm short of B1 nothing could have
    struck it, so the disc past B1 stays the striker's, as matched within its class."""
    named = _named(_frames(stopped_at=271.0))
    assert named[67].get("A1") == 412.0 and "B1" not in named[67]
