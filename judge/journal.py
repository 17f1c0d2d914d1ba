"""The match journal: an append-only SQLite file that survives a crash or a power cut.

Every shot record with its ruling and the game state after it, every referee action (override,
undo, next game, a corrected state, a review item settled) and every frame gap is appended in its own
transaction (WAL, ``synchronous=FULL``) the moment it happens. Nothing is ever updated or deleted
(triggers refuse it); an undo is a new entry. Because the rule engines are pure folds, ``resume()``
gives back the effective shot records of the current game and ``engine.replay(records)`` rebuilds the
state exactly.

Exactly once: a shot is known by where it is in its source (``position``: the source, the frame on
which vision finished it, its times), and its record is written ahead (``seen``) before the referee
step judges it. A restart on a recording resumes after the last position consumed, and a record seen
but not judged when the process died (``Resume.pending``) is judged on restart, never read again from
the video. The hash of the record within its game stays a second guard: the same record twice is one shot.
"""
from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from judge.i18n import _

__all__ = ["Journal", "JournalError", "fold_entries", "Pending", "Resume", "Review", "ShotEntry", "record_hash"]

APPLICATION_ID = 0x53484A44  # "SHJD": marks the file as ours for `file`, sqlite and us
SCHEMA_VERSION = 2
#: entry kinds: the match, a shot seen (written ahead) and judged or refused, referee actions, events
KINDS = ("match", "seen", "shot", "refused", "override", "undo", "next_game", "set_state", "settle", "gap", "note")
ACTIONS = ("override", "undo", "next_game", "set_state", "settle", "gap", "note")

_SCHEMA = f"""
CREATE TABLE entries (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL CHECK (kind IN ({", ".join(repr(k) for k in KINDS)})),
    game_no INTEGER NOT NULL,
    shot_no INTEGER,
    record_hash TEXT,
    wall_time REAL NOT NULL,
    payload TEXT NOT NULL,
    UNIQUE (game_no, record_hash)
);
CREATE TRIGGER entries_no_update BEFORE UPDATE ON entries BEGIN SELECT RAISE(ABORT, 'the journal is append-only'); END;
CREATE TRIGGER entries_no_delete BEFORE DELETE ON entries BEGIN SELECT RAISE(ABORT, 'the journal is append-only'); END;
"""


class JournalError(ValueError):
    """A journal that is not ours, damaged, or used against another match."""


def record_hash(record: Mapping[str, Any]) -> str:
    """sha256 of the record's canonical JSON: the identity of a shot."""
    text = json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class ShotEntry:
    seq: int
    game_no: int
    shot_no: int
    record: Mapping[str, Any]
    ruling: Mapping[str, Any]
    state: Mapping[str, Any] | None
    record_hash: str


@dataclass(frozen=True)
class Pending:
    """A shot record written ahead (``seen``) that the process died before judging."""

    seq: int
    game_no: int
    record: Mapping[str, Any]
    position: Mapping[str, Any] | None


@dataclass(frozen=True)
class Review:
    """A shot the engine refused (vision and the game state disagree): the referee's to settle."""

    seq: int
    game_no: int
    record: Mapping[str, Any]
    error: str
    position: Mapping[str, Any] | None
    settled: str | None = None  # how the referee settled it ('confirm', 'state'), None while open


@dataclass(frozen=True)
class Resume:
    """What a restarted judge needs: the match settings, the game in progress and its shots.

    ``records`` are the effective shot records of the current game (undone shots removed,
    referee overrides folded into the record's ``referee`` list), in order. ``consumed`` maps a recorded
    source to the last frame index a shot (judged or refused) was finished on; ``pending`` are records
    seen and never judged; ``reviews`` the refused shots.
    """

    match: Mapping[str, Any]
    game_no: int
    records: tuple[Mapping[str, Any], ...]
    shots: tuple[ShotEntry, ...]
    next_shot_no: int
    last_state: Mapping[str, Any] | None
    entries: int
    games: Mapping[int, tuple[Mapping[str, Any], ...]] = field(default_factory=dict)
    starts: Mapping[int, Mapping[str, Any]] = field(default_factory=dict)  # the state each game started from, where journaled
    consumed: Mapping[str, int] = field(default_factory=dict)
    pending: tuple[Pending, ...] = ()
    reviews: tuple[Review, ...] = ()


