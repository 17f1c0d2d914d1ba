"""Mutated shot records straight into the engines, 2,000 per game on every run (#18 item 4): each is
refused with a typed error (``RecordError``, ``GameOver`` among them) or judged, and a judged one leaves
the engine's invariants whole: pieces conserved, no negative debt or count, one player to move or the
game over."""
from __future__ import annotations

import functools
import random

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from bench.fuzz_inputs import mutate, simulated_games
from calibration import default_profile
from rules import RecordError, engine_for, load_records, parse_record
from rules.record import owner
from tests.test_rules_cvrnkana_props import check_state

SHOTS = 12


@functools.cache
def _stretch(game: str):
    """An engine, a simulated stretch of valid records and the state before each."""
    engine = engine_for(game, default_profile(game).geometry)
    records = simulated_games(SHOTS, (0,))[game][0]
    states = [engine.initial()]
    for raw in records[:-1]:
        states.append(engine.apply(states[-1], parse_record(raw))[0])
    return engine, records, states


def _novuss_whole(state, ruling) -> None:
    for who in "AB":
        potted = sum(1 for k in state.pocketed if owner(k) == who)
        assert len(state.on_table(who)) + potted == 8, who
        assert state.debt_of(who) >= 0 and ruling.score[who]["pocketed"] >= 0
    assert (ruling.next_player is None) == (state.outcome is not None)
    assert ruling.next_player in (None, "A", "B")


@pytest.mark.parametrize("game", ["novuss", "cvrnkana"])
def test_two_thousand_mutated_records_are_refused_in_type_or_judged_whole(game):
    engine, records, states = _stretch(game)
    tally = {"refused": 0, "judged": 0}

    @settings(max_examples=2000, deadline=None, database=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow])
    @given(st.integers(0, len(records) - 1), st.integers(0, 2 ** 32))
    def one(i, seed):
        _, text = mutate(records[i], random.Random(seed))
        state = states[i]
        try:
            for shot in load_records(text, "fuzz", game=game):
                state, ruling = engine.apply(state, shot)
                (_novuss_whole if game == "novuss" else check_state)(state, ruling)
        except RecordError:
            tally["refused"] += 1
            return
        tally["judged"] += 1

    one()
    assert tally["refused"] + tally["judged"] == 2000
    assert tally["refused"] > 1000 and tally["judged"] > 50  # the mutations break most records, not all
