"""What a lost track means for the call (#16): a pawn that vanished at a pocket's mouth just after a cushion
went in; a pawn the detector never finds at rest, which nothing came near, asks no one; a resting pawn whose
fit jumps between two places is not set off. Each would, before, have flagged a right call (or, the first,
made it wrong): measured on the independent renderer, reproduced here on made-up sightings."""
from __future__ import annotations

import numpy as np
import pytest

from calibration import default_profile
from vision.fit import Fit
from vision.launch import came_back, rest_left, slid
from vision.pipeline import Pipeline, hints_for
from vision.types import Detection, Detections

PROFILE = default_profile("novuss")
FPS = 60.0
D = np.array([7.5, 4.2]) / np.hypot(7.5, 4.2)  # the pawn's way out, towards the north cushion by the NE pocket


def _det(kind, xy, k, owner=None):
    return Detection(kind, (float(xy[0]), float(xy[1])), 18.0 if kind == "bat" else 16.0, owner, frame=k, t_s=k / FPS)


P0 = np.array([446.0, 485.0]) - 20 * np.array([7.5, 4.2])  # A1 at rest, 20 frames' slide from the north cushion
BAT0 = P0 - 34.0 * D - 300.0 * D  # the bat at rest, 15 frames' slide from touching A1


def _bat_at(k):
    """The bat rests 0.3 s, slides 15 frames along ``D`` into A1 and stops against it."""
    return _det("bat", BAT0 + 20.0 * min(max(k - 18, 0), 15) * D, k)


def _one_shot(layout, items_at):
    """The pipeline started on ``layout`` and fed ``items_at(k)`` (the detections of frame k) for frames 1-199:
    the one shot's record."""
    pipe = Pipeline(PROFILE)
    pipe.start(hints_for(layout), 0, 0.0)
    recs = []
    for k in range(1, 200):
        seen = pipe.feed(Detections(k, k / FPS, tuple(items_at(k))))
        if seen is not None:
            recs.append(seen.shot.to_dict())
    fin = pipe.finish()
    if fin is not None:
        recs.append(fin.shot.to_dict())
    assert len(recs) == 1
    return recs[0]


def _pocket_run(after_bounce, rest=(("B3", (-200.0, -200.0)),), hidden=lambda p, k: False):
    """The bat strikes A1 (``_bat_at``); A1 slides 20 frames to the north cushion (446, 485) and is then seen at
    ``after_bounce`` (one sighting a frame) and never again. Returns the one shot's record."""
    def items_at(k):
        items = [_bat_at(k)]
        j = k - 33  # A1's frames since it was struck
        if j <= 0:
            items.append(_det("pawn", P0, k, "A"))
        elif j <= 20:
            items.append(_det("pawn", P0 + j * np.array([7.5, 4.2]), k, "A"))
        elif j - 21 < len(after_bounce):
            items.append(_det("pawn", after_bounce[j - 21], k, "A"))
        return items + [_det("pawn", xy, k, p[0]) for p, xy in rest if not hidden(p, k)]

    return _one_shot({"bat": tuple(BAT0), "A1": tuple(P0), **dict(rest)}, items_at)


def _review(rec):
    return [(r["code"], r["piece"]) for r in (rec.get("meta") or {}).get("review", [])]


def test_a_pawn_lost_a_frame_short_of_the_mouth_just_after_a_cushion_went_in():
    """Off the cushion its fits lag (the last step 5 mm, turned away from the pocket by the bounce): the
    tracker's velocity misses the mouth, 4 mm away, and the pawn was 'lost from sight' (piece_unseen) and not
    called pocketed. Its last sightings' own pace (7-8 mm a frame, heading for the pocket) reaches the mouth
    within a frame: it went in."""
    rec = _pocket_run([(453.0, 485.3), (454.9, 480.7)])
    assert [(e["kind"], e["piece"], e["pocket"]) for e in rec["events"] if e["kind"] == "pocket"] == [("pocket", "A1", "NE")]
    assert _review(rec) == []
    assert "A1" not in rec["after"]


