"""Novuss amateur variant: every clause decidable from a shot record, with exact rulings."""
import pytest

from rules import GameOver, RecordError
from tests.novuss_records import GEOMETRY, contact, cushion, engine, off, pocket, record

XS = (-200.0, -100.0, 100.0, 200.0)
MID = {**{f"A{i + 1}": (XS[i % 4], 200.0 + 100 * (i // 4)) for i in range(8)},
       **{f"B{i + 1}": (XS[i % 4], -200.0 - 100 * (i // 4)) for i in range(8)}}


def play(*records, positions=MID, name="novuss", state=None, **options):
    eng = engine(name, **options)
    state = state or eng.initial(positions=positions)
    rulings = []
    for rec in records:
        state, ruling = eng.apply(state, rec)
        rulings.append(ruling)
    return state, rulings


def after_pocketing(*pawns, positions=MID):
    """A state in which A has already pocketed ``pawns`` (A keeps the turn)."""
    pos = {k: v for k, v in positions.items() if k not in pawns}
    eng = engine()
    return eng.initial(positions=pos).__class__(positions=tuple(sorted(pos.items())), pocketed=tuple(pawns))


# ----- general: series, direct strokes, first contact ---------------------------------------------
def test_legal_direct_stroke_pocketing_own_pawn_continues_the_series():
    _, (r,) = play(record({"A1": MID["A1"]}, {}, [contact(0.10, "bat", "A1"), pocket(0.40, "A1", "NW")]))
    assert r.stroke == "direct" and r.first_contact == "own"
    assert r.codes() == ["series_continues"]
    assert r.next_player == "A" and r.pocketed == {"A": ("A1",), "B": ()}
    assert r.to_dict()["calls"][0]["clause"] == "novuss.general.6"


def test_no_pawn_pocketed_passes_the_turn_III_2():
    _, (r,) = play(record({"A1": MID["A1"]}, {"A1": (-210.0, 260.0)}, [contact(0.10, "bat", "A1")]))
    assert r.codes() == ["no_pawn_pocketed"] and r.next_player == "B" and r.actions == ()


def test_opening_layout_is_a_touching_row_along_the_far_cushion():
    s = engine().initial()
    pos = s.pos
    assert pos["A1"] == (-112.0, 484.0) and pos["A8"] == (112.0, 484.0)
    assert pos["B4"] == (-16.0, -484.0) and pos["B5"] == (16.0, -484.0)
    assert s.to_move == "A"


# ----- II.1 and the penalty debt -------------------------------------------------------------------
def test_II_1_bat_touches_no_own_pawn_with_all_eight_on_table_is_a_debt():
    s, (r,) = play(record(events=[]))
    assert r.codes() == ["no_own_pawn_touched", "penalty_debt", "turn_lost_penalty", "no_pawn_pocketed"]
    assert [a.to_dict() for a in r.actions] == [{"kind": "debt", "player": "A", "amount": 1}]
    assert s.debt == (1, 0) and r.next_player == "B"
    assert r.score["A"] == {"pocketed": 0, "on_table": 8, "debt": 1}
    assert r.to_dict()["calls"][1]["text"] == \
        "A has no pocketed pawn to pay with (8 still on the table): the penalty is recorded as a debt."


def test_the_debt_call_counts_the_pawns_truly_on_the_table():
    """From a mid-game layout with three of A's pawns left (none pocketed by A), the call says three, not eight."""
    pos = {"A1": (-200.0, 200.0), "A2": (-100.0, 200.0), "A3": (100.0, 200.0), "B1": (200.0, -200.0)}
    _, (r,) = play(record(events=[]), positions=pos)
    assert "penalty_debt" in r.codes()
    debt = next(c for c in r.to_dict("lv")["calls"] if c["code"] == "penalty_debt")
    assert debt["text"] == "A nav iesista kauliņa, ar ko samaksāt (3 vēl uz galda): sodu ieraksta kā parādu."


def test_II_1_penalty_pawn_goes_on_the_centre_line_at_the_opposite_cushion():
    state = after_pocketing("A3")
    s, (r,) = play(record(events=[]), state=state)
    assert "no_own_pawn_touched" in r.codes() and "penalty_pawn" in r.codes()
    assert [a.to_dict() for a in r.actions] == [
        {"kind": "place_penalty", "piece": "A3", "player": "A", "at": [0.0, 484.0], "reason": "penalty_pawn"}]
    assert s.pos["A3"] == (0.0, 484.0) and s.pocketed == ()


def test_penalty_spot_taken_goes_to_the_side_with_fewer_pawns():
    pos = dict(MID)
    pos["B8"] = (0.0, 484.0)  # the spot is taken; the +x half has fewer pawns once A2 sits left
    pos["A4"] = (-300.0, 250.0)
    state = after_pocketing("A3", positions=pos)
    left = sum(1 for k, v in state.pos.items() if v[0] < 0)
    right = sum(1 for k, v in state.pos.items() if v[0] > 0)
    assert right < left
    s, (r,) = play(record(events=[]), state=state, positions=pos)
    (act,) = r.actions
    assert act.piece == "A3" and act.at[1] == 484.0 and act.at[0] == pytest.approx(32.0, abs=1e-3)


def test_debt_is_settled_when_a_pawn_becomes_available():
    s, rs = play(record(events=[]),  # A: penalty with all 8 on the table -> debt
                 record({"B1": MID["B1"]}, {"B1": (-200.0, -150.0)}, [contact(0.1, "bat", "B1")]),  # B plays
                 record({"A1": MID["A1"]}, {}, [contact(0.1, "bat", "A1"), pocket(0.3, "A1", "NW")], player="A"))
    last = rs[-1]
    assert "debt_settled" in last.codes() and "series_continues" in last.codes()
    assert [a.to_dict() for a in last.actions] == [
        {"kind": "place_penalty", "piece": "A1", "player": "A", "at": [0.0, 484.0], "reason": "debt_settled"}]
    assert s.debt == (0, 0) and s.pos["A1"] == (0.0, 484.0) and last.next_player == "A"


# ----- II.2 -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind,code", [("pocket", "bat_pocketed"), ("off", "bat_off_board")])
def test_II_2_bat_pocketed_or_over_the_cushion(kind, code):
    ev = pocket(0.5, "bat", "NE") if kind == "pocket" else off(0.5, "bat", "N")
    state = after_pocketing("A5")
    s, (r,) = play(record({"A1": MID["A1"]}, {}, [contact(0.1, "bat", "A1"), pocket(0.3, "A1", "NW"), ev], bat_after=None),
                   state=state)
    assert code in r.codes() and "turn_lost_penalty" in r.codes()
    assert r.to_dict()["calls"][0]["clause"] == "novuss.II.2"
    # The penalty pawn is the lowest-numbered pocketed pawn (A1, pocketed in this very stroke); A5 stays pocketed.
    assert [a.piece for a in r.actions] == ["A1"] and s.pocketed == ("A5",)
    assert r.actions[0].at == (0.0, 484.0) and r.next_player == "B"
    assert "series_continues" not in r.codes()


# ----- II.3 -----------------------------------------------------------------------------------------
def test_II_3_opponent_pawn_first():
    _, (r,) = play(record({"B1": MID["B1"]}, {"B1": (-200.0, -150.0)}, [contact(0.1, "bat", "B1")]))
    assert r.first_contact == "opponent"
    # Both II.1 (no own pawn touched) and II.3 hold; one penalty is given for the stroke.
    assert r.codes()[:3] == ["no_own_pawn_touched", "opponent_pawn_first", "penalty_debt"]
    assert r.calls[1].clause == "novuss.II.3" and r.next_player == "B"
    assert [a.to_dict() for a in r.actions] == [{"kind": "debt", "player": "A", "amount": 1}]


@pytest.mark.parametrize("gap_s,legal", [(0.0, False), (0.0009, False), (0.001, False), (0.0011, True), (0.003, True)])
def test_II_3_own_and_opponent_at_the_same_time(gap_s, legal):
    events = [contact(0.1, "bat", "A1"), contact(0.1 + gap_s, "bat", "B1"), pocket(0.4, "A1", "NW")]
    _, (r,) = play(record({"A1": MID["A1"], "B1": MID["B1"]}, {"B1": (-190.0, -150.0)}, events))
    if legal:
        assert r.first_contact == "own" and r.codes() == ["series_continues"]
    else:
        assert r.first_contact == "both" and "own_and_opponent_together" in r.codes()
        assert r.next_player == "B"


def test_close_first_contact_within_timing_uncertainty_is_flagged_for_review():
    events = [contact(0.1, "bat", "A1", t_err=0.0005), contact(0.1012, "bat", "B1", t_err=0.0005)]
    _, (r,) = play(record({"A1": MID["A1"], "B1": MID["B1"]}, {"A1": (-200.0, 260.0), "B1": (-190.0, -150.0)}, events))
    assert r.first_contact == "own" and r.review
    call = [c for c in r.calls if c.code == "review_first_contact"][0]
    assert call.review and call.evidence["gap_ms"] == 1.2 and call.evidence["uncertainty_ms"] == 1.41
    assert r.to_dict()["review"] is True


def test_the_referee_decides_a_first_contact_the_camera_could_not_and_the_rules_follow():
    events = [contact(0.1, "bat", "A1", t_err=0.0005), contact(0.1012, "bat", "B1", t_err=0.0005)]
    moves = ({"A1": MID["A1"], "B1": MID["B1"]}, {"A1": (-200.0, 260.0), "B1": (-190.0, -150.0)}, events)
    _, (opp,) = play(record(*moves, referee=[{"code": "first_contact", "value": "opponent"}]))
    assert opp.first_contact == "opponent" and not opp.to_dict()["review"]
    assert opp.codes()[:2] == ["opponent_pawn_first", "penalty_debt"] and opp.next_player == "B"
    assert [c.evidence for c in opp.calls if c.code == "first_contact_decided"] == [{"piece": ["B1"]}]
    _, (own,) = play(record(*moves, referee=[{"code": "first_contact", "value": "own"}]))
    assert own.first_contact == "own" and own.codes() == ["no_pawn_pocketed", "first_contact_decided"]
    _, (both,) = play(record(*moves, referee=[{"code": "first_contact", "value": "both"}]))
    assert both.first_contact == "both" and "own_and_opponent_together" in both.codes()


def test_a_decision_the_record_cannot_bear_is_refused_with_what_is_wrong():
    own_only = record({"A1": MID["A1"]}, {"A1": (-200.0, 260.0)}, [contact(0.1, "bat", "A1")],
                      referee=[{"code": "first_contact", "value": "opponent"}])
    with pytest.raises(RecordError, match="first_contact opponent: the bat touched no opponent's pawn in this shot"):
        play(own_only)
    with pytest.raises(RecordError, match="first_contact must be decided as one of own, opponent, both, got 'maybe'"):
        play(record({"A1": MID["A1"]}, {"A1": (-200.0, 260.0)}, [contact(0.1, "bat", "A1")],
                    referee=[{"code": "first_contact", "value": "maybe"}]))


def test_clear_first_contact_with_small_uncertainty_is_not_flagged():
    events = [contact(0.1, "bat", "A1", t_err=0.0002), contact(0.104, "bat", "B1", t_err=0.0002)]
    _, (r,) = play(record({"A1": MID["A1"], "B1": MID["B1"]}, {"A1": (-200.0, 260.0), "B1": (-190.0, -150.0)}, events))
    assert not r.review and r.codes() == ["no_pawn_pocketed"]


def test_II_3_does_not_apply_when_no_own_pawn_can_be_hit_directly():
    dark_only = {"A1": (0.0, 0.0), "B1": (-200.0, -200.0), "B2": (200.0, 200.0)}
    st = engine().initial(positions=dark_only).__class__(positions=tuple(sorted(dark_only.items())),
                                                          pocketed=tuple(f"A{i}" for i in range(2, 9)) + tuple(f"B{i}" for i in range(3, 9)))
    _, (r,) = play(record({"B2": (200.0, 200.0)}, {"B2": (210.0, 260.0)}, [contact(0.1, "bat", "B2")]), state=st)
    assert r.codes() == ["no_pawn_pocketed"]


# ----- I and II.4: light and dark pawns ---------------------------------------------------------
def test_light_and_dark_geometry_uses_the_hole_and_the_lines():
    eng = engine()
    R, w, hole = GEOMETRY["circle_radius_mm"], GEOMETRY["line_width_mm"], GEOMETRY["pawn_hole_mm"] / 2
    inner = R - w / 2 - hole
    assert eng.is_dark((inner - 0.01, 0.0), "A") and not eng.is_dark((inner + 0.01, 0.0), "A")
    zone_line = -500 + GEOMETRY["zone_depth_mm"] - w / 2 - hole
    assert eng.is_dark((0.0, zone_line - 0.01), "A") and not eng.is_dark((0.0, zone_line + 0.01), "A")
    assert not eng.is_dark((0.0, -450.0), "B")  # A's zone is not dark for B
    assert eng.is_dark((0.0, 450.0), "B")


def test_II_4_direct_stroke_on_own_dark_pawn_returns_it_and_penalises():
    pos = {**MID, "A1": (0.0, 0.0)}
    state = after_pocketing("A8", positions=pos)
    s, (r,) = play(record({"A1": (0.0, 0.0)}, {}, [contact(0.1, "bat", "A1"), pocket(0.5, "A1", "NE")]), state=state)
    assert r.calls[0].code == "dark_pawn_hit_direct" and r.calls[0].clause == "novuss.II.4"
    assert [a.to_dict() for a in r.actions] == [
        {"kind": "return", "piece": "A1", "at": [0.0, 0.0], "reason": "dark_pawn_hit_direct"},
        {"kind": "place_penalty", "piece": "A8", "player": "A", "at": [0.0, 484.0], "reason": "penalty_pawn"}]
    assert r.pocketed["A"] == () and s.pos["A1"] == (0.0, 0.0) and r.next_player == "B"


def test_I_3_a_ricochet_off_the_opposite_cushion_may_take_a_dark_pawn():
    pos = {**MID, "A1": (0.0, 0.0)}
    events = [cushion(0.2, "bat", "N"), contact(0.5, "bat", "A1"), pocket(0.8, "A1", "SW")]
    _, (r,) = play(record({"A1": (0.0, 0.0)}, {}, events), positions=pos)
    assert r.stroke == "ricochet" and r.codes() == ["series_continues"]


def test_a_bank_off_a_side_cushion_is_still_a_direct_stroke():
    pos = {**MID, "A1": (0.0, 0.0)}
    events = [cushion(0.2, "bat", "E"), contact(0.5, "bat", "A1")]
    _, (r,) = play(record({"A1": (0.0, 0.0)}, {"A1": (0.0, 40.0)}, events), positions=pos)
    assert r.stroke == "direct" and "dark_pawn_hit_direct" in r.codes()


def test_I_3_b_bat_after_touching_a_light_pawn_may_take_a_dark_pawn():
    pos = {**MID, "A1": (0.0, 0.0)}
    events = [contact(0.1, "bat", "A2"), contact(0.3, "bat", "A1"), pocket(0.6, "A1", "SW")]
    _, (r,) = play(record({"A1": (0.0, 0.0), "A2": MID["A2"]}, {"A2": (-80.0, 240.0)}, events), positions=pos)
    assert r.codes() == ["series_continues"]


def test_I_3_c_own_light_pawn_may_knock_out_a_dark_pawn():
    pos = {**MID, "A1": (0.0, 0.0)}
    events = [contact(0.1, "bat", "A2"), contact(0.3, "A2", "A1"), pocket(0.6, "A1", "SW")]
    _, (r,) = play(record({"A1": (0.0, 0.0), "A2": MID["A2"]}, {"A2": (-50.0, 50.0)}, events), positions=pos)
    assert r.codes() == ["series_continues"]


# ----- II.5 and pawns over the cushion -------------------------------------------------------------
def test_II_5_opponent_pawn_off_by_direct_stroke_goes_to_the_circle_centre():
    s, (r,) = play(record({"A1": MID["A1"], "B1": MID["B1"]}, {"A1": (-220.0, 230.0)},
                          [contact(0.1, "bat", "A1"), contact(0.2, "bat", "B1"), off(0.4, "B1", "W")]))
    assert "opponent_pawn_off_direct" in r.codes() and "pawn_off_board" in r.codes()
    assert r.actions[0].to_dict() == {"kind": "return", "piece": "B1", "at": [0.0, 0.0], "reason": "opponent_pawn_off_direct"}
    assert s.pos["B1"] == (0.0, 0.0) and r.next_player == "B"


def test_II_5_circle_centre_taken_puts_the_pawn_on_the_edge_on_its_side():
    pos = {**MID, "B2": (0.0, 0.0)}
    s, (r,) = play(record({"A1": MID["A1"], "B1": MID["B1"]}, {"A1": (-220.0, 230.0)},
                          [contact(0.1, "bat", "A1"), contact(0.2, "bat", "B1"), off(0.4, "B1", "W")]), positions=pos)
    assert r.actions[0].at == pytest.approx((-GEOMETRY["circle_radius_mm"], 0.0), abs=1e-9)


def test_III_3_own_pawn_over_the_cushion_passes_the_turn_without_penalty():
    s, (r,) = play(record({"A1": MID["A1"], "A2": MID["A2"]}, {}, [contact(0.1, "bat", "A1"), contact(0.2, "A1", "A2"),
                                                                  pocket(0.3, "A1", "NW"), off(0.5, "A2", "N")]))
    assert r.codes() == ["pawn_returned_to_circle_rule_silent", "pawn_off_board"]
    assert r.next_player == "B" and s.pos["A2"] == (0.0, 0.0)


def _calls(ruling, lang="en"):
    return [(c["code"], c["clause"], c["player"]) for c in ruling.to_dict(lang)["calls"]]


SILENT_EN = ("Pawn {p} is placed in the circle at 0.0, 0.0. III.3 (a pawn over the cushion) does not say where "
             "the pawn goes; the circle, as in II.5, is the judge's reading.")


def test_pawn_to_circle_cites_II_5_for_an_opponents_pawn_off_by_a_direct_stroke():
    s, (r,) = play(record({"A1": MID["A1"], "B1": MID["B1"]}, {"A1": (-220.0, 230.0)},
                          [contact(0.1, "bat", "A1"), contact(0.2, "bat", "B1"), off(0.4, "B1", "W")]))
    assert r.stroke == "direct"
    assert _calls(r) == [("opponent_pawn_off_direct", "novuss.II.5", "A"), ("pawn_returned_to_circle", "novuss.II.5", "B"),
                         ("penalty_debt", "novuss.II.debt", "A"), ("turn_lost_penalty", "novuss.III.4", "A"),
                         ("pawn_off_board", "novuss.III.3", "A"), ("no_pawn_pocketed", "novuss.III.2", "A")]
    assert r.to_dict()["calls"][1]["text"] == "Pawn B1 is placed in the circle at 0.0, 0.0."
    assert [a.to_dict() for a in r.actions] == [
        {"kind": "return", "piece": "B1", "at": [0.0, 0.0], "reason": "opponent_pawn_off_direct"},
        {"kind": "debt", "player": "A", "amount": 1}]
    assert s.pos["B1"] == (0.0, 0.0) and s.debt == (1, 0) and r.next_player == "B"


def test_pawn_to_circle_cites_III_3_placement_silent_for_an_own_pawn_over_the_cushion():
    s, (r,) = play(record({"A1": MID["A1"], "A2": MID["A2"]}, {}, [contact(0.1, "bat", "A1"), contact(0.2, "A1", "A2"),
                                                                  pocket(0.3, "A1", "NW"), off(0.5, "A2", "N")]))
    assert r.stroke == "direct"
    assert _calls(r) == [("pawn_returned_to_circle_rule_silent", "novuss.III.3", "A"), ("pawn_off_board", "novuss.III.3", "A")]
    calls = r.to_dict()["calls"]
    assert calls[0]["text"] == SILENT_EN.format(p="A2")
    assert calls[0]["evidence"] == {"piece": "A2", "at": [0.0, 0.0]}
    assert r.to_dict("cs")["calls"][0]["text"] == (
        "Pěšec A2 se pokládá do kruhu na 0.0, 0.0. Pravidlo III.3 (pěšec přes mantinel) neříká, kam se pěšec "
        "pokládá; kruh, jako v II.5, je výklad automatického rozhodčího.")
    assert r.to_dict("ru")["calls"][0]["text"] == (
        "Пешка A2 ставится в круг в точку 0.0, 0.0. Правило III.3 (пешка за бортом) не говорит, куда ставится "
        "пешка; круг, как в II.5, — толкование автоматического судьи.")
    # III.3 alone: the turn passes, no penalty pawn and no debt.
    assert [a.to_dict() for a in r.actions] == [{"kind": "return", "piece": "A2", "at": [0.0, 0.0], "reason": "pawn_off_board"}]
    assert s.pos["A2"] == (0.0, 0.0) and s.pocketed == ("A1",) and s.debt == (0, 0) and r.next_player == "B"


def test_pawn_to_circle_cites_III_3_placement_silent_for_an_opponents_pawn_off_by_a_ricochet():
    s, (r,) = play(record({"A1": MID["A1"], "B1": MID["B1"]}, {"A1": (-220.0, 230.0)},
                          [cushion(0.1, "bat", "N"), contact(0.3, "bat", "A1"), contact(0.4, "A1", "B1"),
                           off(0.6, "B1", "W")]))
    assert r.stroke == "ricochet" and r.first_contact == "own"
    assert _calls(r) == [("pawn_returned_to_circle_rule_silent", "novuss.III.3", "B"), ("pawn_off_board", "novuss.III.3", "A"),
                         ("no_pawn_pocketed", "novuss.III.2", "A")]
    assert r.to_dict()["calls"][0]["text"] == SILENT_EN.format(p="B1")
    assert [a.to_dict() for a in r.actions] == [{"kind": "return", "piece": "B1", "at": [0.0, 0.0], "reason": "pawn_off_board"}]
    assert s.pos["B1"] == (0.0, 0.0) and s.debt == (0, 0) and r.next_player == "B"


# ----- III -------------------------------------------------------------------------------------------
def test_III_1_own_and_opponent_pocketed_passes_the_turn():
    _, (r,) = play(record({"A1": MID["A1"], "B1": MID["B1"]}, {},
                          [contact(0.1, "bat", "A1"), contact(0.2, "A1", "B1"), pocket(0.4, "A1", "NW"), pocket(0.5, "B1", "SW")]))
    assert r.codes() == ["opponent_pawn_pocketed"] and r.next_player == "B"
    assert r.pocketed == {"A": ("A1",), "B": ("B1",)} and r.score["B"]["pocketed"] == 1


@pytest.mark.parametrize("bat_y,in_zone", [(-380.0, False), (-382.4, False), (-382.6, True), (-384.0, True), (-395.0, True)])
def test_III_5_bat_back_in_the_zone_with_the_line_in_its_hole(bat_y, in_zone):
    # The line's outer edge is at -388.5 mm; the bat's hole has radius 6 mm -> boundary at -382.5 mm.
    _, (r,) = play(record({"A1": MID["A1"]}, {}, [contact(0.1, "bat", "A1"), pocket(0.3, "A1", "NW")], bat_after=(0.0, bat_y)))
    assert ("bat_in_zone" in r.codes()) is in_zone
    assert r.next_player == ("B" if in_zone else "A")


def test_III_5_bat_wholly_inside_the_zone_seed_reading_differs():
    rec = record({"A1": MID["A1"]}, {}, [contact(0.1, "bat", "A1"), pocket(0.3, "A1", "NW")], bat_after=(0.0, -450.0))
    _, (r,) = play(rec)
    assert "bat_in_zone" in r.codes()
    _, (r,) = play(rec, name="novuss-seed")
    assert "bat_in_zone" not in r.codes() and r.next_player == "A"


def test_bat_zone_close_call_is_flagged_with_a_position_tolerance():
    rec = record({"A1": MID["A1"]}, {}, [contact(0.1, "bat", "A1"), pocket(0.3, "A1", "NW")], bat_after=(0.0, -382.0))
    _, (r,) = play(rec, position_tolerance_mm=1.0)
    assert "review_bat_zone" in r.codes() and r.to_dict()["review"]


def test_the_referee_decides_a_close_bat_zone_call_either_way():
    rec = lambda value: record({"A1": MID["A1"]}, {}, [contact(0.1, "bat", "A1"), pocket(0.3, "A1", "NW")],  # noqa: E731
                               bat_after=(0.0, -382.0), referee=[{"code": "bat_zone", "value": value}])
    _, (inside,) = play(rec("in"), position_tolerance_mm=1.0)
    assert inside.codes() == ["bat_in_zone", "bat_zone_decided"] and inside.next_player == "B" and not inside.to_dict()["review"]
    _, (out,) = play(rec("out"), position_tolerance_mm=1.0)
    assert out.codes() == ["bat_zone_decided", "series_continues"] and out.next_player == "A"


def test_referee_recorded_foul_is_a_penalty():
    _, (r,) = play(record({"A1": MID["A1"]}, {}, [contact(0.1, "bat", "A1"), pocket(0.3, "A1", "NW")],
                          referee=[{"code": "cue_crossed_joint"}]))
    assert r.codes()[:2] == ["referee_foul", "penalty_pawn"] and r.next_player == "B"
    assert r.actions[0].piece == "A1" and r.actions[0].at == (0.0, 484.0)


# ----- the end of a set --------------------------------------------------------------------------------
def _last_pawns(a_left, b_left):
    pos = {a_left: (-200.0, 200.0), b_left: (200.0, -200.0)}
    pocketed = tuple(k for k in MID if k not in pos)
    eng = engine()
    return eng.initial(positions=pos).__class__(positions=tuple(sorted(pos.items())), pocketed=pocketed)


def test_pocketing_the_last_own_pawn_wins_the_set():
    st = _last_pawns("A1", "B1")
    s, (r,) = play(record({"A1": (-200.0, 200.0)}, {}, [contact(0.1, "bat", "A1"), pocket(0.3, "A1", "NW")]), state=st)
    assert r.game_over.to_dict() == {"result": "win", "winner": "A", "reason": "all_pawns_pocketed"}
    assert r.next_player is None
    assert r.codes() == ["all_pawns_pocketed"]  # the set is won: nobody "strikes again"
    with pytest.raises(GameOver):
        engine().apply(s, record({"B1": (200.0, -200.0)}, {}, [contact(0.1, "bat", "B1")], player="B"))


def test_last_pawn_with_a_foul_is_not_a_win():
    st = _last_pawns("A1", "B1")
    _, (r,) = play(record({"A1": (-200.0, 200.0)}, {}, [contact(0.1, "bat", "A1"), pocket(0.3, "A1", "NW"), pocket(0.6, "bat", "NE")],
                          bat_after=None), state=st)
    assert r.game_over is None and "penalty_pawn" in r.codes() and r.next_player == "B"


def test_federation_only_opponents_last_pawn_pocketed_opponent_wins():
    st = _last_pawns("A1", "B1")
    _, (r,) = play(record({"A1": (-200.0, 200.0), "B1": (200.0, -200.0)}, {"A1": (-150.0, 150.0)},
                          [contact(0.1, "bat", "A1"), contact(0.2, "A1", "B1"), pocket(0.5, "B1", "SE")]), state=st)
    assert r.game_over.to_dict() == {"result": "win", "winner": "B", "reason": "opponent_last_pawn"}


@pytest.mark.parametrize("name,result", [("novuss", {"result": "replay", "winner": None, "reason": "both_last_pawns"}),
                                         ("novuss-seed", {"result": "win", "winner": "A", "reason": "all_pawns_pocketed"})])
def test_both_last_pawns_in_one_stroke(name, result):
    st = _last_pawns("A1", "B1")
    _, (r,) = play(record({"A1": (-200.0, 200.0), "B1": (200.0, -200.0)}, {},
                          [contact(0.1, "bat", "A1"), contact(0.2, "A1", "B1"), pocket(0.4, "A1", "NW"), pocket(0.5, "B1", "SE")]),
                   state=st, name=name)
    assert r.game_over.to_dict() == result


# ----- consistency with the state ---------------------------------------------------------------------
def test_a_pawn_pocketed_twice_is_refused():
    s, _ = play(record({"A1": MID["A1"]}, {}, [contact(0.1, "bat", "A1"), pocket(0.3, "A1", "NW")]))
    with pytest.raises(RecordError, match=r"shot 2: events\[1\]: A1 is already pocketed"):
        engine().apply(s, record({"A2": MID["A2"]}, {"A2": MID["A2"]}, [contact(0.1, "bat", "A2"), pocket(0.3, "A1", "NW")]))


def test_a_pawn_vanishing_without_an_event_is_refused():
    with pytest.raises(RecordError, match=r"after.A1: A1 is in before but neither in after nor pocketed/off"):
        play(record({"A1": MID["A1"]}, {}, [contact(0.1, "bat", "A1")]))


def test_state_round_trips_through_json():
    eng = engine()
    s, _ = play(record({"A1": MID["A1"], "B1": MID["B1"]}, {},
                       [contact(0.1, "bat", "A1"), contact(0.2, "A1", "B1"), pocket(0.4, "A1", "NW"), pocket(0.5, "B1", "SW")]))
    assert eng.state_from_dict(s.to_dict()) == s


def test_undo_is_replay_of_a_prefix():
    recs = [record({"A1": MID["A1"]}, {}, [contact(0.1, "bat", "A1"), pocket(0.3, "A1", "NW")]),
            record({"A2": MID["A2"]}, {"A2": (-100.0, 250.0)}, [contact(0.1, "bat", "A2")])]
    eng = engine()
    full, rulings = eng.replay(recs, eng.initial(positions=MID))
    prefix, _ = eng.replay(recs[:1], eng.initial(positions=MID))
    assert rulings[0].next_player == "A" and prefix.shot == 1 and full.shot == 2
    assert eng.apply(prefix, recs[1])[0] == full


def test_geometry_comes_from_the_profile():
    bigger = dict(GEOMETRY, circle_radius_mm=150.0)
    from rules import engine_for
    assert engine_for("novuss", bigger).is_dark((125.0, 0.0), "A")
    assert not engine().is_dark((125.0, 0.0), "A")


def test_together_versus_opponent_first_within_uncertainty_is_flagged_too():
    # The opponent's pawn 0.9 ms before the own one: "at the same time" by the window, but the timing
    # uncertainty could make it "opponent first"; both are II.3 fouls, the classification is flagged.
    events = [contact(0.1, "bat", "B1", t_err=0.0005), contact(0.1009, "bat", "A1", t_err=0.0005)]
    _, (r,) = play(record({"A1": MID["A1"], "B1": MID["B1"]}, {"A1": (-200.0, 260.0), "B1": (-190.0, -150.0)}, events))
    assert r.first_contact == "both" and "own_and_opponent_together" in r.codes() and r.review
    assert [c for c in r.calls if c.code == "review_first_contact"][0].evidence["gap_ms"] == -0.9
