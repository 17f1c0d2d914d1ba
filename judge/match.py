"""The match being judged: the referee step (``judge.referee``) + journal + whoever listens for calls.

Every judged shot goes to the journal before anyone hears about it, so what was announced is
what survives a crash. Referee actions (undo, override, next game) are journal entries too, and
the state after them is rebuilt by replaying the game's records through the pure rule engine.
Methods are thread-safe: referee actions arrive from the web server's thread. ``revision`` counts
the changes of the game state, so the judging thread can tell vision (``hints``) what changed.
A shot played after a game ended opens the next game, journaled with the state it starts from, unless the
match is over: the journal's ``match`` entry may give its length (``games``, ``live --games``), and once
that many games are played a further shot is refused and no game is opened. The match score
(``score()``) is refolded from the journal, so a resumed match has the same.
"""
from __future__ import annotations

import re
import threading
from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping, Sequence

from rules.game import game_class
from rules.hints import Hints
from rules.match import result_of
from rules.record import RecordError, Shot, parse_record

from .errors import UserError
from .gap_text import gap_text
from .i18n import N_, _
from .journal import Journal, Review, record_hash
from .referee import Referee
from .score_text import score_line

__all__ = ["Match", "JudgedShot", "RefereeError", "fold_games"]

Listener = Callable[[dict], None]
REASON_CODE = re.compile(r"[a-z][a-z0-9_]{0,39}")
PIECE_ID = re.compile(r"[A-Za-z][A-Za-z0-9]{0,9}")
ENTRY_STEP_S = 0.001  # a referee-entered shot is timed this long after the last judged one
#: the words for each referee decision's values (``engine.DECISIONS``), on the console and in the announcement
DECISION_LABELS = {("first_contact", "own"): N_("own pawn first"), ("first_contact", "opponent"): N_("opponent's pawn first"),
                   ("first_contact", "both"): N_("own and opponent's together"),
                   ("bat_zone", "in"): N_("bat in the zone"), ("bat_zone", "out"): N_("bat clear of the zone")}


#: who made a referee entry (a notice names them, translated)
BY = (N_("referee"), N_("judge"), N_("console"))


class RefereeError(UserError):
    """A referee action that cannot be applied (nothing to undo, no such shot, bad code)."""


@dataclass(frozen=True)
class JudgedShot:
    """A shot the match took: judged and journaled, or refused (``ruling`` None, ``error`` why; the
    referee is asked to decide)."""

    game_no: int
    shot_no: int | None
    record: Shot
    ruling: Any  # rules.ruling.Ruling
    ruling_dict: Mapping[str, Any] | None
    error: str | None = None


