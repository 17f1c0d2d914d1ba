"""A piece at rest keeps its class while its outline is there (``vision.hold.RestHold``), and colour classes
are told apart in units of each class's own tolerance, never from the empty board's colour
(``ColourModel.classify``)."""
from __future__ import annotations

import numpy as np

from vision.colour_model import ColourModel, distance
from vision.hold import RestHold

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
