"""A player's marbles of a colour the profile does not know are found by their shape while that player is to
move (``vision.marble_search.MarbleSearch``), and the colour measured on one put in play replaces the
profile's nominal one (``ColourModel.put_down``)."""
from __future__ import annotations

import numpy as np

from calibration import default_profile
from vision.colour_model import ColourModel
from vision.marble_search import MarbleSearch
from vision.types import Detection

CVR = default_profile("cvrnkana")
NOMINAL = np.array([0.47, 0.36, 0.17, -0.2])  # a pale marble, as a profile gives it
BLUE = np.array([0.30, 0.45, 0.24, 0.15])  # what the camera measures on the club's blue marble


def test_only_the_mover_is_looked_for_and_only_while_their_colour_is_the_profiles():
    search = MarbleSearch(CVR.spec)
    assert search.wanted({}) is None  # nobody is known to move yet
    search.turn("B")
    assert search.wanted({("marble", "A"): "layout", ("marble", "B"): "appearance"}) == ("marble", "B")
    assert search.wanted({("marble", "B"): "put down"}) is None
    assert search.wanted({("marble", "B"): "layout"}) is None
    assert search.wanted({("marble", "B"): "online"}) is None  # recognised by its nominal colour already


def test_a_game_with_a_striker_has_no_marble_search():
    search = MarbleSearch(default_profile("novuss").spec)
    search.turn("A")
    assert search.wanted({}) is None


def test_a_new_turn_forgets_a_marble_half_measured():
    search = MarbleSearch(CVR.spec, still_frames=3)
    search.turn("A")
    at = (20.0, -300.0)
    search.seen(at, BLUE, 0)
    search.seen(at, BLUE, 1)
    search.turn("B")
    assert search.settled([Detection("marble", at, 8.0, "A")], 2) is None
    search.seen(at, BLUE, 3)
    assert search.settled([Detection("marble", at, 8.0, "B")], 4) is None  # two frames of three
    assert np.allclose(search.settled([Detection("marble", at, 8.0, "B")], 5), BLUE)


def test_a_colour_put_down_replaces_the_nominal_family():
    model = ColourModel()
    cls = ("marble", "B")
    model.prototypes[cls], model.tolerance[cls], model.colour_source[cls] = NOMINAL.copy(), 0.25, "appearance"
    model._anchor(cls)  # noqa: SLF001 - as from_appearance sets it
    assert model.classify(NOMINAL[None]) == [cls] and model.classify(BLUE[None]) == [None]
    model.put_down(cls, BLUE)
    assert model.classify(BLUE[None]) == [cls]
    assert model.classify((BLUE + [0.02, -0.02, 0.0, 0.1])[None]) == [cls]  # one of the family, a codec's shift
    assert model.classify(NOMINAL[None]) == [None]  # the profile's colour is no longer B's
    assert model.colour_source[cls] == "put down"
