"""Vision core on exact synthetic motion: types, tracker, sub-frame events, segmenter, shot records."""
from __future__ import annotations

import math

import numpy as np
import pytest

from calibration import default_profile
from rules.record import parse_record
from vision.board import Surface
from vision.events import EventExtractor
from vision.pipeline import Pipeline, hints_for
from vision.segmenter import ShotSegmenter
from vision.tracker import Tracker
from vision.types import Detection, Detections, VisionError

from vision_synth import Synth, detections, disc, two_contact_shot

PROFILE = default_profile("novuss")
SURFACE = Surface.from_profile(PROFILE)


def run_tracker(synth, truth, fps, t_end, layout, seed=0, drop=None, extra=None):
    tracker = Tracker(SURFACE)
    tracker.start(layout, 0, 0.0, spares=["A5", "B5"])
    wrong = 0
    for dets in detections(synth, truth, fps, t_end, 0.3, seed, drop=drop)[1:]:
        if extra:
            dets = extra(dets)
        for d in tracker.update(dets).pieces():
            if d.piece in synth.discs:
                xy, _ = synth.position(truth, d.piece, dets.t_s)
                wrong += math.dist(xy, d.centre_mm) > 5.0
    return tracker, wrong


# -- types ---------------------------------------------------------------------------------------------
def test_detection_refuses_unknown_kind_and_owner():
    with pytest.raises(VisionError, match="kind"):
        Detection("puck", (0.0, 0.0), 16.0)
    with pytest.raises(VisionError, match="owner"):
        Detection("pawn", (0.0, 0.0), 16.0, owner="C")


def test_occluder_polygon_covers_inside_points_only():
    hand = Detection("hand", (0.0, 0.0), 50.0, outline_mm=((-50, -50), (50, -50), (50, 50), (-50, 50)))
    dets = Detections(0, 0.0, (hand,))
    assert dets.occluded((10.0, 10.0)) == "hand"
    assert dets.occluded((70.0, 0.0)) is None
    assert dets.occluded((70.0, 0.0), margin_mm=25.0) == "hand"


def test_event_record_form_round_trips_through_the_parser():
    from rules import Event, Kind
    ev = Event(1.25, Kind.CONTACT, a="bat", b="A1", t_err=0.0002, confidence=0.8)
    assert Event.from_text(ev.text()) == ev and ev.text() == "t=1.25 contact a=bat b=A1 t_err=0.0002 confidence=0.8"
    rec = {"game": "novuss", "t0": 1.0, "t1": 2.0, "before": {"bat": [0, -440], "A1": [0, 0]},
           "after": {"bat": [0, -10], "A1": [0, 300]}, "events": [ev.to_dict()]}
    parsed = parse_record(rec)
    assert parsed.events[0].t_err == pytest.approx(0.0002)
    assert parsed.events[0].confidence == pytest.approx(0.8)


# -- tracker ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("fps", [60, 30])
def test_tracker_keeps_ids_through_a_head_on_chain_of_own_pawns(fps):
    # A1 drives into A2 which nearly touches A3: a Newton's cradle, where nearest-neighbour matching swaps ids
    layout = {"A1": (0.0, -300.0), "A2": (0.0, 0.0), "A3": (0.0, 32.5)}
    s = Synth([disc("A1", layout["A1"], (0.0, 4000.0)), disc("A2", layout["A2"]), disc("A3", layout["A3"])])
    truth = s.run(0.8)
    tracker, wrong = run_tracker(s, truth, fps, 0.8, layout, seed=fps)
    assert wrong == 0
    assert set(tracker.tracks) == set(layout)


def test_tracker_coasts_under_a_hand_and_ends_a_pocketed_piece_there():
    layout = {"A1": (0.0, 0.0), "A2": (380.0, 380.0), "B1": (200.0, 0.0)}
    s = Synth([disc("A1", layout["A1"]), disc("A2", layout["A2"], (1500.0, 1500.0)), disc("B1", layout["B1"])])
    truth = s.run(0.6)
    hand = Detection("hand", (0.0, 0.0), 60.0, outline_mm=((-60, -60), (60, -60), (60, 60), (-60, 60)))

    def hide(pid, k):
        return pid == "A1" and 5 <= k < 30  # under the hand for 25 frames

    def with_hand(dets):
        return Detections(dets.frame, dets.t_s, dets.items + ((hand,) if 5 <= dets.frame < 30 else ()))

    tracker, wrong = run_tracker(s, truth, 60, 0.6, layout, drop=hide, extra=with_hand)
    assert wrong == 0
    tracks = tracker.tracks
    assert tracks["A1"].left is None
    assert any(st.occluded == "hand" for st in tracks["A1"].states)
    assert (tracks["A2"].left, tracks["A2"].left_where) == ("pocket", "NE")
    assert tracks["B1"].left is None