class Match:
    """Judges shot records of one match and keeps the journal; resumes from it on start."""

    def __init__(self, engine, journal: Journal, *, lang: str = "en", listeners: list[Listener] | None = None):
        self.engine = engine
        self.journal = journal
        self.games: int | None = (journal.match() or {}).get("games")  # the match's length (None: open)
        self.referee = Referee(engine, self.games)
        self.lang = lang
        self.game = engine.game
        self.listeners: list[Listener] = list(listeners or [])
        self._lock = threading.RLock()
        self.skipped = 0  # shots offered again that the journal already had (a restart re-reading its input)
        self.restart_revision = 0  # the latest change after which vision must start again from the hints,
        self.restart_kind = "resync"  # and how: from what it sees named by the state, or from the state alone
        self.last: dict | None = None
        self.revision = 0  # bumped whenever the game state changes (a judged shot, a referee action)
        self.hints: Hints | None = None
        resume = journal.resume()
        self.resumed_shots = len(resume.records)
        self._load(resume)
        self.pending_judged = 0  # records seen before a crash and judged on this start
        for pending in resume.pending:  # seen, then the process died before the ruling: judged now, once
            record = parse_record(dict(pending.record), f"journal entry {pending.seq}", self.game)
            self.judge(record, position=pending.position, seen=pending.seq)
            self.pending_judged += 1

    def _load(self, resume) -> None:
        """The current game rebuilt from the journal: its start state, then its shots folded through the
        same referee step (position tolerance included), so a restart reaches the same state; the games
        before it folded the same way for their results (a game the referee ended before it was over has
        none)."""
        self.game_no = resume.game_no
        self.shot_nos = [s.shot_no for s in resume.shots]
        before = unsettled_before(resume)
        self.state, self.records, self.rulings = fold_game(self.engine, self.referee, resume, self.game_no, resume.records,
                                                            self.shot_nos, before)
        # (game, shot) -> the refused shots still open when it was judged: its ruling is flagged for them
        self.unsettled = {(self.game_no, n): u for n, u in zip(self.shot_nos, before) if u}
        self.hints = self.engine.hints(self.state, self.rulings[-1] if self.rulings else None)
        self.finished = finished_games(self.engine, self.referee, resume)
        self.consumed = dict(resume.consumed)
        self.reviews = {r.seq: r for r in resume.reviews}
        self.revision += 1

    def score(self) -> dict[str, Any]:
        """The match score (``rules.match.match_score``): the games finished, the current one once over."""
        with self._lock:
            return self.referee.score(self.state, self.game_no, self.finished)

    # ----- shots ---------------------------------------------------------------------------------
    def judge(self, record: Shot, motions: Mapping[str, Any] | None = None,
              position: Mapping[str, Any] | None = None, seen: int | None = None) -> JudgedShot | None:
        """Judge one shot, journal it, tell the listeners. None if the journal already had it: its place in
        a recorded source (``position``: ``source``, ``live``, ``end_index``, the frame vision finished it
        on) is consumed, or the same record is in. (``motions``, vision's fitted motions, are for a
        replay's report; the journal keeps the shot itself.) ``seen``: the seq of a record already
        written ahead (a restart judging it); otherwise it is written ahead here."""
        shot, event = self._judge(record, position, seen)
        if event is not None:
            self._tell(event)
        return shot

    def refuse(self, record: Shot, reason: str, position: Mapping[str, Any] | None = None) -> JudgedShot | None:
        """A shot the judge will not rule on though the engine could (the camera saw too little of it): a
        review item as a refused shot, journaled the same way. None if the journal already had it."""
        shot, event = self._judge(record, position, None, refuse=reason)
        if event is not None:
            self._tell(event)
        return shot

    def consumed_in(self, source: str) -> int:
        """The last frame of the recorded ``source`` whose shot is in the journal (-1: none)."""
        with self._lock:
            return self.consumed.get(source, -1)

    def _duplicate(self, raw: Mapping[str, Any], position: Mapping[str, Any] | None, seen: int | None) -> bool:
        if seen is None and position and not position.get("live") and \
                int(position["end_index"]) <= self.consumed.get(str(position["source"]), -1):
            return True
        return self.journal.find_shot(self.game_no, record_hash(raw)) is not None

    def _judge(self, record: Shot, position=None, seen=None, refuse: str | None = None
               ) -> tuple[JudgedShot | None, dict | None]:
        with self._lock:
            raw = record.to_dict()
            if self._duplicate(raw, position, seen):
                self.skipped += 1
                return None, None
            if seen is None:
                seen = self.journal.append_seen(self.game_no, raw, position)
            if position and not position.get("live"):
                name = str(position["source"])
                self.consumed[name] = max(self.consumed.get(name, -1), int(position["end_index"]))
            step = self.referee.step(self.state, record, self.game_no, self.finished, self._unsettled())
            if refuse is not None:
                step = replace(step, state=self.state, ruling=None, error=refuse, new_game=None, game_no=self.game_no,
                               hints=self.hints)
            if step.new_game is not None:  # the game had ended: this shot opens the next, from its start state
                self.journal.append_action("next_game", self.game_no, {"by": "judge", "start": step.new_game.to_dict()})
                self.finished.append(result_of(self.state, self.game_no))
                self.game_no, self.records, self.rulings, self.shot_nos = step.game_no, [], [], []
                self.state = step.new_game
            if step.ruling is None:
                seq = self.journal.append_refused(self.game_no, raw, step.error, position, seen)
                self.reviews[seq] = Review(seq, self.game_no, raw, step.error, position)
                event = {"type": "unjudged", "game_no": self.game_no, "error": step.error, "review": seq,
                         "text": _("shot not judged, referee please decide (review {seq}): {error}").format(
                             seq=seq, error=step.error)}
                shot = JudgedShot(self.game_no, None, record, None, None, step.error)
                # vision starts again from what it sees, named by the state (which the shot did not change)
                self.restart_revision, self.restart_kind = self.revision + 1, "resync"
            else:
                ruling_dict = step.ruling.to_dict(self.lang)
                entry, added = self.journal.append_shot(self.game_no, raw, ruling_dict, step.state.to_dict(),
                                                        position, seen)
                self.state = step.state
                self.records.append(record)
                self.rulings.append(step.ruling)
                self.shot_nos.append(entry.shot_no)
                shot = JudgedShot(self.game_no, entry.shot_no, record, step.ruling, ruling_dict)
                event = {"type": "call", "game_no": self.game_no, "shot_no": entry.shot_no, "ruling": ruling_dict}
                if record.review:  # what vision itself asks the referee to check
                    event["vision_review"] = [dict(item) for item in record.review]
                if step.unsettled:  # judged on a state a refused shot may have changed
                    event["unsettled"] = list(step.unsettled)
                    self.unsettled[(self.game_no, entry.shot_no)] = step.unsettled
                self.last = dict(event)  # without the state (which holds the last call itself)
            self.hints = step.hints  # a refused shot too: vision re-syncs from the engine's state
            self.revision += 1
            event["state"] = self.snapshot()
        return shot, event

    def _unsettled(self) -> tuple[int, ...]:
        """The refused shots of the current game the referee has not settled (review numbers)."""
        return open_refused(self.reviews.values(), self.game_no)

    def changed_since(self, revision: int | None) -> tuple[int, Hints, str | None] | None:
        """``(revision, hints, restart)`` when the game state changed after ``revision``, else None: what the
        judging thread checks before the next frame (a referee action arrives on the web server's thread).
        ``restart`` (None: vision is told the hints) says vision starts again: ``resync``, vision and the
        state parted (a refused shot): from what it sees named by the state (``judge.resync``); ``state``,
        the referee set or confirmed the state: from the state's layout, as at the start of a match."""
        with self._lock:
            if self.revision == revision:
                return None
            restart = revision is not None and self.restart_revision > revision
            return self.revision, self.hints, self.restart_kind if restart else None

    def note_gap(self, gap) -> None:
        self.journal.append_action("gap", self.game_no, gap.to_dict())
        self._tell({"type": "gap", "game_no": self.game_no, "gap": gap.to_dict(), "text": gap_text(gap)})

    def note(self, text: str, **payload: Any) -> None:
        self.journal.append_action("note", self.game_no, {"text": text, **payload})
        self._tell({"type": "message", "text": text})

    # ----- referee actions -----------------------------------------------------------------------
    def undo(self, by: str = "referee") -> dict:
        with self._lock:
            if not self.records:
                raise RefereeError(_("nothing to undo in game {game_no}").format(game_no=self.game_no))
            shot_no = self.shot_nos[-1]
            self.journal.append_action("undo", self.game_no, {"by": by, "shot_no": shot_no}, shot_no=shot_no)
            self._reload()
            event = {"type": "referee", "action": "undo", "game_no": self.game_no, "shot_no": shot_no,
                     "text": _("shot {shot_no} undone").format(shot_no=shot_no), "state": self.snapshot()}
        self._tell(event)
        return event

    def override(self, shot_no: int, code: str, note: str = "", by: str = "referee") -> dict:
        """Add a referee decision to a shot of the current game; the game is re-judged from there."""
        with self._lock:
            if shot_no not in self.shot_nos:
                raise RefereeError(_("game {game_no} has no shot {shot_no} to override").format(
                    game_no=self.game_no, shot_no=shot_no))
            if not isinstance(code, str) or not REASON_CODE.fullmatch(code):
                raise RefereeError(_("override code must be a short lower-case reason like 'pawn_moved_by_hand', got "
                                     "{code}").format(code=repr(code)))
            item = {"code": code}
            if note:
                item["note"] = str(note)[:200]
            self.journal.append_action("override", self.game_no, {"by": by, "referee": [item]}, shot_no=shot_no)
            self._reload()
            i = self.shot_nos.index(shot_no)
            ruling = self.rulings[i].to_dict(self.lang)
            event = {"type": "referee", "action": "override", "game_no": self.game_no, "shot_no": shot_no,
                     "ruling": ruling, "text": _("shot {shot_no}: referee decision {code}").format(
                         shot_no=shot_no, code=code), "state": self.snapshot()}
        self._tell(event)
        return event

    def confirm(self, shot_no: int, by: str = "referee") -> dict:
        """The referee looked at a flagged call of the current game and it stands as the camera made it: the
        ruling is unchanged, the shot leaves the console's queue (journaled as a ``settle`` of the shot)."""
        with self._lock:
            self._flagged(shot_no)
            self.journal.append_action("settle", self.game_no, {"by": by, "shot": shot_no, "how": "confirm"}, shot_no=shot_no)
            event = {"type": "referee", "action": "confirm", "game_no": self.game_no, "shot_no": shot_no,
                     "text": _("shot {shot_no}: referee decision: the call stands").format(shot_no=shot_no),
                     "state": self.snapshot()}
        self._tell(event)
        return event

    def decide(self, shot_no: int, code: str, value: str, by: str = "referee") -> dict:
        """The referee decides a call the camera could not (``engine.DECISIONS``: Novuss's first contact, the
        bat against the zone line): journaled as an override carrying the decision, and the game re-judged
        from that shot, as the rules say with it. A decision the shot's record cannot bear (an opponent's
        pawn first where the bat touched none) is refused before anything is written."""
        with self._lock:
            i = self._flagged(shot_no)
            allowed = self.engine.DECISIONS.get(code)
            if allowed is None:
                raise RefereeError(_("{game} has no decision {code} (known: {known})").format(
                    game=self.game, code=repr(code), known=", ".join(self.engine.DECISIONS) or _("none")))
            if value not in allowed:
                raise RefereeError(_("{code} is decided as one of {allowed}, not {value}").format(
                    code=code, allowed=", ".join(allowed), value=repr(value)))
            item = {"code": code, "value": value}
            records = [r.to_dict() for r in self.records]
            records[i]["referee"] = records[i].get("referee", []) + [item]
            resume = self.journal.resume()
            try:
                fold_game(self.engine, self.referee, resume, self.game_no, records, self.shot_nos)
            except RecordError as exc:
                raise RefereeError(_("shot {shot_no}: the decision cannot stand: {error}").format(shot_no=shot_no, error=exc)) from None
            self.journal.append_action("override", self.game_no, {"by": by, "referee": [item]}, shot_no=shot_no)
            self._reload()
            ruling = self.rulings[self.shot_nos.index(shot_no)].to_dict(self.lang)
            event = {"type": "referee", "action": "decide", "game_no": self.game_no, "shot_no": shot_no, "ruling": ruling,
                     "text": _("shot {shot_no}: referee decision: {decision}").format(
                         shot_no=shot_no, decision=_(DECISION_LABELS.get((code, value), value))), "state": self.snapshot()}
        self._tell(event)
        return event

    def current_shots(self) -> tuple[int, list[tuple[int, Shot, Any]]]:
        """The current game's number and its judged shots: (shot number, effective record, ruling) each."""
        with self._lock:
            return self.game_no, list(zip(self.shot_nos, self.records, self.rulings))

    def _flagged(self, shot_no: int) -> int:
        """The index of ``shot_no`` in the current game, which must be there."""
        if shot_no not in self.shot_nos:
            raise RefereeError(_("game {game_no} has no shot {shot_no}").format(game_no=self.game_no, shot_no=shot_no))
        return self.shot_nos.index(shot_no)

    def unseen_flick(self, piece: str | None = None, by: str = "referee") -> dict:
        """Cvrnkaná: a flick the referee saw and the camera did not (it started and ended outside the view,
        e.g. an opening flick that stopped short of it). The engine writes the shot record (``piece``, by
        default the next marble of the player to move behind the start line, now lies on the field out of
        view) and it is judged and journaled like a camera shot, so a restart keeps it and undo removes it."""
        with self._lock:
            if game_class(self.game).sees_whole_field:
                raise RefereeError(_("a flick out of view is a Cvrnkaná entry; this is a {game} match").format(game=self.game))
            if piece is not None:
                piece = str(piece).strip().upper() or None
            if piece is not None and not PIECE_ID.fullmatch(piece):
                raise RefereeError(_("marble must be an id like A7 or B12, got {piece}").format(piece=repr(piece[:20])))
            t_s = round(self.records[-1].t1 + ENTRY_STEP_S, 6) if self.records else 0.0
            try:
                record = self._entry(piece, t_s, by)
                # the same entry again after an undo is a new shot: the journal knows shots by their record
                while self.journal.find_shot(self.game_no, record_hash(record.to_dict())) is not None:
                    t_s = round(t_s + ENTRY_STEP_S, 6)
                    record = self._entry(piece, t_s, by)
                self.engine.apply(self.state, record)  # refused here, before anything is journaled
            except RecordError as exc:
                raise RefereeError(str(exc)) from None
            marble = next(e.piece for e in record.events if e.kind == "touch")
            shot, call = self._judge(record)
            event = {"type": "referee", "action": "unseen_flick", "game_no": self.game_no, "shot_no": shot.shot_no,
                     "piece": marble, "by": by, "ruling": shot.ruling_dict,
                     "text": _("shot {shot_no}: {player} flicked {marble} out of the camera's view (entered by the {by})").format(
                         shot_no=shot.shot_no, player=record.player, marble=marble, by=_(by)), "state": call["state"]}
        self._tell(call)
        self._tell(event)
        return event

    def _entry(self, piece: str | None, t_s: float, by: str) -> Shot:
        raw = self.engine.unseen_flick(self.state, piece, t_s)
        raw["meta"] = {**(raw.get("meta") or {}), "entered_by": by}
        return parse_record(raw, "referee entry", self.game)

    def open_reviews(self) -> list[dict]:
        """The refused shots the referee has not settled, oldest first."""
        with self._lock:
            return [{"review": r.seq, "game_no": r.game_no, "error": r.error, "record": dict(r.record),
                     "position": dict(r.position) if r.position else None}
                    for r in self.reviews.values() if r.settled is None]

    def settle(self, review: int, by: str = "referee") -> dict:
        """The referee confirms the state as it stands for a refused shot (the shot does not count, or the
        pieces were put back as the state has them): the item is closed and vision re-syncs."""
        with self._lock:
            item = self.reviews.get(review)
            if item is None or item.settled is not None:
                raise RefereeError(_("no open review item {review}").format(review=review))
            self.journal.append_action("settle", self.game_no, {"by": by, "review": review, "how": "confirm"})
            self._reload()
            self.restart_revision, self.restart_kind = self.revision, "state"  # the board is as the state says
            event = {"type": "referee", "action": "settle", "game_no": self.game_no, "review": review,
                     "text": _("review {review}: the state stands").format(review=review), "state": self.snapshot()}
        self._tell(event)
        return event

    def set_state(self, state: Mapping[str, Any], review: int | None = None, by: str = "referee") -> dict:
        """The referee corrects the game state (where the pieces are, who is to move, the score): the game
        goes on from it (journaled; undo does not reach behind it), settling ``review`` if given."""
        with self._lock:
            if review is not None and (review not in self.reviews or self.reviews[review].settled is not None):
                raise RefereeError(_("no open review item {review}").format(review=review))
            try:
                parsed = self.engine.state_from_dict(dict(state))
            except (RecordError, ValueError, TypeError, KeyError) as exc:
                raise RefereeError(_("the state cannot be used: {error}").format(error=exc)) from None
            self.journal.append_action("set_state", self.game_no, {"by": by, "state": parsed.to_dict()})
            if review is not None:
                self.journal.append_action("settle", self.game_no, {"by": by, "review": review, "how": "state"})
            self._reload()
            self.restart_revision, self.restart_kind = self.revision, "state"  # the board is as the referee says
            event = {"type": "referee", "action": "set_state", "game_no": self.game_no, "review": review,
                     "text": _("the referee set the game state"), "state": self.snapshot()}
        self._tell(event)
        return event

    def next_game(self, by: str = "referee") -> dict:
        with self._lock:
            score = self.score()
            if score["over"]:
                raise RefereeError(_("{score}. No further game is opened").format(score=score_line(score)))
            start = self.engine.next_game(self.state, None, self.game_no + 1)
            self.journal.append_action("next_game", self.game_no, {"by": by, "start": start.to_dict()})
            self._reload()
            event = {"type": "referee", "action": "next_game", "game_no": self.game_no,
                     "text": _("game {game_no} starts").format(game_no=self.game_no), "state": self.snapshot()}
        self._tell(event)
        return event

    def _reload(self) -> None:
        self._load(self.journal.resume())
        self.last = ({"type": "call", "game_no": self.game_no, "shot_no": self.shot_nos[-1],
                      "ruling": self.rulings[-1].to_dict(self.lang)} if self.rulings else None)

    # ----- what spectators see -------------------------------------------------------------------
    def snapshot(self) -> dict:
        with self._lock:
            state = self.state.to_dict()
            last = self.rulings[-1].to_dict(self.lang) if self.rulings else None
            return {"game": self.game, "game_no": self.game_no, "shots": len(self.records),
                    "last_shot_no": self.shot_nos[-1] if self.shot_nos else None,
                    "score": last["score"] if last else None, "to_move": state.get("to_move"),
                    "positions": _on_surface(state), "last": self.last,
                    "reviews": [{"review": r.seq, "error": r.error} for r in self.reviews.values() if r.settled is None],
                    "match": self.score()}

    def _tell(self, event: dict) -> None:
        tell(self.listeners, event)


