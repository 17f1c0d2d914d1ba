"""The shot: what happened in one shot, in board millimetres and seconds.

``Shot`` is the one value that crosses from vision (or the simulator, or a file) to the rule engines
and the judge; ``Event`` is the only event type. Both validate in their constructors, so an engine
never sees a malformed shot, and both print and parse as text: ``Event.text()`` / ``Event.from_text``
(one line, like python-chess's ``Move.uci()``) and ``Shot.to_json()`` / ``Shot.from_json``, the
contract with every outside tool (``docs/schemas/shot-record.schema.json``). JSON exists only at the
edges; ``parse_record`` reads it with errors that name the record and the field.
"""
from __future__ import annotations

import json
import math
from dataclasses import InitVar, dataclass, field
from enum import Enum
from types import MappingProxyType
from typing import Any, Iterable, Mapping, NoReturn

from .game import GAMES, POCKETS, SIDES, game_class, owner

__all__ = ["Shot", "Event", "Kind", "ShotRecord", "RecordError", "parse_record", "load_records", "EVENT_FIELDS",
           "piece_ids", "owner"]


class Kind(str, Enum):
    """What an event is. A ``str`` enum: ``Kind.CONTACT == "contact"``."""

    CONTACT = "contact"
    CUSHION = "cushion"
    POCKET = "pocket"
    OFF = "off"
    PIT = "pit"
    TOUCH = "touch"
    EXTERNAL = "external"
    LOST = "lost"
    RELOCATE = "relocate"
    PICKUP = "pickup"

    def __str__(self) -> str:
        return self.value

    def __repr__(self) -> str:
        return repr(self.value)

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


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
#: the fields an event may carry besides t and kind, in the order they are written
_VALUE_FIELDS = ("a", "b", "piece", "side", "pocket", "effect", "to")
EFFECTS = ("moved", "stopped")
TIME_SLACK_S = 1e-6
LEAVES = ("pocket", "off", "pit")  # kinds by which a piece leaves the playing surface


class RecordError(ValueError):
    """A shot record that cannot be judged; the message names the record and the field."""


def piece_ids(game: str) -> frozenset[str]:
    """Every piece id a shot of ``game`` may name."""
    try:
        return game_class(game).ids()
    except ValueError:
        raise RecordError(f"game: unknown game {game!r} (expected 'novuss' or 'cvrnkana')") from None


