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
