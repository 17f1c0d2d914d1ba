"""What a table sends the hub and the hub answers, over MQTT (docs/hub.md, docs/schemas/hub-message.schema.json).

A table's journal entries go out one message each on ``shotjudge/tables/<table>/events`` (QoS 1), keyed by
(table, match, seq): ``seq`` is the entry's own number in the journal, ``prev`` the one published before it, so
the hub knows the entries it holds without a hole (its ``have``). A shot is also named by (table, game, shot).
The table's ``state`` (retained) says what it plays and where its pages are; the hub's ``have`` (retained)
says how far it has stored each table's match, and is where a table resumes publishing after any outage.
"""
from __future__ import annotations

import hashlib
import json
import time
from typing import Any, Mapping

__all__ = ["SCHEMA", "events_topic", "topic_table", "entry_message", "parse_message", "match_id", "MessageError"]

SCHEMA = "shotjudge.hub-message/1"
ROOT = "shotjudge/tables"
KINDS = ("match", "shot", "refused", "override", "undo", "next_game", "set_state", "settle", "gap", "note")


class MessageError(ValueError):
    """A message that is not a table's journal entry as docs/hub.md describes it."""


def events_topic(table: str) -> str:
    return f"{ROOT}/{table}/events"


def state_topic(table: str) -> str:
    return f"{ROOT}/{table}/state"


def have_topic(table: str) -> str:
    return f"{ROOT}/{table}/have"


def topic_table(topic: str) -> tuple[str, str] | None:
    """``(table, leaf)`` of one of our topics (leaf: events, state, have), else None."""
    parts = topic.split("/")
    if len(parts) == 4 and "/".join(parts[:2]) == ROOT and parts[3] in ("events", "state", "have"):
        return parts[2], parts[3]
    return None


def match_id(first: Mapping[str, Any]) -> str:
    """The id of a match: from its journal's first entry (the ``match`` one), so a restarted table keeps it and
    a new journal at the same table is a new match."""
    text = json.dumps([first["seq"], first["wall_time"], first["payload"]], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def entry_message(table: str, match: str, entry: Mapping[str, Any], prev: int) -> dict[str, Any]:
    """A journal entry (as ``Journal.entries`` gives it) as the message that carries it."""
    shot = entry["shot_no"] if entry["kind"] == "shot" else None
    return {"schema": SCHEMA, "table": table, "match": match, "seq": entry["seq"], "prev": prev,
            "key": {"table": table, "game": entry["game_no"], "shot": shot}, "kind": entry["kind"],
            "game_no": entry["game_no"], "shot_no": entry["shot_no"], "wall_time": entry["wall_time"],
            "sent_s": time.time(), "payload": entry["payload"]}


def parse_message(table: str, data: bytes) -> dict[str, Any]:
    """An events message, checked as far as the hub relies on it (the topic's table is the message's)."""
    try:
        msg = json.loads(data)
    except (UnicodeDecodeError, ValueError) as exc:
        raise MessageError(f"not JSON: {exc}") from None
    if not isinstance(msg, dict) or msg.get("schema") != SCHEMA:
        raise MessageError(f"not a {SCHEMA} message")
    if msg.get("table") != table or msg.get("key", {}).get("table") != table:
        raise MessageError(f"a message for table {msg.get('table')!r} on table {table!r}'s topic")
    for name in ("seq", "prev", "game_no"):
        if isinstance(msg.get(name), bool) or not isinstance(msg.get(name), int) or msg[name] < 0:
            raise MessageError(f"{name} must be a whole number, got {msg.get(name)!r}")
    if not msg["prev"] < msg["seq"] or msg.get("kind") not in KINDS or not isinstance(msg.get("match"), str):
        raise MessageError("prev must come before seq, kind be a journal entry kind and match an id")
    if msg["kind"] == "shot" and not (isinstance(msg.get("shot_no"), int) and msg["key"].get("shot") == msg["shot_no"]):
        raise MessageError("a shot's key names its shot number")
    if not isinstance(msg.get("payload"), dict) or not isinstance(msg.get("wall_time"), (int, float)):
        raise MessageError("payload must be the entry's object and wall_time its time")
    return msg