@dataclass(frozen=True)
class Event:
    """A timed happening in a shot, with its 1-sigma timing uncertainty ``t_err`` (seconds).

    ``note`` (how vision read it) and ``evidence`` (the frames it was read from) travel with the event
    but are not part of the record and do not make two events differ.
    """

    t: float
    kind: Kind
    piece: str | None = None
    a: str | None = None
    b: str | None = None
    side: str | None = None
    pocket: str | None = None
    effect: str | None = None
    to: tuple[float, float] | None = None
    t_err: float = 0.0
    confidence: float = 1.0
    note: str = field(default="", compare=False)
    evidence: tuple[int, ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        values = _event(_Checker("event"), self._raw(), "event", None, "")
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def _raw(self) -> dict[str, Any]:
        out: dict[str, Any] = {"t": self.t, "kind": self.kind.value if isinstance(self.kind, Kind) else self.kind}
        for name in _VALUE_FIELDS:
            value = getattr(self, name)
            if value is not None:
                out[name] = list(value) if name == "to" else value
        if self.t_err != 0.0:
            out["t_err"] = self.t_err
        if self.confidence != 1.0:
            out["confidence"] = self.confidence
        return out

    def pieces(self) -> tuple[str, ...]:
        names = (self.a, self.b) if self.kind == Kind.CONTACT else (self.piece,)
        return tuple(p for p in names if p)

    def to_dict(self) -> dict[str, Any]:
        """The record form (``docs/schemas``): t, kind, the kind's fields, t_err and confidence when set."""
        out: dict[str, Any] = {"t": self.t, "kind": self.kind.value}
        for name in EVENT_FIELDS[self.kind.value][0] + EVENT_FIELDS[self.kind.value][1]:
            value = getattr(self, name)
            if value is not None:
                out[name] = list(value) if name == "to" else value
        if self.t_err:
            out["t_err"] = self.t_err
        if self.confidence != 1.0:
            out["confidence"] = self.confidence
        return out

    def text(self) -> str:
        """One line that ``Event.from_text`` reads back to an equal event: ``t=0.0125 contact a=bat b=A3 t_err=0.0002``."""
        parts = [f"t={self.t!r}", self.kind.value]
        for name, value in self.to_dict().items():
            if name in ("t", "kind"):
                continue
            parts.append(f"{name}={value[0]!r},{value[1]!r}" if name == "to" else f"{name}={value!r}" if isinstance(value, float) else f"{name}={value}")
        return " ".join(parts)

    @classmethod
    def from_text(cls, text: str) -> "Event":
        tokens = text.split()
        if len(tokens) < 2 or not tokens[0].startswith("t="):
            raise RecordError(f"event {text!r}: expected 't=SECONDS KIND field=value ...'")
        raw: dict[str, Any] = {"kind": tokens[1]}
        for token in [tokens[0]] + tokens[2:]:
            name, sep, value = token.partition("=")
            if not sep:
                raise RecordError(f"event {text!r}: {token!r} is not field=value")
            raw[name] = _text_value(name, value, text)
        return event_from_dict(raw, "event")

    def __str__(self) -> str:
        what = "-".join(self.pieces())
        where = self.side or self.pocket or ""
        return f"{self.t * 1000:.2f}±{self.t_err * 1000:.2f}ms {self.kind.value} {what} {where}".rstrip()


def piece_of(ev: Event) -> str:
    """``ev.piece`` of an event whose kind requires a piece (every kind but contact): always set, as the
    event was checked when made."""
    assert ev.piece is not None, f"a {ev.kind.value} event without a piece"
    return ev.piece


def pair_of(ev: Event) -> tuple[str, str]:
    """``(ev.a, ev.b)`` of a contact event: both always set, as the event was checked when made."""
    assert ev.a is not None and ev.b is not None, f"a {ev.kind.value} event without a and b"
    return ev.a, ev.b


def to_of(ev: Event) -> tuple[float, float]:
    """``ev.to`` of a relocate event: always set, as the event was checked when made."""
    assert ev.to is not None, f"a {ev.kind.value} event without to"
    return ev.to


def _text_value(name: str, value: str, text: str) -> Any:
    try:
        if name in ("t", "t_err", "confidence"):
            return float(value)
        if name == "to":
            x, y = value.split(",")
            return [float(x), float(y)]
    except ValueError:
        raise RecordError(f"event {text!r}: {name}={value!r} is not a number") from None
    return value


def event_from_dict(raw: Any, where: str = "event", game: str | None = None) -> Event:
    """An event from its record form, errors naming ``where``."""
    chk = _Checker(where)
    ids = piece_ids(game) if game is not None else None
    return _make_event(_event(chk, raw, "event", ids, game or ""))


def _make_event(values: Mapping[str, Any]) -> Event:
    ev = object.__new__(Event)  # already validated: skip the second check
    for f in Event.__dataclass_fields__.values():
        object.__setattr__(ev, f.name, values.get(f.name, f.default))
    return ev


@dataclass(frozen=True)
class Shot:
    """One shot, validated when made: pieces known to the game, times in order, nothing in two places.

    ``before``/``after``: pieces on the surface (board mm); ``referee``: the referee's decisions on the
    shot; ``meta``: what the producer adds (vision: frames, position uncertainty, review items).
    """

    game: str
    t0: float
    t1: float
    before: Mapping[str, tuple[float, float]]
    after: Mapping[str, tuple[float, float]]
    events: tuple[Event, ...] = ()
    player: str | None = None
    referee: tuple[Mapping[str, Any], ...] = ()
    meta: Mapping[str, Any] = field(default_factory=dict)
    where: InitVar[str] = "shot"

    def __post_init__(self, where: str) -> None:
        chk = _Checker(where)
        if self.game not in GAMES:
            chk.fail("game", f"must be 'novuss' or 'cvrnkana', got {self.game!r}")
        ids = piece_ids(self.game)
        if self.player is not None and self.player not in ("A", "B"):
            chk.fail("player", f"must be 'A' or 'B', got {self.player!r}")
        t0, t1 = chk.number(self.t0, "t0"), chk.number(self.t1, "t1")
        if t1 < t0:
            chk.fail("t1", f"is before t0 ({t1} < {t0})")
        before = _positions(chk, self.before, "before", ids, self.game)
        after = _positions(chk, self.after, "after", ids, self.game)
        events = tuple(self.events)
        for i, ev in enumerate(events):
            if not isinstance(ev, Event):
                chk.fail(f"events[{i}]", f"must be an Event, got {type(ev).__name__}")
            for name, piece in (("a", ev.a), ("b", ev.b), ("piece", ev.piece)):
                if piece is not None:
                    chk.piece(piece, f"events[{i}].{name}", ids, self.game)
        _check_order(chk, events, t0, t1, after)
        referee = tuple(self.referee)
        if not all(isinstance(r, Mapping) and isinstance(r.get("code"), str) for r in referee):
            chk.fail("referee", "must be a list of objects with a 'code'")
        if not isinstance(self.meta, Mapping):
            chk.fail("meta", "must be an object")
        for name, value in (("t0", t0), ("t1", t1), ("before", MappingProxyType(before)),
                            ("after", MappingProxyType(after)), ("events", events), ("referee", referee)):
            object.__setattr__(self, name, value)

    def events_of(self, *kinds: str) -> list[Event]:
        return [e for e in self.events if e.kind in kinds]

    @property
    def review(self) -> tuple[Mapping[str, Any], ...]:
        """What the producer asks the referee to check (``meta.review``)."""
        return tuple(self.meta.get("review") or ())

    def to_dict(self) -> dict[str, Any]:
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
            out["meta"] = json.loads(json.dumps(dict(self.meta)))  # a copy: the shot stays as it was made
        return out

    def to_json(self) -> str:
        """The shot as one JSON line (its text form); ``Shot.from_json`` reads it back to an equal shot."""
        return json.dumps(self.to_dict(), ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str, where: str = "shot", game: str | None = None) -> "Shot":
        try:
            raw = json.loads(text, object_pairs_hook=_PairList)
        except (json.JSONDecodeError, ValueError, RecursionError) as exc:
            raise RecordError(f"{where}: malformed JSON ({exc})") from None
        return parse_record(raw, where, game)

    @classmethod
    def from_dict(cls, raw: Any, where: str = "record", game: str | None = None) -> "Shot":
        return parse_record(raw, where, game)


#: the name the shot had before it was the one currency; kept for outside code
ShotRecord = Shot


def _check_order(chk: "_Checker", events: tuple[Event, ...], t0: float, t1: float, after: Mapping[str, Any]) -> None:
    last = t0
    gone: dict[str, str] = {}
    for i, ev in enumerate(events):
        if ev.t < last - TIME_SLACK_S:
            chk.fail(f"events[{i}].t", f"is out of order ({ev.t} comes after {last})")
        if ev.t > t1 + TIME_SLACK_S:
            chk.fail(f"events[{i}].t", f"is after the shot ended (t1={t1})")
        last = max(last, ev.t)
        if ev.kind in LEAVES and ev.piece is not None:
            if ev.piece in gone:
                what = "pocketed twice" if ev.kind == gone[ev.piece] == "pocket" else f"already left the surface ({gone[ev.piece]})"
                chk.fail(f"events[{i}].piece", f"{ev.piece} {what}")
            gone[ev.piece] = ev.kind.value
            if ev.piece in after:
                chk.fail(f"events[{i}].piece", f"{ev.piece} left the surface ({ev.kind.value}) but is also in after (a piece in two places)")


class _Checker:
    """Reads values of a document from outside; anything wrong is one ``error`` naming ``where`` and the field."""

    error: type[ValueError] = RecordError

    def __init__(self, where: str) -> None:
        self.where = where

    def fail(self, path: str, message: str) -> NoReturn:
        raise self.error(f"{self.where}: {path}: {message}")

    def number(self, value: Any, path: str) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.fail(path, f"must be a finite number, got {value!r}")
        try:
            out = float(value)
        except OverflowError:  # an integer beyond any float
            self.fail(path, f"must be a finite number, got an integer of {len(str(abs(value)))} digits")
        if not math.isfinite(out):
            self.fail(path, f"must be a finite number, got {value!r}")
        return out

    def point(self, value: Any, path: str) -> tuple[float, float]:
        if not isinstance(value, (list, tuple)) or len(value) != 2:
            self.fail(path, f"must be [x_mm, y_mm], got {value!r}")
        return (self.number(value[0], f"{path}[0]"), self.number(value[1], f"{path}[1]"))

    def piece(self, value: Any, path: str, ids: frozenset[str] | None, game: str) -> str:
        if not isinstance(value, str) or (ids is not None and value not in ids):
            self.fail(path, f"unknown piece {value!r} for {game}" if game else f"must be a piece id, got {value!r}")
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


class _PairList(dict[str, Any]):
    """A JSON object that remembers duplicate keys, so 'a piece in two places' is caught."""

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        super().__init__(pairs)
        self.pairs = pairs


def _event(chk: _Checker, raw: Any, path: str, ids: frozenset[str] | None, game: str) -> dict[str, Any]:
    """The checked field values of one event in record form (``ids`` None: any piece id)."""
    if not isinstance(raw, dict):
        chk.fail(path, "must be an object")
    kind = _event_kind(chk, raw, path)
    required, optional = EVENT_FIELDS[kind]
    if "t" not in raw:
        chk.fail(f"{path}.t", "is missing")
    values: dict[str, Any] = {"t": chk.number(raw["t"], f"{path}.t"), "kind": Kind(kind)}
    for name in required:
        if name not in raw:
            chk.fail(f"{path}.{name}", f"is missing (a {kind} event needs {', '.join(required)})")
    values.update(_event_fields(chk, raw, path, required + optional, ids, game))
    if kind == "contact" and values["a"] == values["b"]:
        chk.fail(f"{path}.b", "a piece cannot contact itself")
    values.update(_event_quality(chk, raw, path))
    return values


def _event_kind(chk: _Checker, raw: Mapping[str, Any], path: str) -> str:
    """The event's kind, once it is known and every field present is one an event of that kind has."""
    kind = raw.get("kind")
    if not isinstance(kind, str) or kind not in EVENT_FIELDS:
        chk.fail(f"{path}.kind", f"unknown event kind {kind!r} (expected one of {', '.join(EVENT_FIELDS)})")
    required, optional = EVENT_FIELDS[kind]
    allowed = set(required) | set(optional) | {"t", "kind", "t_err", "confidence"}
    for key in raw:
        if key not in allowed:
            chk.fail(f"{path}.{key}", f"not a field of a {kind} event")
    return kind


def _event_fields(chk: _Checker, raw: Mapping[str, Any], path: str, names: tuple[str, ...],
                  ids: frozenset[str] | None, game: str) -> dict[str, Any]:
    """The checked values of the kind's fields ``names`` that the event has (pieces, choices, a place)."""
    values: dict[str, Any] = {}
    choices = {"side": SIDES, "pocket": POCKETS, "effect": EFFECTS}
    for name in names:
        if name not in raw:
            continue
        value, fpath = raw[name], f"{path}.{name}"
        if name in ("a", "b", "piece"):
            values[name] = chk.piece(value, fpath, ids, game)
        elif name in choices:
            if not isinstance(value, str) or value not in choices[name]:
                chk.fail(fpath, f"must be one of {', '.join(choices[name])}, got {value!r}")
            values[name] = value
        elif name == "to":
            values[name] = chk.point(value, fpath)
    return values


def _event_quality(chk: _Checker, raw: Mapping[str, Any], path: str) -> dict[str, float]:
    """The checked ``t_err`` and ``confidence``, where the event gives them."""
    values: dict[str, float] = {}
    if "t_err" in raw:
        values["t_err"] = chk.number(raw["t_err"], f"{path}.t_err")
        if values["t_err"] < 0:
            chk.fail(f"{path}.t_err", "must not be negative")
    if "confidence" in raw:
        values["confidence"] = chk.number(raw["confidence"], f"{path}.confidence")
        if not 0.0 <= values["confidence"] <= 1.0:
            chk.fail(f"{path}.confidence", "must be between 0 and 1")
    return values


def parse_record(raw: Any, where: str = "record", game: str | None = None) -> Shot:
    """Validate one shot record (a dict from JSON) and return it as a frozen ``Shot``.

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
    if not isinstance(rec_game, str) or rec_game not in GAMES:
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
    events = tuple(_make_event(_event(chk, e, f"events[{i}]", ids, rec_game)) for i, e in enumerate(raw_events))
    referee = raw.get("referee", [])
    if not isinstance(referee, list) or not all(isinstance(r, dict) and isinstance(r.get("code"), str) for r in referee):
        chk.fail("referee", "must be a list of objects with a 'code'")
    meta = raw.get("meta", {})
    if not isinstance(meta, dict):
        chk.fail("meta", "must be an object")
    return Shot(game=rec_game, t0=t0, t1=t1, before=before, after=after, events=events,
                player=player, referee=tuple(referee), meta=meta, where=where)


def load_records(text: str, source: str = "input", game: str | None = None) -> list[Shot]:
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
        except (ValueError, RecursionError) as exc:
            raise RecordError(f"{source}: {_unreadable(exc)}") from None
        return _in_order([parse_record(item, f"{source} record {i + 1}", game) for i, item in enumerate(items)],
                         [f"{source} record {i + 1}" for i in range(len(items))])
    records, wheres = [], []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line, object_pairs_hook=hook)
        except json.JSONDecodeError as exc:
            raise RecordError(f"{source} line {lineno}: malformed JSON ({exc.msg} at column {exc.colno})") from None
        except (ValueError, RecursionError) as exc:
            raise RecordError(f"{source} line {lineno}: {_unreadable(exc)}") from None
        records.append(parse_record(item, f"{source} line {lineno}", game))
        wheres.append(f"{source} line {lineno}")
    return _in_order(records, wheres)


def _in_order(records: list[Shot], wheres: list[str]) -> list[Shot]:
    """Shots of one file follow each other in time: one that starts before the previous one ended is refused."""
    for prev, shot, where in zip(records, records[1:], wheres[1:]):
        if shot.t0 < prev.t1:
            raise RecordError(f"{where}: t0: the shot starts at {shot.t0:g} s, before the previous one ended "
                              f"({prev.t1:g} s): shot times must not go back")
    return records


def _unreadable(exc: ValueError | RecursionError) -> str:
    """Why valid-looking JSON cannot be read: nesting too deep, or a number too long to convert."""
    if isinstance(exc, RecursionError):
        return "JSON nested too deeply to be a shot record"
    return f"JSON that cannot be read as a shot record ({str(exc).splitlines()[0][:120]})"


def records_from(items: Iterable[Mapping[str, Any]], game: str | None = None) -> list[Shot]:
    return [parse_record(dict(item), f"record {i + 1}", game) for i, item in enumerate(items)]


