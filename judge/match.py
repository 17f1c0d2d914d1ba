"""The match being judged: rule engine + journal + whoever listens for calls.

Every judged shot goes to the journal before anyone hears about it, so what was announced is
what survives a crash. Referee actions (undo, override, next game) are journal entries too, and
the state after them is rebuilt by replaying the game's records through the pure rule engine.
Methods are thread-safe: referee actions arrive from the web server's thread.
"""
from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from rules.record import RecordError, ShotRecord, parse_record

from .errors import UserError
from .journal import Journal, record_hash

__all__ = ["Match", "JudgedShot", "RefereeError"]

Listener = Callable[[dict], None]
REASON_CODE = re.compile(r"[a-z][a-z0-9_]{0,39}")


class RefereeError(UserError):
    """A referee action that cannot be applied (nothing to undo, no such shot, bad code)."""


@dataclass(frozen=True)
class JudgedShot:
    game_no: int
    shot_no: int
    record: ShotRecord
    ruling: Any  # rules.ruling.Ruling
    ruling_dict: Mapping[str, Any]


class Match:
    """Judges shot records of one match and keeps the journal; resumes from it on start."""

    def __init__(self, engine, journal: Journal, *, lang: str = "en", listeners: list[Listener] | None = None):
        self.engine = engine
        self.journal = journal
        self.lang = lang
        self.game = engine.game
        self.listeners: list[Listener] = list(listeners or [])
        self._lock = threading.RLock()
        self.skipped = 0  # shots offered again that the journal already had
        self.last: dict | None = None
        resume = journal.resume()
        self.resumed_shots = len(resume.records)
        self._load(resume.game_no, resume.records, [s.shot_no for s in resume.shots])

    def _load(self, game_no: int, records, shot_nos: list[int]) -> None:
        self.game_no = game_no
        self.records = [parse_record(dict(r), f"journal game {game_no} shot {n}", self.game)
                        for r, n in zip(records, shot_nos)]
        self.shot_nos = list(shot_nos)
        self.state, rulings = self.engine.replay(self.records)
        self.rulings = list(rulings)

    # ----- shots ---------------------------------------------------------------------------------
    def judge(self, record: ShotRecord) -> JudgedShot | None:
        """Judge one shot, journal it, tell the listeners. None if the journal already had it."""
        with self._lock:
            raw = record.to_dict()
            if self.journal.find_shot(self.game_no, record_hash(raw)) is not None:
                self.skipped += 1
                return None
            try:
                state, ruling = self.engine.apply(self.state, record)
            except RecordError as exc:
                self.journal.append_action("note", self.game_no, {"error": str(exc), "record": raw})
                event = {"type": "unjudged", "game_no": self.game_no, "error": str(exc),
                         "text": f"shot not judged, referee please decide: {exc}"}
                shot = None
            else:
                state_dict = state.to_dict() if hasattr(state, "to_dict") else None
                ruling_dict = ruling.to_dict(self.lang)
                entry, added = self.journal.append_shot(self.game_no, raw, ruling_dict, state_dict)
                self.state = state
                self.records.append(record)
                self.rulings.append(ruling)
                self.shot_nos.append(entry.shot_no)
                shot = JudgedShot(self.game_no, entry.shot_no, record, ruling, ruling_dict)
                event = {"type": "call", "game_no": self.game_no, "shot_no": entry.shot_no, "ruling": ruling_dict}
                if (raw.get("meta") or {}).get("review"):  # what vision itself asks the referee to check
                    event["vision_review"] = list(raw["meta"]["review"])
                self.last = dict(event)  # without the state (which holds the last call itself)
            event["state"] = self.snapshot()
        self._tell(event)
        return shot

    def note_gap(self, gap) -> None:
        self.journal.append_action("gap", self.game_no, gap.to_dict())
        self._tell({"type": "gap", "game_no": self.game_no, "gap": gap.to_dict(), "text": gap.describe()})

    def note(self, text: str, **payload: Any) -> None:
        self.journal.append_action("note", self.game_no, {"text": text, **payload})
        self._tell({"type": "message", "text": text})

    # ----- referee actions -----------------------------------------------------------------------
    def undo(self, by: str = "referee") -> dict:
        with self._lock:
            if not self.records:
                raise RefereeError(f"nothing to undo in game {self.game_no}")
            shot_no = self.shot_nos[-1]
            self.journal.append_action("undo", self.game_no, {"by": by, "shot_no": shot_no}, shot_no=shot_no)
            self._reload()
            event = {"type": "referee", "action": "undo", "game_no": self.game_no, "shot_no": shot_no,
                     "text": f"shot {shot_no} undone", "state": self.snapshot()}
        self._tell(event)
        return event

    def override(self, shot_no: int, code: str, note: str = "", by: str = "referee") -> dict:
        """Add a referee decision to a shot of the current game; the game is re-judged from there."""
        with self._lock:
            if shot_no not in self.shot_nos:
                raise RefereeError(f"game {self.game_no} has no shot {shot_no} to override")
            if not isinstance(code, str) or not REASON_CODE.fullmatch(code):
                raise RefereeError(f"override code must be a short lower-case reason like 'pawn_moved_by_hand', got {code!r}")
            item = {"code": code}
            if note:
                item["note"] = str(note)[:200]
            self.journal.append_action("override", self.game_no, {"by": by, "referee": [item]}, shot_no=shot_no)
            self._reload()
            i = self.shot_nos.index(shot_no)
            ruling = self.rulings[i].to_dict(self.lang)
            event = {"type": "referee", "action": "override", "game_no": self.game_no, "shot_no": shot_no,
                     "ruling": ruling, "text": f"shot {shot_no}: referee decision {code}", "state": self.snapshot()}
        self._tell(event)
        return event

    def next_game(self, by: str = "referee") -> dict:
        with self._lock:
            self.journal.append_action("next_game", self.game_no, {"by": by})
            self._reload()
            event = {"type": "referee", "action": "next_game", "game_no": self.game_no,
                     "text": f"game {self.game_no} starts", "state": self.snapshot()}
        self._tell(event)
        return event

    def _reload(self) -> None:
        resume = self.journal.resume()
        self._load(resume.game_no, resume.records, [s.shot_no for s in resume.shots])
        self.last = ({"type": "call", "game_no": self.game_no, "shot_no": self.shot_nos[-1],
                      "ruling": self.rulings[-1].to_dict(self.lang)} if self.rulings else None)

    # ----- what spectators see -------------------------------------------------------------------
    def snapshot(self) -> dict:
        with self._lock:
            state = self.state.to_dict() if hasattr(self.state, "to_dict") else {}
            last = self.rulings[-1].to_dict(self.lang) if self.rulings else None
            return {"game": self.game, "game_no": self.game_no, "shots": len(self.records),
                    "last_shot_no": self.shot_nos[-1] if self.shot_nos else None,
                    "score": last["score"] if last else None, "to_move": state.get("to_move"),
                    "positions": state.get("positions", {}), "last": self.last}

    def _tell(self, event: dict) -> None:
        for listener in list(self.listeners):
            try:
                listener(event)
            except Exception as exc:  # noqa: BLE001 - a broken display must not stop the judging
                import sys
                print(f"shotjudge: listener failed: {type(exc).__name__}: {exc}", file=sys.stderr)
