"""The hall's parts one by one (issue #21 items 2, 3): the messages a table publishes (their schema, their keys),
the hub's store on both backends (a message stored twice is one entry), a redelivery and a resend counted once,
a table that judges with no broker and catches up when it comes, standings and the command lines' errors."""
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import jsonschema
import pytest
from referencing import Registry, Resource

from hub_services import Broker, Postgres, free_port
from judge.hub import Hub
from judge.hub_message import MessageError, entry_message, events_topic, parse_message
from judge.hub_store import open_store
from judge.journal import Journal
from judge.match import Match
from judge.standings import match_standing, novuss_points, player_ranking
from judge.table_feed import TableFeed
from novuss_shots import make_records, novuss_engine
from rules import parse_record

ROOT = Path(__file__).resolve().parents[1]
SCHEMAS = {name: json.loads((ROOT / "docs/schemas" / f"{name}.schema.json").read_text())
           for name in ("hub-message", "shot-record", "ruling")}
REGISTRY = Registry().with_resources([(s["$id"], Resource.from_contents(s)) for s in SCHEMAS.values()])
VALIDATOR = jsonschema.Draft202012Validator(SCHEMAS["hub-message"], registry=REGISTRY)
MATCH_INFO = {"game": "novuss", "ruleset": "novuss", "profile": None, "games": 1, "players": {"A": "Anna", "B": "Boris"}}


def wait_until(what, check, timeout_s=30.0):
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


@pytest.fixture
def broker(tmp_path):
    b = Broker(tmp_path / "broker").start()
    yield b
    b.stop()


@pytest.fixture
def table(tmp_path):
    """A table's match and journal (Novuss, one game, the players named)."""
    journal = Journal.open(tmp_path / "t1.sqlite", create=True, match=MATCH_INFO)
    yield Match(novuss_engine(), journal), tmp_path / "t1.sqlite"
    journal.close()


class Listener:
    """A plain MQTT subscriber: every message on the topic, in arrival order."""

    def __init__(self, broker, topic):
        import paho.mqtt.client as mqtt

        self.messages, self.ready = [], threading.Event()
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="test-listener")
        self.client.on_connect = lambda c, u, f, rc, p=None: (c.subscribe(topic, qos=1), self.ready.set())
        self.client.on_message = lambda c, u, msg: self.messages.append(json.loads(msg.payload))
        self.client.connect("127.0.0.1", broker.port)
        self.client.loop_start()
        assert self.ready.wait(10)
        time.sleep(0.2)  # the SUBACK

    def close(self):
        self.client.disconnect()
        self.client.loop_stop()


def test_each_journal_entry_is_one_message_in_the_documented_schema_keyed_by_table_game_shot(broker, table):
    match, path = table
    listener = Listener(broker, events_topic("t1"))
    feed = TableFeed("t1", path, "127.0.0.1", broker.port).start()
    match.listeners.append(feed)
    for raw in make_records(3):
        match.judge(parse_record(raw))
    wait_until("the three shots", lambda: sum(m["kind"] == "shot" for m in listener.messages) >= 3)
    feed.stop()
    listener.close()
    for message in listener.messages:
        VALIDATOR.validate(message)
    assert [(m["kind"], m["key"]) for m in listener.messages] == [("match", {"table": "t1", "game": 1, "shot": None})] + [
        ("shot", {"table": "t1", "game": 1, "shot": n}) for n in (1, 2, 3)]
    seqs = [m["seq"] for m in listener.messages]
    assert [m["prev"] for m in listener.messages] == [0] + seqs[:-1]  # the chain skips the records written ahead
    shots = match.journal.entries("shot")
    assert [m["payload"] for m in listener.messages[1:]] == [e["payload"] for e in shots]
    bad = dict(listener.messages[1], key={"table": "t1", "game": 1, "shot": None})
    with pytest.raises(jsonschema.ValidationError):
        VALIDATOR.validate(bad)