def test_tracker_needs_evidence_for_a_new_piece_and_names_it_by_owner():
    tracker = Tracker(SURFACE, hit_min=3)
    tracker.start({"A1": (0.0, 0.0)}, 0, 0.0, spares=["B4", "A6"])
    new = Detection("pawn", (100.0, 100.0), 16.0, "A")
    names = []
    for k in range(1, 4):
        out = tracker.update(Detections(k, k / 60, (Detection("pawn", (0.0, 0.0), 16.0, "A"), new)))
        names.append(sorted(d.piece for d in out.pieces()))
    assert names == [["A1"], ["A1"], ["A1", "A6"]]


def test_a_newcomer_beyond_a_cushion_line_gets_no_name_on_a_board_with_cushions():
    """A fit on the cue over the frame, a pawn's size and colour for frames on end, is no piece on the board:
    beyond the cushion line there is no surface to lie on (#16, the independent renderer's bat-pocketed)."""
    tracker = Tracker(SURFACE, hit_min=3)
    tracker.start({"A1": (0.0, 0.0)}, 0, 0.0, spares=["A6"])
    beyond = Detection("pawn", (-114.0, -SURFACE.half_y_mm - 8.0), 16.0, "A")
    inside = Detection("pawn", (-114.0, -SURFACE.half_y_mm + 20.0), 16.0, "A")
    names = [sorted(d.piece for d in tracker.update(Detections(k, k / 60, (Detection("pawn", (0.0, 0.0), 16.0, "A"),
                                                                           beyond))).pieces()) for k in range(1, 6)]
    assert names == [["A1"]] * 5
    names = [sorted(d.piece for d in tracker.update(Detections(k, k / 60, (Detection("pawn", (0.0, 0.0), 16.0, "A"),
                                                                           inside))).pieces()) for k in range(6, 9)]
    assert names[-1] == ["A1", "A6"]


def test_tracker_never_gives_a_piece_to_the_other_players_track():
    tracker = Tracker(SURFACE)
    tracker.start({"A1": (0.0, 0.0)}, 0, 0.0, spares=[])
    out = tracker.update(Detections(1, 1 / 60, (Detection("pawn", (0.5, 0.0), 16.0, "B"),)))
    assert out.pieces() == []


# -- events ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("fps", [60, 30])
@pytest.mark.parametrize("gap_ms", [2.0, 3.0, 5.0])
@pytest.mark.parametrize("own_first", [True, False])
def test_first_of_two_bat_contacts_is_ordered_and_timed(fps, gap_ms, own_first):
    for seed in range(3):
        s, _ = two_contact_shot(gap_ms / 1000, seed=seed, own_first=own_first)
        truth = s.run(0.3)
        layout = {k: tuple(d.p) for k, d in s.discs.items()}
        tracker, wrong = run_tracker(s, truth, fps, 0.3, layout, seed=seed)
        assert wrong == 0
        got = [e for e in EventExtractor(SURFACE).extract(tracker.tracks).events if e.kind == "contact" and e.a == "bat"]
        true = [(t, b if a == "bat" else a) for t, kind, a, b in truth.events if kind == "contact" and "bat" in (a, b)]
        assert [e.b for e in got[:2]] == [p for _, p in true[:2]]
        for e, (t, _) in zip(got, true):
            assert abs(e.t - t) <= 3 * e.t_err + 3e-4
        assert got[0].t_err < 1e-3 and got[1].t_err < 2e-3


def test_close_contacts_come_with_an_uncertainty_that_covers_the_truth():
    # 0.5 ms apart at 30 fps: the order may be either, but the stated errors must admit a tie
    for seed in range(4):
        s, _ = two_contact_shot(0.0005, seed=seed)
        truth = s.run(0.3)
        layout = {k: tuple(d.p) for k, d in s.discs.items()}
        tracker, _ = run_tracker(s, truth, 30, 0.3, layout, seed=seed)
        got = [e for e in EventExtractor(SURFACE).extract(tracker.tracks).events if e.kind == "contact" and e.a == "bat"]
        assert len(got) == 2
        gap = abs(got[1].t - got[0].t)
        sigma = math.hypot(got[0].t_err, got[1].t_err)
        assert gap - 2 * sigma < PROFILE["simultaneous_contact_s"]  # the rule engine will not call it "own first" blindly


def test_cushion_and_pocket_instants():
    layout = {"bat": (0.0, 300.0), "A1": (430.0, 430.0)}
    s = Synth([disc("bat", layout["bat"], (0.0, 2500.0)), disc("A1", layout["A1"], (900.0, 900.0))])
    truth = s.run(0.4)
    tracker, _ = run_tracker(s, truth, 60, 0.4, layout)
    events = EventExtractor(SURFACE).extract(tracker.tracks).events
    cushion = next(e for e in events if e.kind == "cushion")
    t_cushion = next(t for t, k, a, b in truth.events if k == "cushion")
    assert (cushion.piece, cushion.side) == ("bat", "N")
    assert abs(cushion.t - t_cushion) < 5e-4
    pocket = next(e for e in events if e.kind == "pocket")
    t_pocket = next(t for t, k, a, b in truth.events if k == "pocket")
    assert (pocket.piece, pocket.pocket) == ("A1", "NE")
    assert abs(pocket.t - t_pocket) < 1e-3