def tell(listeners: list[Listener], event: dict, who: str = "shotjudge") -> None:
    """Each listener hears ``event``; one that fails is reported and the rest still hear it (a broken display
    must not stop the judging, nor the hub's storing)."""
    for listener in list(listeners):
        try:
            listener(event)
        except Exception as exc:  # noqa: BLE001 - see above
            import sys
            print(_("{who}: listener failed: {error}").format(who=who, error=f"{type(exc).__name__}: {exc}"), file=sys.stderr)


def _on_surface(state: dict) -> dict:
    """Where the state has each piece on the surface: Novuss ``positions``; a Cvrnkaná ``field`` marble
    whose place is known (one that left the view, or was flicked unseen, has none)."""
    if "positions" in state:
        return dict(state["positions"])
    return {k: v for k, v in (state.get("field") or {}).items() if v is not None}


def open_refused(reviews, game_no: int) -> tuple[int, ...]:
    """The review numbers of game ``game_no``'s refused shots the referee has not settled."""
    return tuple(r.seq for r in reviews if r.settled is None and r.game_no == game_no)


def unsettled_before(resume) -> list[tuple[int, ...]]:
    """For each effective shot of the current game, the refused shots of that game still open now that
    were refused before it (its ruling assumed they changed nothing, as when it was judged)."""
    open_ = open_refused(resume.reviews, resume.game_no)
    return [tuple(seq for seq in open_ if seq < shot.seq) for shot in resume.shots]