@pytest.mark.parametrize("text, why", [
    (b"{", "not JSON"), (b"[]", "not a shotjudge.hub-message/1"),
    (json.dumps({"schema": "shotjudge.hub-message/1", "table": "t2", "key": {"table": "t2"}}).encode(), "table 't2'"),
])
def test_a_message_the_hub_cannot_use_is_refused_with_the_reason(text, why):
    with pytest.raises(MessageError, match=why):
        parse_message("t1", text)


@pytest.fixture(scope="module")
def postgres():
    server = Postgres().start()
    yield server
    server.stop()


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_the_store_keeps_a_message_stored_twice_once_on_both_backends(backend, table, tmp_path, request):
    match, path = table
    for raw in make_records(2):
        match.judge(parse_record(raw))
    entries = [e for e in match.journal.entries() if e["kind"] != "seen"]
    messages, prev = [], 0
    for e in entries:
        messages.append(entry_message("t1", "0123456789abcdef", e, prev))
        prev = e["seq"]
    url = f"sqlite:///{tmp_path / 'hub.sqlite'}" if backend == "sqlite" else request.getfixturevalue("postgres").url
    store = open_store(url)
    try:
        store.store(messages, [("t1", "0123456789abcdef", {"table": "t1"})])
        store.store(messages[1:] + messages[:1])  # redelivered, out of order
        again = dict(messages[1], seq=99, prev=messages[-1]["seq"])  # the same shot (table, game, shot), another seq
        store.store([again])
        stored = store.entries("t1", "0123456789abcdef")
        assert [(e["seq"], e["kind"], e["payload"]) for e in stored] == [(e["seq"], e["kind"], e["payload"]) for e in entries]
        assert store.tables() == {"t1": {"table": "t1", "match": "0123456789abcdef"}}
        store.save_standings([("t1", "0123456789abcdef", 3, {"shots": 2})])
        store.save_standings([("t1", "0123456789abcdef", 5, {"shots": 3})])
        assert store.standings() == [{"shots": 3, "table": "t1", "match": "0123456789abcdef", "have": 5}]
    finally:
        if backend == "postgresql":
            store.write([(f"DROP TABLE {t}", ()) for t in ("hub_entries", "hub_tables", "hub_standings")])
        store.close()


def test_a_table_judges_with_no_broker_and_the_hub_gets_everything_once_when_it_comes(tmp_path, table):
    match, path = table
    port = free_port()
    broker = Broker(tmp_path / "broker")
    broker.port = port
    (broker.folder / "mosquitto.conf").write_text((broker.folder / "mosquitto.conf").read_text().replace(
        "listener ", f"listener {port} 127.0.0.1\n#", 1))
    feed = TableFeed("t1", path, "127.0.0.1", port, resend_s=0.5).start()
    match.listeners.append(feed)
    raws = make_records(4)
    for raw in raws:  # no broker at all: judging goes on, journaled
        assert match.judge(parse_record(raw)).shot_no is not None
    store = open_store(str(tmp_path / "hub.sqlite"))
    hub = Hub(store, "127.0.0.1", port)
    broker.start()
    try:
        hub.start()
        wait_until("the hub to confirm the journal", feed.caught_up)
        # the hub restarts from its store: the same have, and a table that sends it all again changes nothing
        hub.stop()
        again = Hub(store, "127.0.0.1", port, client_id="shotjudge-hub")
        assert again.haves == hub.haves
        again.start()
        raw = feed._entries_after(0)[1]
        again.client.publish(events_topic("t1"), json.dumps(entry_message("t1", feed.match, raw, 1)), qos=1)
        wait_until("the duplicate", lambda: again.duplicates == 1)
        standing = again.standings[("t1", feed.match)]
        assert standing["shots"] == 4 and standing["players"] == {"A": "Anna", "B": "Boris"}
        assert standing["score"] == match.score()
        again.stop()
    finally:
        feed.stop()
        broker.stop()
        store.close()
    assert [e["seq"] for e in store_entries(tmp_path / "hub.sqlite")] == [e["seq"] for e in match.journal.entries()
                                                                        if e["kind"] != "seen"]


def store_entries(path):
    store = open_store(str(path))
    try:
        (table, info), = store.tables().items()
        return store.entries(table, info["match"])
    finally:
        store.close()


