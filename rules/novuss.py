"""Novuss, amateur variant (seed: «Любительский вариант»), as a pure rule engine.

``Novuss(geometry).apply(state, shot) -> (state, ruling)``. Geometry (board, zones, circle, piece
and hole sizes, the simultaneity window) comes from the table profile. Where the seed is silent the
Latvian federation's rules are used, each as an option (``OPTIONS``) so a club can switch it off.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from .base import GameOver, Ruleset
from .geometry import dist, disc_fits_in_rect, free_spot_on_circle, free_spot_on_line
from .game import NovussGame, owner
from .hints import Hints, placements_of
from .record import Event, RecordError, Shot, pair_of, piece_of
from .ruling import Action, Call, Outcome, Ruling
from .state_doc import Bat, StateFields

__all__ = ["Novuss", "NovussSeed", "NovussState", "Stroke"]

PAWNS = tuple(f"{p}{i}" for p in "AB" for i in range(1, 9))
OWN_CUSHION = {"A": "S", "B": "N"}
FAR_CUSHION = {"A": "N", "B": "S"}
SIDE_ANGLE = {"N": math.pi / 2, "S": -math.pi / 2, "E": 0.0, "W": math.pi}


def other(player: str) -> str:
    return "B" if player == "A" else "A"


@dataclass(frozen=True)
class NovussState:
    """Everything the rules need between shots. Positions are board mm; the bat is not kept after a stroke
    (it is placed by hand before every stroke): ``bat`` is where it lies when a state starts (a video begun
    mid-set shows it down), for vision to follow it from there."""

    positions: tuple[tuple[str, tuple[float, float]], ...]
    pocketed: tuple[str, ...] = ()
    debt: tuple[int, int] = (0, 0)
    to_move: str = "A"
    shot: int = 0
    outcome: Outcome | None = None
    bat: Bat | None = None

    @property
    def pos(self) -> dict[str, tuple[float, float]]:
        return dict(self.positions)

    def debt_of(self, player: str) -> int:
        return self.debt["AB".index(player)]

    def on_table(self, player: str) -> list[str]:
        return [p for p, _ in self.positions if owner(p) == player]

    def to_dict(self) -> dict[str, Any]:
        out = {
            "game": "novuss", "shot": self.shot, "to_move": self.to_move,
            "positions": {p: [round(x, 3), round(y, 3)] for p, (x, y) in self.positions},
            "pocketed": list(self.pocketed), "debt": {"A": self.debt[0], "B": self.debt[1]},
            "outcome": self.outcome.to_dict() if self.outcome else None,
        }
        if self.bat is not None:
            out["bat"] = self.bat.to_dict()
        return out


def _state(positions: Mapping[str, tuple[float, float]], **kw: Any) -> NovussState:
    pawns = {p: (float(x), float(y)) for p, (x, y) in positions.items() if p != "bat"}
    return NovussState(positions=tuple(sorted(pawns.items())), **kw)


#: what the referee may decide on a shot where the camera could not (a ``Shot.referee`` item ``{"code", "value"}``):
#: it replaces what vision timed or measured. Any other referee item is a foul the referee saw (``referee_foul``).
DECISIONS: dict[str, tuple[str, ...]] = {"first_contact": ("own", "opponent", "both"), "bat_zone": ("in", "out")}


@dataclass(frozen=True)
class Stroke:
    """What happened in one stroke, read from the shot record (no rule applied yet)."""

    player: str
    before: Mapping[str, tuple[float, float]]
    stroke: str
    bat_contacts: tuple[Event, ...]
    first: tuple[str, ...]
    first_t: float | None
    pocketed: tuple[str, ...]
    off: tuple[Event, ...]
    bat_gone: Event | None
    bat_after: tuple[float, float] | None
    after: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    decided: Mapping[str, str] = field(default_factory=dict)  # the referee's decisions (``DECISIONS``) on this shot


class Novuss(Ruleset[NovussState]):
    """The amateur variant with the federation's answers where the seed is silent."""

    game = "novuss"
    name = "novuss"
    OPTIONS = ("opponent_last_pawn_wins", "both_last_pawns", "bat_inside_zone_loses_turn", "position_tolerance_mm")
    DECISIONS = DECISIONS
    #: Seed silent, federation: pocketing only the opponent's last pawn gives the opponent the set.
    opponent_last_pawn_wins = True
    #: Seed silent, federation: own and opponent's last pawns in one stroke -> "replay" (or "shooter_wins").
    both_last_pawns = "replay"
    #: III.5 read as "the bat reached the zone": line visible through the hole, or the hole wholly inside.
    bat_inside_zone_loses_turn = True
    #: Position uncertainty of the record (from calibration); geometric calls closer than this are flagged.
    position_tolerance_mm = 0.0

    def __init__(self, geometry: Mapping[str, Any], **options: Any):
        super().__init__(geometry, **options)
        g = self.geometry
        self.half = g["surface_mm"] / 2
        self.r_pawn = g["pawn_diameter_mm"] / 2
        self.r_bat = g["bat_diameter_mm"] / 2
        self.hole_pawn = g["pawn_hole_mm"] / 2
        self.hole_bat = g["bat_hole_mm"] / 2
        self.w = g["line_width_mm"]
        self.same_time_s = g["simultaneous_contact_s"]

    # ----- geometry -------------------------------------------------------------------------------
    def zone_rect(self, player: str) -> tuple[float, float, float, float]:
        """The striking zone along the player's own cushion, bounded by the centre of its lines."""
        hw, depth, h = self.geometry["zone_half_width_mm"], self.geometry["zone_depth_mm"], self.half
        return (-hw, hw, -h, -h + depth) if player == "A" else (-hw, hw, h - depth, h)

    def _inner(self, player: str) -> tuple[float, float, float, float]:
        x0, x1, y0, y1 = self.zone_rect(player)
        half_w = self.w / 2
        # The cushion side of the zone has no line; the other three sides do.
        return (x0 + half_w, x1 - half_w, y0 - 1.0, y1 - half_w) if player == "A" else (x0 + half_w, x1 - half_w, y0 + half_w, y1 + 1.0)

    def in_circle_dark(self, c: tuple[float, float], hole_r: float) -> bool:
        return math.hypot(*c) + hole_r < self.geometry["circle_radius_mm"] - self.w / 2

    def in_zone_dark(self, c: tuple[float, float], hole_r: float, player: str) -> bool:
        return disc_fits_in_rect(c, hole_r, *self._inner(player))

    def is_dark(self, c: tuple[float, float], player: str) -> bool:
        """Dark for ``player``: the hole lies wholly inside the circle or the player's own zone,
        so no boundary line shows through it (federation wording of light/dark)."""
        return self.in_circle_dark(c, self.hole_pawn) or self.in_zone_dark(c, self.hole_pawn, player)

    def bat_zone_margin_mm(self, c: tuple[float, float], player: str) -> float:
        """Signed distance from the bat's hole to the zone's line band: <= 0 means the line shows
        through the hole or the hole is inside the zone (III.5); > 0 is clear of it."""
        x0, x1, y0, y1 = self.zone_rect(player)
        half_w = self.w / 2
        band = (x0 - half_w, x1 + half_w, y0 - 1e6, y1 + half_w) if player == "A" else (x0 - half_w, x1 + half_w, y0 - half_w, y1 + 1e6)
        dx = max(band[0] - c[0], 0.0, c[0] - band[1])
        dy = max(band[2] - c[1], 0.0, c[1] - band[3])
        outside = math.hypot(dx, dy)
        return outside - self.hole_bat

    def bat_in_zone(self, c: tuple[float, float], player: str) -> bool:
        margin = self.bat_zone_margin_mm(c, player)
        if margin > 0:
            return False
        if self.bat_inside_zone_loses_turn:
            return True
        # Literal reading: only when a line actually shows through the hole.
        return not disc_fits_in_rect(c, self.hole_bat, *self._inner(player))

    def penalty_spot(self, player: str, pieces: Mapping[str, tuple[float, float]]) -> tuple[float, float] | None:
        """II: on the centre line tight against the cushion opposite the penalised player; if taken,
        along that cushion on the side with fewer pawns (a tie goes to the side with room nearer)."""
        y = (self.half - self.r_pawn) * (1 if player == "A" else -1)
        others = [(p, self.r_pawn) for k, p in pieces.items() if k != "bat"]
        limit = self.half - self.r_pawn
        x = free_spot_on_line(0.0, y, self.r_pawn, others, 0, -limit, limit)
        if x is not None:
            return (0.0, y)
        left = sum(1 for k, p in pieces.items() if k != "bat" and p[0] < 0)
        right = sum(1 for k, p in pieces.items() if k != "bat" and p[0] > 0)
        xr = free_spot_on_line(0.0, y, self.r_pawn, others, +1, -limit, limit)
        xl = free_spot_on_line(0.0, y, self.r_pawn, others, -1, -limit, limit)
        if xl is None:
            return None if xr is None else (xr, y)
        if xr is None or left < right:
            return (xl, y)
        if right < left:
            return (xr, y)
        return (xl, y) if abs(xl) < abs(xr) else (xr, y)

    def circle_spot(self, side: str | None, from_xy: tuple[float, float] | None,
                    pieces: Mapping[str, tuple[float, float]]) -> tuple[float, float] | None:
        """II.5: the centre of the circle; if taken, on the circle's edge on the side it flew off (also used,
        as a reading, for the pawns over the cushion of III.3, where the rule text gives no place)."""
        others = [(p, self.r_pawn) for k, p in pieces.items() if k != "bat"]
        if all(dist((0.0, 0.0), o) >= 2 * self.r_pawn for o, _ in others):
            return (0.0, 0.0)
        if side is not None:
            angle = SIDE_ANGLE[side]
        elif from_xy is not None and from_xy != (0.0, 0.0):
            angle = math.atan2(from_xy[1], from_xy[0])
        else:
            angle = 0.0
        return free_spot_on_circle(angle, self.geometry["circle_radius_mm"], self.r_pawn, others)

    # ----- state ----------------------------------------------------------------------------------
    def opening(self) -> dict[str, tuple[float, float]]:
        """Each player's 8 pawns in a touching row along the far cushion, 4 each side of the centre line."""
        d, y = 2 * self.r_pawn, self.half - self.r_pawn
        pos = {}
        for i in range(8):
            x = (i - 3.5) * d
            pos[f"A{i + 1}"] = (round(x, 6), y)
            pos[f"B{i + 1}"] = (round(x, 6), -y)
        return pos

    def initial(self, first: str = "A", positions: Mapping[str, tuple[float, float]] | None = None) -> NovussState:
        if first not in ("A", "B"):
            raise ValueError(f"first player must be 'A' or 'B', got {first!r}")
        return _state(self.opening() if positions is None else positions, to_move=first)

    def next_game(self, state: NovussState, shot: Shot | None, game_no: int) -> NovussState:
        """A new set starts from where the pawns stand, the shooter of its first stroke to move (with no
        stroke yet, from the opening layout, A to move)."""
        if shot is None:
            return self.initial()
        return self.initial(first=shot.player or "A", positions={k: v for k, v in shot.before.items() if k != "bat"})

    def hints(self, state: NovussState, ruling: Ruling | None = None) -> Hints:
        """The pawns where the state has them, and the bat where a start state has it down (otherwise it is
        placed by hand before every stroke)."""
        layout = dict(state.positions) | ({"bat": state.bat.at} if state.bat is not None else {})
        return Hints(state.to_move, layout, placements_of(ruling))

    def state_from_dict(self, d: Mapping[str, Any], where: str = "state") -> NovussState:
        """Inverse of ``NovussState.to_dict``; anything wrong is a ``StateError`` naming the field."""
        f = StateFields(d, self.game, where)
        ids = NovussGame.ids()
        positions = f.places(f.get("positions"), "positions", ids, self.game, self.field_limit_mm())
        pocketed = f.pieces(f.get("pocketed"), "pocketed", ids - {"bat"}, self.game)
        for i, pawn in enumerate(pocketed):
            if pawn in positions:
                f.fail(f"pocketed[{i}]", f"{pawn} is also in positions (a pawn in two places)")
        debt = f.per_player("debt", 0, 10_000)
        return _state(positions, pocketed=tuple(pocketed), debt=(debt["A"], debt["B"]),
                      to_move=f.player(f.get("to_move"), "to_move"), shot=f.whole(f.get("shot"), "shot"),
                      outcome=f.outcome(), bat=f.bat(self.field_limit_mm()))

    # ----- reading a shot -------------------------------------------------------------------------
    def read(self, state: NovussState, rec: Shot, where: str) -> Stroke:
        """Check the record against the state and extract what the rules look at."""
        player = rec.player or state.to_move
        _check_not_pocketed(state, rec, where)
        if "bat" not in rec.before:
            raise RecordError(f"{where}: before.bat: the bat must be on the board before a stroke")
        before = {**state.pos, **rec.before}
        gone = {piece_of(e) for e in rec.events_of("pocket", "off")}
        for piece in rec.before:
            if piece not in rec.after and piece not in gone:
                raise RecordError(f"{where}: after.{piece}: {piece} is in before but neither in after nor pocketed/off")
        for piece in rec.after:
            if piece not in before:
                raise RecordError(f"{where}: after.{piece}: {piece} appears but was not on the board")
        ricochet, bat_contacts = _bat_path(rec, player)
        first: tuple[str, ...] = ()
        first_t = None
        if bat_contacts:
            first_t = bat_contacts[0].t
            first = tuple(sorted({_partner(e) for e in bat_contacts if e.t - first_t <= self.same_time_s + 1e-12}))
        decided = decisions_of(rec, where)
        if "first_contact" in decided:
            first = _decided_first(bat_contacts, player, decided["first_contact"], where)
        bat_gone = next((e for e in rec.events if e.piece == "bat" and e.kind in ("pocket", "off")), None)
        return Stroke(
            player=player, before=before, stroke="ricochet" if ricochet else "direct",
            bat_contacts=tuple(bat_contacts), first=first, first_t=first_t,
            pocketed=tuple(piece_of(e) for e in rec.events_of("pocket") if e.piece != "bat"),
            off=tuple(e for e in rec.events_of("off") if e.piece != "bat"), bat_gone=bat_gone,
            bat_after=rec.after.get("bat"), after={**{k: v for k, v in before.items() if k not in gone}, **rec.after},
            decided=decided,
        )

    # ----- the rules ------------------------------------------------------------------------------
    def fouls(self, shot: Stroke) -> tuple[list[Call], list[str]]:
        """Section II: which penalties this stroke earned, and which own dark pawns go back (II.4)."""
        p = shot.player
        calls: list[Call] = []
        back: list[str] = []
        light_left = any(owner(k) == p and not self.is_dark(c, p) for k, c in shot.before.items() if k != "bat")
        touched_own = any(owner(_partner(e)) == p for e in shot.bat_contacts)
        if not touched_own and light_left:
            calls.append(Call("no_own_pawn_touched", p))
        if shot.bat_gone is not None:
            code = "bat_pocketed" if shot.bat_gone.kind == "pocket" else "bat_off_board"
            calls.append(Call(code, p, evidence={"t": shot.bat_gone.t}))
        owners = {owner(k) for k in shot.first}
        if light_left and other(p) in owners:
            code = "own_and_opponent_together" if p in owners else "opponent_pawn_first"
            calls.append(Call(code, p, evidence={"t": shot.first_t, "piece": list(shot.first)}))
        if shot.stroke == "direct":
            for ev in shot.bat_contacts:
                pawn = _partner(ev)
                if not self.is_dark(shot.before[pawn], p):
                    break  # the bat touched a pawn outside the zones first: dark pawns are fair now (I.3b)
                if owner(pawn) == p:
                    calls.append(Call("dark_pawn_hit_direct", p, evidence={"t": ev.t, "piece": pawn, "at": list(shot.before[pawn])}))
                    back.append(pawn)
                    break
            for ev in shot.off:
                if owner(piece_of(ev)) == other(p):
                    calls.append(Call("opponent_pawn_off_direct", p, evidence={"t": ev.t, "piece": ev.piece}))
        return calls, back

    def review_first_contact(self, shot: Stroke, rec: Shot) -> Call | None:
        """A first-contact call that the timing uncertainty could move across either edge of 'at the same time'
        (own first vs together, or together vs opponent first)."""
        own = next((e for e in shot.bat_contacts if owner(_partner(e)) == shot.player), None)
        opp = next((e for e in shot.bat_contacts if owner(_partner(e)) == other(shot.player)), None)
        if own is None or opp is None:
            return None
        u = 2 * math.hypot(own.t_err, opp.t_err)
        gap = opp.t - own.t
        if u > 0 and abs(abs(gap) - self.same_time_s) <= u or min(own.confidence, opp.confidence) < 0.5:
            return Call("review_first_contact", shot.player, review=True,
                        evidence={"gap_ms": round(gap * 1000, 2), "uncertainty_ms": round(u * 1000, 2),
                                  "own": _partner(own), "opponent": _partner(opp)})
        return None

    def apply(self, state: NovussState, rec: Shot) -> tuple[NovussState, Ruling]:
        where = f"shot {state.shot + 1}"
        if rec.game != "novuss":
            raise RecordError(f"{where}: game: is {rec.game!r}, expected 'novuss'")
        if state.outcome is not None:
            raise GameOver(f"{where}: the set is already over ({state.outcome.result}, {state.outcome.reason})")
        self.check_places(rec, where)
        shot = self.read(state, rec, where)
        p, o = shot.player, other(shot.player)
        calls, back = self.fouls(shot)
        calls += [Call("referee_foul", p, evidence={"reason": r["code"]}) for r in rec.referee if r["code"] not in DECISIONS]
        if "first_contact" in shot.decided:
            review: Call | None = Call("first_contact_decided", p, evidence={"piece": list(shot.first)})
        else:
            review = self.review_first_contact(shot, rec)
        actions: list[Action] = []
        pos = {k: v for k, v in shot.after.items() if k != "bat"}
        pocketed = list(state.pocketed)
        potted_now = [k for k in shot.pocketed if k not in back]
        pocketed += potted_now
        self._put_back(shot, back, pos, calls, actions, where)
        penalised = any(c.code in _PENALTY_CODES for c in calls)
        debt = self._pay_penalties(state, p, penalised, pocketed, pos, calls, actions, where)
        keeps = self._keeps_turn(shot, potted_now, penalised, calls)
        if review is not None:
            calls.append(review)
        outcome = self.outcome(p, pos)
        if outcome is not None:  # the set is over: nobody strikes again
            calls = [c for c in calls if c.code != "series_continues"]
            calls.append(Call(outcome.reason, outcome.winner, evidence={"winner": outcome.winner or "-"}))
        new = _state(pos, pocketed=tuple(pocketed), debt=(debt[0], debt[1]),
                     to_move=p if keeps else o, shot=state.shot + 1, outcome=outcome)
        ruling = Ruling(
            shot=state.shot + 1, game="novuss", player=p, calls=tuple(calls), actions=tuple(actions),
            next_player=None if outcome else new.to_move, game_over=outcome, score=self.score(new),
            pocketed={"A": tuple(k for k in potted_now if owner(k) == "A"), "B": tuple(k for k in potted_now if owner(k) == "B")},
            stroke=shot.stroke, first_contact=_first_kind(shot), review=review is not None and review.review,
        )
        return new, ruling

    def _put_back(self, shot: Stroke, back: list[str], pos: dict[str, tuple[float, float]], calls: list[Call],
                  actions: list[Action], where: str) -> None:
        """II.4 and II.5: the own dark pawns hit go back where they were, the pawns off the board to the circle.

        Only II.5 places a pawn that flew over the cushion: an **opponent's** pawn knocked off with a
        **direct stroke** goes to the circle's centre (or its edge on the side it flew off), call
        ``pawn_returned_to_circle`` (novuss.II.5). Any other pawn over the cushion (an own pawn, or any
        pawn off with a ricochet stroke) falls under III.3 alone, which passes the turn (no penalty) but
        does not say where the pawn goes: putting it in the circle the same way is the engine's reading,
        call ``pawn_returned_to_circle_rule_silent`` (novuss.III.3)."""
        o = other(shot.player)
        for pawn in back:  # II.4: the dark pawn goes back to its previous place
            pos[pawn] = shot.before[pawn]
            actions.append(Action("return", piece=pawn, at=shot.before[pawn], reason="dark_pawn_hit_direct"))
        for ev in shot.off:
            piece = piece_of(ev)
            if piece in back:
                continue
            spot = self.circle_spot(ev.side, shot.before.get(piece), pos)
            if spot is None:
                raise RecordError(f"{where}: events: no free place in the circle for {piece}")
            pos[piece] = spot
            ii5 = shot.stroke == "direct" and owner(piece) == o  # the same test as the II.5 penalty (fouls)
            reason = "opponent_pawn_off_direct" if ii5 else "pawn_off_board"
            code = "pawn_returned_to_circle" if ii5 else "pawn_returned_to_circle_rule_silent"
            actions.append(Action("return", piece=piece, at=spot, reason=reason))
            calls.append(Call(code, owner(piece), evidence={"piece": piece, "at": [round(spot[0], 1), round(spot[1], 1)]}))

    def _pay_penalties(self, state: NovussState, p: str, penalised: bool, pocketed: list[str],
                       pos: dict[str, tuple[float, float]], calls: list[Call], actions: list[Action],
                       where: str) -> list[int]:
        """Section II: the shooter's new penalty (if ``penalised``) and both players' debts, paid with pocketed
        pawns put down by the far cushion; returns the debts (A, B) left."""
        o = other(p)
        debt = list(state.debt)
        if penalised:
            debt["AB".index(p)] += 1
        # Penalties and debts are paid with the player's pocketed pawns; with all eight on the table
        # the penalty stays a debt (II, last paragraph).
        for who in (p, o):
            while debt["AB".index(who)] > 0:
                mine = [k for k in pocketed if owner(k) == who]
                if not mine:
                    if who == p and penalised and debt["AB".index(who)] > state.debt_of(who):
                        calls.append(Call("penalty_debt", who, evidence={
                            "player": who, "on_table": sum(1 for k in pos if owner(k) == who)}))
                        actions.append(Action("debt", player=who, amount=1))
                    break
                spot = self.penalty_spot(who, pos)
                if spot is None:
                    raise RecordError(f"{where}: no room for a penalty pawn along the cushion")
                pawn = min(mine, key=lambda k: int(k[1:]))
                pocketed.remove(pawn)
                pos[pawn] = spot
                fresh = who == p and penalised and debt["AB".index(who)] == state.debt_of(who) + 1
                debt["AB".index(who)] -= 1
                code = "penalty_pawn" if fresh else "debt_settled"
                calls.append(Call(code, who, evidence={"piece": pawn, "at": [round(spot[0], 1), round(spot[1], 1)]}))
                actions.append(Action("place_penalty", piece=pawn, player=who, at=spot, reason=code))
        return debt

    def _keeps_turn(self, shot: Stroke, potted_now: list[str], penalised: bool, calls: list[Call]) -> bool:
        """Section III: whether the shooter strikes again (the series continues), with the calls that decide it."""
        p, o = shot.player, other(shot.player)
        own_potted = [k for k in potted_now if owner(k) == p]
        opp_potted = [k for k in potted_now if owner(k) == o]
        keeps = bool(own_potted)
        if penalised:
            calls.append(Call("turn_lost_penalty", p))
            keeps = False
        if shot.off:
            calls += [Call("pawn_off_board", p, evidence={"piece": e.piece, "t": e.t}) for e in shot.off]
            keeps = False
        if own_potted and opp_potted:
            calls.append(Call("opponent_pawn_pocketed", p, evidence={"piece": opp_potted}))
            keeps = False
        if not own_potted:
            calls.append(Call("no_pawn_pocketed", p))
            keeps = False
        if shot.bat_after is not None:
            margin = self.bat_zone_margin_mm(shot.bat_after, p)
            decided = shot.decided.get("bat_zone")
            if decided == "in" or decided is None and self.bat_in_zone(shot.bat_after, p):
                calls.append(Call("bat_in_zone", p, evidence={"at": list(shot.bat_after), "margin_mm": round(margin, 2)}))
                keeps = False
            if decided is not None:
                calls.append(Call("bat_zone_decided", p, evidence={"margin_mm": round(margin, 2)}))
            elif self.position_tolerance_mm and abs(margin) <= self.position_tolerance_mm:
                calls.append(Call("review_bat_zone", p, review=True, evidence={"margin_mm": round(margin, 2)}))
        if keeps:
            calls.append(Call("series_continues", p, evidence={"player": p}))
        return keeps

    def outcome(self, shooter: str, pos: Mapping[str, tuple[float, float]]) -> Outcome | None:
        left = {who: sum(1 for k in pos if owner(k) == who) for who in "AB"}
        o = other(shooter)
        if left[shooter] == 0 and left[o] == 0:
            if self.both_last_pawns == "replay":
                return Outcome("replay", None, "both_last_pawns")
            return Outcome("win", shooter, "all_pawns_pocketed")
        if left[o] == 0:
            return Outcome("win", o, "opponent_last_pawn" if self.opponent_last_pawn_wins else "all_pawns_pocketed")
        if left[shooter] == 0:
            return Outcome("win", shooter, "all_pawns_pocketed")
        return None

    @staticmethod
    def score(state: NovussState) -> dict[str, dict[str, int]]:
        return {who: {"pocketed": sum(1 for k in state.pocketed if owner(k) == who),
                      "on_table": len(state.on_table(who)), "debt": state.debt_of(who)} for who in "AB"}


