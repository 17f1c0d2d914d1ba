"""A piece at rest keeps its class while its outline is there (``vision.hold.RestHold``), a moving one along
its path while its colour drifts (``MotionHold``), and colour classes
are told apart in units of each class's own tolerance, never from the empty board's colour
(``ColourModel.classify``)."""
from __future__ import annotations

import numpy as np

from vision.colour_model import ColourModel, distance
from vision.hold import MotionHold, RestHold

A, B = ("marble", "A"), ("marble", "B")


def _hold():
    return RestHold(lambda kind: 8.0)  # near: within 0.25 x 8 = 2 mm


def test_an_unclassified_fit_where_a_piece_lay_takes_its_class_and_only_there():
    hold = _hold()
    hold.update([("marble", "A", (100.0, 50.0), True), ("marble", "B", (-40.0, 0.0), True)], 1.00)
    classes = [None, None, A, None]
    given = hold.claim([(101.5, 50.0), (-40.0, 3.0), (100.0, 50.0), None], classes, ["marble"] * 4)
    assert given == [0] and classes == [A, None, A, None]  # 3 mm off B's place is another place
    assert hold.claim([(100.0, 50.0)], cls := [None], ["pawn"]) == [] and cls == [None]  # not a pawn's place


def test_a_place_needs_a_sharp_fit_to_start_is_kept_by_a_fainter_one_and_is_forgotten_after_keep_s():
    hold = _hold()
    hold.update([("marble", "A", (0.0, 0.0), False)], 0.0)  # a faint fit (the board's texture) makes no place
    assert hold.places() == []
    hold.update([("marble", "A", (0.0, 0.0), True)], 0.1)
    assert hold.places() == [((0.0, 0.0), "marble")]
    hold.update([("marble", "A", (0.5, 0.0), False)], 0.2)  # a fainter fit of the same class keeps it
    assert hold.places() == [((0.5, 0.0), "marble")]
    hold.update([], 1.2)
    assert hold.places() == [((0.5, 0.0), "marble")]  # unseen for 1.0 s: still kept
    hold.update([], 1.21)
    assert hold.places() == []


def test_a_piece_of_another_class_found_on_a_place_replaces_it():
    hold = _hold()
    hold.update([("marble", "A", (0.0, 0.0), True)], 0.0)
    hold.update([("marble", "B", (1.0, 0.0), False)], 0.1)  # a faint B there: A's place is gone, no B place made
    assert hold.places() == []
    hold.update([("marble", "B", (1.0, 0.0), True)], 0.2)
    classes = [None]
    hold.claim([(0.0, 0.0)], classes, ["marble"])
    assert classes == [B]


def _model(b_proto):
    m = ColourModel()
    m.prototypes = {A: np.array([0.33, 0.33, 0.34, 0.3]), B: np.array(b_proto, float)}
    m.tolerance = {A: 0.05, B: 0.20}
    m.colour_source = {c: "appearance" for c in m.prototypes}
    return m


def test_clearly_nearer_is_measured_in_each_classs_tolerance():
    """0.04 from A (0.8 of A's narrow tolerance), 0.06 from B (0.3 of B's wide one): by raw distance neither is
    clearly nearer; in each class's own units it is B's."""
    m = _model([0.33, 0.33, 0.34, 0.3 + 0.1 / 0.15])
    c = np.array([[0.33, 0.33, 0.34, 0.3 + 0.04 / 0.15], [0.33, 0.33, 0.34, 0.3]])
    assert [round(float(distance(c[0], p)), 3) for p in m.prototypes.values()] == [0.04, 0.06]
    assert m.classify(c) == [B, A]


def test_a_colour_nearer_the_empty_boards_than_its_classs_is_no_piece():
    m = _model([0.2, 0.3, 0.5, -0.4])
    board = np.array([0.33, 0.33, 0.34, 0.0])
    c = np.array([[0.33, 0.33, 0.34, 0.3 - 0.04 / 0.15], [0.33, 0.33, 0.34, 0.3]])
    assert m.classify(c) == [A, A]
    confident: list = []
    assert m.classify(c, confident, board=board) == [None, A]
    assert confident == [False, True]


BAT, PA, PB = ("bat", None), ("pawn", "A"), ("pawn", "B")


