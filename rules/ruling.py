"""What a rule engine says about one shot: calls, actions, whose turn, how the game ended.

Values are small and frozen; ``to_dict`` gives the documented JSON
(``docs/schemas/ruling.schema.json``). Text is added at output time in the chosen
language, so a ruling itself is language-free data.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from .i18n import text_for

__all__ = ["Call", "Action", "Outcome", "Ruling", "CODES"]

# The fixed vocabulary: code -> the rule clause it comes from.
CODES: dict[str, str] = {
    # Novuss
    "series_continues": "novuss.general.6",
    "no_own_pawn_touched": "novuss.II.1",
    "bat_pocketed": "novuss.II.2",
    "bat_off_board": "novuss.II.2",
    "opponent_pawn_first": "novuss.II.3",
    "own_and_opponent_together": "novuss.II.3",
    "dark_pawn_hit_direct": "novuss.II.4",
    "opponent_pawn_off_direct": "novuss.II.5",
    "penalty_pawn": "novuss.II",
    "penalty_debt": "novuss.II.debt",
    "debt_settled": "novuss.II.debt",
    "opponent_pawn_pocketed": "novuss.III.1",
    "no_pawn_pocketed": "novuss.III.2",
    "pawn_off_board": "novuss.III.3",
    "turn_lost_penalty": "novuss.III.4",
    "bat_in_zone": "novuss.III.5",
    "pawn_returned_to_circle": "novuss.II.5",  # an opponent's pawn off with a direct stroke
    "pawn_returned_to_circle_rule_silent": "novuss.III.3",  # any other pawn off: III.3 gives no place
    "all_pawns_pocketed": "novuss.general.2",
    "opponent_last_pawn": "novuss.federation.last_pawn",
    "both_last_pawns": "novuss.federation.last_pawns_together",
    "review_first_contact": "novuss.II.3",
    "review_bat_zone": "novuss.III.5",
    "first_contact_decided": "novuss.II.3",  # the referee decided a first contact the camera could not
    "bat_zone_decided": "novuss.III.5",  # the referee decided where the bat came to rest
    "referee_foul": "novuss.general.3-5",
    # Cvrnkaná
    "coin_toss": "cvrnkana.1",
    "opening_flick": "cvrnkana.2",
    "field_flick": "cvrnkana.2",
    "final_flick": "cvrnkana.3",
    "game_won": "cvrnkana.4",
    "extra_marble_joins": "cvrnkana.7c",
    "draw_zero": "cvrnkana.7",
    "opponent_marble_moved": "cvrnkana.7a",
    "marbles_returned": "cvrnkana.7a",
    "marble_replaced": "cvrnkana.7b",
    "touch_is_flick": "cvrnkana.7d",
    "second_marble_touched": "cvrnkana.7",
    "external_returned": "cvrnkana.7f",
    "external_to_start_line": "cvrnkana.7f",
    "external_stopped_own": "cvrnkana.7g",
    "external_stopped_opponent": "cvrnkana.7g",
    "relocated": "cvrnkana.7h",
    "relocation_refused": "cvrnkana.7h",
    "pit_count": "cvrnkana.7i",
    "concession": "cvrnkana.7i",
    "marble_size_refused": "cvrnkana.5",
    "referee_decision": "cvrnkana.9",
    "flick_out_of_order": "cvrnkana.2",
    "opening_touch_not_flick": "cvrnkana.7d",
    "unexplained_move": "cvrnkana.9",
}


@dataclass(frozen=True)
class Call:
    code: str
    player: str | None = None
    review: bool = False
    evidence: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.code not in CODES:
            raise ValueError(f"unknown call code {self.code!r}")

    @property
    def clause(self) -> str:
        return CODES[self.code]

    def to_dict(self, lang: str = "en") -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "clause": self.clause, "player": self.player,
               "text": text_for(self.code, lang, self.evidence)}
        if self.review:
            out["review"] = True
        if self.evidence:
            out["evidence"] = _plain(self.evidence)
        return out


@dataclass(frozen=True)
class Action:
    """Something the referee (or the players) must physically do after the shot."""

    kind: str  # place_penalty | return | debt | settle_debt | to_start_line | replace
    piece: str | None = None
    player: str | None = None
    at: tuple[float, float] | None = None
    reason: str | None = None
    amount: int | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind}
        for name in ("piece", "player", "at", "reason", "amount"):
            value = getattr(self, name)
            if value is not None:
                out[name] = [round(value[0], 2), round(value[1], 2)] if name == "at" else value
        return out


@dataclass(frozen=True)
class Outcome:
    result: str  # win | draw | replay
    winner: str | None
    reason: str  # a call code

    def to_dict(self) -> dict[str, Any]:
        return {"result": self.result, "winner": self.winner, "reason": self.reason}


@dataclass(frozen=True)
class Ruling:
    shot: int
    game: str
    player: str
    calls: tuple[Call, ...]
    actions: tuple[Action, ...]
    next_player: str | None
    game_over: Outcome | None
    score: Mapping[str, Any]
    pocketed: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    stroke: str | None = None
    first_contact: str | None = None
    review: bool = False

    def codes(self) -> list[str]:
        return [c.code for c in self.calls]

    def to_dict(self, lang: str = "en") -> dict[str, Any]:
        out: dict[str, Any] = {"shot": self.shot, "game": self.game, "player": self.player}
        if self.game == "novuss":
            out["stroke"] = self.stroke
            out["first_contact"] = self.first_contact
        out["pocketed"] = {k: list(v) for k, v in self.pocketed.items()}
        out["calls"] = [c.to_dict(lang) for c in self.calls]
        out["actions"] = [a.to_dict() for a in self.actions]
        out["next_player"] = self.next_player
        out["game_over"] = self.game_over.to_dict() if self.game_over else None
        out["score"] = _plain(self.score)
        out["review"] = self.review or any(c.review for c in self.calls)
        return out


def _plain(obj: object) -> object:
    """JSON-ready: mappings to dicts with str keys, sequences to lists, floats rounded."""
    if isinstance(obj, Mapping):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if isinstance(obj, float):
        return round(obj, 6)
    return obj