def test_a_pawn_lost_farther_than_a_frame_from_the_mouth_still_asks_the_referee():
    """The same pawn lost two frames' travel (20 mm) short of the mouth: it could have stopped or turned; the
    referee is asked, and it is kept where it was last seen."""
    rec = _pocket_run([(450.0, 478.0), (448.0, 468.0)])
    assert not any(e["kind"] == "pocket" and e["piece"] == "A1" for e in rec["events"])
    assert _review(rec) == [("piece_unseen", "A1")]
    assert rec["after"]["A1"] == pytest.approx([448.0, 468.0], abs=0.5)


def test_a_pawn_never_found_at_rest_that_nothing_came_near_asks_no_one():
    """B8 against the east cushion is never detected in the whole clip (the independent renderer's pawn by a
    cushion): nothing came near it, so no call depends on it; it stays where the game state had it."""
    rec = _pocket_run([(453.0, 485.3), (454.9, 480.7)], rest=(("B3", (-200.0, -200.0)), ("B8", (484.0, -40.0))),
                      hidden=lambda p, k: p == "B8")
    assert _review(rec) == []
    assert rec["after"]["B8"] == pytest.approx([484.0, -40.0], abs=0.01)


def test_a_pawn_never_found_where_the_struck_pawn_passed_still_asks():
    """The same unseen pawn, lying on the struck pawn's way: it may have been hit, so the referee is asked."""
    on_way = tuple(np.array([446.0, 485.0]) - 8 * np.array([7.5, 4.2]) + np.array([0.0, -34.0]))
    rec = _pocket_run([(453.0, 485.3), (454.9, 480.7)], rest=(("B3", (-200.0, -200.0)), ("B8", on_way)),
                      hidden=lambda p, k: p == "B8")
    assert ("piece_unseen", "B8") in _review(rec)


def test_a_pawn_seen_then_lost_during_the_shot_still_asks():
    """B3 seen at rest, then never again from the stroke on: it vanished while the shot went on."""
    rec = _pocket_run([(453.0, 485.3), (454.9, 480.7)], hidden=lambda p, k: p == "B3" and k >= 30)
    assert ("piece_unseen", "B3") in _review(rec)


def _fit(t0, t1, i0, i1, p, rest=True, v=(0.0, 0.0)):
    return Fit(t0, np.array(p, float), np.array(v, float), np.zeros(2), np.eye(3), 0.5, t0, t1, i0, i1, rest)


def test_a_resting_fit_that_jumps_to_another_still_place_is_no_launch():
    """A pawn against the cushion fitted at x = 479.1 for 30 frames, then at 484.8 from the next frame on: a
    disc cannot slide 5.7 mm and stop within a frame interval (the most it covers from rest to rest in 1/60 s
    is 4000 mm/s^2 x (1/60 s)^2 / 2 = 0.56 mm; in 1/30 s, 2.2 mm)."""
    t = np.arange(60) / FPS
    xy = np.array([[479.1, -41.4]] * 30 + [[484.8, -40.2]] * 30)
    fits = [_fit(t[0], t[29], 0, 30, (479.1, -41.4)), _fit(t[30], t[59], 30, 60, (484.8, -40.2))]
    assert not slid(fits, xy, 3.0)
    # the same two rests 0.15 s apart (a slide's time): a slide
    late = [fits[0], _fit(t[29] + 0.15, t[59], 30, 60, (484.8, -40.2))]
    assert slid(late, xy, 3.0)
    # a moving stretch between them that gets 3 mm away: a slide, whatever its time
    moving = np.array([[479.1, -41.4]] * 30 + [[481.0, -41.0], [482.6, -40.6], [483.8, -40.3]] + [[484.8, -40.2]] * 27)
    three = [fits[0], _fit(t[30], t[32], 30, 33, (481.0, -41.0), rest=False, v=(100.0, 20.0)),
             _fit(t[33], t[59], 33, 60, (484.8, -40.2))]
    assert slid(three, moving, 3.0)


def test_a_resting_pawn_whose_fit_flips_is_not_set_off_and_asks_no_one():
    """Through the pipeline: B3 at rest fitted 4 mm apart, flipping (two fits of one disc), far from the
    struck pawn: no external launch and no review item about it."""
    rec = _flip_run()
    assert [(e["kind"], e.get("a"), e.get("b")) for e in rec["events"]] == [("contact", "bat", "A1")]
    assert _review(rec) == []


