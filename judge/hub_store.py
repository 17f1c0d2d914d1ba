"""The hub's store: every table's published journal entries, its state and standings; one schema, two backends.

SQLite by default (a file; WAL, ``synchronous=FULL``), PostgreSQL for a ``postgresql://`` URL (psycopg). An
entry is keyed by (table, match, seq) and a shot also by (table, match, game, shot): storing one again changes
nothing (``ON CONFLICT DO NOTHING``), so a message the broker delivers twice is counted once. Each batch is one
transaction, committed before the hub acknowledges its messages, so a killed hub loses nothing it acknowledged.
"""
from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Iterable, Mapping

from .errors import UserError
from .i18n import _

__all__ = ["open_store", "Store"]

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS hub_entries (
        table_name TEXT NOT NULL, match_id TEXT NOT NULL, seq BIGINT NOT NULL, prev BIGINT NOT NULL,
        kind TEXT NOT NULL, game_no INTEGER NOT NULL, shot_no INTEGER, wall_time DOUBLE PRECISION NOT NULL,
        sent_s DOUBLE PRECISION, stored_s DOUBLE PRECISION NOT NULL, payload TEXT NOT NULL,
        PRIMARY KEY (table_name, match_id, seq))""",
    "CREATE UNIQUE INDEX IF NOT EXISTS hub_shot_key ON hub_entries (table_name, match_id, game_no, shot_no) "
    "WHERE kind = 'shot'",
    """CREATE TABLE IF NOT EXISTS hub_tables (
        table_name TEXT PRIMARY KEY, match_id TEXT NOT NULL, info TEXT NOT NULL, updated_s DOUBLE PRECISION NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS hub_standings (
        table_name TEXT NOT NULL, match_id TEXT NOT NULL, have BIGINT NOT NULL, standing TEXT NOT NULL,
        updated_s DOUBLE PRECISION NOT NULL, PRIMARY KEY (table_name, match_id))""",
)
INSERT_ENTRY = ("INSERT INTO hub_entries (table_name, match_id, seq, prev, kind, game_no, shot_no, wall_time, sent_s, "
                "stored_s, payload) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING")
UPSERT_TABLE = ("INSERT INTO hub_tables (table_name, match_id, info, updated_s) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (table_name) DO UPDATE SET match_id = excluded.match_id, info = excluded.info, "
                "updated_s = excluded.updated_s")
UPSERT_STANDING = ("INSERT INTO hub_standings (table_name, match_id, have, standing, updated_s) VALUES (?, ?, ?, ?, ?) "
                   "ON CONFLICT (table_name, match_id) DO UPDATE SET have = excluded.have, "
                   "standing = excluded.standing, updated_s = excluded.updated_s")


def open_store(url: str) -> "Store":
    """``sqlite:///path``, a plain path (SQLite) or ``postgresql://...``; a bad one is a one-line error."""
    if url.startswith(("postgresql://", "postgres://")):
        return Store.postgres(url)
    path = url[len("sqlite:///"):] if url.startswith("sqlite:///") else url
    if "://" in path:
        raise UserError(_("--db {url}: give a file, sqlite:///path or postgresql://user@host:port/db").format(url=url))
    return Store.sqlite(Path(path))


class Store:
    """A DB-API connection and its placeholder style; every write is a transaction of its own."""

    def __init__(self, conn, placeholder: str, name: str):
        self.conn, self.placeholder, self.name = conn, placeholder, name
        self._lock = threading.Lock()  # the hub's writer and the web pages' readers share the connection
        self.write([(statement, ()) for statement in SCHEMA])

    @classmethod
    def sqlite(cls, path: Path) -> "Store":
        if not path.resolve().parent.is_dir():
            raise UserError(_("--db {path}: the folder {folder} does not exist").format(path=path, folder=path.resolve().parent))
        try:
            conn = sqlite3.connect(str(path), timeout=10.0, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
        except sqlite3.Error as exc:
            raise UserError(_("--db {path}: cannot open it as SQLite ({error})").format(path=path, error=exc)) from None
        return cls(conn, "?", f"sqlite:///{path}")

    @classmethod
    def postgres(cls, url: str) -> "Store":
        try:
            import psycopg
        except ImportError:
            raise UserError(_("--db postgresql://...: psycopg is not installed (pip install 'psycopg[binary]')")) from None
        try:
            conn = psycopg.connect(url, connect_timeout=10, autocommit=True)
        except psycopg.Error as exc:
            raise UserError(_("--db: cannot connect to PostgreSQL ({error})").format(error=str(exc).strip().splitlines()[0])) from None
        return cls(conn, "%s", url.split("@")[-1])

    def _sql(self, statement: str) -> str:
        return statement if self.placeholder == "?" else statement.replace("?", "%s")

    def write(self, statements: Iterable[tuple[str, tuple]]) -> None:
        """Run ``statements`` in one transaction: all of them are stored, or none."""
        with self._lock:
            self._write(list(statements))

    def _write(self, statements: list[tuple[str, tuple]]) -> None:
        if self.placeholder == "?":
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                for statement, params in statements:
                    self.conn.execute(statement, params)
                self.conn.execute("COMMIT")
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            return
        with self.conn.transaction():
            cur = self.conn.cursor()
            for statement, params in statements:
                cur.execute(self._sql(statement), params)

    def rows(self, statement: str, params: tuple = ()) -> list[tuple]:
        with self._lock:
            if self.placeholder == "?":
                return self.conn.execute(statement, params).fetchall()
            return self.conn.execute(self._sql(statement), params).fetchall()

    # ----- the hub's writes ----------------------------------------------------------------------
    def store(self, messages: list[Mapping[str, Any]], tables: list[tuple[str, str, Mapping[str, Any]]] = ()) -> None:
        """The entries of ``messages`` (new ones only: a known key is left as it is) and the tables' states."""
        now = time.time()
        self.write([(INSERT_ENTRY, (m["table"], m["match"], m["seq"], m["prev"], m["kind"], m["game_no"],
                                    m["shot_no"] if m["kind"] == "shot" else None, float(m["wall_time"]),
                                    m.get("sent_s"), now, json.dumps(m["payload"], ensure_ascii=False)))
                    for m in messages] +
                   [(UPSERT_TABLE, (table, match, json.dumps(dict(info), ensure_ascii=False), now))
                    for table, match, info in tables])

    def save_standings(self, standings: list[tuple[str, str, int, Mapping[str, Any]]]) -> None:
        now = time.time()
        self.write([(UPSERT_STANDING, (t, m, have, json.dumps(s, ensure_ascii=False), now)) for t, m, have, s in standings])

    # ----- reading -------------------------------------------------------------------------------
    def chains(self) -> list[tuple[str, str, int, int]]:
        """(table, match, seq, prev) of every entry: what the hub's ``have`` is rebuilt from."""
        return [(r[0], r[1], int(r[2]), int(r[3])) for r in
                self.rows("SELECT table_name, match_id, seq, prev FROM hub_entries ORDER BY table_name, match_id, seq")]

    def entries(self, table: str, match: str, up_to: int | None = None) -> list[dict[str, Any]]:
        """A table's entries of one match in seq order, as ``Journal.entries`` gives them (to ``up_to``)."""
        rows = self.rows("SELECT seq, kind, game_no, shot_no, wall_time, payload, stored_s FROM hub_entries "
                         "WHERE table_name = ? AND match_id = ? AND seq <= ? ORDER BY seq",
                         (table, match, up_to if up_to is not None else 2 ** 62))
        return [{"seq": int(r[0]), "kind": r[1], "game_no": r[2], "shot_no": r[3], "wall_time": r[4],
                 "payload": json.loads(r[5]), "stored_s": r[6]} for r in rows]

    def tables(self) -> dict[str, dict[str, Any]]:
        """Each table's latest state message: ``{table: {"match": id, **info}}``."""
        return {r[0]: {**json.loads(r[2]), "match": r[1]} for r in
                self.rows("SELECT table_name, match_id, info FROM hub_tables ORDER BY table_name")}

    def standings(self) -> list[dict[str, Any]]:
        return [{**json.loads(r[3]), "table": r[0], "match": r[1], "have": int(r[2])} for r in
                self.rows("SELECT table_name, match_id, have, standing FROM hub_standings ORDER BY table_name, match_id")]

    def close(self) -> None:
        with self._lock:
            self.conn.close()
