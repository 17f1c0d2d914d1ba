"""Cvrnkaná rule engine: one or more tests per clause, each asserting the exact ruling."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import calibration
from calibration import default_profile
from calibration.profile import ProfileError, load_profile
from rules.base import GameOver
from rules.cvrnkana import Cvrnkana, game_result, match_points, match_tally
from rules.i18n import LANGS
from rules.record import RecordError, parse_record

GEO = default_profile("cvrnkana").geometry
ENGINE = Cvrnkana(GEO)
LINE_A = [-750.0, -3000.0]  # A's start line centre: -(gap/2 + length/2), -start_line_distance_mm
LINE_B = [750.0, -3000.0]


# -- record and state builders ----------------------------------------------------------------------
def touch(piece):
    return {"kind": "touch", "piece": piece}


def contact(a, b):
    return {"kind": "contact", "a": a, "b": b}


def pit(piece):
    return {"kind": "pit", "piece": piece}


def ev(kind, piece, **extra):
    return {"kind": kind, "piece": piece, **extra}


def rec(*events, before=None, after=None, player=None, referee=None):
    raw = {"game": "cvrnkana", "t0": 0.0, "t1": 10.0, "before": before or {}, "after": after or {},
           "events": [{"t": 0.1 * (i + 1), **e} for i, e in enumerate(events)]}
    if player:
        raw["player"] = player
    if referee:
        raw["referee"] = referee
    return parse_record(raw, "test", game="cvrnkana")


def midgame(field, pit_=(), to_move="A", flicks=(12, 12), marbles=(10, 10), toss_winner="A", game_number=1,
            final_flick=False, engine=ENGINE):
    """A state after the opening: every marble not on the field or in the pit is behind the line."""
    placed = set(field) | set(pit_)
    behind = [f"{p}{i}" for p, n in zip("AB", marbles) for i in range(1, n + 1) if f"{p}{i}" not in placed]
    return engine.state_from_dict({
        "game": "cvrnkana", "game_number": game_number, "toss_winner": toss_winner, "to_move": to_move,
        "marbles": {"A": marbles[0], "B": marbles[1]}, "field": field, "pit": list(pit_), "behind": behind,
        "flicks": {"A": flicks[0], "B": flicks[1]}, "shot": 7, "outcome": None, "final_flick": final_flick})


def pits(player, numbers):
    return [f"{player}{i}" for i in numbers]


def summary(ruling):
    d = ruling.to_dict()
    return {"codes": [(c["code"], c["clause"], c["player"]) for c in d["calls"]], "actions": d["actions"],
            "next": d["next_player"], "over": d["game_over"], "pocketed": d["pocketed"], "review": d["review"]}


# Field after the opening, all marbles of both players out; A to move in game 1 (A starts).
OPEN_FIELD = {**{f"A{i}": [-100.0 * i, 400.0] for i in range(1, 11)},
              **{f"B{i}": [100.0 * i, 400.0] for i in range(1, 11)}}


# -- clause 1: toss and starter -------------------------------------------------------------------
def test_toss_winner_starts_odd_games_other_player_even_games():
    for game_number, starter in ((1, "B"), (2, "A"), (3, "B"), (4, "A")):
        state = ENGINE.initial(toss_winner="B", game_number=game_number)
        assert (state.to_move, state.starter) == (starter, starter)


def test_first_ruling_of_a_game_calls_the_coin_toss():
    state = ENGINE.initial(toss_winner="B", game_number=2)
    state, first = ENGINE.apply(state, rec(touch("A1"), after={"A1": [20.0, -150.0]}))
    assert first.to_dict()["calls"][0] == {"code": "coin_toss", "clause": "cvrnkana.1", "player": "B",
                                           "text": "B won the toss and starts the odd games.",
                                           "evidence": {"game_number": 2, "starter": "A", "player": "B"}}
    _, second = ENGINE.apply(state, rec(touch("B1"), after={"B1": [30.0, -200.0]}))
    assert "coin_toss" not in second.codes()


# -- clause 2: opening from the start line, then the field ----------------------------------------
def test_opening_flick_from_behind_the_start_line():
    state, ruling = ENGINE.apply(ENGINE.initial(), rec(touch("A1"), after={"A1": [10.0, -200.0]}))
    assert summary(ruling) == {
        "codes": [("coin_toss", "cvrnkana.1", "A"), ("opening_flick", "cvrnkana.2", "A")], "actions": [],
        "next": "B", "over": None, "pocketed": {"A": [], "B": []}, "review": False}
    assert ruling.score["A"] == {"pit": 0, "field": 1, "behind": 9, "flicks": 1, "marbles": 10}
    assert state.positions() == {"A1": (10.0, -200.0)} and "A1" not in state.behind


def test_opening_flick_straight_into_the_pit():
    state, ruling = ENGINE.apply(ENGINE.initial(), rec(touch("A1"), pit("A1")))
    assert ruling.pocketed == {"A": ("A1",), "B": ()}
    assert state.pit == ("A1",) and ruling.score["A"]["pit"] == 1 and ruling.next_player == "B"


def test_opening_flick_that_rolls_out_of_the_cameras_view_is_on_the_field_at_an_unknown_place():
    # seen crossing the view and leaving it ('off'): a flick onto the field, not a dead touch at the line (7d)
    state, ruling = ENGINE.apply(ENGINE.initial(), rec(touch("A1"), ev("off", "A1", side="N")))
    assert [c.code for c in ruling.calls] == ["coin_toss", "opening_flick"] and ruling.next_player == "B"
    assert state.positions() == {"A1": None} and "A1" not in state.behind
    # without the 'off' event the same touch is a touch at the start line that flicked nothing
    _, plain = ENGINE.apply(ENGINE.initial(), rec(touch("A1")))
    assert [c.code for c in plain.calls] == ["coin_toss", "opening_touch_not_flick"]


def test_players_alternate_one_flick_at_a_time():
    state, _ = ENGINE.apply(ENGINE.initial(), rec(touch("A1"), after={"A1": [10.0, -200.0]}))
    assert state.to_move == "B"
    with pytest.raises(RecordError, match=r"^shot 2: player: it is B's turn, not A's"):
        ENGINE.apply(state, rec(touch("A2"), after={"A2": [0.0, -100.0]}, player="A"))
    with pytest.raises(RecordError, match=r"^shot 2: after\.A2: A2 is still behind the start line"):
        ENGINE.apply(state, rec(touch("B1"), after={"B1": [0.0, -100.0], "A2": [0.0, -90.0]}))


def test_field_flick_after_the_opening():
    state = midgame(OPEN_FIELD)
    state, ruling = ENGINE.apply(state, rec(touch("A1"), before={"A1": [-100.0, 400.0]}, after={"A1": [-40.0, 90.0]}))
    assert summary(ruling)["codes"] == [("field_flick", "cvrnkana.2", "A")]
    assert ruling.next_player == "B" and state.positions()["A1"] == (-40.0, 90.0)
    assert state.flicks == (13, 12)


def test_field_flick_while_own_marbles_wait_behind_the_line_is_prompted():
    field = {"A1": [-100.0, 400.0], "B1": [100.0, 400.0]}
    state = midgame(field, flicks=(1, 1))
    _, ruling = ENGINE.apply(state, rec(touch("A1"), before={"A1": [-100.0, 400.0]}, after={"A1": [-40.0, 90.0]}))
    assert summary(ruling)["codes"] == [("field_flick", "cvrnkana.2", "A"), ("flick_out_of_order", "cvrnkana.2", "A")]
    assert ruling.review is True and ruling.calls[1].evidence["behind"] == 9
    relaxed = Cvrnkana(GEO, flag_opening_order=False)
    _, ruling = relaxed.apply(state, rec(touch("A1"), before={"A1": [-100.0, 400.0]}, after={"A1": [-40.0, 90.0]}))
    assert ruling.codes() == ["field_flick"] and ruling.review is False


# -- clauses 3 and 4: equal flicks, the win -----------------------------------------------------------
def endgame(final_flick=False, to_move="A"):
    """A (starter) has A10 left, B has B9 and B10 left; both 10 flicks so far."""
    field = {"A10": [0.0, -50.0], "B9": [60.0, 0.0], "B10": [0.0, 70.0]}
    return midgame(field, pits("A", range(1, 10)) + pits("B", range(1, 9)), to_move=to_move,
                   flicks=(11, 10) if to_move == "B" else (10, 10), final_flick=final_flick)


def test_starter_pockets_last_marble_then_opponent_has_one_final_flick():
    state, ruling = ENGINE.apply(endgame(), rec(touch("A10"), pit("A10"), before={"A10": [0.0, -50.0]}))
    assert summary(ruling) == {
        "codes": [("field_flick", "cvrnkana.2", "A"), ("final_flick", "cvrnkana.3", "B")], "actions": [],
        "next": "B", "over": None, "pocketed": {"A": ["A10"], "B": []}, "review": False}
    assert ruling.to_dict()["calls"][1]["text"] == "A has all marbles in the pit: B has one final flick."
    assert state.final_flick is True and state.outcome is None
    # B's final flick pockets only one of two: A wins, flicks are equal.
    state, ruling = ENGINE.apply(state, rec(touch("B9"), pit("B9"), before={"B9": [60.0, 0.0]}))
    assert summary(ruling) == {
        "codes": [("field_flick", "cvrnkana.2", "B"), ("game_won", "cvrnkana.4", "A"), ("pit_count", "cvrnkana.7i", None)],
        "actions": [], "next": None, "over": {"result": "win", "winner": "A", "reason": "game_won"},
        "pocketed": {"A": [], "B": ["B9"]}, "review": False}
    assert state.flicks == (11, 11) and state.final_flick is False
    assert ruling.calls[2].evidence == {"A": 10, "B": 9}


def test_final_flick_that_pockets_all_remaining_marbles_is_a_draw_scored_zero():
    state = midgame({"B10": [0.0, 70.0]}, pits("A", range(1, 11)) + pits("B", range(1, 10)), to_move="B",
                    flicks=(11, 10), final_flick=True)
    state, ruling = ENGINE.apply(state, rec(touch("B10"), pit("B10"), before={"B10": [0.0, 70.0]}))
    assert summary(ruling)["codes"] == [("field_flick", "cvrnkana.2", "B"), ("draw_zero", "cvrnkana.7", None),
                                        ("pit_count", "cvrnkana.7i", None)]
    assert ruling.game_over.to_dict() == {"result": "draw", "winner": None, "reason": "draw_zero"}


def test_last_flick_pockets_both_players_last_marbles_is_draw_zero():
    field = {"A10": [0.0, -50.0], "B10": [0.0, -20.0]}
    state = midgame(field, pits("A", range(1, 10)) + pits("B", range(1, 10)))
    _, ruling = ENGINE.apply(state, rec(touch("A10"), contact("A10", "B10"), pit("B10"), pit("A10"),
                                        before=field))
    assert ruling.codes() == ["field_flick", "draw_zero", "pit_count"]
    assert ruling.game_over.result == "draw" and ruling.pocketed == {"A": ("A10",), "B": ("B10",)}


def test_second_player_completing_wins_at_once():
    state = midgame({"A10": [0.0, -50.0], "B10": [0.0, 70.0]}, pits("A", range(1, 10)) + pits("B", range(1, 10)),
                    to_move="B", flicks=(11, 10))
    _, ruling = ENGINE.apply(state, rec(touch("B10"), pit("B10"), before={"B10": [0.0, 70.0]}))
    assert ruling.codes() == ["field_flick", "game_won", "pit_count"]
    assert ruling.game_over.to_dict() == {"result": "win", "winner": "B", "reason": "game_won"}
    assert ruling.next_player is None


def test_starter_knocking_opponents_last_marble_in_gives_the_opponent_the_win():
    field = {"A9": [0.0, -200.0], "A10": [0.0, -50.0], "B10": [0.0, -20.0]}
    state = midgame(field, pits("A", range(1, 9)) + pits("B", range(1, 10)))
    _, ruling = ENGINE.apply(state, rec(touch("A10"), contact("A10", "B10"), pit("B10"), before=field,
                                        after={"A10": [0.0, -25.0]}))
    assert ruling.codes() == ["field_flick", "game_won", "pit_count"]
    assert ruling.game_over.winner == "B" and ruling.pocketed == {"A": (), "B": ("B10",)}


def test_even_game_the_other_player_starts_and_gets_the_final_flick_rule():
    field = {"A10": [0.0, -50.0], "B10": [0.0, 70.0]}
    state = midgame(field, pits("A", range(1, 10)) + pits("B", range(1, 10)), to_move="B", game_number=2)
    assert state.starter == "B"
    state, ruling = ENGINE.apply(state, rec(touch("B10"), pit("B10"), before={"B10": [0.0, 70.0]}))
    assert ruling.codes() == ["field_flick", "final_flick"] and ruling.next_player == "A"
    assert ruling.calls[1].player == "A" and ruling.calls[1].evidence["winner_to_be"] == "B"


def test_records_after_the_game_ended_raise_game_over():
    state = midgame({"B10": [0.0, 70.0]}, pits("A", range(1, 11)) + pits("B", range(1, 10)), to_move="B",
                    flicks=(11, 10), final_flick=True)
    state, _ = ENGINE.apply(state, rec(touch("B10"), before={"B10": [0.0, 70.0]}, after={"B10": [0.0, 30.0]}))
    assert state.outcome.winner == "A"
    with pytest.raises(GameOver, match=r"^shot 9: the game is already over \(A won, game_won\)"):
        ENGINE.apply(state, rec(touch("B10"), pit("B10")))


# -- clause 5: marbles --------------------------------------------------------------------------------
def test_marble_count_is_10_15_or_20():
    assert ENGINE.initial(marbles=15).score()["B"]["behind"] == 15
    assert ENGINE.initial(marbles=20).marbles == (20, 20)
    with pytest.raises(ValueError, match="must be one of \\(10, 15, 20\\) \\(clause 5\\), got 12"):
        ENGINE.initial(marbles=12)


def test_marble_size_outside_limits_is_refused():
    assert ENGINE.check_marble("A1", 10.0) is None and ENGINE.check_marble("A1", 16.5) is None
    call = ENGINE.check_marble("B2", 16.6)
    assert (call.code, call.clause, call.player) == ("marble_size_refused", "cvrnkana.5", "B")
    assert call.to_dict()["text"] == "Marble B2 measures 16.6 mm, outside 10.0-16.5 mm: not allowed."
    assert ENGINE.check_marble("A3", 9.9).code == "marble_size_refused"


@pytest.mark.parametrize("key, value, message", [
    ("pit_diameter_mm", 130.0, r"pit_diameter_mm must be 50-120 mm \(rules clause 6\)"),
    ("marbles_per_player", 12, r"marbles_per_player must be 10, 15 or 20 \(rules clause 5\)"),
])
def test_field_profile_outside_the_rules_is_refused(tmp_path, key, value, message):
    doc = json.loads((Path(calibration.__file__).parent / "profiles" / "cvrnkana-default.json").read_text())
    doc["geometry"][key] = value
    path = tmp_path / "club.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ProfileError, match=message):
        load_profile(path)


# -- clause 7a: opponent's marble moved by anything but the flicked marble ------------------------------
def test_opponent_marble_moved_by_hand_is_a_foul_and_everything_goes_back():
    before = {"A1": [-100.0, 400.0], "B1": [100.0, 400.0]}
    state = midgame(OPEN_FIELD)
    state, ruling = ENGINE.apply(state, rec(touch("A1"), touch("B1"), before=before,
                                            after={"A1": [-50.0, 100.0], "B1": [120.0, 380.0]}))
    assert summary(ruling) == {
        "codes": [("field_flick", "cvrnkana.2", "A"), ("opponent_marble_moved", "cvrnkana.7a", "A"),
                  ("marbles_returned", "cvrnkana.7a", "A")],
        "actions": [{"kind": "return", "piece": "A1", "player": "A", "at": [-100.0, 400.0], "reason": "opponent_marble_moved"},
                    {"kind": "return", "piece": "B1", "player": "B", "at": [100.0, 400.0], "reason": "opponent_marble_moved"}],
        "next": "B", "over": None, "pocketed": {"A": [], "B": []}, "review": False}
    assert ruling.calls[1].evidence == {"piece": ["B1"], "touched": ["B1"], "player": "A"}
    assert state.positions()["A1"] == (-100.0, 400.0) and state.positions()["B1"] == (100.0, 400.0)
    assert state.flicks == (13, 12)  # the flick still counts


def test_opponent_marble_moving_without_a_contact_chain_is_a_foul_even_into_the_pit():
    before = {"A1": [-100.0, 400.0], "A2": [-200.0, 400.0], "B2": [200.0, 400.0]}
    state = midgame(OPEN_FIELD)
    state, ruling = ENGINE.apply(state, rec(touch("A1"), pit("A1"), pit("B2"), before=before,
                                            after={"A2": [-200.0, 400.0]}))
    assert ruling.codes() == ["field_flick", "opponent_marble_moved", "marbles_returned"]
    assert [a.to_dict() for a in ruling.actions] == [
        {"kind": "return", "piece": "A1", "player": "A", "at": [-100.0, 400.0], "reason": "opponent_marble_moved"},
        {"kind": "return", "piece": "B2", "player": "B", "at": [200.0, 400.0], "reason": "opponent_marble_moved"}]
    assert state.pit == () and ruling.pocketed == {"A": (), "B": ()}
    assert ruling.score["A"]["pit"] == 0 and ruling.score["B"]["field"] == 10


def test_contact_chain_from_the_flicked_marble_is_legal():
    before = {"A1": [-100.0, 400.0], "A2": [-200.0, 400.0], "B2": [200.0, 400.0]}
    state = midgame(OPEN_FIELD)
    state, ruling = ENGINE.apply(state, rec(touch("A1"), contact("A1", "A2"), contact("B2", "A2"), pit("B2"),
                                            before=before, after={"A1": [-150.0, 380.0], "A2": [100.0, 200.0]}))
    assert summary(ruling) == {"codes": [("field_flick", "cvrnkana.2", "A")], "actions": [], "next": "B",
                               "over": None, "pocketed": {"A": [], "B": ["B2"]}, "review": False}
    assert state.pit == ("B2",) and state.positions()["A2"] == (100.0, 200.0)


def test_opponent_marble_jitter_within_tolerance_is_not_a_move():
    before = {"A1": [-100.0, 400.0], "B1": [100.0, 400.0]}
    shifted = 100.0 + GEO["moved_tolerance_mm"] - 0.5
    _, ruling = ENGINE.apply(midgame(OPEN_FIELD), rec(touch("A1"), before=before,
                                                      after={"A1": [0.0, 0.0], "B1": [shifted, 400.0]}))
    assert ruling.codes() == ["field_flick"]


def test_foul_moving_a_marble_whose_place_is_unknown_is_prompted():
    field = {**OPEN_FIELD, "B1": None}
    state, ruling = ENGINE.apply(midgame(field), rec(touch("A1"), touch("B1"), before={"A1": [-100.0, 400.0]},
                                                     after={"A1": [-100.0, 300.0], "B1": [0.0, 0.0]}))
    assert summary(ruling)["codes"][1:] == [("opponent_marble_moved", "cvrnkana.7a", "A"), ("marbles_returned", "cvrnkana.7a", "A")]
    assert [a.to_dict() for a in ruling.actions] == [
        {"kind": "return", "piece": "A1", "player": "A", "at": [-100.0, 400.0], "reason": "opponent_marble_moved"},
        {"kind": "return", "piece": "B1", "player": "B", "reason": "opponent_marble_moved"}]
    assert ruling.calls[2].review is True and ruling.review is True and state.positions()["B1"] is None


def test_foul_on_an_opening_flick_sends_the_marble_back_behind_the_line():
    state = midgame({"B1": [100.0, 400.0]}, flicks=(0, 1))
    state, ruling = ENGINE.apply(state, rec(touch("A1"), contact("A1", "A2"), touch("B1"), before={"B1": [100.0, 400.0]},
                                            after={"A1": [0.0, 0.0], "B1": [300.0, 500.0]}))
    assert ruling.codes() == ["opening_flick", "opponent_marble_moved", "marbles_returned"]
    assert [a.to_dict() for a in ruling.actions] == [
        {"kind": "to_start_line", "piece": "A1", "player": "A", "at": LINE_A, "reason": "opponent_marble_moved"},
        {"kind": "return", "piece": "B1", "player": "B", "at": [100.0, 400.0], "reason": "opponent_marble_moved"}]
    assert "A1" in state.behind and ruling.next_player == "B" and state.flicks == (1, 1)


# -- clause 7b: lost marble ---------------------------------------------------------------------------
def test_lost_marble_is_replaced_from_the_start_line_and_the_turn_stays():
    state = midgame(OPEN_FIELD, to_move="B", flicks=(13, 12))
    state, ruling = ENGINE.apply(state, rec(ev("lost", "B3")))
    assert summary(ruling) == {
        "codes": [("marble_replaced", "cvrnkana.7b", "B")],
        "actions": [{"kind": "replace", "piece": "B3", "player": "B", "at": LINE_B, "reason": "marble_replaced"}],
        "next": "B", "over": None, "pocketed": {"A": [], "B": []}, "review": False}
    assert state.behind == ("B3",) and "B3" not in state.positions() and state.flicks == (13, 12)
    # Late in the game a marble waiting at the line does not make field flicks out of order (clause 2 prompt).
    _, ruling = ENGINE.apply(state, rec(touch("B4"), before={"B4": [400.0, 400.0]}, after={"B4": [0.0, 40.0]}))
    assert ruling.codes() == ["field_flick"]
    state, ruling = ENGINE.apply(state, rec(touch("B3"), after={"B3": [40.0, -300.0]}))
    assert ruling.codes() == ["opening_flick"] and state.positions()["B3"] == (40.0, -300.0)


def test_lost_marble_that_is_also_seen_is_refused():
    with pytest.raises(RecordError, match=r"^shot 8: events\[0\]\.piece: lost marble B3 is also seen"):
        ENGINE.apply(midgame(OPEN_FIELD), rec(ev("lost", "B3"), after={"B3": [0.0, 10.0]}))


# -- clause 7c: extra marbles join --------------------------------------------------------------------
def test_extra_marble_flicked_from_the_start_line_joins_the_game():
    state = midgame({f"A{i}": [-100.0 * i, 400.0] for i in range(1, 11)}, flicks=(10, 9), to_move="A")
    state, ruling = ENGINE.apply(state, rec(touch("A11"), after={"A11": [5.0, -300.0]}))
    assert ruling.codes() == ["opening_flick", "extra_marble_joins"]
    assert ruling.calls[1].evidence == {"piece": "A11", "marbles": 11, "player": "A"}
    assert state.marbles == (11, 10) and ruling.score["A"] == {"pit": 0, "field": 11, "behind": 0, "flicks": 11, "marbles": 11}


def test_joined_extra_marble_must_also_reach_the_pit_to_win():
    field = {"A10": [0.0, -50.0], "A11": [0.0, -900.0], "B10": [0.0, 70.0]}
    state = midgame(field, pits("A", range(1, 10)) + pits("B", range(1, 10)), marbles=(11, 10))
    _, ruling = ENGINE.apply(state, rec(touch("A10"), pit("A10"), before={"A10": [0.0, -50.0]}))
    assert ruling.codes() == ["field_flick"] and ruling.game_over is None and ruling.next_player == "B"


# -- clause 7d: any touch is a flick, except at the start line ----------------------------------------
def test_touch_without_movement_counts_as_a_flick():
    state, ruling = ENGINE.apply(midgame(OPEN_FIELD), rec(touch("A4"), before={"A4": [-400.0, 400.0]},
                                                          after={"A4": [-400.5, 400.0]}))
    assert summary(ruling)["codes"] == [("touch_is_flick", "cvrnkana.7d", "A")]
    assert ruling.next_player == "B" and state.flicks == (13, 12)


def test_touching_only_an_opponent_marble_counts_as_a_flick_without_a_foul():
    state, ruling = ENGINE.apply(midgame(OPEN_FIELD), rec(touch("B4"), before={"B4": [400.0, 400.0]},
                                                          after={"B4": [400.0, 400.0]}))
    assert ruling.codes() == ["touch_is_flick"] and ruling.calls[0].evidence["piece"] == "B4"
    assert ruling.next_player == "B" and state.flicks == (13, 12)


def test_touch_behind_the_start_line_without_a_flick_does_not_count():
    state, ruling = ENGINE.apply(ENGINE.initial(), rec(touch("A2")))
    assert summary(ruling)["codes"] == [("coin_toss", "cvrnkana.1", "A"), ("opening_touch_not_flick", "cvrnkana.7d", "A")]
    assert ruling.next_player == "A" and state.flicks == (0, 0) and "A2" in state.behind


def test_second_own_marble_touched_is_flagged_for_the_referee():
    before = {"A1": [-100.0, 400.0], "A2": [-200.0, 400.0]}
    _, ruling = ENGINE.apply(midgame(OPEN_FIELD), rec(touch("A1"), touch("A2"), before=before,
                                                      after={"A1": [0.0, 50.0], "A2": [-200.0, 400.0]}))
    assert summary(ruling) == {
        "codes": [("field_flick", "cvrnkana.2", "A"), ("second_marble_touched", "cvrnkana.7", "A")], "actions": [],
        "next": "B", "over": None, "pocketed": {"A": [], "B": []}, "review": True}
    assert ruling.calls[1].review is True and ruling.calls[1].evidence["piece"] == ["A2"]


# -- clauses 7f and 7g: external factors ----------------------------------------------------------------
def test_marble_moved_by_an_external_factor_goes_back_and_the_turn_stays():
    state, ruling = ENGINE.apply(midgame(OPEN_FIELD), rec(ev("external", "B5", effect="moved"),
                                                          before={"B5": [500.0, 400.0]}, after={"B5": [900.0, 10.0]}))
    assert summary(ruling) == {
        "codes": [("external_returned", "cvrnkana.7f", "B")],
        "actions": [{"kind": "return", "piece": "B5", "player": "B", "at": [500.0, 400.0], "reason": "external_returned"}],
        "next": "A", "over": None, "pocketed": {"A": [], "B": []}, "review": False}
    assert state.positions()["B5"] == (500.0, 400.0) and state.flicks == (12, 12)


def test_external_factor_during_a_flick_is_not_the_players_foul_and_pit_entry_is_undone():
    before = {"A1": [-100.0, 400.0], "B5": [500.0, 400.0]}
    state, ruling = ENGINE.apply(midgame(OPEN_FIELD), rec(touch("A1"), ev("external", "B5"), pit("B5"), before=before,
                                                          after={"A1": [0.0, 60.0]}))
    assert ruling.codes() == ["field_flick", "external_returned"]
    assert [a.to_dict() for a in ruling.actions] == [
        {"kind": "return", "piece": "B5", "player": "B", "at": [500.0, 400.0], "reason": "external_returned"}]
    assert state.pit == () and ruling.next_player == "B"


def test_external_factor_with_unknown_place_sends_the_marble_to_the_start_line():
    field = {**OPEN_FIELD, "A3": None}
    state, ruling = ENGINE.apply(midgame(field), rec(ev("external", "A3"), after={"A3": [10.0, 10.0]}))
    assert summary(ruling)["codes"] == [("external_to_start_line", "cvrnkana.7f", "A")]
    assert [a.to_dict() for a in ruling.actions] == [
        {"kind": "to_start_line", "piece": "A3", "player": "A", "at": LINE_A, "reason": "external_to_start_line"}]
    assert state.behind == ("A3",) and ruling.score["A"]["behind"] == 1


def test_external_factor_stopping_the_opponents_marble_leaves_it_there():
    before = {"A1": [-100.0, 400.0], "B1": [100.0, 400.0]}
    state, ruling = ENGINE.apply(midgame(OPEN_FIELD), rec(touch("A1"), contact("A1", "B1"), ev("external", "B1", effect="stopped"),
                                                          before=before, after={"A1": [-90.0, 380.0], "B1": [150.0, -800.0]}))
    assert summary(ruling)["codes"] == [("field_flick", "cvrnkana.2", "A"), ("external_stopped_opponent", "cvrnkana.7g", "B")]
    assert ruling.actions == () and state.positions()["B1"] == (150.0, -800.0)


def test_external_factor_stopping_own_marble_short_of_the_line_moves_it_to_the_line():
    before = {"A1": [-100.0, -3600.0]}
    state, ruling = ENGINE.apply(midgame(OPEN_FIELD | before), rec(touch("A1"), ev("external", "A1", effect="stopped"),
                                                                   before=before, after={"A1": [-50.0, -1000.0]}))
    assert ruling.codes() == ["field_flick", "external_stopped_own"]
    assert [a.to_dict() for a in ruling.actions] == [
        {"kind": "to_start_line", "piece": "A1", "player": "A", "at": LINE_A, "reason": "external_stopped_own"}]
    assert state.behind == ("A1",) and "A1" not in state.positions() and ruling.next_player == "B"
    # Stopped farther out than the start line: it stays.
    state, ruling = ENGINE.apply(midgame(OPEN_FIELD | before), rec(touch("A1"), ev("external", "A1", effect="stopped"),
                                                                   before=before, after={"A1": [-50.0, -3200.0]}))
    assert ruling.codes() == ["field_flick"] and state.positions()["A1"] == (-50.0, -3200.0)


# -- clause 7h: relocation -------------------------------------------------------------------------------
def test_relocation_not_closer_than_five_metres_is_allowed_and_is_not_a_flick():
    state, ruling = ENGINE.apply(midgame(OPEN_FIELD), rec(ev("relocate", "A2", to=[3000.0, -4000.0])))
    assert summary(ruling) == {"codes": [("relocated", "cvrnkana.7h", "A")], "actions": [], "next": "A",
                               "over": None, "pocketed": {"A": [], "B": []}, "review": False}
    assert ruling.calls[0].evidence["distance_mm"] == 5000.0
    assert state.positions()["A2"] == (3000.0, -4000.0) and state.flicks == (12, 12)


def test_relocation_closer_than_five_metres_is_refused():
    state, ruling = ENGINE.apply(midgame(OPEN_FIELD), rec(ev("relocate", "A2", to=[0.0, -4999.0]),
                                                          before={"A2": [-200.0, 400.0]}))
    assert summary(ruling) == {
        "codes": [("relocation_refused", "cvrnkana.7h", "A")],
        "actions": [{"kind": "return", "piece": "A2", "player": "A", "at": [-200.0, 400.0], "reason": "relocation_refused"}],
        "next": "A", "over": None, "pocketed": {"A": [], "B": []}, "review": False}
    assert state.positions()["A2"] == (-200.0, 400.0)


def test_relocation_by_the_player_not_to_move_or_with_a_flick_is_refused():
    with pytest.raises(RecordError, match=r"^shot 8: events\[0\]\.piece: only A \(to move\) may relocate"):
        ENGINE.apply(midgame(OPEN_FIELD), rec(ev("relocate", "B2", to=[0.0, -6000.0])))
    with pytest.raises(RecordError, match=r"^shot 8: events\[1\]\.kind: a relocation \(7h\) is not a flick"):
        ENGINE.apply(midgame(OPEN_FIELD), rec(touch("A1"), ev("relocate", "A2", to=[0.0, -6000.0])))


# -- clause 7i: score and concession ------------------------------------------------------------------
def test_pit_count_is_the_score():
    state = midgame({"A10": [0.0, -50.0], "B5": [1.0, 1.0]}, pits("A", range(1, 8)) + pits("B", range(1, 4)))
    _, ruling = ENGINE.apply(state, rec(touch("A10"), pit("A10"), before={"A10": [0.0, -50.0]}))
    assert ruling.score == {"A": {"pit": 8, "field": 0, "behind": 2, "flicks": 13, "marbles": 10},
                            "B": {"pit": 3, "field": 1, "behind": 6, "flicks": 12, "marbles": 10}}


def test_picking_up_an_own_marble_before_the_count_concedes():
    state, ruling = ENGINE.apply(midgame(OPEN_FIELD, pit_=()), rec(ev("pickup", "B3"), player="B"))
    assert summary(ruling) == {
        "codes": [("concession", "cvrnkana.7i", "B"), ("pit_count", "cvrnkana.7i", None)], "actions": [], "next": None,
        "over": {"result": "win", "winner": "A", "reason": "concession"}, "pocketed": {"A": [], "B": []}, "review": False}
    assert ruling.to_dict("cs")["calls"][0]["text"] == "B sebral kuličku před sčítáním: potvrdil tím výhru soupeře."
    with pytest.raises(GameOver):
        ENGINE.apply(state, rec(ev("pickup", "A3")))


def test_picking_up_from_the_pit_is_refused():
    state = midgame({k: v for k, v in OPEN_FIELD.items() if k != "A1"}, ("A1",))
    with pytest.raises(RecordError, match=r"^shot 8: events\[0\]\.piece: picked-up marble A1 is already in the pit"):
        ENGINE.apply(state, rec(ev("pickup", "A1")))


# -- clause 8: match points -----------------------------------------------------------------------------
def g(winner, a, b):
    return {"result": "win" if winner else "draw", "winner": winner, "pit": {"A": a, "B": b}}


def test_match_points_win_on_games_is_three():
    assert match_points([g("A", 10, 4), g("A", 10, 9)]) == {"A": 3, "B": 0}
    assert match_points([g("B", 1, 10), g(None, 10, 10), g("B", 8, 10), g("A", 10, 0)]) == {"A": 0, "B": 3}


def test_match_points_draw_on_games_decided_by_total_marbles():
    assert match_points([g("A", 10, 4), g("B", 9, 10)]) == {"A": 2, "B": 1}
    assert match_points([g("A", 10, 9), g("B", 9, 10)]) == {"A": 1, "B": 1}
    assert match_points([g(None, 10, 10), g(None, 10, 10)]) == {"A": 1, "B": 1}
    assert match_points([g("A", 10, 2), g("B", 3, 10)]) == {"A": 2, "B": 1}
    assert match_points([g("A", 10, 8), g("B", 3, 10)]) == {"A": 1, "B": 2}


def test_drawn_game_with_unequal_pits_adds_no_marbles_to_the_match():
    # Game 2 is a real draw (7): A plays 11 marbles (an extra one joined, 7c), B 10; A's last flick pockets
    # A's and B's last marbles together, so the pit count is A 11, B 10.
    field = {"A11": [0.0, -50.0], "B10": [0.0, -20.0]}
    state = midgame(field, pits("A", range(1, 11)) + pits("B", range(1, 10)), marbles=(11, 10), game_number=2,
                    to_move="A", flicks=(11, 12))  # game 2: B started
    state, ruling = ENGINE.apply(state, rec(touch("A11"), contact("A11", "B10"), pit("B10"), pit("A11"), before=field))
    assert ruling.codes() == ["field_flick", "draw_zero", "pit_count"]
    drawn = game_result(state)
    assert drawn == {"result": "draw", "winner": None, "pit": {"A": 11, "B": 10}}
    # Game 1 also drawn: a draw on games (no game won) and on marbles (a draw is scored "0": 0 each) -> 1-1.
    # Adding the pit counts would have made it 21-20 on marbles and 2-1 on points.
    assert match_tally([g(None, 10, 10), drawn]) == {
        "games_won": {"A": 0, "B": 0}, "marbles": {"A": 0, "B": 0}, "points": {"A": 1, "B": 1}}
    assert match_points([g(None, 10, 10), drawn]) == {"A": 1, "B": 1}
    # Game 1 won by B: B wins on games whatever the drawn game's pits, and only game 1's marbles count.
    assert match_tally([g("B", 6, 10), drawn]) == {
        "games_won": {"A": 0, "B": 1}, "marbles": {"A": 6, "B": 10}, "points": {"A": 0, "B": 3}}


def test_one_all_on_games_is_decided_on_marbles_without_the_drawn_games():
    games = [g("A", 10, 4), g("B", 5, 10), g(None, 10, 12), g(None, 10, 10)]
    # Won and lost games only: A 10 + 5 = 15, B 4 + 10 = 14 -> A wins on marbles (2), B loses on marbles (1).
    # With the drawn games' pits added it would be A 35, B 36 and the other way round.
    assert match_tally(games) == {"games_won": {"A": 1, "B": 1}, "marbles": {"A": 15, "B": 14},
                                  "points": {"A": 2, "B": 1}}
    assert match_points(games) == {"A": 2, "B": 1}
    # Equal on marbles once the draw is left out: 1 each (clause 8).
    assert match_tally([g("A", 10, 7), g(None, 12, 10), g("B", 7, 10), g(None, 10, 10)]) == {
        "games_won": {"A": 1, "B": 1}, "marbles": {"A": 17, "B": 17}, "points": {"A": 1, "B": 1}}


def test_match_needs_an_even_number_of_games():
    with pytest.raises(ValueError, match=r"a match is an even number of games \(clause 8\), got 3"):
        match_points([g("A", 10, 1)] * 3)
    with pytest.raises(ValueError, match="got 0"):
        match_points([])
    with pytest.raises(ValueError, match="game 2: needs result"):
        match_points([g("A", 10, 1), {"result": "win", "winner": None, "pit": {"A": 1, "B": 1}}])


def test_game_result_of_a_finished_game_feeds_match_points():
    state, _ = ENGINE.apply(midgame(OPEN_FIELD), rec(ev("pickup", "A3")))
    assert game_result(state) == {"result": "win", "winner": "B", "pit": {"A": 0, "B": 0}}
    with pytest.raises(ValueError, match="not over yet"):
        game_result(ENGINE.initial())


# -- clause 9: the referee's word: records are edited and replayed ------------------------------------
OPENING = [rec(touch(f"{p}{i}"), after={f"{p}{i}": [(-1 if p == "A" else 1) * 30.0 * i, -100.0 - i]})
           for i in range(1, 4) for p in "AB"]


def test_replaying_a_prefix_is_the_same_as_stopping_there():
    full_state, full_rulings = ENGINE.replay(OPENING)
    state = ENGINE.initial()
    for k, shot in enumerate(OPENING, 1):
        state, _ = ENGINE.apply(state, shot)
        prefix_state, prefix_rulings = ENGINE.replay(OPENING[:k])
        assert prefix_state == state
        assert [r.to_dict() for r in prefix_rulings] == [r.to_dict() for r in full_rulings[:k]]
    assert state == full_state and full_state.flicks == (3, 3)


def test_referee_entries_are_recorded_as_final_decisions():
    _, ruling = ENGINE.apply(ENGINE.initial(), rec(touch("A1"), pit("A1"), referee=[{"code": "pit_entry_confirmed"}]))
    assert ruling.codes() == ["coin_toss", "opening_flick", "referee_decision"]
    assert ruling.to_dict()["calls"][2]["text"] == "Referee's decision (pit_entry_confirmed); it is final."


def test_marble_moving_without_a_flick_is_left_to_the_referee():
    state, ruling = ENGINE.apply(midgame(OPEN_FIELD), rec(before={"B1": [100.0, 400.0]}, after={"B1": [0.0, 20.0]}))
    assert summary(ruling)["codes"] == [("unexplained_move", "cvrnkana.9", "A")]
    assert ruling.review is True and ruling.next_player == "A" and state.positions()["B1"] == (0.0, 20.0)


# -- bad records --------------------------------------------------------------------------------------
@pytest.mark.parametrize("record, message", [
    (lambda: rec(touch("A1"), pit("B1"), before={"A1": [-100.0, 400.0]}),
     r"^shot 8: events\[1\]\.piece: B1 entered the pit but is already in the pit"),
    (lambda: rec(touch("A2"), before={"B11": [0.0, 0.0]}), r"^shot 8: before\.B11: B11 is not in this game \(B plays 10"),
    (lambda: rec(touch("A2"), before={"B1": [0.0, 0.0]}), r"^shot 8: before\.B1: B1 is already in the pit"),
    (lambda: rec(touch("B11")), r"^shot 8: events\[0\]\.piece: touch on B11, which is not in this game"),
    (lambda: rec(touch("B1")), r"^shot 8: events\[0\]\.piece: touch on B1, which is already in the pit"),
    (lambda: rec({"kind": "cushion", "piece": "A2", "side": "N"}), r"^shot 8: events\[0\]\.kind: 'cushion' is not a cvrnkana event"),
    (lambda: rec(touch("A2"), contact("A2", "B12")), r"^shot 8: events\[1\]\.b: B12 is not in this game"),
    (lambda: rec(ev("external", "B2", effect="stopped")), r"^shot 8: events\[0\]\.effect: B2 was stopped .* must be in after"),
    (lambda: rec(ev("lost", "B1")), r"^shot 8: events\[0\]\.piece: lost marble B1 is already in the pit"),
])
def test_records_inconsistent_with_the_state_name_the_field(record, message):
    state = midgame({k: v for k, v in OPEN_FIELD.items() if k != "B1"}, ("B1",))
    with pytest.raises(RecordError, match=message):
        ENGINE.apply(state, record())


def test_a_novuss_record_is_refused():
    shot = parse_record({"game": "novuss", "t0": 0, "t1": 1, "before": {}, "after": {}}, "test")
    with pytest.raises(RecordError, match=r"^shot 1: game: is 'novuss'"):
        ENGINE.apply(ENGINE.initial(), shot)


# -- state and text ------------------------------------------------------------------------------------
def test_state_round_trips_through_json_exactly():
    records = OPENING + [rec(ev("lost", "B2")), rec(touch("A1"), before={"A1": [-30.0, -101.0]}, after={}),
                         rec(ev("pickup", "B1"))]
    state, rulings = ENGINE.replay(records)
    assert state.positions()["A1"] is None and state.outcome.reason == "concession"
    again = ENGINE.state_from_dict(json.loads(json.dumps(state.to_dict())))
    assert again == state and again.to_dict() == state.to_dict()
    for k in range(len(records)):
        mid, _ = ENGINE.replay(records[:k])
        assert ENGINE.state_from_dict(json.loads(json.dumps(mid.to_dict()))) == mid


def test_state_from_dict_rejects_inconsistent_documents():
    doc = ENGINE.initial().to_dict()
    with pytest.raises(ValueError, match=r"^state: behind\[0\]: A1 is also in the pit \(a marble is in two places\)$"):
        ENGINE.state_from_dict({**doc, "pit": ["A1"]})
    with pytest.raises(ValueError, match="^state: marbles.A: A has 10 marbles but 9 are placed$"):
        ENGINE.state_from_dict({**doc, "behind": doc["behind"][1:]})
    with pytest.raises(ValueError, match="^state: to_move: must be 'A' or 'B', got 'C'$"):
        ENGINE.state_from_dict({**doc, "to_move": "C"})


def test_every_call_text_is_filled_in_every_language():
    records = OPENING + [rec(touch("A1"), touch("A2"), touch("B1"), before={"A1": [-30.0, -101.0]},
                             after={"A1": [0.0, 0.0], "B1": [5.0, 5.0]}),
                         rec(ev("relocate", "B2", to=[0.0, -100.0])), rec(ev("lost", "B3")),
                         rec(ev("external", "A3", effect="moved"), after={"A3": [1.0, 1.0]}),
                         rec(ev("pickup", "B2"))]
    _, rulings = ENGINE.replay(records)
    codes = {c.code for r in rulings for c in r.calls}
    assert {"opponent_marble_moved", "relocation_refused", "marble_replaced", "concession", "pit_count"} <= codes
    for lang in LANGS:
        for r in rulings:
            for call in r.to_dict(lang)["calls"]:
                assert "{" not in call["text"] and call["text"], (lang, call)


def test_unknown_option_and_missing_geometry_are_refused():
    with pytest.raises(ValueError, match="unknown option 'strict'"):
        Cvrnkana(GEO, strict=True)
    with pytest.raises(ValueError, match="geometry is missing relocation_min_mm"):
        Cvrnkana({k: v for k, v in GEO.items() if k != "relocation_min_mm"})


# -- a flick the camera did not see, entered by the referee ------------------------------------------------
def test_unseen_opening_flicks_are_judged_as_opening_flicks_with_the_marble_somewhere_on_the_field():
    state = ENGINE.initial(toss_winner="A")
    got = []
    for k in range(3):
        raw = ENGINE.unseen_flick(state, t_s=float(k))
        assert raw["meta"]["source"] == "referee" and [e["kind"] for e in raw["events"]] == ["touch", "off"]
        state, ruling = ENGINE.apply(state, parse_record(raw, "referee", game="cvrnkana"))
        got.append((raw["player"], raw["events"][0]["piece"], ruling.codes(), ruling.next_player))
    assert got == [("A", "A1", ["coin_toss", "opening_flick"], "B"), ("B", "B1", ["opening_flick"], "A"),
                   ("A", "A2", ["opening_flick"], "B")]
    assert dict(state.field) == {"A1": None, "B1": None, "A2": None}
    assert "A1" not in state.behind and state.flicks_of("A") == 2


def test_unseen_flick_of_a_field_marble_needs_its_name_and_must_be_the_movers():
    state = midgame({**OPEN_FIELD, "A3": [-50.0, -2000.0]}, to_move="A")
    with pytest.raises(RecordError, match="A has no marble behind the start line"):
        ENGINE.unseen_flick(state)
    with pytest.raises(RecordError, match="B4 is not a marble of A"):
        ENGINE.unseen_flick(state, "B4")
    state, ruling = ENGINE.apply(state, parse_record(ENGINE.unseen_flick(state, "A3", 3.0), "referee", game="cvrnkana"))
    assert ruling.codes() == ["field_flick"] and ruling.next_player == "B"
    assert dict(state.field)["A3"] is None