def _flip_run():
    def items_at(k):
        j = k - 33
        a1 = P0 + min(max(j, 0), 10) * np.array([7.5, 4.2]) * (1 - max(j, 0) / 40.0)  # slides, slows, stops
        b3 = (-482.5, -41.4) if 50 <= k < 53 or 90 <= k < 95 else (-486.4, -40.5)  # the fit flips for a while
        return [_bat_at(k), _det("pawn", a1, k, "A"), _det("pawn", b3, k, "B")]

    return _one_shot({"bat": tuple(BAT0), "A1": tuple(P0), "B3": (-486.4, -40.5)}, items_at)


def test_a_piece_seen_to_leave_before_the_shot_began_is_kept_where_it_lay_and_asks_the_referee():
    """A departure before the shot's start is not the shot's (its event is dropped with everything before the
    start): the record kept the pawn in ``before`` and in neither ``after`` nor a departure, and the engine
    refused the shot (the independent renderer at 30 frames/s: a pawn at rest took a fit 973 mm away and was
    called off the board 0.17 s before the stroke). It stays where it lay, and the referee is asked."""
    from rules import engine_for
    from rules.record import parse_record
    from vision.segmenter import ShotWindow
    from vision.shot import ShotAssembler
    from vision.types import Track, TrackState

    def track(piece, kind, owner, radius, place, frames, **left):
        rng = np.random.default_rng(len(piece))
        return Track(piece, kind, owner, radius, tuple(
            TrackState(piece, k, k / FPS, tuple(float(v) for v in np.asarray(place(k)) + rng.normal(0.0, 0.2, 2)))
            for k in frames), **left)

    bat = track("bat", "bat", None, 18.0, lambda k: (0.0, -380.0 + 25.0 * min(max(k - 40, 0), 12)
                                                     - 0.4 * min(max(k - 40, 0), 12) ** 2), range(90))
    # A7 at rest by the east cushion, then fits running 15 mm a frame over it from frame 10, gone after frame 12
    a7 = track("A7", "pawn", "A", 16.0, lambda k: (430.0 + 15.0 * max(k - 9, 0), -40.0), range(13),
               left="off", left_t_s=12 / FPS, left_where="E", left_frame=12)
    b3 = track("B3", "pawn", "B", 16.0, lambda k: (-200.0, -200.0), range(90))
    window = ShotWindow(40 / FPS, 80 / FPS, 40, 80, {}, {}, "bat")
    rec = ShotAssembler(PROFILE).assemble(window, {"bat": bat, "A7": a7, "B3": b3}, "A").shot.to_dict()
    assert not any(e.get("piece") == "A7" for e in rec["events"])
    assert rec["after"]["A7"] == rec["before"]["A7"] == pytest.approx([430.0, -40.0], abs=0.3)
    assert [(r["code"], r["piece"], r["reason"]) for r in rec["meta"]["review"]] == [
        ("piece_unseen", "A7", "seen to leave the surface before the shot began")]
    engine = engine_for("novuss", PROFILE.geometry)
    state, _ = engine.apply(engine.initial(), parse_record(rec))  # judged (the review is the judge's), not refused
    assert dict(state.pos)["A7"] == pytest.approx(rec["before"]["A7"])


def test_a_launch_is_timed_from_the_rest_the_piece_left_not_from_a_refit_before_it():
    """A resting fit that moved to another still place between two frames is the same disc fitted again
    (``launch.slid``); a piece struck later set off from that second place. Its launch was timed at the refit,
    0.27 s before the contact that set it off, and called outside interference (the independent renderer at 30
    frames/s, gap 0: the pawn's resting fit moved 4 mm as the bat came near; a right call flagged)."""
    t = np.arange(60) / FPS
    refit = [_fit(t[0], t[20], 0, 21, (0.0, 0.0)), _fit(t[21], t[39], 21, 40, (3.7, 1.4)),
             _fit(t[40], t[59], 40, 60, (3.7, 1.4), rest=False, v=(300.0, 0.0))]
    assert rest_left(refit, 3.0) == 1
    # the same second rest reached 0.15 s later (a slide's time): the piece set off from the first
    slide = [refit[0], _fit(t[20] + 0.15, t[39], 30, 40, (3.7, 1.4)), refit[2]]
    assert rest_left(slide, 3.0) == 0
    near = [refit[0], _fit(t[21], t[39], 21, 40, (1.5, 0.5)), refit[2]]  # within launch_mm: the same rest
    assert rest_left(near, 3.0) == 1

    def items_at(k):  # A1's fit moves 4 mm at frame 25 as the bat comes near; struck at frame 33 it slides away
        j = k - 33
        a1 = P0 + (k >= 25) * np.array([3.7, 1.4]) + min(max(j, 0), 10) * np.array([7.5, 4.2]) * (1 - max(j, 0) / 40.0)
        return [_bat_at(k), _det("pawn", a1, k, "A")]

    rec = _one_shot({"bat": tuple(BAT0), "A1": tuple(P0)}, items_at)
    assert [(e["kind"], {e.get("a"), e.get("b")}) for e in rec["events"]] == [("contact", {"bat", "A1"})]
    assert _review(rec) == []


