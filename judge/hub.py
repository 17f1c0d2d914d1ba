"""The hub: subscribes to every table, stores what they publish, keeps the standings, answers each table's ``have``.

It is one persistent MQTT session (fixed client id, clean session off) that acknowledges a message only after
the batch holding it is committed (paho's manual ack), so the broker redelivers whatever a killed hub had not
stored. Per table's match the hub knows the entries it holds without a hole (following each message's
``prev``): that is its retained ``have``, where the table resumes publishing, and what standings are folded
from. A message stored again (a redelivery, a table's resend) is counted as a duplicate and changes nothing.
"""
from __future__ import annotations

import json
import queue
import sys
import threading
import time
from typing import Any, Callable, Mapping

from .hub_message import MessageError, ROOT, have_topic, parse_message, topic_table
from .standings import NOVUSS_POINTS, match_standing, player_ranking
from .i18n import _

__all__ = ["Hub"]

BATCH_MAX = 500  # messages committed in one transaction at most
BATCH_WAIT_S = 0.02  # after the first message, gather this long before committing
STORE_TRIES = 5  # a batch the store refuses is tried this often, a second apart


class Hub:
    """Store + MQTT session + standings; ``listeners`` hear each new call and standing (the hall page)."""

    def __init__(self, store, host: str, port: int, *, points_novuss: Mapping[str, int] = NOVUSS_POINTS,
                 client_id: str = "shotjudge-hub", listeners: list[Callable[[dict], None]] | None = None):
        import paho.mqtt.client as mqtt

        self.store, self.points_novuss = store, dict(points_novuss)
        self.listeners = list(listeners or [])
        self.received = self.stored = self.duplicates = self.rejected = 0
        self._queue: queue.Queue = queue.Queue()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self.haves: dict[tuple[str, str], int] = {}  # (table, match) -> every entry up to this seq is stored
        self._ahead: dict[tuple[str, str], dict[int, int]] = {}  # entries past a hole: prev -> seq
        for table, match, seq, prev in store.chains():
            self._chain(table, match, seq, prev)
        self.standings = {(s["table"], s["match"]): s for s in store.standings()}
        self.tables = store.tables()
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id, clean_session=False,
                                  protocol=mqtt.MQTTv311, manual_ack=True)
        self.client.reconnect_delay_set(1, 2)
        self.client.on_connect = self._on_connect
        self.client.on_message = lambda client, userdata, msg: self._queue.put(msg)
        self.client.connect_async(host, port, keepalive=10)
        self._worker = threading.Thread(target=self._run, name="hub-store", daemon=True)

    def start(self) -> "Hub":
        self._worker.start()
        self.client.loop_start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self.client.disconnect()
        self.client.loop_stop()
        self._worker.join(timeout=5.0)

    # ----- what the pages read -------------------------------------------------------------------
    def hall(self) -> dict[str, Any]:
        """Every table's current match and standing, and the players' ranking over all matches."""
        with self._lock:
            standings = {key: dict(s) for key, s in self.standings.items()}
            tables = {t: dict(info) for t, info in self.tables.items()}
        current = [{"table": table, "info": info, "standing": standings.get((table, info["match"]))}
                   for table, info in sorted(tables.items())]
        return {"tables": current, "ranking": player_ranking(list(standings.values())), "counts": self.counts()}

    def counts(self) -> dict[str, int]:
        return {"received": self.received, "stored": self.stored, "duplicates": self.duplicates,
                "rejected": self.rejected}

    # ----- MQTT (paho's thread) ------------------------------------------------------------------
    def _on_connect(self, client, userdata, flags, reason_code, properties=None) -> None:
        if reason_code.is_failure:
            return
        client.subscribe([(f"{ROOT}/+/events", 1), (f"{ROOT}/+/state", 1)])
        with self._lock:
            haves = dict(self.haves)
        for (table, match), seq in haves.items():  # a table waiting on a have lost with the broker gets it again
            self._say_have(table, match, seq)

    def _say_have(self, table: str, match: str, seq: int) -> None:
        self.client.publish(have_topic(table), json.dumps({"table": table, "match": match, "seq": seq}), qos=1,
                            retain=True)

    # ----- storing (the hub's own thread) --------------------------------------------------------
    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                first = self._queue.get(timeout=0.5)
            except queue.Empty:
                continue
            batch, deadline = [first], time.monotonic() + BATCH_WAIT_S
            while len(batch) < BATCH_MAX:
                try:
                    batch.append(self._queue.get(timeout=max(0.0, deadline - time.monotonic())))
                except queue.Empty:
                    break
            for attempt in range(1, STORE_TRIES + 1):
                try:
                    self._process(batch)
                    break
                except Exception as exc:  # noqa: BLE001 - the store refused (a server gone): try again, then leave it
                    gone = attempt == STORE_TRIES
                    then = _("left unacknowledged: the tables send it again") if gone else _("trying again")
                    print(_("shotjudge hub: batch of {n} not stored ({error}); {then}").format(
                        n=len(batch), error=f"{type(exc).__name__}: {exc}", then=then), file=sys.stderr)
                    if self._stop.wait(1.0):
                        return

    def _process(self, batch: list) -> None:
        events, states = [], []
        for msg in batch:
            where = topic_table(msg.topic)
            try:
                if where is None:
                    raise MessageError(f"not one of our topics: {msg.topic}")
                if where[1] == "events":
                    events.append(parse_message(where[0], msg.payload))
                elif where[1] == "state":
                    info = json.loads(msg.payload)
                    if not isinstance(info, dict) or not isinstance(info.get("match"), str):
                        raise MessageError("a table's state names its match")
                    states.append((where[0], info["match"], {k: v for k, v in info.items() if k != "match"}))
            except (MessageError, ValueError) as exc:
                self.rejected += 1
                print(_("shotjudge hub: {topic}: message dropped: {error}").format(topic=msg.topic, error=exc), file=sys.stderr)
        self.store.store(events, states)  # committed: now the broker may forget them
        for msg in batch:
            self.client.ack(msg.mid, msg.qos)
        self.received += len(events)
        self._after_commit(events, states)

    def _after_commit(self, events: list[dict], states: list) -> None:
        fresh, moved, touched = [], set(), set()
        with self._lock:
            for table, match, info in states:
                self.tables[table] = {**info, "match": match}
            for m in events:
                key = (m["table"], m["match"])
                touched.add(key)
                if self._known(key, m["seq"]):
                    self.duplicates += 1
                    continue
                before = self.haves.get(key, 0)
                self._chain(m["table"], m["match"], m["seq"], m["prev"])
                fresh.append(m)
                if self.haves.get(key, 0) != before:
                    moved.add(key)
            self.stored += len(fresh)
        standings = []
        for table, match in sorted(moved):
            have = self.haves[(table, match)]
            standing = match_standing(self.store.entries(table, match, have), self.points_novuss)
            standings.append((table, match, have, standing))
        if standings:
            self.store.save_standings(standings)
        for table, match, have, standing in standings:
            with self._lock:
                self.standings[(table, match)] = {**standing, "table": table, "match": match, "have": have}
        for table, match in sorted(touched):  # a have that did not move tells the table where the hole is
            self._say_have(table, match, self.haves.get((table, match), 0))
        for m in fresh:
            if m["kind"] == "shot":
                self._tell({"type": "call", "table": m["table"], "match": m["match"], "game_no": m["game_no"],
                            "shot_no": m["shot_no"], "ruling": m["payload"]["ruling"]})
        for table, match, have, standing in standings:
            self._tell({"type": "standing", "table": table, "match": match, "have": have, "standing": standing})
        if states:
            self._tell({"type": "tables"})

    def _known(self, key: tuple[str, str], seq: int) -> bool:
        return seq <= self.haves.get(key, 0) or seq in self._ahead.get(key, {}).values()

    def _chain(self, table: str, match: str, seq: int, prev: int) -> None:
        """Add an entry to its table's chain and move ``have`` along it as far as there is no hole."""
        key = (table, match)
        have = self.haves.get(key, 0)
        ahead = self._ahead.setdefault(key, {})
        if seq <= have:
            return
        ahead[prev] = seq
        while have in ahead:
            have = ahead.pop(have)
        self.haves[key] = have
        for stale in [p for p in ahead if p < have]:  # a resend from before a rewind, already covered
            del ahead[stale]

    def _tell(self, event: dict) -> None:
        from .match import tell

        tell(self.listeners, event, "shotjudge hub")