class NovussSeed(Novuss):
    """The seed text read literally where it is silent: no federation last-pawn rules, and III.5
    only when a zone line actually shows through the bat's hole."""

    name = "novuss-seed"
    opponent_last_pawn_wins = False
    both_last_pawns = "shooter_wins"
    bat_inside_zone_loses_turn = False


_PENALTY_CODES = frozenset({
    "no_own_pawn_touched", "bat_pocketed", "bat_off_board", "opponent_pawn_first",
    "own_and_opponent_together", "dark_pawn_hit_direct", "opponent_pawn_off_direct", "referee_foul",
})


def _check_not_pocketed(state: NovussState, rec: Shot, where: str) -> None:
    """No piece the record names (before, after, or in an event) is one the state has pocketed."""
    for key, src in (("before", rec.before), ("after", rec.after)):
        for piece in src:
            if piece in state.pocketed:
                raise RecordError(f"{where}: {key}.{piece}: {piece} is already pocketed")
    for i, ev in enumerate(rec.events):
        for piece in ev.pieces():
            if piece in state.pocketed:
                raise RecordError(f"{where}: events[{i}]: {piece} is already pocketed (pawn pocketed twice)")


def _bat_path(rec: Shot, player: str) -> tuple[bool, list[Event]]:
    """Whether the bat came off the far cushion before touching a pawn (a ricochet), and its contacts in order."""
    ricochet_side = FAR_CUSHION[player]
    bat_contacts: list[Event] = []
    ricochet = False
    for ev in rec.events:
        if ev.kind == "cushion" and ev.piece == "bat" and not bat_contacts and ev.side == ricochet_side:
            ricochet = True
        if ev.kind == "contact" and "bat" in (ev.a, ev.b):
            bat_contacts.append(ev)
    return ricochet, bat_contacts