def test_a_resting_fit_that_flickers_and_comes_back_is_no_launch():
    """Fits of a resting disc that stray 3.2 mm for a frame or two and end where they began are noise: a slide
    cannot come back to its start without a contact."""
    t = np.arange(60) / FPS
    xy = np.array([[0.0, 0.0]] * 20 + [[3.2, 0.0], [-1.0, 0.5]] + [[0.4, 0.0]] * 38)
    flicker = [_fit(t[0], t[19], 0, 20, (0.0, 0.0)), _fit(t[20], t[21], 20, 22, (3.2, 0.0), rest=False, v=(-250.0, 30.0)),
               _fit(t[22], t[59], 22, 60, (0.4, 0.0))]
    assert slid(flicker, xy, 3.0) and came_back(flicker, xy, 3.0, 9.0)
    far = xy.copy()
    far[20] = (9.5, 0.0)  # one sighting 9.5 mm out: a slide that was stopped (by a contact), not noise
    assert not came_back(flicker, far, 3.0, 9.0)
    moved = xy.copy()
    moved[22:] = (3.5, 0.0)
    assert not came_back(flicker[:2] + [_fit(t[22], t[59], 22, 60, (3.5, 0.0))], moved, 3.0, 9.0)  # stopped elsewhere


def test_a_pawn_against_a_cushion_fitted_past_it_asks_no_one():
    """On the independent renderer a pawn lying against the west cushion (centre at -484 mm) was fitted anywhere
    out to -495 mm and back, flickering from frame to frame: each jump read as a launch no contact explained and
    the right call was flagged. A resting piece cannot lie past its cushion line (the tracker puts the fit back
    on it), and a piece that never left its rest touched no cushion."""
    rng = np.random.default_rng(7)
    xs = -484.0 - np.abs(rng.normal(0.0, 4.0, 200))  # all past the line, by up to 11 mm

    def items_at(k):
        j = k - 33
        a1 = P0 + min(max(j, 0), 10) * np.array([7.5, 4.2]) * (1 - max(j, 0) / 40.0)
        return [_bat_at(k), _det("pawn", a1, k, "A"), _det("pawn", (xs[k], -40.5 + rng.normal(0.0, 0.3)), k, "B")]

    rec = _one_shot({"bat": tuple(BAT0), "A1": tuple(P0), "B3": (-484.0, -40.5)}, items_at)
    assert [(e["kind"], {e.get("a"), e.get("b")}) for e in rec["events"]] == [("contact", {"bat", "A1"})]
    assert _review(rec) == []
    assert rec["after"]["B3"][0] == pytest.approx(-484.0, abs=0.3)



