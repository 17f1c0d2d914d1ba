"""Floors on the independent renderer (bench/second_renderer.py: Panda3D, its own scene, lamps, materials and
noise; nothing in vision/ is tuned on it): the classical detector through the judge's own pipeline on the
own/opponent gap clips that failed there, each judged as the ground truth.

Measured with ``python bench/second_renderer.py --fps 60 --gap-seeds 6``; before #16's continuity work these
clips were refused: the struck bat's colour drifted from where it was put down (a glossy piece under other
light) on half its frames, its blob was taken for a hand, and no contact was seen ("the bat must be on the
board"). Seed 4 is still wrong, flagged for review, never silently: its cream pawn A1 on the pale board differs
from it only in fragments of its rim and is never detected, so its contact is unseen (the bat, whose colour had
been measured while the hand placing it still covered part of it, is now found).
"""
from __future__ import annotations

import importlib.util

import pytest

pytestmark = pytest.mark.skipif(importlib.util.find_spec("panda3d") is None, reason="panda3d not installed (the test extra)")


@pytest.mark.parametrize("seed", [2, 5])
def test_a_gap_clip_of_the_independent_renderer_is_judged_as_the_truth(seed):
    import cv2

    from bench.scoring import gap_episode, new_stats, run_clip
    from calibration import default_profile
    from sim.render_panda import PandaRenderer

    cv2.setNumThreads(1)
    profile = default_profile("novuss")
    st = new_stats()
    run_clip(profile, gap_episode(profile, seed), 60, "classical", seed, st, renderer_factory=PandaRenderer)
    assert st["ruling_notes"] == []
    assert st["rulings"] == [True] and st["rulings_wrong_silent"] == 0
    assert st["seg_missed"] + st["seg_split"] + st["seg_extra"] == 0


def test_pawns_resting_against_the_cushions_are_not_set_off_by_their_fits_at_30_frames_a_second():
    """Gap 7 at 30 frames/s: A7 and A8 lie against the west and east cushions (centres at -+484 mm) and are never
    touched. Panda3D's frames fit A8 anywhere between 480.7 and 489.2 mm, and flicking fits read as a launch no
    contact explained: the right call was flagged (``launch_unexplained``). A resting fit past the cushion line is
    put back on it, and fits that come back to their rest are no launch."""
    import cv2

    from bench.scoring import gap_episode, new_stats, run_clip
    from calibration import default_profile
    from sim.render_panda import PandaRenderer

    cv2.setNumThreads(1)
    profile = default_profile("novuss")
    st = new_stats()
    (rec,) = run_clip(profile, gap_episode(profile, 7), 30, "classical", 7, st, renderer_factory=PandaRenderer)
    assert st["ruling_notes"] == [] and st["rulings"] == [True]
    assert [(r["code"], r["piece"]) for r in (rec.get("meta") or {}).get("review", [])] == []
    assert not any(e.get("piece") in ("A7", "A8") or {e.get("a"), e.get("b")} & {"A7", "A8"} for e in rec["events"])


def test_the_clip_whose_pale_pawn_is_never_seen_is_flagged_with_the_bat_found():
    import cv2

    from bench.scoring import gap_episode, new_stats, run_clip
    from calibration import default_profile
    from sim.render_panda import PandaRenderer

    cv2.setNumThreads(1)
    profile = default_profile("novuss")
    st = new_stats()
    records = run_clip(profile, gap_episode(profile, 4), 60, "classical", 4, st, renderer_factory=PandaRenderer)
    assert st["rulings_wrong_silent"] == 0 and len(st["rulings"]) == 1
    # what the call becomes depends on what the process rendered before (Panda3D's frames are not the same
    # from one process to the next; measured: refused, the opponent's pawn first, the pale pawn off the board,
    # and in one run of the whole file the truth's own call) and on the fits against a cushion: whichever, a
    # wrong call goes to the referee, refused or flagged
    if st["rulings"] == [False]:
        (note,) = st["ruling_notes"]
        assert note.startswith("own-opponent-1.888ms: shot 1 ")
        assert note.endswith(" (flagged)") or note.startswith("own-opponent-1.888ms: shot 1 refused: ")
    assert records and records[0]["before"]["bat"] is not None  # the bat was seen where it was put down


