"""Load bench of the hall: N simulated tables (50 by default) publishing at a real match's rate through one
Mosquitto broker and one ``shotjudge hub`` process on this machine.

Each table is a real judge from the rule step on (``Match`` with its SQLite journal, and the ``TableFeed`` that
publishes it with its own MQTT client); what it judges are the shot records of games played by ``shotjudge sim``
(Novuss sets and Cvrnkaná games, the tables alternating), one shot every ``--shot-s`` seconds (default 15, a
real match's pace, jittered by +-30 %) divided by ``--speed`` (time compressed by that factor). The tables all
run in this process (threads); the broker and the hub are processes of their own.

End-to-end latency: from the moment the table journaled the shot to the moment the hub committed it to its
store (both are stamped on this machine's clock: ``hub_entries.wall_time`` and ``stored_s``). The hub's CPU is
its process's user + system time over the run, in % of one core.

usage: python bench/hub_load.py [--tables 50] [--seconds 120] [--speed 1] [--shot-s 15] [--db URL]
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process (psutil if installed, else /proc/<pid>/stat)."""
    try:
        import psutil

        times = psutil.Process(pid).cpu_times()
        return times.user + times.system
    except ImportError:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def play(table, stop: threading.Event, interval_s: float, rng: random.Random) -> None:
    """One table: its records judged one by one at the match's pace, the next game opened as live does."""
    from rules import parse_record

    match, records = table
    time.sleep(rng.uniform(0, interval_s))  # the tables do not start in step
    for raw in records:
        if stop.is_set():
            return
        match.judge(parse_record(raw))
        stop.wait(interval_s * rng.uniform(0.7, 1.3))


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tables", type=int, default=50)
    p.add_argument("--seconds", type=float, default=120.0, help="how long the tables play")
    p.add_argument("--speed", type=float, default=1.0, help="time compression: a shot every shot-s / speed seconds")
    p.add_argument("--shot-s", type=float, default=15.0, help="a real match's time between shots at one table")
    p.add_argument("--db", help="the hub's store (default: an SQLite file in the bench's folder)")
    p.add_argument("--work", help="folder for everything (default: a new temporary one)")
    args = p.parse_args()

    from calibration import default_profile
    from bench.hall_matches import simulated_games
    from bench.hall_servers import Broker
    from judge.hub_store import open_store
    from judge.journal import Journal
    from judge.match import Match
    from judge.table_feed import TableFeed
    from rules import engine_for

    work = Path(args.work or tempfile.mkdtemp(prefix="shotjudge-hub-bench-"))
    sims = simulated_games(work / "sims")
    broker = Broker(work / "broker").start()
    db = args.db or f"sqlite:///{work / 'hub.sqlite'}"
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    hub_log = open(work / "hub.log", "w")
    hub = subprocess.Popen([sys.executable, "-m", "judge.cli", "hub", "--mqtt", broker.address, "--db", db, "--port", "0"],
                           env=env, stdout=hub_log, stderr=subprocess.STDOUT)
    tables, feeds, journals = [], [], []
    for i in range(args.tables):
        game = ("novuss", "cvrnkana")[i % 2]
        name = f"t{i + 1:02d}"
        path = work / f"{name}.sqlite"
        journal = Journal.open(path, create=True, match={"game": game, "ruleset": game, "games": None})
        match = Match(engine_for(game, default_profile(game).geometry, game), journal)
        feed = TableFeed(name, path, "127.0.0.1", broker.port).start()
        match.listeners.append(feed)
        tables.append((match, sims[(game, i // 2 % 2)]))
        feeds.append(feed)
        journals.append(journal)
    time.sleep(3.0)  # the hub is up and subscribed
    interval_s = args.shot_s / args.speed
    stop = threading.Event()
    cpu0, t0 = cpu_s(hub.pid), time.monotonic()
    threads = [threading.Thread(target=play, args=(t, stop, interval_s, random.Random(i)), daemon=True)
               for i, t in enumerate(tables)]
    for t in threads:
        t.start()
    time.sleep(args.seconds)
    stop.set()
    for t in threads:
        t.join()
    deadline = time.monotonic() + 60
    while not all(f.caught_up() for f in feeds) and time.monotonic() < deadline:
        time.sleep(0.1)
    wall_s, hub_cpu_s = time.monotonic() - t0, cpu_s(hub.pid) - cpu0
    caught_up = sum(f.caught_up() for f in feeds)
    for f in feeds:
        f.stop()
    hub.terminate()
    hub.wait(timeout=30)
    broker.stop()

    store = open_store(db)
    rows = store.rows("SELECT kind, stored_s - wall_time FROM hub_entries")
    store.close()
    shots_journaled = sum(len(j.entries("shot")) for j in journals)
    for j in journals:
        j.close()
    latency_ms = [1000 * r[1] for r in rows if r[0] == "shot"]
    published = sum(f.published for f in feeds)
    print(f"{args.tables} tables, a shot every {interval_s:g} s per table ({args.shot_s:g} s real / speed {args.speed:g}), "
          f"{args.seconds:g} s of play; hub store {db.split('://')[0]}; work folder {work}")
    print("| tables | shots journaled | shots in hub | messages published | shots/s | latency median (ms) | "
          "latency p99 (ms) | latency max (ms) | hub CPU (% of a core) | tables caught up |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    print(f"| {args.tables} | {shots_journaled} | {len(latency_ms)} | {published} | {shots_journaled / args.seconds:.2f} | "
          f"{statistics.median(latency_ms):.1f} | {percentile(latency_ms, 0.99):.1f} | {max(latency_ms):.1f} | "
          f"{100 * hub_cpu_s / wall_s:.1f} | {caught_up}/{args.tables} |")
    return 0 if len(latency_ms) == shots_journaled and caught_up == args.tables else 1


if __name__ == "__main__":
    sys.exit(main())