def test_standings_points_the_organisers_for_novuss_and_clause_8_for_cvrnkana():
    assert novuss_points("win=3,loss=1") == {"win": 3, "draw": 1, "loss": 1}
    with pytest.raises(Exception, match="like win=2,draw=1,loss=0"):
        novuss_points("win=two")
    entries = [{"seq": 1, "kind": "match", "game_no": 1, "shot_no": None, "wall_time": 0.0,
                "payload": {"game": "novuss", "ruleset": "novuss", "games": 1, "players": {"A": "Anna", "B": "Boris"}}}]
    standing = match_standing(entries)
    assert (standing["score"]["played"], standing["points"], standing["shots"]) == (0, None, 0)
    won = {"table": "t1", "match": "m", "game": "novuss", "players": {"A": "Anna", "B": "Boris"}, "error": None,
           "points": {"A": 2, "B": 0}, "score": {"games_won": {"A": 1, "B": 0}}}
    other = {**won, "table": "t2", "players": {"A": "Cyril", "B": "Anna"}, "points": {"A": 1, "B": 1},
             "score": {"games_won": {"A": 1, "B": 1}}}
    ranking = player_ranking([won, other])
    assert [(r["player"], r["matches"], r["points"], r["games_won"]) for r in ranking] == [
        ("Anna", 2, 3, 2), ("Cyril", 1, 1, 1), ("Boris", 1, 0, 0)]


@pytest.mark.parametrize("args, says", [
    (["hub", "--mqtt", "localhost:99999"], "--mqtt: the port must be a whole number from 1 to 65535"),
    (["hub", "--mqtt", "localhost", "--db", "mysql://x"], "--db mysql://x: give a file, sqlite:///path or postgresql://"),
    (["hub", "--mqtt", "localhost", "--db", "/no/such/folder/hub.sqlite"], "the folder /no/such/folder does not exist"),
    (["hub", "--mqtt", "localhost", "--points-novuss", "win=x"], "--points-novuss: must be like win=2,draw=1,loss=0"),
    (["live", "--game", "novuss", "--source", "x", "--calibration", "c.json", "--table", "t1"],
     "--table NAME and --mqtt HOST[:PORT] go together"),
    (["live", "--game", "novuss", "--source", "x", "--calibration", "c.json", "--table", "t/1", "--mqtt", "h"],
     "--table: must be letters, digits"),
])
def test_bad_hall_options_are_one_line_and_exit_2(args, says):
    proc = subprocess.run([sys.executable, "-m", "judge.cli", *args], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and says in proc.stderr, proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith(("shotjudge", "usage")) and "Traceback" not in proc.stderr


def test_a_new_hub_with_an_empty_store_gets_the_whole_match_from_a_table_that_had_sent_it(tmp_path, table, broker):
    """The table's resend point says the old hub had everything; the new hub's have (0) sends it back to the start."""
    match, path = table
    feed = TableFeed("t1", path, "127.0.0.1", broker.port, resend_s=0.5).start()
    match.listeners.append(feed)
    raws = make_records(3)
    old_store = open_store(str(tmp_path / "old.sqlite"))
    old = Hub(old_store, "127.0.0.1", broker.port, client_id="hub-old").start()
    match.judge(parse_record(raws[0]))
    match.judge(parse_record(raws[1]))
    wait_until("the old hub to confirm", feed.caught_up)
    old.stop()
    old_store.close()
    new_store = open_store(str(tmp_path / "new.sqlite"))
    new = Hub(new_store, "127.0.0.1", broker.port, client_id="hub-new").start()
    try:
        time.sleep(0.5)  # subscribed
        match.judge(parse_record(raws[2]))
        wait_until("the new hub to hold the whole match", lambda: new.standings.get(("t1", feed.match), {}).get("have")
                   == feed._last_seq())
        # the entry that came first, after the hole, came again with the rest: counted once, and as one duplicate
        assert new.standings[("t1", feed.match)]["shots"] == 3 and new.duplicates == 1
    finally:
        new.stop()
        feed.stop()
        new_store.close()
