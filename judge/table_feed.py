"""A table's feed to the hub: its journal, published entry by entry to the MQTT broker (``live --mqtt``).

The journal is the source of truth and judging never waits for the broker: this thread reads the journal
with a connection of its own and publishes what the hub has not confirmed yet, QoS 1, in order. A broker's
PUBACK is not enough (a broker killed before it saved a message forgets it), so the resend point is the
hub's retained ``have`` (also kept beside the journal in ``<journal>.hub.json``, written atomically):
after a reconnect, or when the hub has confirmed nothing new for a while, the feed goes back to it and
publishes again. A message the hub already has changes nothing there (it is keyed by table, match, seq).
"""
from __future__ import annotations

import json
import sqlite3
import sys
import threading
import time
from pathlib import Path
from typing import Any, Mapping

from calibration.atomic import write_text_atomic
from calibration.errors import CalibrationError

from .hub_message import entry_message, events_topic, have_topic, match_id, state_topic
from .i18n import _

__all__ = ["TableFeed"]

BATCH = 200  # entries read from the journal at a time
POLL_S = 0.5  # the journal is looked at this often even when no call woke the feed
RESEND_S = 5.0  # no confirmation from the hub for this long: publish again from its ``have`` (doubling to
RESEND_MAX_S = 60.0  # at most this, while the hub stays silent)