# -- segmenter and records ----------------------------------------------------------------------------------
def _frame(k, pieces, hand=None):
    items = tuple(Detection(kind, xy, 16.0, owner, frame=k, t_s=k / 60, piece=p) for p, kind, owner, xy in pieces)
    if hand is not None:
        items += (Detection("hand", hand, 60.0, outline_mm=tuple((hand[0] + dx, hand[1] + dy) for dx, dy in
                                                                ((-60, -60), (60, -60), (60, 60), (-60, 60)))),)
    return Detections(k, k / 60, items)


def test_a_hand_placing_the_bat_is_not_a_shot_but_a_bat_set_moving_is():
    seg = ShotSegmenter("novuss")
    seg.seed({"bat": (0.0, -440.0), "A1": (0.0, 0.0)})
    windows = []
    k = 0
    for k in range(1, 30):  # the hand slides the bat 100 mm sideways
        x = min(k * 5.0, 100.0)
        windows.append(seg.update(_frame(k, [("bat", "bat", None, (x, -440.0)), ("A1", "pawn", "A", (0.0, 0.0))],
                                         hand=(x, -440.0))))
    assert seg.state == "idle"
    for k in range(30, 60):  # the hand has gone; everything rests
        windows.append(seg.update(_frame(k, [("bat", "bat", None, (100.0, -440.0)), ("A1", "pawn", "A", (0.0, 0.0))])))
    assert seg.state == "idle" and not any(windows)
    for k in range(60, 120):  # now the cue sends it up the board; it stops after 20 frames
        y = -440.0 + min(k - 59, 20) * 30.0
        w = seg.update(_frame(k, [("bat", "bat", None, (100.0, y)), ("A1", "pawn", "A", (0.0, 0.0))]))
        if w is not None:
            windows.append(w)
    shots = [w for w in windows if w]
    assert len(shots) == 1
    assert shots[0].starter == "bat" and shots[0].frame0 == 59
    assert shots[0].before["bat"] == pytest.approx((100.0, -440.0))
    assert shots[0].after["bat"] == pytest.approx((100.0, 160.0))



def test_a_pawn_set_off_with_no_stroke_seen_is_a_shot_a_refit_jump_or_a_hand_is_not():
    """The bat unseen (a clip cut on the stroke, a bat not recognised): a pawn on its way with no hand near
    starts the shot all the same; a resting fit that jumps a few millimetres (a pawn against a cushion
    refitted), two pawns' names swapped, or a pawn a hand slides is none."""
    rest = {"A1": (0.0, 0.0), "B1": (100.0, 0.0), "A7": (-484.0, -40.0)}

    def run(paths, hand_at=None):
        seg = ShotSegmenter("novuss")
        seg.seed(rest)
        out = []
        for k in range(1, len(next(iter(paths.values()))) + 1):
            pieces = [(p, "pawn", p[0], path[k - 1]) for p, path in paths.items()]
            w = seg.update(_frame(k, pieces, hand=hand_at(k) if hand_at else None))
            out.append(w)
            if seg.state == "moving" and k == len(paths["A1"]):
                out.append(seg.flush())
        return [w for w in out if w is not None], seg

    still = 10
    # A7 refitted 6 mm off against its cushion and back, A1 and B1 swapped by the tracker: no shot
    jumpy = {"A1": [(0.0, 0.0)] * still + [(100.0, 0.0)] * 30, "B1": [(100.0, 0.0)] * still + [(0.0, 0.0)] * 30,
             "A7": [(-484.0, -40.0)] * still + [(-478.0, -40.0)] * 15 + [(-484.0, -40.0)] * 15}
    shots, seg = run(jumpy)
    assert shots == [] and seg.state == "idle"
    # A1 struck by a bat the camera never saw: on its way at 0.6 m/s, it stops 200 mm on
    struck = {"A1": [(0.0, 0.0)] * still + [(min(10.0 * k, 200.0), 0.0) for k in range(1, 51)],
              "B1": [(100.0, 300.0)] * (still + 50), "A7": [(-484.0, -40.0)] * (still + 50)}
    rest["B1"] = (100.0, 300.0)
    shots, _ = run(struck)
    assert len(shots) == 1 and shots[0].starter == "A1" and shots[0].frame0 == still + 1
    assert shots[0].after["A1"] == pytest.approx((200.0, 0.0))
    # the same path under a hand: the hand moved it, no shot
    shots, _ = run(struck, hand_at=lambda k: struck["A1"][k - 1])
    assert shots == []


