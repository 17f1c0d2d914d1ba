"""The bat keeps its name while its speed blurs its colour into a player's (``Tracker._striker_blurred``).

The harsher simulator's blue and green pawns: the struck bat, blurred over the board, was classed B's pawn on
every frame of its slide; the bat's track was lost at the stroke, the shot began with a pawn 'set off with no
stroke seen', and the record was refused ('the bat must be on the board before a stroke')."""
from __future__ import annotations

import pytest

from calibration import default_profile
from vision.pipeline import Pipeline, hints_for
from vision.types import Detection, Detections
from vision_synth import shot_records

PROFILE = default_profile("novuss")
FPS = 30.0
LAYOUT = {"bat": (0.0, -445.0), "A1": (200.0, 300.0), "B1": (-300.0, 100.0)}


def _cue(k, t):
    """The cue over the bat's resting place, as it follows through the stroke."""
    x, y = 0.0, -470.0
    return Detection("cue", (x, y), 10.0, frame=k, t_s=t,
                     outline_mm=((x - 6, y - 60), (x + 6, y - 60), (x + 6, y + 40), (x - 6, y + 40)))


def _run(blurred_as, cue=False):
    """The bat rests a second, slides north 300 mm over ten frames (seen as ``blurred_as``: (kind, owner)) and
    stops; the pawns rest throughout; ``cue``: the cue lies over the bat's resting place over the stroke."""
    pipe = Pipeline(PROFILE)
    pipe.start(hints_for(LAYOUT), 0, 0.0)
    frames = []
    for k in range(1, 90):
        t = k / FPS
        step = min(max(k - 30, 0), 10)
        bat = (0.0, -445.0 + 30.0 * step)
        kind, owner = blurred_as if 0 < step < 10 else ("bat", None)
        items = [Detection(kind, bat, 18.0 if kind == "bat" else 16.0, owner, frame=k, t_s=t),
                 Detection("pawn", LAYOUT["A1"], 16.0, "A", frame=k, t_s=t),
                 Detection("pawn", LAYOUT["B1"], 16.0, "B", frame=k, t_s=t)]
        if cue and 28 <= k <= 34:
            items.append(_cue(k, t))
        frames.append(Detections(k, t, tuple(items)))
    return shot_records(pipe, frames)


@pytest.mark.parametrize("blurred_as,cue", [(("pawn", "B"), False), (("pawn", "A"), False), (("bat", None), False),
                                           (("pawn", "B"), True)])
def test_the_struck_bat_classed_a_players_pawn_while_it_slides_is_still_the_bat(blurred_as, cue):
    recs = _run(blurred_as, cue)
    assert len(recs) == 1
    rec = recs[0]
    assert rec["before"]["bat"] == pytest.approx([0.0, -445.0], abs=0.5)
    assert rec["after"]["bat"] == pytest.approx([0.0, -145.0], abs=0.5)
    assert sorted(rec["after"]) == ["A1", "B1", "bat"] and rec["events"] == []
    assert "review" not in rec["meta"]



def _slide(k: int, struck: int = 60) -> float:
    """Where the bat struck north at 80 mm a frame on frame ``struck`` (from (0, -445)) is on frame ``k``: four
    frames at full speed, then slowed by friction, 8 mm a frame each frame, to a stop at (0, 235)."""
    n = k - struck + 1
    return -445.0 + sum(80.0 if i <= 4 else max(80.0 - 8.0 * (i - 4), 0.0) for i in range(1, max(n, 0) + 1))


def _struck_behind_a_cue_tip():
    """60 fps: the bat rests a second at (0, -445); at the stroke it is missed for two frames, in the first of which
    the cue's pale tip, fitted as A's pawn (a partial outline), lies 65 mm behind it, over the south cushion line;
    then the bat is seen as itself on its way north at 80 mm a frame while the tip's fits stay behind; it slows
    and stops at (0, 235) (``_slide``). No hand or cue is detected (the independent renderer's pale cue, 2026-12-07). The frames, and
    where the bat is on each."""
    fps = 60.0
    frames, truth = [], {}
    for k in range(1, 150):
        t = k / fps
        items = [Detection("pawn", LAYOUT["A1"], 16.0, "A", frame=k, t_s=t),
                 Detection("pawn", LAYOUT["B1"], 16.0, "B", frame=k, t_s=t)]
        truth[k] = (0.0, _slide(k))
        if k < 60 or k > 61:
            items.append(Detection("bat", truth[k], 18.0, frame=k, t_s=t, score=0.9))
        tip = {60: -510.0, 62: -474.0, 63: -474.0, 64: -512.0}.get(k)
        if tip is not None:
            items.append(Detection("pawn", (-1.0, tip), 16.0, "A", frame=k, t_s=t, score=0.45))
        frames.append(Detections(k, t, tuple(items)))
    return frames, truth


