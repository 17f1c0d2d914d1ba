"""One meeting of two pieces read several ways is one contact whose timing shows the disagreement."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from novuss_shots import novuss_engine
from rules import parse_record
from rules.record import Event
from vision.shot import _one_per_meeting

FPS = 30.0
MOTIONS = {p: SimpleNamespace(t=np.arange(60) / FPS, frame_dt=lambda: 1 / FPS) for p in ("bat", "A1", "B1")}
# the harsher simulator's *everything* at 30 fps: the bat's fits against A1 gave three contacts within 18 ms
READINGS = [Event(2.3272958, "contact", a="bat", b="A1", t_err=0.0006107),
            Event(2.3340947, "contact", a="bat", b="B1", t_err=0.0007333),
            Event(2.3355291, "contact", a="A1", b="bat", t_err=0.0083333, confidence=0.5),
            Event(2.3449375, "contact", a="bat", b="A1", t_err=0.0011575, confidence=0.9)]


def test_contacts_of_one_pair_within_a_frame_interval_are_one_contact_spanning_them():
    got = sorted(_one_per_meeting(list(READINGS), MOTIONS), key=lambda e: e.t)
    assert [(e.pieces(), e.t) for e in got][0] == (("bat", "B1"), 2.3340947)
    merged = got[1]
    lo, hi = 2.3272958 - 0.0006107, 2.3449375 + 0.0011575
    assert set(merged.pieces()) == {"bat", "A1"}
    assert merged.t == pytest.approx((lo + hi) / 2) and merged.t_err == pytest.approx((hi - lo) / 2)
    assert merged.confidence == 0.5 and len(got) == 2


def test_contacts_of_one_pair_more_than_a_frame_interval_apart_stay_two():
    far = [READINGS[0], Event(2.3272958 + 1.5 / FPS, "contact", a="bat", b="A1", t_err=0.001)]
    assert sorted(e.t for e in _one_per_meeting(far, MOTIONS)) == [e.t for e in far]


def _stroke(events):
    raw = {"game": "novuss", "t0": 2.0, "t1": 3.5, "before": {"bat": [0.0, -380.0]}, "after": {"bat": [0.0, -300.0]},
           "events": [e.to_dict() for e in sorted(events, key=lambda e: e.t)]}
    engine = novuss_engine()
    return engine.apply(engine.initial("A"), parse_record(raw))[1]


def test_a_near_tie_against_a_contact_read_three_ways_goes_to_the_referee():
    """Read as the first reading says, the bat met its own pawn 7 ms before the opponent's (confident: 'own
    first'); the three readings span 18 ms, which the 0.5 ms gap of the truth lies well inside."""
    codes = [c.code for c in _stroke(READINGS).calls]
    assert "review_first_contact" not in codes  # the record as vision made it before
    codes = [c.code for c in _stroke(_one_per_meeting(list(READINGS), MOTIONS)).calls]
    assert "review_first_contact" in codes