#: A8's fits on the independent renderer at 60 frames/s (gap 15), from 0.78 s before the bat's contact: (x, y) mm
#: or None (not found), each for so many frames; it lay at (484, -40) against the east cushion the whole time
_A8_FITS = (((487.7, -38.5), 5), ((485.4, -39.0), 6), ((489.2, -38.6), 1), ((489.3, -39.9), 1), ((483.9, -40.1), 1),
            ((484.1, -39.1), 5), ((485.1, -38.4), 8), ((488.1, -36.5), 1), ((492.6, -38.5), 1), ((490.9, -39.2), 1),
            ((490.7, -40.7), 1), ((487.3, -39.0), 2), ((490.0, -39.9), 1), ((488.8, -38.5), 4), ((486.5, -38.5), 6),
            ((488.0, -38.8), 8), ((487.0, -39.4), 2), ((487.7, -39.4), 1), ((491.4, -39.7), 2), ((493.1, -39.4), 1),
            ((487.3, -40.8), 1), (None, 1), ((486.9, -38.7), 2), ((488.8, -38.5), 2), ((490.7, -40.7), 1),
            ((486.3, -39.4), 1), ((487.9, -38.7), 1), ((488.0, -38.8), 6), ((487.7, -39.1), 1), ((490.6, -39.4), 1),
            ((489.0, -39.7), 1), ((486.8, -39.7), 1), ((488.3, -38.3), 7), ((491.0, -39.2), 2), ((488.5, -39.1), 8),
            ((488.9, -39.6), 2), ((493.3, -38.9), 1), ((484.9, -39.4), 7), (None, 1), ((486.9, -38.4), 10),
            ((490.5, -38.6), 1), ((491.8, -38.9), 1), ((489.5, -38.8), 3), ((493.4, -40.4), 1), ((487.1, -37.2), 12),
            ((492.7, -39.7), 1), (None, 1), ((488.3, -38.5), 2), ((492.6, -38.5), 1), ((487.4, -38.2), 2),
            ((491.1, -39.2), 1), ((483.3, -39.1), 60))


def test_a_pawn_against_a_cushion_whose_fit_strays_along_it_and_then_past_it_is_not_set_off():
    """The independent renderer at 60 frames/s (gap 15): A8 lying against the east cushion (centre at 484 mm) was
    fitted up to 9 mm past the line. Put back on the line while at rest; but a fit 1.9 mm along the cushion made
    it "moving" (110 mm/s), the next fit, 8.6 mm past the line, was kept, and the right call was flagged
    launch_unexplained. A piece slower than any that jumps a cushion is put back on the line."""
    fits = [xy for xy, n in _A8_FITS for _ in range(n)]

    def items_at(k):
        j = k - 33
        a1 = P0 + min(max(j, 0), 10) * np.array([7.5, 4.2]) * (1 - max(j, 0) / 40.0)
        return [_bat_at(k), _det("pawn", a1, k, "A")] + ([_det("pawn", fits[k], k, "B")] if fits[k] else [])

    rec = _one_shot({"bat": tuple(BAT0), "A1": tuple(P0), "B8": (484.0, -40.0)}, items_at)
    assert [(e["kind"], {e.get("a"), e.get("b")}) for e in rec["events"]] == [("contact", {"bat", "A1"})]
    assert _review(rec) == []
    assert rec["after"]["B8"] == pytest.approx([483.3, -39.1], abs=0.1)  # its last rest, inside the line


def test_a_resting_pawn_fitted_deep_into_its_resting_neighbour_is_seen_where_it_lay():
    """The independent renderer's opening at 60 frames/s: B1 and B2 lie touching against the south cushion; B1's
    fit strayed 12 mm into B2, which was seen at its place, for five frames and came back. The step out and back
    made a shot of its own (B1 "struck" B2 before the bat moved). Two discs cannot overlap: B1 is seen where it
    lay, and the only shot is the bat's."""
    b1 = [(-111.9, -485.2)] + [(-100.0, -489.0)] * 5 + [(-110.2, -487.9), (-111.4, -486.1)] + [(-112.1, -484.8)] * 200

    def items_at(k):
        j = k - 33
        a1 = P0 + min(max(j, 0), 10) * np.array([7.5, 4.2]) * (1 - max(j, 0) / 40.0)
        return [_bat_at(k), _det("pawn", a1, k, "A"), _det("pawn", b1[k - 1], k, "B"),
                _det("pawn", (-80.2, -485.4), k, "B")]

    rec = _one_shot({"bat": tuple(BAT0), "A1": tuple(P0), "B1": (-112.0, -484.0), "B2": (-80.0, -484.0)}, items_at)
    assert [(e["kind"], {e.get("a"), e.get("b")}) for e in rec["events"]] == [("contact", {"bat", "A1"})]
    assert _review(rec) == []
    assert rec["before"]["B1"] == pytest.approx([-111.9, -484.0], abs=0.01)



