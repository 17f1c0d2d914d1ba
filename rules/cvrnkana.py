"""Cvrnkaná (Czech marble game): a pure rule engine, one shot record at a time.

Clauses follow ``shared/rules/cvrnkana.en.md`` (the Czech original prevails) and every call cites one.
A marble is in exactly one place: behind its start line (not flicked yet), on the field (a position, or
None once it left the camera's view: an ``off`` event, or seen before the shot and not after it) or in
the pit. A record is a *flick* when the player to move touches
a marble (7d); external factors (7f/7g), lost marbles (7b), relocations (7h) and pick-ups (7i) may come
alone and then do not pass the turn.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar, Iterable, Mapping, NoReturn

from .base import GameOver, Ruleset
from .game import CvrnkanaGame, owner, piece_key
from .hints import Hints, placements_of
from .record import Event, RecordError, Shot, pair_of, piece_of, to_of
from .ruling import Action, Call, Outcome, Ruling
from .state_doc import StateFields

__all__ = ["Cvrnkana", "CvrnkanaState", "match_points", "match_tally", "match_totals", "game_result"]

PLAYERS = ("A", "B")
MAX_ID = 20  # piece ids A1..A20, B1..B20 (rules.record)
EVENTS = ("contact", "pit", "touch", "external", "lost", "relocate", "pickup", "off")
GEOMETRY = ("start_line_distance_mm", "start_line_gap_mm", "start_line_length_mm", "relocation_min_mm",
            "marbles_per_player", "moved_tolerance_mm", "marble_min_mm", "marble_max_mm")
Point = tuple[float, float]


def other(player: str) -> str:
    return "B" if player == "A" else "A"


def _sorted(marbles: Iterable[str]) -> list[str]:
    return sorted(marbles, key=piece_key)


def _call(code: str, player: str | None, review: bool = False, evidence: Mapping[str, Any] | None = None) -> Call:
    """A call whose evidence also names the player, so every catalog text can be filled in."""
    ev = dict(evidence or {})
    if player is not None:
        ev.setdefault("player", player)
    return Call(code, player, review=review, evidence=ev)


@dataclass(frozen=True)
class CvrnkanaState:
    """One game's position. Collections are sorted tuples so equal positions compare and print equal."""

    game_number: int
    toss_winner: str
    to_move: str
    marbles: tuple[int, int]  # marbles in play per player (A, B); grows when extras join (7c)
    field: tuple[tuple[str, Point | None], ...]
    pit: tuple[str, ...]
    behind: tuple[str, ...]  # behind the start line, still to be flicked from there
    flicks: tuple[int, int]
    shot: int = 0
    outcome: Outcome | None = None
    final_flick: bool = False

    @property
    def starter(self) -> str:
        """Clause 1: the toss winner starts the odd games, the other player the even ones."""
        return self.toss_winner if self.game_number % 2 else other(self.toss_winner)

    def positions(self) -> dict[str, Point | None]:
        return dict(self.field)

    def count(self, player: str) -> int:
        return self.marbles[PLAYERS.index(player)]

    def flicks_of(self, player: str) -> int:
        return self.flicks[PLAYERS.index(player)]

    def in_pit(self, player: str) -> int:
        return sum(1 for m in self.pit if m[0] == player)

    def complete(self, player: str) -> bool:
        return self.in_pit(player) == self.count(player)

    def score(self) -> dict[str, dict[str, int]]:
        """Clause 7i: the pit count is the game's score; the rest is bookkeeping for the referee."""
        return {p: {"pit": self.in_pit(p), "field": sum(1 for m, _ in self.field if m[0] == p),
                    "behind": sum(1 for m in self.behind if m[0] == p), "flicks": self.flicks_of(p),
                    "marbles": self.count(p)} for p in PLAYERS}

    def to_dict(self) -> dict[str, Any]:
        return {
            "game": "cvrnkana", "game_number": self.game_number, "toss_winner": self.toss_winner,
            "starter": self.starter, "to_move": self.to_move,
            "marbles": dict(zip(PLAYERS, self.marbles)),
            "field": {m: (list(p) if p is not None else None) for m, p in self.field},
            "pit": list(self.pit), "behind": list(self.behind), "flicks": dict(zip(PLAYERS, self.flicks)),
            "shot": self.shot, "outcome": self.outcome.to_dict() if self.outcome else None,
            "final_flick": self.final_flick,
        }