def test_a_resting_bats_fit_that_jumps_and_stays_is_no_shot_a_bat_seen_on_its_way_is():
    """The harsher simulator's *everything* at 30 fps: a bat's cached fit 7 mm off its outline was refitted after
    a second, and the 8 mm jump (over ``move_mm``) opened a shot with nothing in it. A piece cannot get 8 mm
    in one frame and stop dead there: with no hand or cue in view and nothing seen between its two places,
    only its fit moved. Seen on its way (a gentle stroke), under a hand or cue, or farther than ``jump_mm``,
    it is a shot; cut short by the stream's end one frame after the jump, it is none."""
    rest = {"bat": (0.0, -375.0), "A1": (0.0, 0.0)}

    def run(bat_path, hand=None, flush_at=None):
        seg = ShotSegmenter("novuss")
        seg.seed(rest)
        out = []
        for k, y in enumerate(bat_path, 1):
            out.append(seg.update(_frame(k, [("bat", "bat", None, (0.0, y)), ("A1", "pawn", "A", (0.0, 0.0))],
                                         hand=hand if k == 12 else None)))
            if k == flush_at:
                out.append(seg.flush())
                break
        return [w for w in out if w is not None], seg

    jump = [-375.0] * 10 + [-383.0] * 40
    shots, seg = run(jump)
    assert shots == [] and seg.state == "idle" and seg.off_rest("bat", (0.0, -375.0))  # its rest is the new fit
    assert run(jump, flush_at=11)[0] == []  # the stream ends on the jump's frame
    gentle = [-375.0] * 10 + [-379.0, -382.0, -383.0] + [-383.0] * 37  # seen 4 mm on its way
    shots, _ = run(gentle)
    assert len(shots) == 1 and shots[0].starter == "bat" and shots[0].frame0 == 11  # from the frame before -382
    far = [-375.0] * 10 + [-390.0] * 40  # 15 mm: over jump_mm
    assert len(run(far)[0]) == 1
    shots, _ = run(jump, hand=(300.0, -300.0))  # a hand in view while it jumped
    assert len(shots) == 1


def _feed_struck(pipe, moving, truth, t_hit, fps, duration_s, rng):
    """Feed ``pipe`` noisy detections (0.3 mm) of a synthetic motion struck at ``t_hit``; the records it emits."""
    records = []
    for k in range(int(duration_s * fps)):
        t = k / fps
        items = []
        for pid, d in moving.discs.items():
            xy, present = moving.position(truth, pid, max(t - t_hit, 0.0))
            if present:
                z = xy + rng.normal(0, 0.3, 2)
                items.append(Detection(d.kind, (float(z[0]), float(z[1])), d.r, d.owner, frame=k, t_s=t))
        seen = pipe.feed(Detections(k, t, tuple(items)))
        if seen:
            records.append(seen.shot.to_dict())
    return records

def test_pipeline_turns_a_synthetic_shot_into_a_valid_record():
    s, (first, second) = two_contact_shot(0.003, seed=5)
    bat_v = s.discs["bat"].v.copy()
    layout = {k: tuple(float(v) for v in d.p) for k, d in s.discs.items()}
    s.discs["bat"].v = np.zeros(2)
    t_hit = 0.2
    # resting for 0.2 s, then struck: shift the motion by t_hit
    moving = Synth([disc("bat", layout["bat"], bat_v), disc(first, layout[first]), disc(second, layout[second])],
                   decel=s.decel)
    truth = moving.run(1.5)
    pipe = Pipeline(PROFILE)
    pipe.start(hints_for(layout), 0, 0.0)
    records = _feed_struck(pipe, moving, truth, t_hit, 60, 2.3, np.random.default_rng(1))
    assert len(records) == 1
    rec = parse_record(records[0])
    contacts = [e for e in rec.events if e.kind == "contact" and "bat" in (e.a, e.b)]
    assert [e.b for e in contacts[:2]] == [first, second]
    true_first = next(t for t, k, a, b in truth.events if k == "contact") + t_hit
    assert abs(contacts[0].t - true_first) < 1e-3
    assert rec.t0 == pytest.approx(t_hit, abs=2e-3)
    assert rec.before["bat"] == pytest.approx(layout["bat"], abs=0.3)
    for pid in rec.after:
        xy, _ = moving.position(truth, pid, 2.2)
        assert math.dist(rec.after[pid], xy) < 0.5


def test_a_bat_bouncing_back_to_where_it_was_is_not_still():
    # the bat passes -463 going down, hits the cushion (-479) and stops at -462: the first and the last
    # frame of a 0.3 s window agree although it moved between them; the shot must not end there (it
    # did, and the rest of the creep became a second shot)
    seg = ShotSegmenter("novuss")
    seg.seed({"bat": (0.0, -300.0)})
    path = [-300.0 - 40.0 * k for k in range(1, 5)] + [-463.0, -472.0, -479.0, -474.0, -469.0, -466.0, -464.0,
                                                       -463.0, -462.5] + [-462.0] * 40
    windows = [w for k, y in enumerate(path, 1) if (w := seg.update(_frame(k, [("bat", "bat", None, (0.0, y))])))]
    assert len(windows) == 1
    last_move = path.index(-464.0) + 1  # the last frame more than still_mm (1.5) from the resting place
    assert windows[0].frame1 >= last_move + 18  # the old check ended it at frame 5 + 18
    assert windows[0].after["bat"] == pytest.approx((0.0, -462.0), abs=0.1)


