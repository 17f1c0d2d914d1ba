"""Property tests for the Cvrnkaná engine over random legal shot sequences (hypothesis)."""
from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calibration import default_profile
from rules.base import GameOver
from rules.cvrnkana import Cvrnkana
from rules.record import parse_record

ENGINE = Cvrnkana(default_profile("cvrnkana").geometry)
TOL = ENGINE.geometry["moved_tolerance_mm"]
COORD = st.integers(-150, 150).map(lambda v: v * 10.0)
KINDS = ["flick"] * 10 + ["hit"] * 4 + ["foul", "touch", "external", "lost", "relocate", "pickup"]


def _record(events, before=None, after=None):
    return parse_record({"game": "cvrnkana", "t0": 0.0, "t1": 5.0, "before": before or {}, "after": after or {},
                         "events": [{"t": 0.1 * (i + 1), **e} for i, e in enumerate(events)]}, "prop", game="cvrnkana")


def _new_spot(data, old):
    spot = (data.draw(COORD), data.draw(COORD))
    if old is not None and math.dist(spot, old) <= TOL:
        spot = (spot[0] + 50.0, spot[1])
    return list(spot)


def draw_shot(data, state):
    """One legal record for the player to move: a flick (maybe hitting, maybe a foul) or a side record."""
    p = state.to_move
    pos = state.positions()
    own_behind = [m for m in state.behind if m[0] == p]
    own_field = [m for m, xy in pos.items() if m[0] == p and xy is not None]
    opp_field = [m for m, xy in pos.items() if m[0] != p and xy is not None]
    kind = data.draw(st.sampled_from(KINDS))
    if kind in ("external", "lost", "relocate", "touch") and not own_field:
        kind = "flick"
    if kind == "pickup" and data.draw(st.integers(0, 9)):
        kind = "flick"  # concessions end games early: keep them rare
    if kind == "touch":
        m = data.draw(st.sampled_from(own_field))
        return _record([{"kind": "touch", "piece": m}], {m: list(pos[m])}, {m: list(pos[m])})
    if kind == "external":
        m = data.draw(st.sampled_from(own_field + opp_field))
        return _record([{"kind": "external", "piece": m}], {m: list(pos[m])}, {m: _new_spot(data, pos[m])})
    if kind == "lost":
        return _record([{"kind": "lost", "piece": data.draw(st.sampled_from(own_field))}])
    if kind == "relocate":
        m = data.draw(st.sampled_from(own_field))
        return _record([{"kind": "relocate", "piece": m, "to": [0.0, -data.draw(st.sampled_from([4000.0, 6000.0]))]}])
    if kind == "pickup":
        m = data.draw(st.sampled_from(sorted(set(state.behind) | set(pos))))
        return _record([{"kind": "pickup", "piece": m}])
    m = own_behind[0] if own_behind else data.draw(st.sampled_from(own_field)) if own_field else None
    if m is None:  # only own marbles with unknown positions left: touch one where it lies
        m = next(x for x in pos if x[0] == p)
    events, before, after = [{"kind": "touch", "piece": m}], {}, {}
    if pos.get(m) is not None:
        before[m] = list(pos[m])
    if data.draw(st.booleans()):
        events.append({"kind": "pit", "piece": m})
    else:
        after[m] = _new_spot(data, pos.get(m))
    if kind in ("hit", "foul") and opp_field:
        o = data.draw(st.sampled_from(opp_field))
        before[o] = list(pos[o])
        events.insert(1, {"kind": "touch", "piece": o} if kind == "foul" else {"kind": "contact", "a": m, "b": o})
        if data.draw(st.booleans()):
            events.append({"kind": "pit", "piece": o})
        else:
            after[o] = _new_spot(data, pos[o])
    return _record(events, before, after)


def check_state(state, ruling):
    seen = [m for m, _ in state.field] + list(state.pit) + list(state.behind)
    assert len(seen) == len(set(seen)), "a marble in two places"
    for p in "AB":
        s = ruling.score[p]
        assert s["field"] + s["pit"] + s["behind"] == s["marbles"] == state.count(p) == sum(1 for m in seen if m[0] == p)
        assert s["flicks"] == state.flicks_of(p)
    starter, second = state.starter, "B" if state.starter == "A" else "A"
    assert 0 <= state.flicks_of(starter) - state.flicks_of(second) <= 1, "flick counts differ by more than one"
    assert (ruling.next_player is None) == (state.outcome is not None) == (ruling.game_over is not None)
    if state.outcome is not None and state.outcome.reason == "game_won":
        w = state.outcome.winner
        loser = "B" if w == "A" else "A"
        assert state.complete(w) and not state.complete(loser)
        if w == starter:  # clause 3: the opponent had the final flick
            assert state.flicks_of(starter) == state.flicks_of(second)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                   HealthCheck.large_base_example])
@given(data=st.data(), toss=st.sampled_from("AB"), game_number=st.integers(1, 4))
def test_random_legal_games_conserve_marbles_keep_flicks_equal_and_end_once(data, toss, game_number):
    state = ENGINE.initial(toss_winner=toss, game_number=game_number)
    records, rulings = [], []
    for _ in range(300):
        shot = draw_shot(data, state)
        state, ruling = ENGINE.apply(state, shot)
        records.append(shot)
        rulings.append(ruling)
        check_state(state, ruling)
        if state.outcome is not None:
            break
    ends = [r for r in rulings if r.game_over is not None]
    assert len(ends) == (1 if state.outcome else 0)
    if state.outcome:
        assert rulings[-1] is ends[0]
        with pytest.raises(GameOver, match=r"^shot \d+: the game is already over"):
            ENGINE.apply(state, _record([]))
    again_state, again = ENGINE.replay(records, ENGINE.initial(toss_winner=toss, game_number=game_number))
    assert again_state == state
    assert [r.to_dict() for r in again] == [r.to_dict() for r in rulings]
    assert ENGINE.state_from_dict(json.loads(json.dumps(state.to_dict()))) == state


def test_random_games_mostly_finish():
    """Guard for the generator above: it must actually reach the end of games, not only openings."""
    finished = []

    @settings(max_examples=15, deadline=None, database=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                   HealthCheck.large_base_example])
    @given(data=st.data())
    def play(data):
        state = ENGINE.initial()
        for _ in range(300):
            state, _ = ENGINE.apply(state, draw_shot(data, state))
            if state.outcome:
                break
        finished.append(state.outcome.reason if state.outcome else None)
    play()
    assert sum(r is not None for r in finished) >= len(finished) * 0.8, finished