def _state(game_number: int, toss_winner: str, to_move: str, marbles: Mapping[str, int],
           pos: Mapping[str, Point | None], pit: Iterable[str], behind: Iterable[str], flicks: Mapping[str, int],
           shot: int, outcome: Outcome | None, final_flick: bool) -> CvrnkanaState:
    return CvrnkanaState(
        game_number=game_number, toss_winner=toss_winner, to_move=to_move,
        marbles=(marbles["A"], marbles["B"]), field=tuple((m, pos[m]) for m in _sorted(pos)),
        pit=tuple(_sorted(pit)), behind=tuple(_sorted(behind)), flicks=(flicks["A"], flicks["B"]),
        shot=shot, outcome=outcome, final_flick=final_flick)


class Cvrnkana(Ruleset[CvrnkanaState]):
    """Cvrnkaná rules. ``Cvrnkana(profile.geometry, **options)``; options are the class flags below."""

    game: ClassVar[str] = "cvrnkana"
    name: ClassVar[str] = "cvrnkana"
    OPTIONS: ClassVar[tuple[str, ...]] = ("marble_counts", "flag_opening_order")
    marble_counts: tuple[int, ...] = (10, 15, 20)  # clause 5: the organiser's choices
    flag_opening_order: bool = True  # clause 2: prompt the referee when a field marble is flicked too early

    def __init__(self, geometry: Mapping[str, Any], **options: Any):
        super().__init__(geometry, **options)
        missing = [k for k in GEOMETRY if k not in self.geometry]
        if missing:
            raise ValueError(f"cvrnkana: geometry is missing {', '.join(missing)}")

    # -- geometry --------------------------------------------------------------------------------
    def start_line_centre(self, player: str) -> Point:
        """Centre of a player's start line: A left, B right of the gap, start_line_distance_mm towards -y."""
        g = self.geometry
        x = g["start_line_gap_mm"] / 2 + g["start_line_length_mm"] / 2
        return (-x if player == "A" else x, -float(g["start_line_distance_mm"]))

    def check_marble(self, piece: str, diameter_mm: float) -> Call | None:
        """Clause 5: a marble outside marble_min_mm..marble_max_mm (inclusive) is refused."""
        if self.geometry["marble_min_mm"] <= diameter_mm <= self.geometry["marble_max_mm"]:
            return None
        return _call("marble_size_refused", owner(piece), evidence={"piece": piece, "diameter_mm": diameter_mm})

    # -- states ----------------------------------------------------------------------------------
    def initial(self, toss_winner: str = "A", game_number: int = 1, marbles: int | None = None) -> CvrnkanaState:
        count = int(self.geometry["marbles_per_player"]) if marbles is None else marbles
        if count not in self.marble_counts:
            raise ValueError(f"cvrnkana: marbles per player must be one of {self.marble_counts} (clause 5), got {count}")
        if toss_winner not in PLAYERS:
            raise ValueError(f"cvrnkana: toss_winner must be 'A' or 'B', got {toss_winner!r}")
        if isinstance(game_number, bool) or not isinstance(game_number, int) or game_number < 1:
            raise ValueError(f"cvrnkana: game_number must be a positive integer, got {game_number!r}")
        starter = toss_winner if game_number % 2 else other(toss_winner)
        behind = [f"{p}{i}" for p in PLAYERS for i in range(1, count + 1)]
        return _state(game_number, toss_winner, starter, {"A": count, "B": count}, {}, (), behind,
                      {"A": 0, "B": 0}, 0, None, False)

    def next_game(self, state: CvrnkanaState, shot: Shot | None, game_no: int) -> CvrnkanaState:
        """The next game of the match: the same toss and the game after ``state``'s, so clause 1 picks who
        starts it (a match joined from a state of game 3 goes on with game 4, whatever ``game_no`` counts)."""
        return self.initial(toss_winner=state.toss_winner, game_number=state.game_number + 1)

    def hints(self, state: CvrnkanaState, ruling: Ruling | None = None) -> Hints:
        """The field marbles at known places; the spares that may still roll into the camera's view are
        those behind the start lines, then those on the field at an unknown place (they left the view, or
        a referee entered a flick the camera did not see)."""
        known = {m: p for m, p in state.field if p is not None}
        unknown = tuple(m for m, p in state.field if p is None)
        return Hints(state.to_move, known, placements_of(ruling), tuple(state.behind) + unknown, tuple(state.behind))

    def state_from_dict(self, data: Mapping[str, Any], where: str = "state") -> CvrnkanaState:
        """Inverse of ``CvrnkanaState.to_dict``; anything wrong is a ``StateError`` naming the field."""
        f = StateFields(data, self.game, where)
        ids = CvrnkanaGame.ids()
        pos = f.places(f.get("field"), "field", ids, self.game, self.field_limit_mm(), unknown=True)
        pit, behind = f.pieces(f.get("pit"), "pit", ids, self.game), f.pieces(f.get("behind"), "behind", ids, self.game)
        for key, names, others in (("pit", pit, set(pos)), ("behind", behind, set(pos) | set(pit))):
            for i, m in enumerate(names):
                if m in others:
                    f.fail(f"{key}[{i}]", f"{m} is also {'on the field' if m in pos else 'in the pit'} (a marble is in two places)")
        marbles, flicks = f.per_player("marbles", 0, 2 * MAX_ID), f.per_player("flicks")
        final = f.get("final_flick")
        if not isinstance(final, bool):
            f.fail("final_flick", f"must be true or false, got {final!r:.60}")
        state = _state(f.whole(f.get("game_number"), "game_number", 1, 1000), f.player(f.get("toss_winner"), "toss_winner"),
                       f.player(f.get("to_move"), "to_move"), marbles, pos, pit, behind, flicks,
                       f.whole(f.get("shot"), "shot"), f.outcome(), final)
        places = list(pos) + pit + behind
        for p in PLAYERS:
            placed = sum(1 for m in places if m[0] == p)
            if placed != state.count(p):
                f.fail(f"marbles.{p}", f"{p} has {state.count(p)} marbles but {placed} are placed")
        return state

    def unseen_flick(self, state: CvrnkanaState, piece: str | None = None, t_s: float = 0.0) -> dict[str, Any]:
        """The shot record of a flick the referee saw and the camera did not (it started and ended outside
        the view, e.g. an opening flick that stopped short): the player to move touched ``piece`` (by
        default their next marble behind the start line), and it lies somewhere on the field, place
        unknown (an ``off`` event). Judged like any other record; a marble that reached the pit or moved
        another one was in view, or must be decided by the referee."""
        p = state.to_move
        if state.outcome is not None:
            raise RecordError("unseen flick: the game is already over")
        if piece is None:
            mine = [m for m in state.behind if owner(m) == p]
            if not mine:
                raise RecordError(f"unseen flick: {p} has no marble behind the start line; say which field marble was flicked")
            piece = mine[0]
        where = {m: "field" for m, _ in state.field} | {m: "pit" for m in state.pit} | {m: "behind" for m in state.behind}
        if owner(piece) != p or where.get(piece) not in ("field", "behind"):
            raise RecordError(f"unseen flick: {piece} is not a marble of {p} (to move) behind the line or on the field")
        t = round(float(t_s), 6)
        return {"game": self.game, "player": p, "t0": t, "t1": t, "before": {}, "after": {},
                "events": [{"t": t, "kind": "touch", "piece": piece}, {"t": t, "kind": "off", "piece": piece}],
                "meta": {"source": "referee", "note": "flick out of the camera's view"}}

    # -- the shot --------------------------------------------------------------------------------
    def apply(self, state: CvrnkanaState, shot: Shot) -> tuple[CvrnkanaState, Ruling]:
        where = f"shot {state.shot + 1}"
        if state.outcome is not None:
            o = state.outcome
            result = f"{o.winner} won" if o.result == "win" else o.result
            raise GameOver(f"{where}: the game is already over ({result}, {o.reason}); start a new game")
        if shot.game != self.game:
            raise RecordError(f"{where}: game: is {shot.game!r} but this is a cvrnkana game")
        self.check_places(shot, where)
        return _Shot(self, state, shot, where).run()


