"""Issue #21 items 2 and 3 end to end: a Mosquitto broker, ``shotjudge hub`` (SQLite, then PostgreSQL) and three
``shotjudge live --table --mqtt`` judges on simulated matches of both games (vision scripted from ``shotjudge
sim``'s records, everything after it real). The broker and then the hub are SIGKILLed mid-match and started again;
the tables keep judging meanwhile. At the end the hub holds every table's journal, entry for entry, no shot
missing or twice, and its standings are what ``shotjudge match`` makes of each journal."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench.hall_matches import hall_matches
from hub_services import Broker, Postgres
from judge.hub_message import match_id
from judge.hub_store import open_store
from judge.journal import Journal

pytestmark = pytest.mark.slow
HERE = Path(__file__).parent
ENV = {**os.environ, "PYTHONPATH": str(HERE.parent) + os.pathsep + os.environ.get("PYTHONPATH", ""), "COLUMNS": "300"}
MATCH_S = 24.0  # how long each table's match takes (frames are paced by the scripted vision)


@pytest.fixture(scope="module")
def matches(tmp_path_factory):
    return hall_matches(tmp_path_factory.mktemp("sims"))


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request, tmp_path):
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'hub.sqlite'}"
        return
    server = Postgres().start()
    try:
        yield server.url
    finally:
        server.stop()


def start_hub(broker, db_url, log):
    proc = subprocess.Popen([sys.executable, "-m", "judge.cli", "hub", "--mqtt", broker.address, "--db", db_url,
                             "--port", "0"], env=ENV, stdout=open(log, "a"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while "hall page" not in log.read_text():
        assert proc.poll() is None and time.monotonic() < deadline, f"the hub did not start: {log.read_text()}"
        time.sleep(0.05)
    return proc


def shots_in(journal: Path) -> int:
    import sqlite3

    if not journal.exists():
        return 0
    conn = sqlite3.connect(f"file:{journal}?mode=ro", uri=True, timeout=5)
    try:
        return conn.execute("SELECT COUNT(*) FROM entries WHERE kind='shot'").fetchone()[0]
    except sqlite3.Error:
        return 0
    finally:
        conn.close()


def wait_until(what, check, timeout_s=60.0):
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def published_entries(journal: Path) -> list[dict]:
    """The journal's entries the hub is sent (all but the records written ahead), as the hub stores them."""
    with Journal.open(journal) as j:
        return [{k: e[k] for k in ("seq", "kind", "game_no", "shot_no", "payload")}
                for e in j.entries() if e["kind"] != "seen"]


def journal_score(journal: Path, game: str) -> dict:
    """``shotjudge match --json`` on the journal's shot records, the command a person would check it with."""
    with Journal.open(journal) as j:
        records = [e["payload"]["record"] for e in j.entries("shot")]
    path = journal.with_suffix(".jsonl")
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "judge.cli", "match", str(path), "--game", game, "--games", "2", "--json"],
                          capture_output=True, text=True, env=ENV, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_three_tables_through_broker_and_hub_kills_lose_and_double_nothing(matches, db_url, tmp_path):
    broker = Broker(tmp_path / "broker").start()
    hub_log = tmp_path / "hub.log"
    hub = start_hub(broker, db_url, hub_log)
    tables = {}
    try:
        for name, (game, records) in matches.items():
            (tmp_path / f"{name}.json").write_text(json.dumps(records))
            delay_s = MATCH_S / (4 * len(records))
            tables[name] = subprocess.Popen(
                [sys.executable, str(HERE / "hub_table.py"), name, game, "2", str(tmp_path / f"{name}.json"),
                 str(tmp_path / name), broker.address, f"{delay_s:.4f}", f"{name}-anna,{name}-boris"],
                env=ENV, stdout=open(tmp_path / f"{name}.log", "w"), stderr=subprocess.STDOUT)
        journals = {name: tmp_path / name / "journal.sqlite" for name in matches}

        def share(fraction):
            return lambda: all(shots_in(journals[n]) >= fraction * len(r) for n, (_, r) in matches.items())

        def outage(what, kill):
            """``kill`` mid-match; for 2 s the tables judge on regardless."""
            kill()
            during = [shots_in(journals[n]) for n in matches]
            time.sleep(2.0)
            after = [shots_in(journals[n]) for n in matches]
            assert all(p.poll() is None for p in tables.values()), f"the {what} must be killed mid-match"
            assert all(b > a for a, b in zip(during, after)), f"the tables judge on with the {what} down: {during} {after}"

        wait_until("a quarter of every match", share(0.25))
        outage("broker", broker.kill)
        broker.start()
        wait_until("60 % of every match", share(0.6))
        outage("hub", lambda: (hub.send_signal(signal.SIGKILL), hub.wait()))
        hub = start_hub(broker, db_url, hub_log)

        for name, proc in tables.items():
            assert proc.wait(timeout=180) == 0, (tmp_path / f"{name}.log").read_text()[-3000:]
            assert "the hub has confirmed" not in (tmp_path / f"{name}.log").read_text()  # caught up before exit
    finally:
        for proc in tables.values():
            if proc.poll() is None:
                proc.kill()
        hub.send_signal(signal.SIGTERM)
        hub.wait(timeout=30)
        broker.stop()

    store = open_store(db_url)
    try:
        standings = {s["table"]: s for s in store.standings()}
        for name, (game, records) in matches.items():
            with Journal.open(journals[name]) as j:
                match = match_id(j.entries()[0])
            stored = [{k: e[k] for k in ("seq", "kind", "game_no", "shot_no", "payload")}
                      for e in store.entries(name, match)]
            assert stored == published_entries(journals[name])  # every entry, once, in order, as journaled
            shots = [(e["game_no"], e["shot_no"]) for e in stored if e["kind"] == "shot"]
            assert len(shots) == len(set(shots)) == len(records)  # no shot missing or counted twice
            standing = standings[name]
            assert (standing["match"], standing["have"], standing["shots"]) == (match, stored[-1]["seq"], len(records))
            assert standing["score"] == journal_score(journals[name], game)
            assert standing["players"] == {"A": f"{name}-anna", "B": f"{name}-boris"}
            if game == "cvrnkana":
                assert standing["points"] == standing["score"]["points"]
            else:  # the organiser's default: a match drawn on games (1-1) is a point each
                assert standing["score"]["games_won"] == {"A": 1, "B": 1} and standing["points"] == {"A": 1, "B": 1}
        log = hub_log.read_text()
        assert "dropped" not in log and "not stored" not in log, log
    finally:
        store.close()
