"""Starting a match from the board as it is: the camera's proposal plus what only the referee knows.

A video begun mid-set or mid-game shows the pieces but not the game around them. ``vision.propose`` reads
which pieces lie where (and the Novuss bat, if it is down) from the first frames at rest; this module turns
that into a start state document (``rules.state_doc`` form) with what a camera cannot see taken from flags:

* both games: ``--turn A|B``, the player to play next;
* Novuss: ``--debt A:N,B:M``, the penalty pawns each player still owes (pawns not on the board are
  pocketed);
* Cvrnkaná: ``--pit A:N,B:M``, each player's marbles in the pit (the game's score), ``--starter A|B``, who
  started this game, and, for the bookkeeping only, ``--flicks A:N,B:M`` (default 0) and
  ``--game-number N`` (default 1). Marbles neither seen nor in the pit are behind the start lines.

Whatever is not given is asked: the proposal is printed with the exact flags that confirm it. ``replay``
takes the proposal when every asked flag is given, or with ``--confirm`` as it is (unasked defaults:
A to move, no debt, nothing in the pit); ``live`` waits for the referee to confirm or correct it on the
overlay page (``StartGate``), or takes it at once with ``--confirm``.
"""
from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from rules.game import PLAYERS

from .i18n import _
from .errors import UserError

__all__ = ["Facts", "add_start_args", "facts_from_args", "asked", "proposed_state", "describe", "board_proposal",
           "StartGate"]


def _per_player(text: str) -> dict[str, int]:
    """``A:3,B:1`` (or ``3,1``, A first) as ``{"A": 3, "B": 1}``."""
    import argparse

    parts = [p.strip() for p in text.split(",")]
    try:
        if len(parts) == 2 and all(":" in p for p in parts):
            pairs = dict((k.strip().upper(), int(v)) for k, v in (p.split(":", 1) for p in parts))
            if set(pairs) == set(PLAYERS) and all(v >= 0 for v in pairs.values()):
                return {p: pairs[p] for p in PLAYERS}
        elif len(parts) == 2:
            a, b = int(parts[0]), int(parts[1])
            if a >= 0 and b >= 0:
                return {"A": a, "B": b}
    except ValueError:
        pass
    raise argparse.ArgumentTypeError(_("give a count for each player like A:2,B:0, got {text}").format(text=repr(text)))


def add_start_args(p) -> None:
    """The start-from-board flags of ``live`` and ``replay``."""
    g = p.add_argument_group(
        "start from the board (a video or match joined mid-set or mid-game)",
        "--start-from-board reads the pieces from the first frames at rest and proposes them as the start; what "
        "a camera cannot see is given with the flags below (whatever is missing is asked). It is not the default: "
        "a board that does not show the opening may as well be a detection gone wrong, and a guessed start would "
        "judge every shot after it wrongly without a word.")
    g.add_argument("--start-from-board", action="store_true", help=_("propose the start state from the first frames"))
    g.add_argument("--confirm", action="store_true",
                   help=_("take the proposal as it is (with the flags given; unasked: A to move, no debt, empty pit)"))
    g.add_argument("--turn", choices=PLAYERS, help=_("who plays next"))
    g.add_argument("--debt", type=_per_player, metavar="A:N,B:M", help=_("Novuss: penalty pawns each player owes"))
    g.add_argument("--pit", type=_per_player, metavar="A:N,B:M", help=_("Cvrnkaná: marbles each player has in the pit"))
    g.add_argument("--starter", choices=PLAYERS, help=_("Cvrnkaná: who started this game"))
    g.add_argument("--flicks", type=_per_player, metavar="A:N,B:M", help=_("Cvrnkaná: flicks each player has made (default 0)"))
    g.add_argument("--game-number", type=int, default=1, metavar="N", help=_("Cvrnkaná: this game's number in the match"))


@dataclass(frozen=True)
class Facts:
    """What the referee said of the game the camera joined (None: not said)."""

    turn: str | None = None
    debt: Mapping[str, int] | None = None
    pit: Mapping[str, int] | None = None
    starter: str | None = None
    flicks: Mapping[str, int] | None = None
    game_number: int = 1