def _partner(ev: Event) -> str:
    """The piece the bat met in a contact event."""
    a, b = pair_of(ev)
    return b if a == "bat" else a


def decisions_of(rec: Shot, where: str) -> dict[str, str]:
    """The referee's decisions in a record (the last one of each kind counts), each value checked."""
    out: dict[str, str] = {}
    for r in rec.referee:
        code = r["code"]
        if code in DECISIONS:
            value = r.get("value")
            if value not in DECISIONS[code]:
                raise RecordError(f"{where}: referee: {code} must be decided as one of {', '.join(DECISIONS[code])}, "
                                  f"got {value!r}")
            out[code] = str(value)
    return out


def _decided_first(contacts: Sequence[Event], player: str, value: str, where: str) -> tuple[str, ...]:
    """What the bat touched first, as the referee decided: the first own pawn it touched, the first
    opponent's, or both of them; a side the bat never touched in the record cannot be decided."""
    mine = next((_partner(e) for e in contacts if owner(_partner(e)) == player), None)
    theirs = next((_partner(e) for e in contacts if owner(_partner(e)) == other(player)), None)
    wanted = {"own": (mine,), "opponent": (theirs,), "both": (mine, theirs)}[value]
    if any(p is None for p in wanted):
        side = "own pawn" if mine is None else "opponent's pawn"
        raise RecordError(f"{where}: referee: first_contact {value}: the bat touched no {side} in this shot")
    return tuple(sorted(p for p in wanted if p is not None))


def _first_kind(shot: Stroke) -> str:
    owners = {owner(k) for k in shot.first}
    if not owners:
        return "none"
    if owners == {shot.player}:
        return "own"
    return "opponent" if shot.player not in owners else "both"