def fold_game(engine, referee: Referee, resume, game_no: int, raws, shot_nos,
              unsettled: Sequence[tuple[int, ...]] = ()) -> tuple[Any, list[Shot], list[Any]]:
    """Game ``game_no`` from its start state (``live --state`` for game 1, the journaled one of a game
    opened or set later, else the opening) and its effective records: (state, records, rulings).
    ``unsettled``: per record, the open refused shots before it (``unsettled_before``)."""
    records = [parse_record(dict(r), f"journal game {game_no} shot {n}", engine.game) for r, n in zip(raws, shot_nos)]
    start = resume.starts.get(game_no) or (resume.match.get("start") if game_no == 1 else None)
    state = engine.state_from_dict(start) if start else engine.initial()
    rulings = []
    for i, record in enumerate(records):
        step = referee.step(state, record, game_no, (), unsettled[i] if i < len(unsettled) else ())
        if step.ruling is None:
            raise RecordError(f"journal game {game_no}: a journaled shot is refused now: {step.error}")
        state = step.state
        rulings.append(step.ruling)
    return state, records, rulings


def finished_games(engine, referee: Referee, resume) -> list[dict[str, Any]]:
    """The results of the journaled games before the current one (a game the referee ended before it was
    over has none)."""
    out = []
    for game_no in range(1, resume.game_no):
        raws = resume.games.get(game_no, ())
        state, _, _ = fold_game(engine, referee, resume, game_no, raws, range(1, len(raws) + 1))
        if state.outcome is not None:
            out.append(result_of(state, game_no))
    return out


def fold_games(engine, resume, games: int | None) -> dict[str, Any]:
    """The match score of a journal, read only (``Resume``), as ``Match.score`` gives it for a running match."""
    referee = Referee(engine, games)
    state, _, _ = fold_game(engine, referee, resume, resume.game_no, resume.records, [s.shot_no for s in resume.shots])
    return referee.score(state, resume.game_no, finished_games(engine, referee, resume))