def test_cvrnkana_marble_rolling_into_view_starts_a_flick_one_appearing_inside_does_not():
    profile = default_profile("cvrnkana")
    surface = Surface.from_profile(profile)
    seg = ShotSegmenter("cvrnkana", surface=surface)
    seg.seed({"B1": (200.0, 100.0)})
    started = []
    for k in range(1, 12):  # A2 lifted out of the pit by a hand: appears near the pit, moving outwards
        seg.update(_frame(k, [("B1", "marble", "B", (200.0, 100.0)), ("A2", "marble", "A", (-20.0, -60.0 - 15 * k))]))
        started.append(seg.state)
    assert set(started) == {"idle"}
    for k in range(12, 16):  # A3 rolls in across the bottom edge of the view
        seg.update(_frame(k, [("B1", "marble", "B", (200.0, 100.0)), ("A3", "marble", "A", (0.0, -330.0 + 30 * (k - 12)))]))
    assert seg.state == "moving" and seg._start[3] == "A3"


def test_tracker_gives_a_piece_put_back_by_hand_its_own_id():
    tracker = Tracker(SURFACE, hit_min=2)
    tracker.start({"A1": (0.0, 0.0), "A2": (100.0, 0.0)}, 0, 0.0, spares=["A3", "A4"])
    hand = Detection("hand", (0.0, 0.0), 60.0, outline_mm=((-60, -60), (60, -60), (60, 60), (-60, 60)))
    k = 0
    for k in range(1, 6):  # a hand picks A1 up
        tracker.update(Detections(k, k / 60, (Detection("pawn", (100.0, 0.0), 16.0, "A"), hand)))
    for k in range(6, 10):  # gone from the open
        tracker.update(Detections(k, k / 60, (Detection("pawn", (100.0, 0.0), 16.0, "A"),)))
    assert tracker.tracks["A1"].left == "pickup"
    tracker.expect({"A1": (0.0, 480.0)})  # the ruling returns A1 to the cushion
    names = []
    for k in range(10, 14):
        out = tracker.update(Detections(k, k / 60, (Detection("pawn", (100.0, 0.0), 16.0, "A"),
                                                    Detection("pawn", (0.4, 479.6), 16.0, "A"))))
        names.append(sorted(d.piece for d in out.pieces()))
    assert names[-1] == ["A1", "A2"]
    assert tracker.tracks["A1"].left is None