class _Shot:
    """Working copy for one ``apply``: validates the record against the state, then rules on it."""

    def __init__(self, rules: Cvrnkana, state: CvrnkanaState, shot: Shot, where: str) -> None:
        self.rules, self.s, self.rec, self.where = rules, state, shot, where
        self.tol = float(rules.geometry["moved_tolerance_mm"])
        self.pos = state.positions()
        self.pit, self.behind = set(state.pit), set(state.behind)
        self.counts = dict(zip(PLAYERS, state.marbles))
        self.flicks = dict(zip(PLAYERS, state.flicks))
        self.status = {m: "field" for m in self.pos} | {m: "pit" for m in self.pit} | {m: "behind" for m in self.behind}
        self.calls: list[Call] = []
        self.actions: list[Action] = []

    def fail(self, path: str, message: str) -> NoReturn:
        raise RecordError(f"{self.where}: {path}: {message}")

    def where_is(self, m: str) -> str:
        return {"field": "on the field", "pit": "already in the pit", "behind": "still behind the start line",
                "out": f"not in this game ({m[0]} plays {self.counts[m[0]]} marbles)"}[self.status.get(m, "out")]

    def to_line(self, m: str, reason: str) -> None:
        """Marble goes back behind its start line to be flicked from there (an extra simply leaves)."""
        self.pos.pop(m, None)
        self.pit.discard(m)
        if self.status.get(m, "out") != "out":
            self.behind.add(m)
        self.actions.append(Action("to_start_line", m, m[0], self.rules.start_line_centre(m[0]), reason))

    # -- validation ------------------------------------------------------------------------------
    def classify(self) -> None:
        rec = self.rec
        for i, e in enumerate(rec.events):
            if e.kind not in EVENTS:
                self.fail(f"events[{i}].kind", f"{e.kind!r} is not a cvrnkana event (expected one of {', '.join(EVENTS)})")
        touches = [(i, piece_of(e)) for i, e in enumerate(rec.events) if e.kind == "touch"]
        if touches and rec.player and rec.player != self.s.to_move:
            self.fail("player", f"it is {self.s.to_move}'s turn, not {rec.player}'s (one flick each in turn, clause 2)")
        self.player = self.s.to_move if touches else (rec.player or self.s.to_move)
        # on the field after the shot: seen there, in the pit, or rolled out of the camera's view ('off':
        # still on the field, its place unknown)
        self.appear = set(rec.after) | {piece_of(e) for e in rec.events_of("pit")} | {piece_of(e) for e in rec.events_of("off")}
        self.read_touches(touches)
        self.check_places()
        self.check_events(bool(touches))

    def read_touches(self, touches: list[tuple[int, str]]) -> None:
        """What the player's touches ``(event index, marble)`` make of the shot: the flicked marble, whether it is
        an opening flick from behind the start line, and the other marbles touched (clauses 2 and 7d)."""
        st, p = self.status, self.player
        own: list[str] = []
        opp: list[str] = []
        for i, m in touches:
            if st.get(m) == "pit" or (st.get(m, "out") == "out" and m[0] != p):
                self.fail(f"events[{i}].piece", f"touch on {m}, which is {self.where_is(m)}")
            if m not in own and m not in opp:
                (own if m[0] == p else opp).append(m)
        counting = [m for m in own if st.get(m) == "field" or m in self.appear]
        self.flicked = counting[0] if counting else None
        self.opening = self.flicked is not None and st.get(self.flicked, "out") != "field"
        self.dead_touches = [m for m in own if m not in counting]  # at the start line without a flick (7d)
        self.second = [m for m in own if m != self.flicked]
        self.touched = set(own) | set(opp)
        self.opp_touched = [m for m in opp if st.get(m) == "field"]
        self.is_flick = self.flicked is not None or bool(self.opp_touched)

    def placed_ok(self, m: str) -> bool:
        """``m`` may be on the field after the shot: it was there before, or this shot flicked it onto it."""
        return self.status.get(m) == "field" or (m == self.flicked and self.opening)

    def check_places(self) -> None:
        """The marbles seen before the shot were on the field; those seen after it may be there."""
        for m in self.rec.before:
            if self.status.get(m) != "field":
                self.fail(f"before.{m}", f"{m} is {self.where_is(m)}, not on the field")
        for m in self.rec.after:
            if not self.placed_ok(m):
                self.fail(f"after.{m}", f"{m} is {self.where_is(m)} and was not flicked by {self.player} in this shot")

    def check_events(self, touches: bool) -> None:
        """Each event names marbles where it can happen to them (``touches``: the shot has touch events)."""
        st, p = self.status, self.player
        ext_seen: set[str] = set()
        for i, e in enumerate(self.rec.events):
            path = f"events[{i}]"
            if e.kind == "contact":
                self.check_contact(path, e)
                continue
            m = piece_of(e)  # every other cvrnkana event names one marble
            if e.kind == "pit" and not self.placed_ok(m):
                self.fail(f"{path}.piece", f"{m} entered the pit but is {self.where_is(m)}"
                          + ("" if st.get(m) == "pit" else f" and was not flicked by {p}"))
            elif e.kind == "lost" and (st.get(m) != "field" or m in self.appear):
                why = "is also seen in after or the pit" if st.get(m) == "field" else f"is {self.where_is(m)}"
                self.fail(f"{path}.piece", f"lost marble {m} {why}")
            elif e.kind == "relocate":
                self.check_relocate(path, m, touches)
            elif e.kind == "pickup" and st.get(m) not in ("field", "behind"):
                self.fail(f"{path}.piece", f"picked-up marble {m} is {self.where_is(m)}")
            elif e.kind == "external":
                self.check_external(path, m, e.effect, ext_seen)

    def check_contact(self, path: str, e: Event) -> None:
        """Both marbles of a contact are in this game (or one is the marble just flicked into it)."""
        for name, m in zip(("a", "b"), pair_of(e)):
            if self.status.get(m, "out") == "out" and m != self.flicked:
                self.fail(f"{path}.{name}", f"{m} is {self.where_is(m)}")

    def check_relocate(self, path: str, m: str, touches: bool) -> None:
        """Clause 7h: a relocation is recorded on its own, of an own marble on the field of the player to move."""
        if touches:
            self.fail(f"{path}.kind", "a relocation (7h) is not a flick; record it apart from touches")
        if self.status.get(m) != "field" or m[0] != self.s.to_move:
            self.fail(f"{path}.piece", f"only {self.s.to_move} (to move) may relocate an own marble on the "
                      f"field; {m} is {self.where_is(m)}")

    def check_external(self, path: str, m: str, effect: str | None, ext_seen: set[str]) -> None:
        """Clauses 7f/7g: one external event per marble in play; a stopped marble is seen where it stopped."""
        if not (self.status.get(m) in ("field", "behind") or (m == self.flicked and self.opening)):
            self.fail(f"{path}.piece", f"{m} is {self.where_is(m)}")
        if m in ext_seen:
            self.fail(f"{path}.piece", f"{m} has two external events")
        ext_seen.add(m)
        if effect == "stopped" and m not in self.rec.after:
            self.fail(f"{path}.effect", f"{m} was stopped by an external factor, so it must be in after")

    # -- ruling ----------------------------------------------------------------------------------
    def run(self) -> tuple[CvrnkanaState, Ruling]:
        self.classify()
        rec, p, s = self.rec, self.player, self.s
        if s.shot == 0:
            self.calls.append(_call("coin_toss", s.toss_winner,
                                    evidence={"game_number": s.game_number, "starter": s.starter}))
        self.pos.update(rec.before)
        start = dict(self.pos)
        pit_ev = {piece_of(e) for e in rec.events_of("pit")}
        ext = {piece_of(e): e.effect or "moved" for e in rec.events_of("external")}
        reloc = {piece_of(e): to_of(e) for e in rec.events_of("relocate")}
        lost = {piece_of(e) for e in rec.events_of("lost")}

        out_of_view = {piece_of(e) for e in rec.events_of("off")}

        def moved(m: str) -> bool:
            if m in pit_ev or m in out_of_view:
                return True
            if m in rec.after:
                was = start.get(m)
                return was is None or math.dist(was, rec.after[m]) > self.tol
            return m in rec.before  # seen before the shot, gone from view after it
        opener = [self.flicked] if self.opening and self.flicked is not None else []  # opening implies a flicked marble
        candidates = [m for m in self.status if self.status[m] == "field"] + opener
        moved_all = {m for m in candidates if moved(m)}
        movers = moved_all - set(ext) - set(reloc) - lost
        self.flick_calls(moved_all)
        foul = self.foul(movers, start)
        for m in _sorted(movers):
            if foul:
                self.undo(m, start.get(m))
            elif m in pit_ev:
                self.pos.pop(m, None)
                self.behind.discard(m)
                self.pit.add(m)
            else:
                self.behind.discard(m)
                self.pos[m] = rec.after.get(m)
        for m, xy in rec.after.items():
            if m not in movers and m not in ext and m not in reloc and self.status.get(m) == "field":
                self.pos[m] = xy  # still within the tolerance: keep the latest sighting
        joined = self.flicked in self.pos or self.flicked in self.pit
        if opener and self.status.get(opener[0], "out") == "out" and joined:
            self.counts[p] += 1
            self.calls.append(_call("extra_marble_joins", p, evidence={"piece": self.flicked, "marbles": self.counts[p]}))
        if movers and not self.is_flick:
            self.calls.append(_call("unexplained_move", p, review=True, evidence={"piece": _sorted(movers)}))
        self.externals(ext, start)
        for m in _sorted(lost):
            self.pos.pop(m)
            self.behind.add(m)
            self.actions.append(Action("replace", m, m[0], self.rules.start_line_centre(m[0]), "marble_replaced"))
            self.calls.append(_call("marble_replaced", owner(m), evidence={"piece": m}))
        for m, to in reloc.items():
            self.relocate(m, to, start.get(m))
        return self.finish()

    def flick_calls(self, moved_all: set[str]) -> None:
        p = self.player
        if not self.is_flick:
            if self.dead_touches:
                self.calls.append(_call("opening_touch_not_flick", p, evidence={"piece": self.dead_touches[0]}))
            return
        if self.opening:
            self.calls.append(_call("opening_flick", p, evidence={"piece": self.flicked}))
        else:
            piece = self.flicked or self.opp_touched[0]
            code = "field_flick" if piece == self.flicked and piece in moved_all else "touch_is_flick"
            self.calls.append(_call(code, p, evidence={"piece": piece}))
            waiting = [m for m in self.s.behind if m[0] == p]
            in_opening = self.s.flicks_of(p) < self.s.count(p)  # marbles sent back later (7b/7f/7g) wait freely
            if waiting and in_opening and self.rules.flag_opening_order:
                self.calls.append(_call("flick_out_of_order", p, review=True,
                                       evidence={"piece": piece, "behind": len(waiting)}))
        if self.second:
            self.calls.append(_call("second_marble_touched", p, review=True, evidence={"piece": self.second}))

    def foul(self, movers: set[str], start: Mapping[str, Point | None]) -> bool:
        """Clause 7a: an opponent's marble moved by anything but the flicked marble (a contact chain is legal)."""
        if not self.is_flick:
            return False
        reached = {self.flicked} if self.flicked else set()
        for e in self.rec.events_of("contact"):
            a, b = pair_of(e)
            if a in reached or b in reached:
                reached |= {a, b}
        bad = _sorted(m for m in movers if m[0] != self.player and (m in self.touched or m not in reached))
        if bad:
            self.calls.append(_call("opponent_marble_moved", self.player, evidence={
                "piece": bad, "touched": _sorted(self.touched & set(bad))}))
            unknown = any(start.get(m) is None for m in movers if not (m == self.flicked and self.opening))
            self.calls.append(_call("marbles_returned", self.player, review=unknown, evidence={"piece": _sorted(movers)}))
        return bool(bad)

    def undo(self, m: str, at: Point | None) -> None:
        if m == self.flicked and self.opening:
            self.to_line(m, "opponent_marble_moved")
            return
        self.pos[m] = at
        self.actions.append(Action("return", m, owner(m), at, "opponent_marble_moved"))

    def externals(self, ext: Mapping[str, str], start: Mapping[str, Point | None]) -> None:
        """Clauses 7f/7g: an external factor's effect is undone, except a stopped opponent's marble."""
        for m in _sorted(ext):
            if ext[m] == "stopped":
                after = self.rec.after[m]  # a stopped marble is seen where it stopped (classify checks it)
                own = m[0] == self.player
                if own and math.hypot(*after) < self.rules.geometry["start_line_distance_mm"]:
                    self.to_line(m, "external_stopped_own")
                    self.calls.append(_call("external_stopped_own", m[0], evidence={"piece": m, "at": list(after)}))
                    continue
                self.behind.discard(m)
                self.pos[m] = after
                if not own:
                    self.calls.append(_call("external_stopped_opponent", m[0], evidence={"piece": m, "at": list(after)}))
                if self.opening and m == self.flicked and self.status.get(m, "out") == "out":
                    self.counts[m[0]] += 1
                    self.calls.append(_call("extra_marble_joins", m[0], evidence={"piece": m, "marbles": self.counts[m[0]]}))
            elif self.status.get(m) == "field" and (was := start.get(m)) is not None:
                self.pos[m] = was
                self.actions.append(Action("return", m, m[0], was, "external_returned"))
                self.calls.append(_call("external_returned", m[0], evidence={"piece": m, "at": list(was)}))
            else:
                self.to_line(m, "external_to_start_line")
                self.calls.append(_call("external_to_start_line", m[0], evidence={"piece": m}))

    def relocate(self, m: str, to: Point, was: Point | None) -> None:
        """Clause 7h: anywhere on the field, but not closer than relocation_min_mm to the pit centre."""
        dist = math.hypot(*to)
        evidence = {"piece": m, "at": list(to), "distance_mm": round(dist, 1)}
        if dist < self.rules.geometry["relocation_min_mm"]:
            self.pos[m] = was
            self.calls.append(_call("relocation_refused", m[0], evidence=evidence))
            self.actions.append(Action("return", m, m[0], was, "relocation_refused"))
        else:
            self.pos[m] = to
            self.calls.append(_call("relocated", m[0], evidence=evidence))

    def finish(self) -> tuple[CvrnkanaState, Ruling]:
        s, p = self.s, self.player
        outcome, final = None, s.final_flick
        to_move = s.to_move
        if self.is_flick:
            self.flicks[p] += 1
            to_move = other(p)
            outcome, final = self.end_check()
        if outcome is None:
            pick = next((e.piece for e in self.rec.events_of("pickup")), None)
            if pick is not None:  # clause 7i: picking up an own marble before the count concedes the game
                outcome = Outcome("win", other(pick[0]), "concession")
                self.calls.append(_call("concession", pick[0], evidence={"piece": pick}))
        for r in self.rec.referee:
            self.calls.append(_call("referee_decision", None, evidence={"reason": r["code"]}))
        state = _state(s.game_number, s.toss_winner, to_move, self.counts, self.pos, self.pit, self.behind,
                       self.flicks, s.shot + 1, outcome, final and outcome is None)
        if outcome is not None:
            self.calls.append(_call("pit_count", None, evidence={q: state.in_pit(q) for q in PLAYERS}))
        pocketed = {q: tuple(_sorted(m for m in self.pit - set(s.pit) if m[0] == q)) for q in PLAYERS}
        ruling = Ruling(shot=s.shot + 1, game="cvrnkana", player=p, calls=tuple(self.calls),
                        actions=tuple(self.actions), next_player=None if outcome else to_move, game_over=outcome,
                        score=state.score(), pocketed=pocketed, review=any(c.review for c in self.calls))
        return state, ruling

    def end_check(self) -> tuple[Outcome | None, bool]:
        """Clauses 3, 4 and 7: equal flicks, the win, and the draw scored 0."""
        starter, p = self.s.starter, self.player
        done = {q: sum(1 for m in self.pit if m[0] == q) == self.counts[q] for q in PLAYERS}
        if done["A"] and done["B"]:
            self.calls.append(_call("draw_zero", None))
            return Outcome("draw", None, "draw_zero"), False
        second = other(starter)
        if p == starter and done[starter]:
            self.calls.append(_call("final_flick", second, evidence={"winner_to_be": starter}))
            return None, True
        winner = next((q for q in PLAYERS if done[q]), None)
        if winner is not None:
            self.calls.append(_call("game_won", winner, evidence={"winner": winner}))
            return Outcome("win", winner, "game_won"), False
        return None, False


