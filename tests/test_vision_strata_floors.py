"""Floors on the harsher simulator's strata (bench/strata.py) for the cells where a call was once silently
wrong: the classical detector through the judge's own pipeline on short clips, one stratum at a time.

Measured with ``python bench/strata.py --quick --fps 60 --notes``; each failure named here was a ruling
differing from the truth without a review item (before #16's codec and tilt fixes):
- Cvrnkaná, compressed-2mbit: pit-entry missed (a blue marble among pale ones fell outside its class once
  the codec moved its colour), hand-nudge called a touch (a contact solved under the hand).
- Cvrnkaná, tilt-10: hand-nudge called a touch (the pit's wall taken for a hand hid A1 rolling in).
- Novuss, compressed-2mbit: the pocket rims were fitted as pawns.
- Cvrnkaná, low-ambient: hand-nudge got two invented shots when a marble's place at rest was held and fitted
  after it had left (a faint ring of it stays in the difference image for a moment).
- Cvrnkaná, everything (every harshness at once): 20 % the same at 101d624, 67 % now, never silently wrong.
"""
from __future__ import annotations

import pytest


def _row(stratum: str, game: str) -> dict:
    import cv2

    from bench import strata
    from calibration import default_profile

    cv2.setNumThreads(1)
    profile = default_profile(game)
    episodes = [(name, build(profile, 1)) for name, build in strata.scenarios(game, True)]
    return strata.row(stratum, game, 60, strata.run_cell(stratum, game, 60, profile, episodes))


@pytest.mark.parametrize("stratum,game,shots", [("compressed-2mbit", "cvrnkana", 2), ("tilt-10", "cvrnkana", 2),
                                                ("compressed-2mbit", "novuss", 3), ("low-ambient", "cvrnkana", 2)])
def test_no_call_is_silently_wrong_and_every_shot_is_judged_as_the_truth(stratum, game, shots):
    r = _row(stratum, game)
    assert r["shots"] == shots
    assert r["silent"] == 0.0
    assert r["same"] == 100.0
    assert r["seg"] == 0
    assert r["rest_recall"] >= 99.0


def test_everything_at_once_on_cvrnkana_is_never_silently_wrong_and_keeps_its_gain():
    """Both shots judged as the truth, the marbles of the ground's shade found at rest (84 % of the piece-frames
    before vision.blobs.grown_specks; a shot invented at 0.00 s on the way, vision.segmenter ``_confirm``)."""
    r = _row("everything", "cvrnkana")
    assert r["shots"] == 2 and r["silent"] == 0.0
    assert r["same"] == 100.0 and r["seg"] == 0
    assert r["rest_recall"] >= 95.0


def _clip(stratum: str, game: str, name: str, fps: int) -> dict:
    """One scripted scenario of ``game`` in ``stratum`` at ``fps``, the look seeded as the full bench seeds it
    (the scenario's place in the game's table): the ``bench.scoring`` statistics."""
    import cv2

    from bench import scoring, strata
    from calibration import default_profile
    from sim.render_strata import stratum as look

    cv2.setNumThreads(1)
    profile = default_profile(game)
    names = [n for n, _ in strata.scenarios(game, False)]
    j = names.index(name)
    ep = strata.scenarios(game, False)[j][1](profile, 1)
    s = scoring.new_stats()
    scoring.run_clip(profile, ep, fps, "classical", 1, s, settings=look(stratum, j + 1, codec_fps=float(fps)))
    return s