def test_the_bat_seen_as_itself_again_is_the_bat_not_the_cue_tip_taken_for_it_at_the_stroke():
    """``Tracker._seen_as_itself``: the tip taken for the blurred bat at the stroke set the track running south;
    the bat seen as itself on its way north was outside that prediction's gate and left unnamed while the track
    took the tip again (on the independent renderer the bat was then called off the south cushion and the stroke
    refused, 'the bat must be on the board'). Its own class, within its reach of where it was last seen as itself,
    comes first: from its first sighting after the stroke the bat's name is on the bat, on every frame."""
    from vision.board import Surface
    from vision.tracker import Tracker

    frames, truth = _struck_behind_a_cue_tip()
    tracker = Tracker(Surface.from_profile(PROFILE))
    tracker.start(LAYOUT, 0, 0.0)
    named = {dets.frame: {d.piece: d.centre_mm for d in tracker.update(dets).pieces()} for dets in frames}
    assert [k for k in range(62, 150) if named[k].get("bat") != pytest.approx(truth[k], abs=0.5)] == []
    assert named[60]["A1"] == pytest.approx(LAYOUT["A1"]) and named[64]["B1"] == pytest.approx(LAYOUT["B1"])
    pipe = Pipeline(PROFILE)
    pipe.start(hints_for(LAYOUT), 0, 0.0)
    (rec,) = shot_records(pipe, frames)
    assert rec["before"]["bat"] == pytest.approx([0.0, -445.0], abs=0.5)
    assert rec["after"]["bat"] == pytest.approx([0.0, 235.0], abs=0.5)
    assert sorted(rec["after"]) == ["A1", "B1", "bat"] and rec["events"] == []


def test_discs_behind_the_bat_at_the_stroke_are_the_cue_tip_never_the_bat():
    """The independent renderer, opponent-off-direct at 60 fps (render seed 10 of eleven): as the bat was struck, the
    cue's pale tip was fitted as A's pawn 17 mm past the line where the bat touches the south cushion, then 8 and
    23 mm behind the bat's place, and each fit was taken for the blurred bat (``_striker_blurred``); the bat 'went
    back into the cushion and came off it' unseen and the stroke was asked about as a ricochet ('rebound_unseen').
    A bat at rest is struck away from the cushion behind it: those discs are the cue's tip, never the bat, and the
    bat seen again on its way is the bat (the tip told that it may have moved)."""
    from vision.board import Surface
    from vision.tracker import Tracker

    frames = []
    tips = {60: (1.0, -499.0), 62: (0.0, -453.0), 63: (-6.0, -468.0)}  # the bat itself unseen on frames 60-65
    for k in range(1, 150):
        t = k / 60.0
        items = [Detection("pawn", LAYOUT["A1"], 16.0, "A", frame=k, t_s=t),
                 Detection("pawn", LAYOUT["B1"], 16.0, "B", frame=k, t_s=t)]
        if k < 60 or k >= 66:
            items.append(Detection("bat", (0.0, _slide(k)), 18.0, frame=k, t_s=t))
        if k in tips:
            items.append(Detection("pawn", tips[k], 16.0, "A", frame=k, t_s=t, score=0.45))
        frames.append(Detections(k, t, tuple(items)))
    tracker = Tracker(Surface.from_profile(PROFILE))
    tracker.start(LAYOUT, 0, 0.0)
    named = {dets.frame: {d.piece: d.centre_mm for d in tracker.update(dets).pieces()} for dets in frames}
    assert [k for k in range(60, 66) if "bat" in named[k]] == []
    assert [k for k in range(66, 150) if named[k].get("bat") != pytest.approx((0.0, _slide(k)), abs=0.5)] == []
    pipe = Pipeline(PROFILE)
    pipe.start(hints_for(LAYOUT), 0, 0.0)
    (rec,) = shot_records(pipe, frames)
    assert rec["before"]["bat"] == pytest.approx([0.0, -445.0], abs=0.5)
    assert rec["after"]["bat"] == pytest.approx([0.0, 235.0], abs=0.5)
    assert rec["events"] == [] and "review" not in rec["meta"]