class TableFeed:
    """Publishes the journal at ``journal_path`` as table ``table``; a ``Match`` listener (any call wakes it)."""

    def __init__(self, table: str, journal_path: str | Path, host: str, port: int, *,
                 info: Mapping[str, Any] | None = None, resend_s: float = RESEND_S, client_id: str | None = None):
        import paho.mqtt.client as mqtt

        self.table, self.path = table, Path(journal_path)
        self.info = dict(info or {})  # what the table's state message adds (its pages)
        self.resend_s = resend_s
        self.mark_path = self.path.with_name(self.path.name + ".hub.json")
        self.match = self._match_id()
        self.confirmed = self._read_mark()  # the hub has every entry up to here
        self.cursor = self.confirmed  # published up to here (since the last rewind)
        self.published = 0  # messages handed to the broker, republished ones included
        self.rewinds = 0
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._rewind = True
        self._waiting_since: float | None = None
        self._backoff_s = resend_s
        self._db: sqlite3.Connection | None = None
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id or f"shotjudge-table-{table}",
                                  clean_session=True, protocol=mqtt.MQTTv311)
        self.client.reconnect_delay_set(1, 2)
        self.client.max_inflight_messages_set(100)
        self.client.on_connect = self._on_connect
        self.client.on_message = self._on_message
        self.client.connect_async(host, port, keepalive=10)
        self._thread = threading.Thread(target=self._run, name=f"feed-{table}", daemon=True)

    # ----- life ----------------------------------------------------------------------------------
    def start(self) -> "TableFeed":
        self.client.loop_start()
        self._thread.start()
        return self

    def stop(self, drain_s: float = 0.0) -> None:
        """Stop publishing; with ``drain_s``, first wait that long at most for the hub to confirm everything."""
        deadline = time.monotonic() + drain_s
        while drain_s and time.monotonic() < deadline and not self.caught_up():
            self._wake.set()
            time.sleep(0.05)
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout=5.0)
        self.client.disconnect()
        self.client.loop_stop()

    def __call__(self, event: dict) -> None:
        """A match event: something was journaled, publish it now."""
        self._wake.set()

    def caught_up(self) -> bool:
        """The hub has confirmed every entry in the journal."""
        return self.confirmed >= self._last_seq()

    # ----- broker callbacks (paho's thread) ------------------------------------------------------
    def _on_connect(self, client, userdata, flags, reason_code, properties=None) -> None:
        if reason_code.is_failure:
            return
        client.subscribe(have_topic(self.table), qos=1)
        state = {"table": self.table, "match": self.match, "journal": str(self.path.resolve()), **self.info}
        client.publish(state_topic(self.table), json.dumps(state), qos=1, retain=True)
        with self._lock:
            self._rewind = True  # what was in flight on the old connection may be lost: from the hub's have
        self._wake.set()

    def _on_message(self, client, userdata, msg) -> None:
        try:
            have = json.loads(msg.payload)
            seq = int(have["seq"]) if have.get("match") == self.match else None
        except (ValueError, TypeError, KeyError, AttributeError):
            return
        if seq is None:
            return
        with self._lock:
            if seq != self.confirmed:
                if seq < self.confirmed:  # the hub has less than it said (its store was replaced): resend
                    self._rewind = True
                self.confirmed, self.cursor = seq, max(self.cursor, seq)
                self._waiting_since, self._backoff_s = None, self.resend_s
                self._write_mark(seq)
        self._wake.set()

    # ----- the publishing thread ----------------------------------------------------------------
    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(POLL_S)
            self._wake.clear()
            try:
                self._publish_pending()
            except sqlite3.Error as exc:  # the journal is written by the judge; try again on the next wake
                print(_("shotjudge: table feed: journal not readable now ({error})").format(error=exc), file=sys.stderr)
                self._close_db()

    def _publish_pending(self) -> None:
        if not self.client.is_connected():
            return
        now = time.monotonic()
        with self._lock:
            if self.cursor > self.confirmed:
                if self._waiting_since is None:
                    self._waiting_since = now
                elif now - self._waiting_since > self._backoff_s:  # the hub is silent: maybe it never got them
                    self._rewind, self._waiting_since = True, now
                    self._backoff_s = min(RESEND_MAX_S, self._backoff_s * 2)
            if self._rewind:
                self._rewind, self.cursor = False, self.confirmed
                self.rewinds += 1
            cursor = self.cursor
        while not self._stop.is_set() and self.client.is_connected():
            rows = self._entries_after(cursor)
            if not rows:
                break
            for entry in rows:
                msg = entry_message(self.table, self.match, entry, cursor)
                info = self.client.publish(events_topic(self.table), json.dumps(msg, ensure_ascii=False), qos=1)
                if info.rc:  # not connected any more: the rewind on connect resends it
                    return
                cursor = entry["seq"]
                self.published += 1
            with self._lock:
                if self._rewind:
                    return
                self.cursor = cursor

    # ----- the journal ---------------------------------------------------------------------------
    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            self._db = sqlite3.connect(self.path.resolve().as_uri() + "?mode=ro", uri=True, timeout=5.0,
                                       check_same_thread=False)
        return self._db

    def _close_db(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def _entries_after(self, seq: int) -> list[dict[str, Any]]:
        """The entries after ``seq`` that the hub is sent: all but a record written ahead (``seen``), which the
        judge settles itself."""
        rows = self._conn().execute("SELECT seq, kind, game_no, shot_no, wall_time, payload FROM entries "
                                    "WHERE seq > ? AND kind != 'seen' ORDER BY seq LIMIT ?", (seq, BATCH)).fetchall()
        return [{"seq": r[0], "kind": r[1], "game_no": r[2], "shot_no": r[3], "wall_time": r[4],
                 "payload": json.loads(r[5])} for r in rows]

    def _last_seq(self) -> int:
        row = self._conn().execute("SELECT COALESCE(MAX(seq), 0) FROM entries WHERE kind != 'seen'").fetchone()
        return int(row[0])

    def _match_id(self) -> str:
        conn = sqlite3.connect(self.path.resolve().as_uri() + "?mode=ro", uri=True, timeout=5.0)
        try:
            row = conn.execute("SELECT seq, wall_time, payload FROM entries WHERE kind='match' ORDER BY seq LIMIT 1"
                               ).fetchone()
        finally:
            conn.close()
        if row is None:
            raise ValueError(f"{self.path}: the journal has no match entry to publish")
        return match_id({"seq": row[0], "wall_time": row[1], "payload": json.loads(row[2])})

    def _read_mark(self) -> int:
        try:
            mark = json.loads(self.mark_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return 0
        return int(mark.get("seq", 0)) if isinstance(mark, dict) and mark.get("match") == self.match else 0

    def _write_mark(self, seq: int) -> None:
        """Written whole and flushed to the disk (``write_text_atomic``): the mark is the old one or the new one."""
        text = json.dumps({"table": self.table, "match": self.match, "seq": seq})
        try:
            write_text_atomic(self.mark_path, text)
        except (OSError, CalibrationError) as exc:  # only a shortcut for the next start: the hub's retained have says the same
            print(_("shotjudge: table feed: {path} not written ({error})").format(path=self.mark_path, error=exc), file=sys.stderr)