def test_the_bat_smeared_on_its_way_to_a_pocket_is_called_pocketed():
    """At 2.6 m/s the independent renderer's bat is smeared beyond what the streak measure takes; what its fits
    left of it was a "hand", three frames of its last six, and its track ended "taken by a hand": the pocketing
    was never called (flagged, piece_unseen). A leftover wholly inside the cushions is no hand: the bat's path
    runs on into the pocket."""
    import cv2

    from bench.scoring import new_stats, run_clip
    from calibration import default_profile
    from sim.render_panda import PandaRenderer
    from sim.scenarios_novuss import SCENARIOS as NOV

    cv2.setNumThreads(1)
    profile = default_profile("novuss")
    st = new_stats()
    records = run_clip(profile, NOV["bat-pocketed"][0](profile, 1), 60, "classical", 1, st, renderer_factory=PandaRenderer)
    assert st["ruling_notes"] == [] and st["rulings"] == [True]
    (rec,) = records
    assert [e["kind"] for e in rec["events"] if e.get("piece") == "bat"] == ["pocket"]
    assert "review" not in rec["meta"]


def _opponent_off_direct(fps):
    """The one record and the stats of opponent-off-direct (scenario seed 1, render seed 1) on the independent renderer."""
    import cv2

    from bench.scoring import new_stats, run_clip
    from calibration import default_profile
    from sim.render_panda import PandaRenderer
    from sim.scenarios_novuss import SCENARIOS

    cv2.setNumThreads(1)
    profile = default_profile("novuss")
    st = new_stats()
    (rec,) = run_clip(profile, SCENARIOS["opponent-off-direct"][0](profile, 1), fps, "classical", 1, st,
                      renderer_factory=PandaRenderer)
    return rec, st


def _off_events(rec):
    return [(e["kind"], e["piece"], e["side"]) for e in rec["events"] if e["kind"] == "off"]


def test_a_pawn_struck_over_the_cushion_between_two_frames_is_called_off_the_board():
    """opponent-off-direct at 60 fps: the bat sets A1 off at 5.6 m/s; A1 is seen once before it meets B1 30 ms
    later, and B1 is over the north cushion before the next frame. The contact was never solved and B1 was 'lost
    from sight' (wrong); A1's fast line, anchored at the bat's contact (``vision.lone_launch``), reaches B1, and B1
    is called off the board, unflagged."""
    rec, st = _opponent_off_direct(60)
    assert st["ruling_notes"] == [] and st["rulings"] == [True] and st["rulings_flagged"] == 0, st["flag_notes"]
    assert _off_events(rec) == [("off", "B1", "N")]


def test_at_30_frames_a_second_the_pawn_struck_off_unseen_is_called_right_and_never_silently_wrong():
    """The same clip at 30 fps: A1 is never seen on its fast line (``lone_launch``'s second branch: the line it was
    next seen on, run back, touches B1's place). Here that is solved and the call is unflagged; in a CI run the contact was not
    solved (the independent renderer's pictures then depended on the clips rendered before in the process, drawn in
    an order set by memory addresses; now in the scene graph's: docs/what-the-camera-calls.md): the call was still
    right, with the referee asked why A1 and B1 set off (``launch_unexplained``). Ten other looks
    of the clip (render seeds 2-11) gave 5 unflagged right, 3 flagged right, 2 flagged wrong: the frames barely
    decide it, so the floor is what must hold in any run: the call is right, and unflagged only with B1 over the
    north cushion. (Both branches are guarded exactly, on fixed motions, by tests/test_vision_lone_launch.py.)"""
    rec, st = _opponent_off_direct(30)
    assert st["ruling_notes"] == [] and st["rulings"] == [True], st["flag_notes"]
    if st["rulings_flagged"] == 0:
        assert _off_events(rec) == [("off", "B1", "N")]
    else:
        assert all(n.startswith("opponent-off-direct: shot 1 right, flagged:") for n in st["flag_notes"]), st["flag_notes"]