def facts_from_args(args) -> Facts:
    if getattr(args, "game_number", 1) < 1:
        raise UserError(_("--game-number must be 1 or more, got {game_number}").format(game_number=args.game_number))
    return Facts(args.turn, args.debt, args.pit, args.starter, args.flicks, args.game_number)


#: the facts each game asks for, as (Facts field, flag, what it is)
ASKED = {"novuss": (("turn", "--turn A|B", "who plays next"), ("debt", "--debt A:N,B:M", "penalty pawns owed")),
         "cvrnkana": (("turn", "--turn A|B", "who plays next"), ("pit", "--pit A:N,B:M", "marbles in the pit"),
                      ("starter", "--starter A|B", "who started this game"))}


def asked(game: str, facts: Facts) -> list[str]:
    """The flags of the facts the referee has not given yet."""
    return [flag for name, flag, _ in ASKED[game] if getattr(facts, name) is None]


def proposed_state(engine, proposal, facts: Facts) -> dict[str, Any]:
    """The start state document: the pieces of ``proposal`` with ``facts`` (defaults where not given),
    checked by the engine (a ``UserError`` naming the field if the two do not make a state)."""
    from rules.state_doc import Bat, StateError

    from rules.game import game_class

    turn = facts.turn or "A"
    if game_class(engine.game).striker is not None:  # Novuss: pawns and the bat; else Cvrnkaná's marbles
        seen = proposal.layout
        debt = dict(facts.debt or {"A": 0, "B": 0})
        doc: dict[str, Any] = {"game": "novuss", "shot": 0, "to_move": turn,
                               "positions": {k: list(v) for k, v in seen.items()},
                               "pocketed": [f"{p}{i}" for p in PLAYERS for i in range(1, 9) if f"{p}{i}" not in seen],
                               "debt": debt, "outcome": None}
        if proposal.bat is not None:
            doc["bat"] = Bat(proposal.bat, proposal.bat_colour_rgb).to_dict()
    else:
        doc = _cvrnkana(engine, proposal, facts, turn)
    try:
        return engine.state_from_dict(doc, where="proposed start").to_dict()
    except StateError as exc:
        raise UserError(_("{exc} (correct the flags, or write the state into a file for --state)").format(exc=exc)) from None


def _cvrnkana(engine, proposal, facts: Facts, turn: str) -> dict[str, Any]:
    count = int(engine.geometry["marbles_per_player"])
    pit_count = dict(facts.pit or {"A": 0, "B": 0})
    field, pit, behind = {}, [], []
    for p in PLAYERS:
        seen = proposal.of(p)
        if len(seen) + pit_count[p] > count:
            raise UserError(_("{p}: {value} marble(s) seen on the field and {value2} in the pit, but a player has "
                              "{count} (--pit, or the profile's marbles_per_player)").format(
                                  p=p, value=len(seen), value2=pit_count[p], count=count))
        field.update({m: list(proposal.layout[m]) for m in seen})
        rest = [f"{p}{i}" for i in range(len(seen) + 1, count + 1)]
        pit += rest[:pit_count[p]]
        behind += rest[pit_count[p]:]
    starter = facts.starter or turn
    toss = starter if facts.game_number % 2 else ("B" if starter == "A" else "A")
    flicks = dict(facts.flicks or {"A": 0, "B": 0})
    # shots so far: a game with marbles out already is under way (its first shot was the coin toss's)
    shot = sum(flicks.values()) or (1 if field or pit else 0)
    return {"game": "cvrnkana", "game_number": facts.game_number, "toss_winner": toss, "to_move": turn,
            "marbles": {"A": count, "B": count}, "field": field, "pit": pit, "behind": behind,
            "flicks": flicks, "shot": shot, "outcome": None, "final_flick": False}


