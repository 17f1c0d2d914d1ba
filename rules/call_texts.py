"""The call texts in English, one per call code: the msgids of the message catalogue
(``rules/locale/<lang>/LC_MESSAGES/shotjudge.po``), where every other language translates them.

Templates may name evidence fields in braces, e.g. ``{piece}``; ``N_`` only marks a text for extraction
(``pybabel extract``), the translation happens when a call is shown (``rules.i18n.text_for``)."""
from __future__ import annotations

__all__ = ["TEXTS", "N_"]


def N_(text: str) -> str:
    """Mark ``text`` for the catalogue; translated later, where the language is known."""
    return text


TEXTS: dict[str, str] = {
    "all_pawns_pocketed": N_("All pawns of {winner} are pocketed: {winner} wins the set."),
    "bat_in_zone": N_("The bat returned into the striking zone (the zone line shows through its hole): the turn passes."),
    "bat_off_board": N_("The bat flew over the cushion: penalty pawn."),
    "bat_pocketed": N_("The bat went into a pocket: penalty pawn."),
    "both_last_pawns": N_("Both players' last pawns pocketed in one stroke: the set is replayed."),
    "coin_toss": N_("{player} won the toss and starts the odd games."),
    "concession": N_("{player} picked up a marble before the count: the opponent's win is confirmed."),
    "dark_pawn_hit_direct": N_("A direct stroke hit the own dark pawn {piece} (in the circle or the zone): penalty pawn, the pawn goes back to its place."),
    "debt_settled": N_("Penalty debt settled: pawn {piece} placed on the centre line at the opposite cushion."),
    "draw_zero": N_("The last flick put all remaining marbles of both players into the pit: draw, scored 0."),
    "external_returned": N_("Marble {piece} moved by an external factor goes back to its place."),
    "external_stopped_opponent": N_("The opponent's marble {piece} was stopped by an external factor: it stays where it stopped."),
    "external_stopped_own": N_("The flicking player's marble {piece} was stopped by an external factor: it goes to the start line."),
    "external_to_start_line": N_("Marble {piece} was moved by an external factor and its place is unknown: it is flicked from the start line."),
    "extra_marble_joins": N_("Extra marble {piece} flicked from the start line joins the game."),
    "field_flick": N_("Flick of marble {piece} by {player}."),
    "final_flick": N_("{winner_to_be} has all marbles in the pit: {player} has one final flick."),
    "flick_out_of_order": N_("{player} flicked a marble in the field ({piece}) while {behind} own marble(s) are still behind the start line: referee to check."),
    "game_won": N_("All marbles of {winner} are in the pit: {winner} wins the game."),
    "marble_replaced": N_("Marble {piece} not found within two minutes: replacement marble from the start line."),
    "marble_size_refused": N_("Marble {piece} measures {diameter_mm} mm, outside 10.0-16.5 mm: not allowed."),
    "marbles_returned": N_("Every marble that moved goes back to its original place: {piece}. The opponent continues."),
    "no_own_pawn_touched": N_("The bat touched none of the player's own pawns: penalty pawn."),
    "no_pawn_pocketed": N_("No own pawn pocketed: the turn passes."),
    "opening_flick": N_("Opening flick from the start line by {player}."),
    "opening_touch_not_flick": N_("Marble {piece} was touched behind the start line without being flicked: not a flick (opening flicks are exempt from 'any touch counts')."),
    "opponent_last_pawn": N_("The opponent's last pawn was pocketed: {winner} wins the set."),
    "opponent_marble_moved": N_("{player} moved the opponent's marble {piece} with something other than the flicked marble: foul."),
    "opponent_pawn_first": N_("The bat first touched an opponent's pawn ({piece}): penalty pawn."),
    "opponent_pawn_off_direct": N_("A direct stroke knocked the opponent's pawn {piece} over the cushion: penalty pawn."),
    "opponent_pawn_pocketed": N_("An opponent's pawn was pocketed together with an own pawn: the turn passes."),
    "own_and_opponent_together": N_("The bat touched an own and an opponent's pawn at the same time ({piece}): penalty pawn."),
    "pawn_off_board": N_("Pawn {piece} flew over the cushion: the turn passes."),
    "pawn_returned_to_circle": N_("Pawn {piece} is placed in the circle at {at}."),
    "pawn_returned_to_circle_rule_silent": N_("Pawn {piece} is placed in the circle at {at}. III.3 (a pawn over the cushion) does not say where the pawn goes; the circle, as in II.5, is the judge's reading."),
    "penalty_debt": N_("{player} has no pocketed pawn to pay with ({on_table} still on the table): the penalty is recorded as a debt."),
    "penalty_pawn": N_("Penalty pawn {piece} placed on the centre line at the opposite cushion."),
    "pit_count": N_("Marbles in the pit: A {A}, B {B}."),
    "referee_decision": N_("Referee's decision ({reason}); it is final."),
    "referee_foul": N_("Foul recorded by the referee ({reason}): penalty pawn."),
    "relocated": N_("Marble {piece} placed at {at}, {distance_mm} mm from the pit."),
    "relocation_refused": N_("Marble {piece} may not be placed closer than 5 m to the pit ({distance_mm} mm): refused."),
    "review_bat_zone": N_("The bat's hole is too close to the zone line to call ({margin_mm} mm): referee to decide."),
    "review_first_contact": N_("First contact too close to call from the video ({gap_ms} ms apart): referee to decide."),
    "first_contact_decided": N_("The referee decided what the bat touched first: {piece}."),
    "bat_zone_decided": N_("The referee decided where the bat came to rest (the camera measured {margin_mm} mm from the zone line)."),
    "second_marble_touched": N_("{player} touched a second own marble ({piece}) during the flick: referee to check."),
    "series_continues": N_("Own pawn pocketed: {player} strikes again."),
    "touch_is_flick": N_("Marble {piece} was touched: any touch counts as a flick."),
    "turn_lost_penalty": N_("A penalty was given: the turn passes."),
    "unexplained_move": N_("Marble(s) {piece} moved without a flick or a recorded external factor: referee to decide."),
}