class Journal:
    """One match in one SQLite file. Open with :meth:`create` (new match) or :meth:`open`."""

    def __init__(self, path: str | Path, conn: sqlite3.Connection):
        self.path = Path(path)
        self._conn = conn

    # ----- opening -------------------------------------------------------------------------------
    @classmethod
    def open(cls, path: str | Path, *, create: bool = False, match: Mapping[str, Any] | None = None) -> "Journal":
        """Open the journal at ``path``; with ``create`` a missing file is made and ``match`` stored."""
        path = Path(path)
        exists = path.exists() and path.stat().st_size > 0
        if not exists and not create:
            raise JournalError(_("{path}: no such journal").format(path=path))
        folder = path.parent if str(path.parent) else Path(".")
        if not folder.is_dir():
            raise JournalError(_("{path}: the folder {folder} does not exist").format(path=path, folder=folder))
        if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
            raise JournalError(_("{path}: cannot write here (read-only {value}); give --journal a writable place").format(
                path=path, value=_('file') if path.exists() else _('folder')))
        try:
            conn = sqlite3.connect(str(path), timeout=10.0, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
            app_id = conn.execute("PRAGMA application_id").fetchone()[0]
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        except sqlite3.DatabaseError as exc:
            raise JournalError(_("{path}: not a shotjudge journal (not an SQLite file, or damaged: {exc})").format(
                path=path, exc=exc)) from None
        if exists:
            if app_id != APPLICATION_ID or "entries" not in tables:
                conn.close()
                raise JournalError(_("{path}: not a shotjudge journal (another SQLite database)").format(path=path))
            if version > SCHEMA_VERSION:
                conn.close()
                raise JournalError(_("{path}: journal format {version} is newer than this shotjudge ({schema_version})").format(
                    path=path, version=version, schema_version=SCHEMA_VERSION))
            check = conn.execute("PRAGMA quick_check").fetchone()[0]
            if check != "ok":
                conn.close()
                raise JournalError(_("{path}: the journal is damaged ({check})").format(path=path, check=check))
            if version < SCHEMA_VERSION:
                _upgrade(conn)
        else:
            with _transaction(conn):
                for statement in _statements(_SCHEMA):
                    conn.execute(statement)
                conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
                conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        journal = cls(path, conn)
        if match is not None:
            journal.start_match(match)
        return journal

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> "Journal":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ----- writing (one transaction each) --------------------------------------------------------
    def start_match(self, match: Mapping[str, Any]) -> None:
        """Store the match settings once; a journal of another match (another game, or another number of
        games: ``games``, given) is refused."""
        stored = self.match()
        if stored is None:
            self._append("match", 1, None, None, dict(match))
            return
        if "game" in match and stored.get("game") != match["game"]:
            raise JournalError(_("{path}: this journal is a {value} match, not {game}").format(
                path=self.path, value=stored.get('game'), game=match['game']))
        if match.get("games") is not None and stored.get("games") != match["games"]:
            length = _("of {n} games").format(n=stored["games"]) if stored.get("games") else _("with no set number of games")
            raise JournalError(_("{path}: this journal is a match {length}, not {games} (--games); resume it without "
                                 "--games or start a new journal").format(path=self.path, length=length, games=match['games']))

    def append_seen(self, game_no: int, record: Mapping[str, Any], position: Mapping[str, Any] | None) -> int:
        """Write a shot record ahead of judging it (its ``seq`` is what its ruling then refers to)."""
        return self._append("seen", game_no, None, None, {"record": dict(record), "position": _plain(position)})

    def append_shot(self, game_no: int, record: Mapping[str, Any], ruling: Mapping[str, Any],
                    state: Mapping[str, Any] | None, position: Mapping[str, Any] | None = None,
                    seen: int | None = None) -> tuple[ShotEntry, bool]:
        """Append a judged shot; returns (entry, True), or (the stored entry, False) if it is already in.
        ``seen``: the seq of the record written ahead, which this settles."""
        digest = record_hash(record)
        with _transaction(self._conn) as conn:
            row = conn.execute("SELECT seq FROM entries WHERE game_no=? AND record_hash=?", (game_no, digest)).fetchone()
            if row is None:
                shot_no = 1 + (conn.execute("SELECT COALESCE(MAX(shot_no), 0) FROM entries WHERE kind='shot' AND game_no=?",
                                            (game_no,)).fetchone()[0])
                payload = {"record": record, "ruling": ruling, "state": state, "position": _plain(position), "seen": seen}
                conn.execute("INSERT INTO entries (kind, game_no, shot_no, record_hash, wall_time, payload) "
                             "VALUES ('shot', ?, ?, ?, ?, ?)", (game_no, shot_no, digest, time.time(), _dump(payload)))
                added = True
            else:
                added = False
        return self.find_shot(game_no, digest), added

    def append_refused(self, game_no: int, record: Mapping[str, Any], error: str,
                       position: Mapping[str, Any] | None = None, seen: int | None = None) -> int:
        """A shot the engine refused: a review item for the referee (settled later by a ``settle`` entry)."""
        return self._append("refused", game_no, None, None, {"record": dict(record), "error": str(error),
                                                              "position": _plain(position), "seen": seen})

    def find_shot(self, game_no: int, digest: str) -> ShotEntry | None:
        row = self._conn.execute("SELECT seq, game_no, shot_no, record_hash, payload FROM entries "
                                 "WHERE kind='shot' AND game_no=? AND record_hash=?", (game_no, digest)).fetchone()
        return _shot_entry(row) if row else None

    def append_action(self, kind: str, game_no: int, payload: Mapping[str, Any], shot_no: int | None = None) -> int:
        """A referee action (``override``, ``undo``, ``next_game``, ``set_state``, ``settle``) or an event
        (``gap``, ``note``)."""
        if kind not in ACTIONS:
            raise JournalError(_("unknown journal entry kind {kind}").format(kind=repr(kind)))
        return self._append(kind, game_no, shot_no, None, dict(payload))

    def _append(self, kind, game_no, shot_no, digest, payload) -> int:
        with _transaction(self._conn) as conn:
            cur = conn.execute("INSERT INTO entries (kind, game_no, shot_no, record_hash, wall_time, payload) "
                               "VALUES (?, ?, ?, ?, ?, ?)", (kind, game_no, shot_no, digest, time.time(), _dump(payload)))
            return int(cur.lastrowid)

    # ----- reading -------------------------------------------------------------------------------
    def match(self) -> dict[str, Any] | None:
        row = self._conn.execute("SELECT payload FROM entries WHERE kind='match' ORDER BY seq LIMIT 1").fetchone()
        return json.loads(row[0]) if row else None

    def entries(self, kind: str | None = None) -> list[dict[str, Any]]:
        sql = "SELECT seq, kind, game_no, shot_no, wall_time, payload FROM entries"
        rows = self._conn.execute(sql + (" WHERE kind=? ORDER BY seq" if kind else " ORDER BY seq"),
                                  (kind,) if kind else ()).fetchall()
        return [{"seq": r[0], "kind": r[1], "game_no": r[2], "shot_no": r[3], "wall_time": r[4],
                 "payload": json.loads(r[5])} for r in rows]

    def resume(self) -> Resume:
        """Fold the entries: the current game, its effective records, the next shot number, the source
        positions consumed, the records seen and not judged, the review items."""
        return fold_entries(self.match() or {}, self.entries())


def fold_entries(match: Mapping[str, Any], entries: list[dict[str, Any]]) -> Resume:
    """``Journal.resume`` over entries as ``Journal.entries`` gives them (in seq order): also what the hub
    folds the entries a table published through, so its score is the table's own."""
    game_no = 1
    games: dict[int, list[ShotEntry]] = {1: []}
    overrides: dict[tuple[int, int], list[dict]] = {}
    starts: dict[int, Mapping[str, Any]] = {}
    consumed: dict[str, int] = {}
    seen: dict[int, Pending] = {}
    reviews: dict[int, Review] = {}
    count = 0
    for e in entries:
        count += 1
        kind, payload = e["kind"], e["payload"]
        if kind in ("seen", "shot", "refused"):
            _consume(consumed, payload.get("position"))
            if kind != "seen":
                seen.pop(payload.get("seen"), None)
        if kind == "seen":
            seen[e["seq"]] = Pending(e["seq"], e["game_no"], payload["record"], payload.get("position"))
        elif kind == "shot":
            games.setdefault(e["game_no"], []).append(ShotEntry(
                e["seq"], e["game_no"], e["shot_no"], payload["record"], payload["ruling"], payload.get("state"),
                record_hash(payload["record"])))
        elif kind == "refused":
            reviews[e["seq"]] = Review(e["seq"], e["game_no"], payload["record"], payload["error"],
                                       payload.get("position"))
        elif kind == "settle" and payload.get("review") in reviews:
            item = reviews[payload["review"]]
            reviews[item.seq] = Review(item.seq, item.game_no, item.record, item.error, item.position,
                                       payload.get("how", "confirm"))
        elif kind == "undo":
            shots = games.setdefault(e["game_no"], [])
            if shots:
                shots.pop()
        elif kind == "override":
            overrides.setdefault((e["game_no"], e["shot_no"]), []).extend(payload.get("referee", []))
        elif kind == "next_game":
            game_no = max(game_no, e["game_no"] + 1)
            games.setdefault(game_no, [])
            if payload.get("start"):
                starts[game_no] = payload["start"]
        elif kind == "set_state":  # the referee corrected the state: the game goes on from it
            games[e["game_no"]] = []
            starts[e["game_no"]] = payload["state"]
    effective = {g: tuple(_with_referee(s.record, overrides.get((g, s.shot_no), [])) for s in shots)
                 for g, shots in games.items()}
    current = games.get(game_no, [])
    top = max((e["shot_no"] for e in entries if e["kind"] == "shot" and e["game_no"] == game_no), default=0)
    return Resume(match=match, game_no=game_no, records=effective.get(game_no, ()), shots=tuple(current),
                  next_shot_no=top + 1, last_state=current[-1].state if current else None, entries=count,
                  games=effective, starts=starts, consumed=consumed,
                  pending=tuple(seen.values()),
                  reviews=tuple(reviews.values()))


def _consume(consumed: dict[str, int], position: Mapping[str, Any] | None) -> None:
    """A recorded source's frames up to a shot's last are consumed (a camera's never come again)."""
    if position and not position.get("live") and position.get("source") is not None:
        name, end = str(position["source"]), int(position["end_index"])
        consumed[name] = max(consumed.get(name, -1), end)


def _plain(position: Mapping[str, Any] | None) -> dict[str, Any] | None:
    return None if position is None else dict(position)


def _upgrade(conn: sqlite3.Connection) -> None:
    """A journal of format 1 (fewer entry kinds): rebuilt in one transaction as format 2, every entry kept
    with its seq (the triggers go with the old table and come back with the new)."""
    with _transaction(conn):
        conn.execute("DROP TRIGGER IF EXISTS entries_no_update")
        conn.execute("DROP TRIGGER IF EXISTS entries_no_delete")
        conn.execute("ALTER TABLE entries RENAME TO entries_old")
        for statement in _statements(_SCHEMA):
            conn.execute(statement)
        conn.execute("INSERT INTO entries (seq, kind, game_no, shot_no, record_hash, wall_time, payload) "
                     "SELECT seq, kind, game_no, shot_no, record_hash, wall_time, payload FROM entries_old ORDER BY seq")
        conn.execute("DROP TABLE entries_old")
        conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")


def _with_referee(record: Mapping[str, Any], extra: list[dict]) -> Mapping[str, Any]:
    if not extra:
        return record
    out = dict(record)
    out["referee"] = list(record.get("referee", [])) + list(extra)
    return out


def _shot_entry(row) -> ShotEntry:
    payload = json.loads(row[4])
    return ShotEntry(row[0], row[1], row[2], payload["record"], payload["ruling"], payload.get("state"), row[3])


def _dump(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _statements(script: str) -> list[str]:
    """Split the schema into statements (triggers contain ';' inside BEGIN ... END)."""
    out, buf = [], []
    for line in script.strip().splitlines():
        buf.append(line)
        text = "\n".join(buf).strip()
        if text.endswith(";") and (not text.upper().startswith("CREATE TRIGGER") or text.upper().endswith("END;")):
            out.append(text)
            buf = []
    return out


class _transaction:
    """BEGIN IMMEDIATE ... COMMIT, rolled back on error (autocommit connection). A write the disk refuses
    (full, gone read-only, removed) is a :class:`JournalError` naming why: what was committed before is
    safe, this entry is not in."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn

    def __enter__(self) -> sqlite3.Connection:
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise _write_error(self.conn, exc) from None
        return self.conn

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None:
            try:
                self.conn.execute("ROLLBACK")
            except sqlite3.OperationalError:
                pass  # the failed statement already ended the transaction
            if issubclass(exc_type, sqlite3.OperationalError):
                raise _write_error(self.conn, exc) from None
            return
        try:
            self.conn.execute("COMMIT")
        except sqlite3.OperationalError as err:
            try:
                self.conn.execute("ROLLBACK")
            except sqlite3.OperationalError:
                pass
            raise _write_error(self.conn, err) from None


def _write_error(conn: sqlite3.Connection, exc: BaseException) -> JournalError:
    path = next((row[2] for row in conn.execute("PRAGMA database_list") if row[1] == "main"), "the journal")
    return JournalError(_("{path}: cannot write the journal ({exc}); every entry before this one is kept").format(
        path=path, exc=exc))
