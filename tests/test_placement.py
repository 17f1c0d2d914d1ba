"""The placement assistant's core (judge.placement): spots from real rulings, directions, tolerance, stability."""
import pytest

from calibration import default_profile
from judge.placement import TEXTS, PlacementCheck, Target, targets_of
from rules import parse_record
from tests.novuss_records import engine as novuss_engine
from tests.novuss_records import record

NOVUSS = default_profile("novuss")
CVRNKANA = default_profile("cvrnkana")
XS = (-200.0, -100.0, 100.0, 200.0)
MID = {**{f"A{i + 1}": (XS[i % 4], 200.0 + 100 * (i // 4)) for i in range(8)},
       **{f"B{i + 1}": (XS[i % 4], -200.0 - 100 * (i // 4)) for i in range(8)}}


def penalty_ruling():
    """A has pocketed A3 and then touches no own pawn (II.1): A3 goes on the centre line by B's cushion."""
    eng = novuss_engine()
    pos = {k: v for k, v in MID.items() if k != "A3"}
    state = eng.initial(positions=pos).__class__(positions=tuple(sorted(pos.items())), pocketed=("A3",))
    _, ruling = eng.apply(state, record(events=[]))
    return ruling.to_dict()


def restore_ruling():
    """Cvrnkaná 7a: A's flick and a hand moved B1: both marbles go back to their spots (in the camera's view)."""
    from rules.cvrnkana import Cvrnkana
    field = {**{f"A{i}": [-60.0 * i, 200.0] for i in range(1, 6)}, **{f"B{i}": [60.0 * i, 200.0] for i in range(1, 6)},
             "A9": [0.0, 900.0]}
    behind = [f"{p}{i}" for p in "AB" for i in range(1, 11) if f"{p}{i}" not in field]
    eng = Cvrnkana(CVRNKANA.geometry)
    state = eng.state_from_dict({"game": "cvrnkana", "game_number": 1, "toss_winner": "A", "to_move": "A",
                                 "marbles": {"A": 10, "B": 10}, "field": field, "pit": [], "behind": behind,
                                 "flicks": {"A": 12, "B": 12}, "shot": 7, "outcome": None, "final_flick": False})
    raw = {"game": "cvrnkana", "t0": 0.0, "t1": 10.0, "before": {"A1": [-60.0, 200.0], "B1": [60.0, 200.0]},
           "after": {"A1": [-20.0, 100.0], "B1": [80.0, 180.0]},
           "events": [{"t": 0.1, "kind": "touch", "piece": "A1"}, {"t": 0.2, "kind": "touch", "piece": "B1"}]}
    _, ruling = eng.apply(state, parse_record(raw, "test", game="cvrnkana"))
    return ruling.to_dict()


def feed(check, xy_by_t, piece):
    out = None
    for t, xy in xy_by_t:
        out = check.update({piece: xy}, t)
    return out


def test_targets_of_a_penalty_ruling_are_the_penalty_pawn_on_the_centre_line_by_the_far_cushion():
    (target,) = targets_of(penalty_ruling(), NOVUSS)
    assert target == Target("A3", (0.0, 484.0), "place_penalty", "penalty_pawn", 16.0, True)


def test_targets_of_a_7a_restore_are_every_moved_marble_back_to_its_spot():
    assert [(t.piece, t.at_mm, t.kind, t.why, t.radius_mm) for t in targets_of(restore_ruling(), CVRNKANA)] == [
        ("A1", (-60.0, 200.0), "return", "opponent_marble_moved", 7.0),
        ("B1", (60.0, 200.0), "return", "opponent_marble_moved", 7.0)]


def test_targets_skip_actions_without_a_spot_and_spots_outside_the_view_are_unseen():
    ruling = {"actions": [{"kind": "debt", "player": "A", "amount": 1},
                          {"kind": "to_start_line", "piece": "A2", "at": [-750.0, -3000.0]},
                          {"kind": "return", "piece": "B4", "at": [100.0, 900.0], "reason": "external_returned"}]}
    (target,) = targets_of(ruling, CVRNKANA)
    assert (target.piece, target.in_view) == ("B4", False)
    check = PlacementCheck([target], "cvrnkana")
    status = check.update({}, 0.0)
    assert status.of("B4").state == "unseen" and status.done  # a spot the camera cannot see does not hold play up
    assert status.of("B4").text == "B4: outside the camera's view — place it by eye"
    assert targets_of(None, NOVUSS) == () and targets_of({"actions": []}, NOVUSS) == ()


def test_off_says_how_far_and_which_way_in_board_terms_then_placed_after_settling():
    (target,) = targets_of(penalty_ruling(), NOVUSS)
    check = PlacementCheck([target], "novuss")
    assert check.update({}, 0.0).of("A3").state == "waiting"
    assert check.status.text == "Place 1 of 1: A3" and not check.status.done
    # 4 mm short of B's cushion and 3 mm to A's left of the spot: move it 4 mm towards B, 3 mm right
    status = feed(check, [(0.1 * k, (-3.0, 480.0)) for k in range(1, 6)], "A3")
    a3 = status.of("A3")
    assert a3.state == "off" and a3.off_mm == pytest.approx(5.0) and a3.move_mm == pytest.approx((3.0, 4.0))
    assert a3.text == "A3: 5.0 mm off — move it 4.0 mm towards B's cushion and 3.0 mm to the right (as seen from A's side)"
    status = feed(check, [(0.6, (2.0, 486.5))] * 3, "A3")  # the median moves over within three sightings
    assert "towards A's cushion" in status.of("A3").text and "to the left" in status.of("A3").text
    # within 2 mm: the median is there from the third sighting (t 1.1 s), placed 0.3 s later
    status = feed(check, [(1.0 + 0.05 * k, (0.5, 484.6)) for k in range(8)], "A3")
    assert status.of("A3").state == "off" and status.of("A3").off_mm == pytest.approx(0.78, abs=0.01)
    status = feed(check, [(1.4, (0.5, 484.6))], "A3")
    assert status.of("A3").state == "placed" and status.done
    assert status.of("A3").text == "A3 placed (0.8 mm)" and status.text == "All pieces placed: play on"


def test_noise_at_the_tolerance_does_not_flicker_and_a_piece_knocked_away_is_off_again():
    check = PlacementCheck([Target("B3", (0.0, 0.0), "return", "pawn_off_board", 16.0)], "novuss")
    # 1.8 mm off, with single sightings straying past 2 mm (one in three): the median stays within
    noisy = [(1.8 + (0.6 if k % 3 == 0 else -0.2), 0.0) for k in range(40)]
    states = [check.update({"B3": xy}, 0.05 * k).of("B3").state for k, xy in enumerate(noisy)]
    assert states[:6] == ["off"] * 6 and set(states[7:]) == {"placed"}
    # once placed, a median of 2.3 mm (within the 0.5 mm hysteresis) keeps it placed; 3 mm does not
    assert feed(check, [(3.0 + 0.05 * k, (2.3, 0.0)) for k in range(5)], "B3").of("B3").state == "placed"
    status = feed(check, [(4.0 + 0.05 * k, (3.0, 0.0)) for k in range(5)], "B3")
    assert status.of("B3").state == "off" and not status.done
    # far off (picked up again, or another place entirely): waiting, its sightings forgotten
    assert check.update({"B3": (300.0, 0.0)}, 5.0).of("B3").state == "waiting"


def test_cvrnkana_directions_are_towards_or_away_from_the_pit_and_around_it():
    check = PlacementCheck(targets_of(restore_ruling(), CVRNKANA), "cvrnkana", settle_s=0.0)
    # A1 belongs at (-60, 200): seen 3 mm nearer the pit, along the line to it
    u = (-60.0 / 208.806, 200.0 / 208.806)
    status = check.update({"A1": (-60.0 - 3 * u[0], 200.0 - 3 * u[1]), "B1": (62.5, 200.0)}, 0.0)
    assert status.of("A1").text == "A1: 3.0 mm off — move it 3.0 mm away from the pit"
    # B1 at (60, 200) seen at (62.5, 200): back towards -x, anticlockwise round the pit at the top and, since
    # that point lies nearer the pit, a little towards it
    b1 = status.of("B1")
    assert b1.text == "B1: 2.5 mm off — move it 0.7 mm towards the pit and 2.4 mm anticlockwise (as seen from above)"
    status = check.update({"A1": (-60.0, 200.0), "B1": (60.5, 200.0)}, 0.1)
    assert status.states == {"A1": "placed", "B1": "placed"} and status.done


def test_ending_the_check_names_what_was_not_placed():
    check = PlacementCheck(targets_of(restore_ruling(), CVRNKANA), "cvrnkana", settle_s=0.0)
    check.update({"A1": (-60.0, 200.0)}, 0.0)
    ended = check.end(0.5)
    assert ended.ended and not ended.done and ended.text == "Play went on before B1 was placed"
    assert ended.to_dict()["pieces"][0]["state"] == "placed" and ended.to_dict()["type"] == "placement"


def test_every_reason_an_engine_gives_a_placement_has_a_text():
    import re
    from pathlib import Path
    novuss, cvrnkana = (Path(f"rules/{name}.py").read_text() for name in ("novuss", "cvrnkana"))
    reasons = set(re.findall(r'reason="(\w+)"', novuss)) | {"penalty_pawn", "debt_settled"}
    reasons |= set(re.findall(r'Action\("return", \w+, [^,]+, \w+, "(\w+)"\)', cvrnkana))
    assert reasons >= {"dark_pawn_hit_direct", "opponent_marble_moved", "external_returned", "relocation_refused"}
    assert {f"why_{r}" for r in reasons} <= set(TEXTS), reasons


class FakeVision:
    """What the assistant reads of vision: where the tracker has each piece, and whether a shot is under way."""

    def __init__(self):
        self.at, self.in_shot = {}, False

    def positions(self):
        return dict(self.at)


class Frame:
    def __init__(self, t_s, image=None):
        import numpy as np
        self.t_s, self.index = t_s, int(round(t_s * 30))
        self.image = np.zeros((360, 640, 3), np.uint8) if image is None else image


def assistant_on(profile, view=None):
    from judge.placement_live import PlacementAssistant
    vision, sent, notes = FakeVision(), [], []
    return PlacementAssistant(profile, vision, sent.append, view, note=notes.append, settle_s=0.0), vision, sent, notes


def test_the_next_shot_ends_the_check_and_the_referee_is_told_what_was_not_placed():
    assistant, vision, sent, notes = assistant_on(CVRNKANA)
    assistant({"type": "call", "ruling": restore_ruling()})
    vision.at = {"A1": (-60.0, 200.5), "B1": (90.0, 200.0)}
    assistant.on_frame(Frame(0.0))
    assert sent[-1]["active"] and [p["state"] for p in sent[-1]["pieces"]] == ["placed", "off"]
    vision.in_shot = True  # B's flick began
    assistant.on_frame(Frame(0.1))
    assert not sent[-1]["active"] and sent[-1]["ended"] and assistant.check is None and assistant.shown is None
    assert notes == ["Play went on before B1 was placed"]


def test_a_referee_action_replaces_the_spots_with_those_of_the_ruling_it_leaves():
    from judge.placement_live import CLEAR
    assistant, vision, sent, notes = assistant_on(NOVUSS)
    assistant({"type": "call", "ruling": penalty_ruling()})
    assistant.on_frame(Frame(0.0))
    assert sent[-1]["pieces"][0]["state"] == "waiting"
    assistant({"type": "referee", "action": "undo", "shot_no": 1, "state": {"last_shot_no": None}})
    assert sent[-1] == CLEAR and assistant.check is None
    # an override of the last shot that gives a penalty: its spot is checked
    assistant({"type": "referee", "action": "override", "shot_no": 2, "ruling": penalty_ruling(),
               "state": {"last_shot_no": 2}})
    assert [t.piece for t in assistant.check.targets] == ["A3"]
    # of an earlier shot: its spots are long past
    assistant({"type": "referee", "action": "override", "shot_no": 1, "ruling": penalty_ruling(),
               "state": {"last_shot_no": 2}})
    assert assistant.check is None
    assistant({"type": "call", "ruling": {"actions": []}})  # a shot with nothing to put down: nothing shown
    assert assistant.check is None and assistant.draw(Frame(1.0)) is not None


def test_returns_show_the_board_at_rest_before_the_shot_faintly_under_the_live_picture():
    import numpy as np
    from judge.placement_view import PlacementView
    from sim.render_settings import make_camera
    from sim.replay_inputs import exact_calibration
    view = PlacementView(exact_calibration(CVRNKANA, make_camera(CVRNKANA, 640, 360)))
    assistant, vision, sent, notes = assistant_on(CVRNKANA, view)
    assistant.on_frame(Frame(0.0, np.full((360, 640, 3), 200, np.uint8)))  # the board at rest before the shot
    vision.in_shot = True
    assistant.on_frame(Frame(0.5, np.full((360, 640, 3), 100, np.uint8)))  # during the shot: not kept
    vision.in_shot = False
    assistant({"type": "call", "ruling": restore_ruling()})
    frame = Frame(1.0)
    assistant.on_frame(frame)
    out = assistant.draw(frame)
    assert out is not frame.image and frame.image.max() == 0  # drawn on a copy
    assert tuple(out[300, 600]) == (60, 60, 60)  # 30 % of the picture before the shot, far from any mark
    # a penalty pawn (no return): the live picture alone
    assistant({"type": "call", "ruling": {"actions": [{"kind": "place_penalty", "piece": "A2", "at": [0.0, 150.0]}]}})
    assistant.on_frame(frame)
    assert tuple(assistant.draw(frame)[300, 600]) == (0, 0, 0)


def test_the_live_loop_checks_the_penalty_pawn_after_the_call_and_draws_it_on_the_published_video(tmp_path):
    """run_live with a scripted vision: shot 3 misses (A's penalty pawn); the tracker then has the pawn 1 mm
    off its spot from frame 15; the assistant, a match listener, reports it placed and the hub's video is the
    assistant's picture while the spots are shown."""
    import numpy as np

    from hardware import Frame as LiveFrame
    from judge.journal import Journal
    from judge.live import run_live
    from judge.match import Match
    from judge.placement_live import PlacementAssistant
    from sim.scripted_vision import ScriptedShot
    from tests.novuss_shots import make_records, novuss_engine

    raws = [parse_record(r) for r in make_records(3)]

    class Vision:
        in_shot, timings = False, {}

        def __init__(self):
            self.index, self.spot = -1, None

        def start(self, hints, frame, t_s):
            pass

        def tell(self, hints):
            self.spot = self.spot or dict(hints.placements)

        def feed(self, frame):
            self.index = frame.index
            return ScriptedShot(raws[frame.index // 4 - 1]) if frame.index in (4, 8, 12) else None

        def positions(self):
            if self.spot and self.index >= 15:
                return {p: (x + 1.0, y) for p, (x, y) in self.spot.items()}
            return {}

        def finish(self, t_s=None):
            return None

        def prepare(self, image):
            return None  # nothing to work out ahead of feed

    class Source:
        live, fps, name = False, 30.0, "list"

        def __init__(self):
            self.frames = [LiveFrame(np.zeros((4, 4, 3), np.uint8), i, i / 30.0, "list") for i in range(40)]

        def read(self):
            return self.frames.pop(0) if self.frames else None

    class Hub:
        def __init__(self):
            self.images, self.messages = [], []

        def publish_frame(self, image, model=None):
            self.images.append(image)

        def __call__(self, message):
            self.messages.append(message)

    class View:
        def draw(self, image, status, before=None):
            return ("drawn", status.text)

    journal = Journal.open(tmp_path / "m.sqlite", create=True, match={"game": "novuss"})
    vision, hub = Vision(), Hub()
    assistant = PlacementAssistant(NOVUSS, vision, hub, View())
    match = Match(novuss_engine(), journal, listeners=[assistant])
    result = run_live(Source(), vision, match, hub=hub, overlay_fps=30.0, placement=assistant)
    journal.close()
    assert result.shots == 3 and vision.spot == {"A1": (-80.0, 484.0)}  # where the engine put it
    placements = [m for m in hub.messages if m.get("type") == "placement"]
    assert placements[0]["pieces"][0]["state"] == "waiting" and placements[0]["pieces"][0]["at_mm"] == [-80.0, 484.0]
    assert placements[-1]["done"] and placements[-1]["text"] == "All pieces placed: play on"
    # frames 0-11 as the camera gave them; from the call on (frame 12) the assistant's picture, to "play on" and after
    assert all(isinstance(i, np.ndarray) for i in hub.images[:12])
    assert hub.images[12] == ("drawn", "Place 1 of 1: A1") and hub.images[-1] == ("drawn", "All pieces placed: play on")