def _players_and_bat():
    m = ColourModel(colour_tolerance=0.09)
    m.prototypes = {BAT: np.array([0.255, 0.598, 0.116, -1.301]), PA: np.array([0.3, 0.35, 0.35, 0.3]),
                    PB: np.array([0.2, 0.25, 0.55, -1.2])}
    m.tolerance = {BAT: 0.09, PA: 0.1, PB: 0.1}
    return m


def test_a_moving_piece_whose_colour_drifted_keeps_its_class_where_it_was_heading():
    """The struck bat of the independent renderer: its colour 0.104 from its prototype (tolerance 0.09)."""
    model, motion = _players_and_bat(), MotionHold(lambda kind: 18.0)  # reach: 0.6 x 18 mm + a third of the step
    motion.update([(BAT, (0.0, -40.0)), (PA, (100.0, 100.0))], 1.0)
    motion.update([(BAT, (0.0, -10.0)), (PA, (100.0, 100.0))], 1.0 + 1 / 60)  # 30 mm a frame, north
    drifted = np.array([0.235, 0.587, 0.164, -1.466])
    assert model.classify(drifted[None]) == [None]  # outside the bat's tolerance: the colour alone says nothing
    t = 1.0 + 2 / 60
    classes = [None, None, None]
    given = motion.claim([(1.0, 21.0), (0.0, -10.0), (0.0, 60.0)], classes, [drifted] * 3, ["pawn"] * 3,
                         model.distances, t)
    # where it was heading (20 mm on): the bat; where it was (it has left) or far beyond: nothing
    assert given == [0] and classes == [BAT, None, None]


def test_a_drifted_colour_nearer_another_class_or_too_far_off_is_not_claimed():
    model, motion = _players_and_bat(), MotionHold(lambda kind: 18.0)
    motion.update([(PA, (0.0, 0.0))], 0.0)
    motion.update([(PA, (10.0, 0.0))], 0.02)
    nearer_b = np.array([0.21, 0.27, 0.52, -1.0])  # a pawn heading there, but its colour is B's: no swap
    far_off = np.array([0.3, 0.35, 0.35, 0.3]) + np.array([0.23, -0.23, 0.0, 0.0])  # 4.6 tolerances from A's
    classes = [None, None]
    assert motion.claim([(20.0, 0.0), (20.0, 0.0)], classes, [nearer_b, far_off], ["pawn"] * 2, model.distances,
                        0.04) == [] and classes == [None, None]
    near_a = np.array([0.3, 0.35, 0.35, 0.3]) + np.array([0.08, -0.08, 0.0, 0.0])  # 1.6 tolerances from A's
    assert motion.claim([(20.0, 0.0)], cls := [None], [near_a], ["pawn"], model.distances, 0.04) == [0] and cls == [PA]


def test_a_piece_missed_on_a_frame_is_still_heading_there_and_is_forgotten_after_keep_s():
    model, motion = _players_and_bat(), MotionHold(lambda kind: 18.0, keep_s=0.05)
    motion.update([(BAT, (0.0, -60.0))], 0.0)
    motion.update([(BAT, (0.0, -30.0))], 1 / 60)
    motion.update([], 2 / 60)  # the bat not found on a frame: it goes on at its speed
    drifted = np.array([0.235, 0.587, 0.164, -1.466])
    assert motion.claim([(0.0, 30.0)], cls := [None], [drifted], ["pawn"], model.distances, 3 / 60) == [0]
    assert cls == [BAT]
    motion.update([], 4 / 60)
    motion.update([], 5 / 60)  # not found for over keep_s: named by its colour alone again
    assert motion.claim([(0.0, 90.0)], cls := [None], [drifted], ["pawn"], model.distances, 6 / 60) == [] and cls == [None]


def test_a_class_with_a_wide_tolerance_does_not_outvote_the_piece_heading_there():
    """On the independent renderer pawn A's colours spread widely over the board (tolerance 0.255): the struck
    bat's drifted colour is 2.8 of the bat's tolerances away and 2.6 of pawn A's, not clearly nearer A."""
    model, motion = _players_and_bat(), MotionHold(lambda kind: 18.0)
    model.tolerance[PA] = 0.255
    motion.update([(BAT, (0.0, -212.0))], 2.070)
    motion.update([(BAT, (0.0, -181.8))], 2.087)
    colour = np.array([0.225, 0.531, 0.211, -1.678])
    d = model.distances(colour)
    assert 2.5 < d[BAT] < 3.0 and 2.5 < d[PA] < d[BAT]
    assert motion.claim([(0.0, -151.0)], cls := [None], [colour], ["pawn"], model.distances, 2.103) == [0]
    assert cls == [BAT]