def test_look_in_hole_sees_the_line_only_where_it_is():
    import cv2

    from vision.hole import look_in_hole
    ppm = 5.0
    w, h = int(200 * ppm), int(120 * ppm)

    def to_px(mm):
        mm = np.asarray(mm, float)
        return np.stack([(mm[:, 0] + 100) * ppm, (60 - mm[:, 1]) * ppm], 1)

    def scene(bat_y):
        board = np.zeros((h, w, 3), np.uint8)
        board[:] = (120, 175, 214)
        cv2.rectangle(board, (0, int((60 - 1.5) * ppm)), (w, int((60 + 1.5) * ppm)), (38, 34, 34), -1)
        img = board.copy()
        c = tuple(int(v) for v in to_px([[0.0, bat_y]])[0])
        cv2.circle(img, c, int(18 * ppm), (60, 120, 30), -1)
        hole = np.zeros((h, w), np.uint8)
        cv2.circle(hole, c, int(6 * ppm), 255, -1)
        img[hole > 0] = board[hole > 0]
        return img

    on = look_in_hole(scene(0.0), to_px, (0.0, 0.0), 6.0, 18.0, 0.0, 3.0, (-95.0, 95.0))
    off = look_in_hole(scene(9.0), to_px, (0.0, 9.0), 6.0, 18.0, 0.0, 3.0, (-95.0, 95.0))
    assert on.decisive and on.sees_line and on.agrees
    assert off.decisive and not off.sees_line and off.agrees
    # the same scene as a 1.7 mm/px camera sees it: too few pixels inside the hole to tell
    small = cv2.resize(scene(0.0), (w // 8, h // 8), interpolation=cv2.INTER_AREA)
    coarse = look_in_hole(small, lambda mm: to_px(mm) / 8, (0.0, 0.0), 6.0, 18.0, 0.0, 3.0, (-95.0, 95.0))
    assert not coarse.decisive and coarse.agrees is None


@pytest.mark.parametrize("fps", [60, 30])
def test_a_bat_struck_away_from_a_pawn_it_lies_against_touched_nothing(fps):
    # the bat rests against B4 (touching) and is struck straight away from it: its outgoing line run
    # back passes through B4, but B4 never moves, so no contact may be emitted
    layout = {"bat": (0.0, -400.0), "B4": (0.0, -434.0), "A1": (300.0, 300.0)}
    moving = Synth([disc("bat", layout["bat"], (0.0, 2500.0)), disc("B4", layout["B4"]), disc("A1", layout["A1"])])
    truth = moving.run(1.2)
    assert not [e for e in truth.events if e[1] == "contact"]
    pipe = Pipeline(PROFILE)
    pipe.start(hints_for(layout), 0, 0.0)
    records = _feed_struck(pipe, moving, truth, 0.2, fps, 2.0, np.random.default_rng(fps))
    assert len(records) == 1
    assert [e["kind"] for e in records[0]["events"] if e["kind"] == "contact"] == []


def test_a_marble_rolling_in_is_named_by_the_place_its_path_comes_from():
    from vision.tracker import _came_from_line
    first = Detection("marble", (0.0, -330.0), 7.0, "B")
    now = Detection("marble", (2.0, -250.0), 7.0, "B")
    assert _came_from_line(first, now, (-2.0, -480.0))  # straight behind it: it came from there
    assert not _came_from_line(first, now, (150.0, -480.0))  # off its path: a newcomer from the line
    assert not _came_from_line(first, now, (0.0, 0.0))  # ahead of it
    still = Detection("marble", (1.0, -331.0), 7.0, "B")
    assert _came_from_line(first, still, (150.0, -480.0))  # hardly moved: no direction to judge by


def _roll_in(tracker, path, owner="B"):
    """Feed a marble rolling along ``path`` (one point a frame); returns the name it ends with."""
    names = []
    for k, xy in enumerate(path, start=1):
        out = tracker.update(Detections(k, k / 60, (Detection("marble", xy, 7.0, owner, frame=k, t_s=k / 60),)))
        names += [d.piece for d in out.pieces()]
    return names[-1] if names else None


def test_cvrnkana_marble_rolling_in_from_the_lines_is_the_next_one_behind_them_during_the_opening():
    """Game seed 1 shot 14: B7, flicked from the start line, rolled in past B1 lying out of view on its
    path; it was named B1 (a field marble flicked out of turn) instead of B7 (rule 2: all marbles from
    the line first)."""
    surface = Surface.from_profile(default_profile("cvrnkana"))
    path = [(49.0, -350.0 + 12.0 * k) for k in range(8)]
    tracker = Tracker(surface)
    tracker.start({}, 0, 0.0)
    tracker.off_view({"B1": (49.0, -605.0)}, ["B7", "B8"])
    assert _roll_in(tracker, path) == "B7"
    # none of B's marbles behind the line: it is the field marble its path comes from
    tracker = Tracker(surface)
    tracker.start({}, 0, 0.0)
    tracker.off_view({"B1": (49.0, -605.0)}, [])
    assert _roll_in(tracker, path) == "B1"


def test_cvrnkana_field_marble_flicked_in_from_far_off_still_gets_its_name():
    """Game seed 1 shot 33: A7 lay 450 mm outside the view, was flicked in and stopped in view; no id was
    within reach, so it stayed an unnamed newcomer and the last four flicks of the game were never seen."""
    surface = Surface.from_profile(default_profile("cvrnkana"))
    tracker = Tracker(surface)
    tracker.start({}, 0, 0.0)
    tracker.off_view({"A7": (-108.0, -736.0), "A3": (400.0, 300.0)}, [])
    path = [(-57.0 + 1.2 * k, -353.0 + 12.0 * k) for k in range(5)] + [(-51.0, -290.0)] * 4
    assert _roll_in(tracker, path, "A") == "A7"


def test_ultralytics_boxes_become_board_detections_with_one_threshold_or_one_per_class():
    from types import SimpleNamespace

    from vision.detect_learned import DEFAULT_CLASSES

    names = {0: "pawn_a", 1: "pawn_b", 2: "bat", 3: "marble_a", 4: "marble_b", 5: "hand", 6: "cue"}
    class Boxes(SimpleNamespace):  # ultralytics' Boxes as far as the adapter reads them
        def __len__(self):
            return len(self.conf)

    boxes = Boxes(xyxy=np.array([[10.0, 10.0, 30.0, 30.0], [50.0, 50.0, 66.0, 66.0], [0.0, 0.0, 100.0, 60.0]]),
                  conf=np.array([0.30, 0.12, 0.20]), cls=np.array([0, 3, 5]))
    result = SimpleNamespace(boxes=boxes, names=names)
    half = lambda px: np.asarray(px, float) / 2.0  # noqa: E731 - 2 px per mm

    def got(min_score):
        return [(d.kind, d.owner, d.centre_mm, round(d.radius_mm, 3)) for d in
                Detections.from_ultralytics(result, half, 3, 0.05, DEFAULT_CLASSES, min_score)]

    assert got(0.25) == [("pawn", "A", (10.0, 10.0), 5.0)]
    assert got(0.1) == [("pawn", "A", (10.0, 10.0), 5.0), ("marble", "A", (29.0, 29.0), 4.0),
                        ("hand", None, (25.0, 15.0), pytest.approx(29.155, abs=1e-3))]
    # per class: marbles from 0.1, pawns from 0.25; a class not named (the hand) takes the lowest given
    assert [g[:2] for g in got({"pawn_a": 0.25, "marble_a": 0.1})] == [("pawn", "A"), ("marble", "A"), ("hand", None)]
    assert [g[:2] for g in got({"pawn_a": 0.35, "marble_a": 0.15, "hand": 0.25})] == []


def test_a_second_box_of_one_class_on_one_disc_is_dropped_the_stronger_kept():
    from vision.detect_learned import one_box_per_disc

    def marble(x, owner, score):
        return Detection("marble", (x, 0.0), 7.0, owner, score)

    hand = Detection("hand", (0.0, 50.0), 40.0, outline_mm=((-40.0, 10.0), (40.0, 10.0), (40.0, 90.0), (-40.0, 90.0)))
    dets = Detections(4, 0.1, (marble(0.0, "A", 0.3), hand, marble(5.0, "A", 0.6), marble(14.5, "A", 0.2),
                               marble(3.0, "B", 0.1)))
    got = one_box_per_disc(dets)
    # 5 mm apart: one disc (the 0.6 box kept); 9.5 mm from it: a touching neighbour (7 mm radii); the other
    # player's box on the same place is left for the tracker (a mix-up, not a duplicate)
    assert [(d.kind, d.centre_mm[0], d.score) for d in got.items] == [
        ("hand", 0.0, 1.0), ("marble", 5.0, 0.6), ("marble", 14.5, 0.2), ("marble", 3.0, 0.1)]
    assert (got.frame, got.t_s) == (4, 0.1)


def test_a_piece_lost_in_the_open_and_back_in_the_same_shot_keeps_one_track():
    """On the independent renderer a struck pawn was lost from sight on its way and found again at rest under
    its own name: its new track replaced the old one, and its contact with the bat went with it."""
    tracker = Tracker(SURFACE, hit_min=2, miss_max=3)
    tracker.start({"A1": (0.0, 0.0), "A2": (300.0, 0.0)}, 0, 0.0, spares=["A3"])
    a2 = Detection("pawn", (300.0, 0.0), 16.0, "A")
    for k in range(1, 4):  # A1 at rest, then struck: 20 mm a frame
        tracker.update(Detections(k, k / 60, (Detection("pawn", (0.0, 0.0), 16.0, "A"), a2)))
    for k in range(4, 8):
        tracker.update(Detections(k, k / 60, (Detection("pawn", (0.0, 20.0 * (k - 3)), 16.0, "A"), a2)))
    for k in range(8, 14):  # unseen in the open
        tracker.update(Detections(k, k / 60, (a2,)))
    assert tracker.tracks["A1"].left == "lost"
    for k in range(14, 18):  # at rest again, further on
        tracker.update(Detections(k, k / 60, (Detection("pawn", (0.0, 200.0), 16.0, "A"), a2)))
    track = tracker.tracks["A1"]
    t, xy, frames = track.arrays()
    assert track.left is None
    assert frames[0] == 0 and list(frames[:8]) == list(range(8))  # its rest and its flight before it was lost
    assert tuple(xy[-1]) == (0.0, 200.0) and frames[-1] == 17


def test_a_piece_called_over_a_cushion_and_back_off_it_keeps_its_name_and_its_track():
    """On the independent renderer the bat, missed for three frames where it rebounded off the far cushion, was
    called off the board; seen again on its way back, it started a fresh track and the record lost the stroke
    (refused). A pawn likewise must not come back under a spare's name. Seen again after ``bounce_back_s``, or
    out of its speed's reach, a newcomer is not the piece that went off."""
    def run(back_at_k: int, back_xy):
        tracker = Tracker(SURFACE, hit_min=2, miss_max=3)
        tracker.start({"A1": (0.0, 300.0), "A2": (-300.0, 0.0)}, 0, 0.0, spares=["A3"])
        a2 = Detection("pawn", (-300.0, 0.0), 16.0, "A")
        for k in range(1, 4):  # A1 at rest, then struck north at 2.4 m/s: 40 mm a frame
            tracker.update(Detections(k, k / 60, (Detection("pawn", (0.0, 300.0), 16.0, "A"), a2)))
        for k in range(4, 8):  # up to 460 mm, against the cushion (line at 484)
            tracker.update(Detections(k, k / 60, (Detection("pawn", (0.0, 300.0 + 40.0 * (k - 3)), 16.0, "A"), a2)))
        for k in range(8, back_at_k):  # unseen against the cushion
            tracker.update(Detections(k, k / 60, (a2,)))
        assert tracker.tracks["A1"].left == "off"
        for k in range(back_at_k, back_at_k + 3):  # back on the board, coming away from the cushion
            xy = (back_xy[0], back_xy[1] - 30.0 * (k - back_at_k))
            tracker.update(Detections(k, k / 60, (Detection("pawn", xy, 16.0, "A", frame=k, t_s=k / 60), a2)))
        return tracker

    tracker = run(11, (0.0, 420.0))
    track = tracker.tracks["A1"]
    assert track.left is None and "A3" not in tracker.tracks
    t, xy, frames = track.arrays()
    assert list(frames[:8]) == list(range(8))  # its rest and its flight before it was called off
    assert frames[-1] == 13
    late = run(80, (0.0, 420.0))  # more than a second later: a piece put there, not A1 back
    assert late.tracks["A1"].left == "off" and "A3" in late.tracks


def test_a_piece_last_seen_at_rest_is_not_continued_beyond_a_cushion_but_one_flying_off_is():
    """On the independent renderer a pawn by its cushion, missed at rest for a while, took a pawn-coloured fit
    on the striker's hand 700 mm off beyond the other cushion and was called off the board: the shot was
    refused. Beyond a cushion line a piece is only one on its way off."""
    tracker = Tracker(SURFACE, hit_min=3)
    tracker.start({"A8": (484.0, -40.0), "A1": (0.0, 0.0)}, 0, 0.0, spares=["A6"])
    a1 = Detection("pawn", (0.0, 0.0), 16.0, "A")
    for k in range(1, 4):
        tracker.update(Detections(k, k / 60, (a1, Detection("pawn", (484.0, -40.0), 16.0, "A"))))
    hand_fit = Detection("pawn", (1.0, -SURFACE.half_y_mm - 44.0), 16.0, "A")
    for k in range(4, 10):  # A8 missed at rest; the hand's fit beyond the south cushion
        out = tracker.update(Detections(k, k / 60, (a1, hand_fit)))
        assert sorted(d.piece for d in out.pieces()) == ["A1"]
    assert tracker.tracks["A8"].left is None and tracker.positions()["A8"] == (484.0, -40.0)
    # A1 struck towards the south cushion and over it: followed beyond the line until it is gone
    for k in range(10, 16):
        y = -100.0 * (k - 9)
        out = tracker.update(Detections(k, k / 60, (Detection("pawn", (0.0, y), 16.0, "A"),)))
        assert "A1" in [d.piece for d in out.pieces()]
    assert tracker.positions()["A1"][1] < -SURFACE.half_y_mm


def test_a_piece_missed_at_rest_is_looked_for_far_away_only_once_something_came_near_it():
    """On the independent renderer at 30 frames/s a pawn against a cushion, missed at rest for 0.17 s, took a
    fit 973 mm away, where another pawn lost from sight lay, and was called off the board before any shot: the
    record then contradicted itself (refused). Only a hand, the cue or another piece moves a piece at rest, so
    until one came near it, a piece unseen at rest is looked for within a frame's travel of where it lay."""
    def run(b1_path, a_fit):
        tracker = Tracker(SURFACE, hit_min=3)
        tracker.start({"A7": (-484.0, -40.0), "B1": (-200.0, 300.0)}, 0, 0.0, spares=[])
        b1 = [Detection("pawn", xy, 16.0, "B") for xy in b1_path]
        for k in range(1, 4):
            tracker.update(Detections(k, k / 30, (Detection("pawn", (-484.0, -40.0), 16.0, "A"), b1[0])))
        for k in range(4, 9):  # A7 missed at rest (the detector's); B1 where its path has it
            tracker.update(Detections(k, k / 30, (b1[k - 3],)))
        out = tracker.update(Detections(9, 9 / 30, (Detection("pawn", a_fit, 16.0, "A"), b1[-1])))
        return tracker, sorted(d.piece for d in out.pieces())

    resting = [(-200.0, 300.0)] * 6
    tracker, named = run(resting, (484.0, -40.0))  # a fit of A's colour 968 mm off, nothing came near A7
    assert named == ["B1"] and tracker.positions()["A7"] == (-484.0, -40.0) and tracker.tracks["A7"].left is None
    tracker, named = run(resting, (-470.0, -40.0))  # 14 mm off: A7 itself, seen again
    assert named == ["A7", "B1"] and tracker.positions()["A7"] == (-470.0, -40.0)
    # B1 ran past A7, its step from the 5th to the 6th frame within touching distance: A7 may have been struck
    # then, and a fit of its kind anywhere it could have got to since is A7
    passing = [(-200.0, 300.0), (-300.0, 150.0), (-440.0, -30.0), (-300.0, -200.0), (-200.0, -350.0), (-100.0, -420.0)]
    tracker, named = run(passing, (300.0, -300.0))
    assert named == ["A7", "B1"] and tracker.positions()["A7"] == (300.0, -300.0)


def test_a_newcomer_on_a_board_with_cushions_is_named_once_it_shows_a_whole_outline():
    """The cue's wooden tip behind the bat fits as a pawn with 0.6-0.7 of an outline (the rest is the stick):
    it must not take a spare pawn's name at the stroke; a pawn put back by hand lies still and shows it whole."""
    tracker = Tracker(SURFACE, hit_min=3)
    tracker.start({"A1": (0.0, 0.0)}, 0, 0.0, spares=["A3"])
    a1 = Detection("pawn", (0.0, 0.0), 16.0, "A")
    for k in range(1, 7):  # the tip, a pawn's size and colour, creeping up behind the bat
        tip = Detection("pawn", (-8.0, -494.0 + 2.0 * k), 16.0, "A", score=0.59)
        out = tracker.update(Detections(k, k / 60, (a1, tip)))
        assert sorted(d.piece for d in out.pieces()) == ["A1"]
    back = [Detection("pawn", (200.0, 100.0), 16.0, "A", score=s) for s in (0.6, 0.92, 0.9)]
    names = [sorted(d.piece for d in tracker.update(Detections(k, k / 60, (a1, b))).pieces())
             for k, b in zip(range(7, 10), back)]
    assert names == [["A1"], ["A1"], ["A1", "A3"]]