@pytest.mark.parametrize("stratum,game,name,fps,flagged", [
    # A1 struck at 5.6 m/s, seen once, stopped by B1 before the next frame; B1 over the cushion unseen: the lone
    # sighting was dropped as a blend, and the penalty went to the referee as 'lost from sight' (vision.lone_launch)
    ("low-ambient", "novuss", "opponent-off-direct", 30, 0),
    # the struck bat classed a blue pawn all through its slide: the stroke unseen, the shot refused (the tracker)
    ("pawns-blue-green", "novuss", "opening", 30, 0),
    # the flicked B10 (black, rolling in from out of view: B's colour never measured) never found, the A10 it
    # knocked into the pit seen to set off: was called touched by B's hand, a 7a foul, unflagged; then flagged
    # (vision.shot: no hand near); now B10 is found by its shape as the mover's marble (vision.marble_search)
    ("dark-pawns-black", "cvrnkana", "last-flick-draw", 60, 0),
    # the same under blue and green marbles, and A's opening marble (blue, never on view before it rolled in)
    # never found at all: the opening missed (vision.marble_search)
    ("pawns-blue-green", "cvrnkana", "last-flick-draw", 30, 0),
    ("pawns-blue-green", "cvrnkana", "opening", 30, 0),
    # the rim fit seeded where B3 lay, under the hand placing the bat beside it: B3 fitted in the hand's colours,
    # taken for picked up, and the right call flagged 'piece_unseen B3' (vision.detect_classical._prior_seeds)
    ("low-ambient", "novuss", "opening", 60, 0),
    # A1 half down the pit, its fit lost, with the pit's wall beside it: a blob of 4 discs across the rim taken for
    # a hand from nowhere, and the pit entry the camera saw flagged 'pit_unseen A1' on every stratum at 30 frames/s
    # (vision.detect_classical._at_the_rim)
    ("base", "cvrnkana", "hand-nudge", 30, 0)])
def test_cells_that_were_wrong_on_the_full_harsher_simulator(stratum, game, name, fps, flagged):
    s = _clip(stratum, game, name, fps)
    assert s["rulings_wrong_silent"] == 0
    assert s["rulings_flagged"] == flagged
    assert s["rulings"] == [not flagged]


def test_a_dim_room_opening_is_judged_from_its_rows_and_its_bat():
    """*everything* (a dim room, noise, H.264 at 2 Mbit/s, any colours), the opening at 60 frames/s: the pawns of
    the touching rows by the dim cushions were found on 64 % of their frames, at places 5-13 mm off, and shifted
    names from frame to frame; a disc of the board's own colour beside a row's end was taken for the unknown bat
    on the second frame, so the bat was never found: the stroke was refused ("the bat must be on the board").
    Now the rim fit is seeded where the layout and the last frames put the pieces (vision.detect_classical
    ``_prior_seeds``) and the bat search skips discs of the board's colour: the call is right."""
    s = _clip("everything", "novuss", "opening", 60)
    assert s["rulings"] == [True]
    assert s["rulings_wrong_silent"] == 0


def test_a_seam_between_two_touching_pawns_seeds_no_shot_at_the_clips_start():
    """compressed-2mbit, the opening at 30 frames/s: a peak of the row's distance map midway between A4 and A5
    (one radius from each remembered pawn) kept its seed beside theirs; its fit slid 11 mm onto A4, which then
    seemed to move, and a shot was invented at the clip's first frames. The call on the real stroke is still
    wrong here (the struck pawn unseen), but flagged."""
    s = _clip("compressed-2mbit", "novuss", "opening", 30)
    assert not any("invented" in n for n in s["ruling_notes"]), s["ruling_notes"]
    assert s["rulings_wrong_silent"] == 0 and len(s["rulings"]) == 1


@pytest.mark.parametrize("stratum,name,undue", [
    ("base", "own-opponent-0.5ms", 0),  # own and opponent touched 0.5 ms apart: no camera can order them
    ("base", "bat-zone-close", 0),  # the bat 0.2 mm clear of its zone's line, inside the record's stated error
    ("everything", "opening", 1),  # right, but asks after B3 and the bat's rebound, which a clear picture shows
])
def test_a_right_call_is_flagged_and_the_bench_tells_a_due_flag_from_one_that_tells_the_referee_nothing(stratum, name, undue):
    s = _clip(stratum, "novuss", name, 30)
    assert s["rulings"] == [True] and s["rulings_flagged"] == 1
    assert s["rulings_flagged_undue"] == undue, s["flag_notes"]
    assert s["rulings_decidable"] == [True] * undue  # a shot beyond the camera is left out of "where it can tell"
