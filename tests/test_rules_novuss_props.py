"""Property tests over random legal Novuss shot sequences."""
import pytest
from hypothesis import HealthCheck, event, given, settings, strategies as st

from rules import GameOver, parse_record
from rules.record import owner
from tests.novuss_records import engine

coord = st.floats(min_value=-440.0, max_value=440.0, allow_nan=False).map(lambda v: round(v, 1))


@st.composite
def shot_for(draw, state):
    player = state.to_move
    pos = state.pos
    on_table = sorted(pos)
    mine = [k for k in on_table if owner(k) == player]
    theirs = [k for k in on_table if owner(k) != player]
    first = draw(st.sampled_from(["own", "opponent", "both", "none"]))
    t = 0.05
    events = []
    touched = []
    if first in ("own", "both") and mine:
        touched.append(draw(st.sampled_from(mine)))
    if first in ("opponent", "both") and theirs:
        touched.append(draw(st.sampled_from(theirs)))
    for k in touched:
        events.append({"t": t, "kind": "contact", "a": "bat", "b": k})
        t += draw(st.sampled_from([0.0, 0.0005, 0.002, 0.01]))
    gone = draw(st.lists(st.sampled_from(on_table), max_size=4, unique=True)) if on_table else []
    offs = set(draw(st.lists(st.sampled_from(gone), max_size=1, unique=True))) if gone else set()
    for k in gone:
        t += 0.05
        if k in offs:
            events.append({"t": t, "kind": "off", "piece": k, "side": draw(st.sampled_from("NSEW"))})
        else:
            events.append({"t": t, "kind": "pocket", "piece": k, "pocket": draw(st.sampled_from(["NE", "NW", "SE", "SW"]))})
    bat_fate = draw(st.sampled_from(["stays", "stays", "stays", "pocket", "off"]))
    after = {}
    for k in touched:
        if k not in gone:
            after[k] = [draw(coord), draw(coord)]
    if bat_fate == "stays":
        after["bat"] = [draw(coord), draw(coord)]
    else:
        t += 0.05
        events.append({"t": t, "kind": bat_fate, "piece": "bat", **({"pocket": "NE"} if bat_fate == "pocket" else {})})
    before = {"bat": [0.0, -440.0 if player == "A" else 440.0]}
    for k in set(touched) | set(gone):
        before[k] = list(pos[k])
    return parse_record({"game": "novuss", "t0": 0.0, "t1": t + 0.5, "before": before, "after": after, "events": events})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_random_sets_conserve_pawns_end_once_and_replay_identically(data):
    eng = engine()
    state = eng.initial()
    records, rulings = [], []
    for _ in range(40):
        rec = data.draw(shot_for(state))
        state, ruling = eng.apply(state, rec)
        records.append(rec)
        rulings.append(ruling)
        for who in "AB":
            on = len(state.on_table(who))
            potted = sum(1 for k in state.pocketed if owner(k) == who)
            assert on + potted == 8
            assert state.debt_of(who) >= 0
            if state.debt_of(who) > 0:
                assert potted == 0  # a debt is paid as soon as a pawn is available
        assert ruling.score["A"]["pocketed"] + ruling.score["A"]["on_table"] == 8
        if state.outcome is not None:
            break
    event(f"outcome: {state.outcome.reason if state.outcome else None}")
    ended = [r for r in rulings if r.game_over is not None]
    assert len(ended) == (1 if state.outcome else 0)
    if state.outcome:
        assert rulings[-1].game_over == state.outcome and rulings[-1].next_player is None
        with pytest.raises(GameOver):
            eng.apply(state, records[-1])
    again_state, again = eng.replay(records)
    assert again_state == state
    assert [r.to_dict("cs") for r in again] == [r.to_dict("cs") for r in rulings]
