"""The shot record: what happened in one shot, in board millimetres and seconds.

This is the contract between vision, the simulator and the rule engines
(``docs/schemas/shot-record.schema.json``). Parsing validates everything a rule
engine relies on, so an engine never sees a malformed record.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

__all__ = ["Event", "ShotRecord", "RecordError", "parse_record", "load_records", "EVENT_FIELDS", "piece_ids"]

# kind -> (required fields, optional fields); every event also has t and may have t_err, confidence.
EVENT_FIELDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "contact": (("a", "b"), ()),
    "cushion": (("piece", "side"), ()),
    "pocket": (("piece", "pocket"), ()),
    "off": (("piece",), ("side",)),
    "pit": (("piece",), ()),
    "touch": (("piece",), ()),
    "external": (("piece",), ("effect",)),
    "lost": (("piece",), ()),
    "relocate": (("piece", "to"), ()),
    "pickup": (("piece",), ()),
}
SIDES = ("N", "S", "E", "W")
POCKETS = ("NE", "NW", "SE", "SW")
EFFECTS = ("moved", "stopped")
TIME_SLACK_S = 1e-6


class RecordError(ValueError):
    """A shot record that cannot be judged; the message names the record and the field."""


def piece_ids(game: str) -> frozenset[str]:
    if game == "novuss":
        return frozenset(["bat"] + [f"{p}{i}" for p in "AB" for i in range(1, 9)])
    if game == "cvrnkana":
        return frozenset(f"{p}{i}" for p in "AB" for i in range(1, 21))
    raise RecordError(f"game: unknown game {game!r} (expected 'novuss' or 'cvrnkana')")


def owner(piece: str) -> str | None:
    """'A' or 'B' for a pawn or marble; None for the bat."""
    return piece[0] if piece[:1] in ("A", "B") else None


@dataclass(frozen=True)
class Event:
    t: float
    kind: str
    piece: str | None = None
    a: str | None = None
    b: str | None = None
    side: str | None = None
    pocket: str | None = None
    effect: str | None = None
    to: tuple[float, float] | None = None
    t_err: float = 0.0
    confidence: float = 1.0

    def pieces(self) -> tuple[str, ...]:
        return (self.a, self.b) if self.kind == "contact" else (self.piece,)

    def to_dict(self) -> dict:
        out: dict[str, Any] = {"t": self.t, "kind": self.kind}
        for name in EVENT_FIELDS[self.kind][0] + EVENT_FIELDS[self.kind][1]:
            value = getattr(self, name)
            if value is not None:
                out[name] = list(value) if name == "to" else value
        if self.t_err:
            out["t_err"] = self.t_err
        if self.confidence != 1.0:
            out["confidence"] = self.confidence
        return out


@dataclass(frozen=True)
class ShotRecord:
    game: str
    t0: float
    t1: float
    before: Mapping[str, tuple[float, float]]
    after: Mapping[str, tuple[float, float]]
    events: tuple[Event, ...] = ()
    player: str | None = None
    referee: tuple[Mapping[str, Any], ...] = ()
    meta: Mapping[str, Any] = field(default_factory=dict)

    def events_of(self, *kinds: str) -> list[Event]:
        return [e for e in self.events if e.kind in kinds]

    def to_dict(self) -> dict:
        out: dict[str, Any] = {"game": self.game}
        if self.player:
            out["player"] = self.player
        out.update({
            "t0": self.t0, "t1": self.t1,
            "before": {k: list(v) for k, v in sorted(self.before.items())},
            "after": {k: list(v) for k, v in sorted(self.after.items())},
            "events": [e.to_dict() for e in self.events],
        })
        if self.referee:
            out["referee"] = [dict(r) for r in self.referee]
        if self.meta:
            out["meta"] = dict(self.meta)
        return out


class _Checker:
    def __init__(self, where: str):
        self.where = where

    def fail(self, path: str, message: str):
        raise RecordError(f"{self.where}: {path}: {message}")

    def number(self, value: Any, path: str) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            self.fail(path, f"must be a finite number, got {value!r}")
        return float(value)

    def point(self, value: Any, path: str) -> tuple[float, float]:
        if not isinstance(value, (list, tuple)) or len(value) != 2:
            self.fail(path, f"must be [x_mm, y_mm], got {value!r}")
        return (self.number(value[0], f"{path}[0]"), self.number(value[1], f"{path}[1]"))

    def piece(self, value: Any, path: str, ids: frozenset[str], game: str) -> str:
        if value not in ids:
            self.fail(path, f"unknown piece {value!r} for {game}")
        return value


def _positions(chk: _Checker, raw: Any, name: str, ids: frozenset[str], game: str) -> dict[str, tuple[float, float]]:
    if not isinstance(raw, _PairList) and not isinstance(raw, dict):
        chk.fail(name, "must be an object {piece_id: [x_mm, y_mm]}")
    pairs = raw.pairs if isinstance(raw, _PairList) else list(raw.items())
    out: dict[str, tuple[float, float]] = {}
    for key, value in pairs:
        chk.piece(key, f"{name}.{key}", ids, game)
        if key in out:
            chk.fail(f"{name}.{key}", "piece appears twice (a piece in two places)")
        out[key] = chk.point(value, f"{name}.{key}")
    return out


class _PairList(dict):
    """A JSON object that remembers duplicate keys, so 'a piece in two places' is caught."""

    def __init__(self, pairs):
        super().__init__(pairs)
        self.pairs = pairs


def _event(chk: _Checker, raw: Any, path: str, ids: frozenset[str], game: str) -> Event:
    if not isinstance(raw, dict):
        chk.fail(path, "must be an object")
    kind = raw.get("kind")
    if kind not in EVENT_FIELDS:
        chk.fail(f"{path}.kind", f"unknown event kind {kind!r} (expected one of {', '.join(EVENT_FIELDS)})")
    required, optional = EVENT_FIELDS[kind]
    allowed = set(required) | set(optional) | {"t", "kind", "t_err", "confidence"}
    for key in raw:
        if key not in allowed:
            chk.fail(f"{path}.{key}", f"not a field of a {kind} event")
    if "t" not in raw:
        chk.fail(f"{path}.t", "is missing")
    values: dict[str, Any] = {"t": chk.number(raw["t"], f"{path}.t"), "kind": kind}
    for name in required:
        if name not in raw:
            chk.fail(f"{path}.{name}", f"is missing (a {kind} event needs {', '.join(required)})")
    for name in required + optional:
        if name not in raw:
            continue
        value, fpath = raw[name], f"{path}.{name}"
        if name in ("a", "b", "piece"):
            values[name] = chk.piece(value, fpath, ids, game)
        elif name == "side":
            if value not in SIDES:
                chk.fail(fpath, f"must be one of {', '.join(SIDES)}, got {value!r}")
            values[name] = value
        elif name == "pocket":
            if value not in POCKETS:
                chk.fail(fpath, f"must be one of {', '.join(POCKETS)}, got {value!r}")
            values[name] = value
        elif name == "effect":
            if value not in EFFECTS:
                chk.fail(fpath, f"must be one of {', '.join(EFFECTS)}, got {value!r}")
            values[name] = value
        elif name == "to":
            values[name] = chk.point(value, fpath)
    if kind == "contact" and values["a"] == values["b"]:
        chk.fail(f"{path}.b", "a piece cannot contact itself")
    if "t_err" in raw:
        values["t_err"] = chk.number(raw["t_err"], f"{path}.t_err")
        if values["t_err"] < 0:
            chk.fail(f"{path}.t_err", "must not be negative")
    if "confidence" in raw:
        values["confidence"] = chk.number(raw["confidence"], f"{path}.confidence")
        if not 0.0 <= values["confidence"] <= 1.0:
            chk.fail(f"{path}.confidence", "must be between 0 and 1")
    return Event(**values)


def parse_record(raw: Any, where: str = "record", game: str | None = None) -> ShotRecord:
    """Validate one shot record (a dict from JSON) and return it frozen.

    ``game`` is the game the caller expects; a record for another game is refused.
    """
    chk = _Checker(where)
    if not isinstance(raw, dict):
        chk.fail("record", "must be a JSON object")
    allowed = {"game", "player", "t0", "t1", "before", "after", "events", "referee", "meta"}
    for key in raw:
        if key not in allowed:
            chk.fail(key, "unknown field")
    rec_game = raw.get("game")
    if rec_game not in ("novuss", "cvrnkana"):
        chk.fail("game", f"must be 'novuss' or 'cvrnkana', got {rec_game!r}")
    if game is not None and rec_game != game:
        chk.fail("game", f"is {rec_game!r} but this is a {game} match")
    ids = piece_ids(rec_game)
    player = raw.get("player")
    if player is not None and player not in ("A", "B"):
        chk.fail("player", f"must be 'A' or 'B', got {player!r}")
    for name in ("t0", "t1", "before", "after"):
        if name not in raw:
            chk.fail(name, "is missing")
    t0, t1 = chk.number(raw["t0"], "t0"), chk.number(raw["t1"], "t1")
    if t1 < t0:
        chk.fail("t1", f"is before t0 ({t1} < {t0})")
    before = _positions(chk, raw["before"], "before", ids, rec_game)
    after = _positions(chk, raw["after"], "after", ids, rec_game)
    raw_events = raw.get("events", [])
    if not isinstance(raw_events, list):
        chk.fail("events", "must be a list")
    events = tuple(_event(chk, e, f"events[{i}]", ids, rec_game) for i, e in enumerate(raw_events))
    last = t0
    gone: dict[str, str] = {}
    for i, ev in enumerate(events):
        if ev.t < last - TIME_SLACK_S:
            chk.fail(f"events[{i}].t", f"is out of order ({ev.t} comes after {last})")
        if ev.t > t1 + TIME_SLACK_S:
            chk.fail(f"events[{i}].t", f"is after the shot ended (t1={t1})")
        last = max(last, ev.t)
        if ev.kind in ("pocket", "off", "pit"):
            if ev.piece in gone:
                what = "pocketed twice" if ev.kind == gone[ev.piece] == "pocket" else f"already left the surface ({gone[ev.piece]})"
                chk.fail(f"events[{i}].piece", f"{ev.piece} {what}")
            gone[ev.piece] = ev.kind
            if ev.piece in after:
                chk.fail(f"events[{i}].piece", f"{ev.piece} left the surface ({ev.kind}) but is also in after (a piece in two places)")
    referee = raw.get("referee", [])
    if not isinstance(referee, list) or not all(isinstance(r, dict) and isinstance(r.get("code"), str) for r in referee):
        chk.fail("referee", "must be a list of objects with a 'code'")
    meta = raw.get("meta", {})
    if not isinstance(meta, dict):
        chk.fail("meta", "must be an object")
    return ShotRecord(game=rec_game, t0=t0, t1=t1, before=before, after=after, events=events,
                      player=player, referee=tuple(referee), meta=meta)


def load_records(text: str, source: str = "input", game: str | None = None) -> list[ShotRecord]:
    """Parse JSON Lines or a JSON array of shot records; errors name the line or index."""
    stripped = text.lstrip()
    if not stripped:
        raise RecordError(f"{source}: no shot records (the file is empty)")
    hook = _PairList
    if stripped.startswith("["):
        try:
            items = json.loads(text, object_pairs_hook=hook)
        except json.JSONDecodeError as exc:
            raise RecordError(f"{source}: malformed JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
        return [parse_record(item, f"{source} record {i + 1}", game) for i, item in enumerate(items)]
    records = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line, object_pairs_hook=hook)
        except json.JSONDecodeError as exc:
            raise RecordError(f"{source} line {lineno}: malformed JSON ({exc.msg} at column {exc.colno})") from None
        records.append(parse_record(item, f"{source} line {lineno}", game))
    return records


def records_from(items: Iterable[Mapping[str, Any]], game: str | None = None) -> list[ShotRecord]:
    return [parse_record(dict(item), f"record {i + 1}", game) for i, item in enumerate(items)]