def game_result(state: CvrnkanaState) -> dict[str, Any]:
    """A finished game as ``match_points`` takes it: result, winner and the pit count per player.

    ``pit`` is the count as made after the game (clause 7i), also for a draw; a drawn game is scored "0"
    (clause 7), which ``match_tally`` applies: its marbles count for neither player."""
    if state.outcome is None:
        raise ValueError(f"cvrnkana: game {state.game_number} is not over yet")
    return {"result": state.outcome.result, "winner": state.outcome.winner,
            "pit": {p: state.in_pit(p) for p in PLAYERS}}


def match_totals(games: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """Games won and marble totals (``{"games_won", "marbles"}``, each per player) of any number of games,
    a match under way too. Each game is ``{"result": "win"|"draw", "winner", "pit": {A, B}}``
    (``game_result``). A drawn game (all remaining marbles of both players in the pit on the last flick)
    "is scored as 0" (clause 7, Czech: "do skóre se započítá jako 0"): it is no game won by either player
    and adds 0 marbles to both totals, even when an extra marble (7c) left the pit counts unequal.
    ``marbles`` is the total of the won and lost games' pit counts."""
    won = {"A": 0, "B": 0}
    total = {"A": 0, "B": 0}
    for i, g in enumerate(games, 1):
        result, winner, pit = g.get("result"), g.get("winner"), g.get("pit")
        if result not in ("win", "draw") or (result == "win") != (winner in PLAYERS):
            raise ValueError(f"cvrnkana: game {i}: needs result 'win' with winner 'A'/'B', or 'draw'")
        if not isinstance(pit, Mapping) or any(not isinstance(pit.get(p), int) or pit[p] < 0 for p in PLAYERS):
            raise ValueError(f"cvrnkana: game {i}: pit must give a marble count for A and B")
        if result == "draw":
            continue  # clause 7: a draw is scored "0" -- no game won, no marbles for either player
        won[str(winner)] += 1  # a win: winner is "A" or "B" (checked above)
        for p in PLAYERS:
            total[p] += pit[p]
    return {"games_won": won, "marbles": total}


def match_tally(games: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """Clause 8 from the games of a match: ``{"games_won", "marbles", "points"}``, each per player.

    A match is an even number of games (clause 8); games won and marbles as ``match_totals`` counts them
    (a drawn game scored "0", clause 7). Points (clause 8): 3 for winning on games; on a draw on games 2
    for winning on total marbles, 1 for a draw on marbles, 1 for losing on marbles; 0 for losing on games."""
    games = list(games)
    if not games or len(games) % 2:
        raise ValueError(f"cvrnkana: a match is an even number of games (clause 8), got {len(games)}")
    totals = match_totals(games)
    won, total = totals["games_won"], totals["marbles"]
    if won["A"] != won["B"]:
        lead = "A" if won["A"] > won["B"] else "B"
        points = {lead: 3, other(lead): 0}
    elif total["A"] == total["B"]:
        points = {"A": 1, "B": 1}
    else:
        lead = "A" if total["A"] > total["B"] else "B"
        points = {lead: 2, other(lead): 1}
    return {**totals, "points": {p: points[p] for p in PLAYERS}}


def match_points(games: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Clause 8: 3 for winning on games; on a draw on games 2 for more marbles in total, 1 for equal or
    fewer; 0 for losing on games. Drawn games are scored "0" (clause 7): no game won, no marbles added.
    Each game is ``{"result": "win"|"draw", "winner", "pit": {A, B}}``; see ``match_tally``."""
    return match_tally(games)["points"]