def describe(proposal, doc: Mapping[str, Any], missing: Iterable[str]) -> str:
    """The proposal as a referee reads it, and what confirms it."""
    lines = [f"the board as the camera sees it (frames {proposal.frames[0]}..{proposal.frames[-1]} at rest"
             + (f", {proposal.skipped} frame(s) with a hand or cue skipped" if proposal.skipped else "") + "):"]
    for p in PLAYERS:
        ids = proposal.of(p)
        lines.append(f"  {p}: {len(ids)} on the board" + (": " if ids else "")
                     + ", ".join(f"{m} at ({x:.0f}, {y:.0f}) mm" for m, (x, y) in proposal.pieces if m in ids))
    if proposal.bat is not None:
        lines.append(f"  bat down at ({proposal.bat[0]:.0f}, {proposal.bat[1]:.0f}) mm"
                     + (f", colour RGB {tuple(proposal.bat_colour_rgb)}" if proposal.bat_colour_rgb else ""))
    for x, y in proposal.unsure:
        lines.append(f"  UNSURE: a disc at ({x:.0f}, {y:.0f}) mm that the camera could not give to a player; "
                     "it is not in the proposal")
    for (x, y), r in proposal.unidentified:
        lines.append(f"  UNIDENTIFIED: a disc of {2 * r:.0f} mm across at ({x:.0f}, {y:.0f}) mm whose colour is no "
                     "player's; it is not in the proposal (whose it is, or take it off the board)")
    facts = {"novuss": lambda: f"to move {doc['to_move']}, debt A {doc['debt']['A']} B {doc['debt']['B']}",
             "cvrnkana": lambda: f"to move {doc['to_move']}, pit A {len([m for m in doc['pit'] if m[0] == 'A'])} "
                                 f"B {len([m for m in doc['pit'] if m[0] == 'B'])}, started by {doc.get('starter')}"}
    lines.append(f"  proposed: {facts[doc['game']]()}")
    missing = list(missing)
    if missing:
        lines.append("  not known from the camera, please give: " + " ".join(missing))
    lines.append("the proposed state (JSON, for --state or the overlay's start-state action): "
                 + json.dumps(doc, ensure_ascii=False))
    return "\n".join(lines)


def board_proposal(source, calibration, background: list, skip: int = 0):
    """``vision.propose`` on the first frames of an open ``source`` (reads at most what it needs)."""
    from vision.propose import MAX_SKIPPED, REST_FRAMES, propose
    from vision.types import VisionError

    def frames():
        for n, frame in enumerate(source):
            if n >= skip + MAX_SKIPPED + REST_FRAMES + 1:
                return
            if n >= skip:
                yield frame

    try:
        return propose(frames(), calibration.plane, calibration.profile, background,
                       appearance=calibration.piece_appearance())
    except VisionError as exc:
        raise UserError(f"--start-from-board: {exc}") from None


@dataclass
class StartGate:
    """The proposed start waiting for the referee (``live`` without ``--confirm``): ``confirm(state)`` from
    the overlay's referee action takes the proposal (``state`` None) or the referee's correction (a state
    document, checked by the engine); ``on_confirm`` (the match's ``set_state``) journals it."""

    engine: Any
    proposal_doc: dict
    text: str
    on_confirm: Any = None
    confirmed: dict | None = None
    _done: threading.Event = field(default_factory=threading.Event)

    def confirm(self, state: Mapping[str, Any] | None = None, by: str = "referee") -> dict:
        from .match import RefereeError

        if self._done.is_set():
            raise RefereeError(_("the start state is already confirmed; correct the game with set-state"))
        doc = dict(self.proposal_doc if state is None else state)
        try:
            parsed = self.engine.state_from_dict(doc, where="start state").to_dict()
        except (ValueError, TypeError, KeyError) as exc:
            raise RefereeError(_("the start state cannot be used: {exc}").format(exc=exc)) from None
        if self.on_confirm is not None:
            self.on_confirm(parsed, by=by)
        self.confirmed = parsed
        self._done.set()
        return {"type": "referee", "action": "start_state", "how": "proposal" if state is None else "corrected",
                "state": parsed, "text": "the referee confirmed the start state" if state is None
                else "the referee corrected the start state"}

    @property
    def pending(self) -> bool:
        return not self._done.is_set()

    def wait(self, timeout_s: float | None = None) -> bool:
        return self._done.wait(timeout_s)