def test_a_pawn_lost_in_its_slide_and_then_seen_at_rest_with_a_faint_outline_keeps_its_name():
    """The independent renderer at 60 frames/s (gap 3): A1, struck, was missed for most of its slide and called
    lost; it came to rest in plain view, but its fits there had 0.67 of an outline, under what names a newcomer
    on a board with cushions, so it stayed nameless and the right call asked the referee about it
    (piece_unseen). Seen again within its speed's reach of where it was lost, it is the same pawn."""
    steps = [9.0 * (1 - j / 24) for j in range(1, 25)]  # A1 slows from 540 mm/s to rest over 24 frames, 108 mm
    path = [P0 + sum(steps[:j]) * D for j in range(25)]

    def items_at(k):
        j = k - 33
        bat = _bat_at(k)  # following through at 30 mm/s: the shot goes on after A1 is lost
        out = [Detection("bat", tuple(float(v) for v in bat.centre_mm + min(max(j, 0), 60) * 0.5 * D), 18.0,
                         frame=k, t_s=k / FPS), _det("pawn", (-200.0, -200.0), k, "B")]
        a1 = path[min(max(j, 0), 24)]
        if j <= 2:
            out.append(_det("pawn", a1, k, "A"))
        elif j >= 20:
            out.append(Detection("pawn", (float(a1[0]), float(a1[1])), 16.0, "A", score=0.67, frame=k, t_s=k / FPS))
        return out

    rec = _one_shot({"bat": tuple(BAT0), "A1": tuple(P0), "B3": (-200.0, -200.0)}, items_at)
    assert _review(rec) == []
    assert rec["after"]["A1"] == pytest.approx(list(path[24]), abs=0.5)
    assert [(e["kind"], {e.get("a"), e.get("b")}) for e in rec["events"]] == [("contact", {"bat", "A1"})]


def test_pawns_set_off_in_a_stroke_whose_bat_touched_nothing_seen_ask_the_referee():
    """The harsher simulator's 2 Mbit/s H.264 at 30 frames/s: the bat broke the opening cluster between two
    frames; its contact was not seen, the pawns' launches were read as pushes inside the cluster (each explained
    by its touching neighbour), and 'no own pawn touched' was called without a flag. Only the bat, or a piece it
    set moving, sets a resting pawn off: its contact was missed, and the first pawn to set off is named."""
    from vision.segmenter import ShotWindow
    from vision.shot import ShotAssembler
    from vision.types import Track, TrackState

    def track(piece, kind, owner, radius, place, frames):
        rng = np.random.default_rng(len(piece) + ord(piece[-1]))
        return Track(piece, kind, owner, radius, tuple(
            TrackState(piece, k, k / FPS, tuple(float(v) for v in np.asarray(place(k)) + rng.normal(0.0, 0.2, 2)))
            for k in frames))

    def slide(x0, y0, k0, vx):  # at rest, then sliding along x from frame k0, slowing
        return lambda k: (x0 + vx * min(max(k - k0, 0), 20) - 0.2 * vx * min(max(k - k0, 0), 20) ** 2 / 20, y0)

    bat = track("bat", "bat", None, 18.0, lambda k: (0.0, -380.0 + 20.0 * min(max(k - 40, 0), 10)), range(90))
    a4 = track("A4", "pawn", "A", 16.0, slide(100.0, 200.0, 52, -6.0), range(90))
    a5 = track("A5", "pawn", "A", 16.0, slide(132.0, 200.0, 52, 6.0), range(90))
    b3 = track("B3", "pawn", "B", 16.0, lambda k: (-200.0, -200.0), range(90))
    window = ShotWindow(40 / FPS, 80 / FPS, 40, 80, {}, {}, "bat")
    rec = ShotAssembler(PROFILE).assemble(window, {"bat": bat, "A4": a4, "A5": a5, "B3": b3}, "A").shot.to_dict()
    assert not any("bat" in (e.get("a"), e.get("b")) for e in rec["events"] if e["kind"] == "contact")
    assert [(r["code"], r["piece"]) for r in rec["meta"]["review"]] in ([("launch_unexplained", "A4")],
                                                                        [("launch_unexplained", "A5")])