def test_a_bat_struck_from_rest_is_found_where_it_could_have_gone_until_its_velocity_is_known():
    """The independent renderer's bat struck at ~2 m/s, filmed at 30 frames/s: missed on the frame it set off,
    then 98 mm from its rest with its colour 1.2 tolerances off (unseen for 12 frames to its first contact)."""
    model = _players_and_bat()
    motion = MotionHold(lambda kind: 18.0, launched=("bat",), launch_keep_s=0.2)
    dt = 1 / 30
    for k in range(3):
        motion.update([(BAT, (0.0, -445.0)), (PA, (100.0, 100.0))], k * dt)
    motion.update([(PA, (100.0, 100.0))], 3 * dt)  # struck: not found (blur, the cue)
    drifted = np.array([0.235, 0.587, 0.164, -1.466])
    assert model.classify(drifted[None]) == [None] and 1.0 < model.distances(drifted)[BAT] < 4.0
    t = 4 * dt
    # a fit of the bat's colour 98 mm on, another beyond where 9 m/s carries it in 67 ms: the first only
    classes = [None, None]
    assert motion.claim([(0.0, -347.0), (0.0, 250.0)], classes, [drifted] * 2, ["pawn"] * 2, model.distances, t) == [0]
    assert classes == [BAT, None]
    # one bat: of two such fits only the nearer in colour, and none where the colour found it elsewhere
    nearer = drifted + np.array([0.0, 0.0, 0.0, 0.05])
    classes = [None, None]
    assert motion.claim([(0.0, -347.0), (0.0, -300.0)], classes, [drifted, nearer], ["pawn"] * 2, model.distances, t) == [1]
    assert classes == [None, BAT]
    classes = [None, BAT]
    assert motion.claim([(0.0, -347.0), (5.0, -440.0)], classes, [drifted, drifted], ["pawn"] * 2, model.distances, t) == []
    motion.update([(BAT, (0.0, -347.0)), (PA, (100.0, 100.0))], t)
    # its speed from the rest is a lower bound (it set off after it was last seen): still looked for widely
    assert motion.claim([(0.0, -282.0)], cls := [None], [drifted], ["pawn"], model.distances, 5 * dt) == [0] and cls == [BAT]
    motion.update([(BAT, (0.0, -282.0))], 5 * dt)
    # two sightings in flight: heading on at 1950 mm/s, and only there
    assert motion.claim([(0.0, -100.0)], cls := [None], [drifted], ["pawn"], model.distances, 6 * dt) == [] and cls == [None]
    assert motion.claim([(0.0, -218.0)], cls := [None], [drifted], ["pawn"], model.distances, 6 * dt) == [0] and cls == [BAT]


def test_a_pawn_or_a_bat_gone_for_longer_than_launch_keep_s_is_not_looked_for_far_away():
    model = _players_and_bat()
    motion = MotionHold(lambda kind: 18.0, launched=("bat",), launch_keep_s=0.2)
    pale_a = np.array([0.3, 0.35, 0.35, 0.3]) + np.array([0.08, -0.08, 0.0, 0.0])  # 1.6 tolerances from A's
    drifted = np.array([0.235, 0.587, 0.164, -1.466])
    motion.update([(BAT, (0.0, -445.0)), (PA, (100.0, 100.0))], 0.0)
    motion.update([(BAT, (0.0, -445.0)), (PA, (100.0, 100.0))], 0.02)
    motion.update([], 0.04)
    # a pawn is not launched by a cue: gone from its rest, it is not looked for 80 mm away
    assert motion.claim([(180.0, 100.0)], cls := [None], [pale_a], ["pawn"], model.distances, 0.06) == [] and cls == [None]
    motion.update([], 0.2)
    motion.update([], 0.23)  # the bat unseen for over 0.2 s: named by its colour alone again
    assert motion.claim([(0.0, -300.0)], cls := [None], [drifted], ["pawn"], model.distances, 0.25) == [] and cls == [None]
    # nor when no frame came between to forget it: a bat put down 2 s ago is not looked for everywhere
    later = MotionHold(lambda kind: 18.0, launched=("bat",), launch_keep_s=0.2)
    later.update([(BAT, (0.0, -445.0))], 0.0)
    assert later.claim([(60.0, -150.0)], cls := [None], [drifted], ["pawn"], model.distances, 2.0) == [] and cls == [None]
