"""Live against replay on a whole simulated set, uninterrupted and killed: one table.

    python bench/live_replay.py [--game novuss|cvrnkana] [--seed 1] [--fps 60] [--size 960x540]
                                [--kills 10,25:between,40] [--work DIR]

A whole Novuss set (or Cvrnkaná game) played by the simulator's policy is filmed (kept in ``--work``:
later runs with the same settings skip the rendering), then judged three ways:
* ``replay``: ``judge.replay.judge_video``, as ``shotjudge replay``;
* ``live``: a real ``shotjudge live`` process on the video file (``python -m judge.cli live``), read back
  from its journal;
* ``live, killed``: the same command SIGKILLed at each point of ``--kills`` and restarted until it ends:
  ``K`` kills it once the journal holds K judged shots, ``K:between`` once the record of shot K is
  written ahead and before its ruling (``bench/live_crash.py``: a point no outside timing hits).
Columns: shots in the journal (refused shots count, as review items), refused, flagged for review (the
ruling's flag), rulings identical to replay's shot by shot (whole: calls, evidence, score), the same calls
(each call and its player, the next player, the score and the review flag; a restarted vision may time a
contact microseconds apart, which changes only the evidence), the first shot whose calls differ, shots
judged twice and shots lost (against the uninterrupted run, paired by start time within 0.5 s), and
seconds.
"""
from __future__ import annotations

import argparse
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

LIVE_ENV = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "300"}
CRASH = ROOT / "bench" / "live_crash.py"

__all__ = ["live_command", "journal_rulings", "journal_count", "kill_when", "run_killed", "main"]


def live_command(files, game: str, journal: Path) -> list[str]:
    """The ``shotjudge live`` command line (this checkout's code) for a filmed recording's files."""
    return [sys.executable, "-m", "judge.cli", "live", "--game", game, "--source", str(files["video"]),
            "--calibration", str(files["calibration"]), "--background", str(files["background"]),
            "--state", str(files["state"]), "--journal", str(journal), "--no-overlay", "--no-clips"]


def journal_rulings(journal: Path) -> list:
    """The journal's shots in order: each judged one's ruling, a refused one (a review item) as None."""
    from judge.journal import Journal

    with Journal.open(journal) as j:
        return [e["payload"]["ruling"] if e["kind"] == "shot" else None for e in j.entries()
                if e["kind"] in ("shot", "refused")]


def journal_starts(journal: Path) -> list[float]:
    """When each journaled shot (judged or refused) started, in order (video seconds)."""
    from judge.journal import Journal

    with Journal.open(journal) as j:
        return [float(e["payload"]["record"]["t0"]) for e in j.entries() if e["kind"] in ("shot", "refused")]


def _calls(ruling) -> tuple | None:
    """What a ruling decides: each call (code, player), the next player, the score and the review flag,
    without the evidence's numbers (a restarted vision times a contact a few microseconds apart)."""
    if ruling is None:
        return None
    return (sorted((c["code"], c.get("player")) for c in ruling["calls"]), ruling.get("next_player"),
            ruling.get("score"), bool(ruling.get("review")))


def _paired(starts: list[float], want: list[float], within_s: float = 0.5) -> tuple[int, int]:
    """(shots judged twice, shots lost) against the uninterrupted run's shots, paired by start time."""
    twice = sum(1 for i, t in enumerate(starts) for u in starts[:i] if abs(t - u) < within_s)
    lost = sum(1 for t in want if not any(abs(t - u) < within_s for u in starts))
    return twice, lost


def journal_count(journal: Path, kind: str) -> int:
    """Entries of ``kind`` in a journal another process is writing (0 before it exists)."""
    if not journal.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{journal}?mode=ro", uri=True, timeout=5) as conn:
            return conn.execute("SELECT COUNT(*) FROM entries WHERE kind=?", (kind,)).fetchone()[0]
    except sqlite3.OperationalError:  # not created yet
        return 0


def kill_when(cmd: list[str], journal: Path, cwd: Path, shots: int, timeout_s: float = 900) -> None:
    """Run ``cmd`` and SIGKILL it as soon as the journal holds ``shots`` judged shots."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=LIVE_ENV, cwd=cwd)
    deadline = time.monotonic() + timeout_s
    while journal_count(journal, "shot") < shots and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    if proc.poll() is not None:
        raise RuntimeError(f"live ended before it was killed: {proc.stderr.read().decode()[-2000:]}")
    proc.send_signal(signal.SIGKILL)
    proc.wait()


def kill_between(cmd: list[str], journal: Path, cwd: Path, records: int) -> None:
    """Run ``cmd`` so that it SIGKILLs itself once the journal holds ``records`` records written ahead."""
    done = subprocess.run([sys.executable, str(CRASH), *cmd[3:]], capture_output=True, text=True,
                          env={**LIVE_ENV, "SHOTJUDGE_KILL_AFTER_SEEN": str(records)}, cwd=cwd)
    if done.returncode != -signal.SIGKILL:
        raise RuntimeError(f"live was not killed between record {records} and its ruling (exit {done.returncode}): "
                           f"{done.stderr[-2000:]}")


def run_killed(cmd: list[str], journal: Path, cwd: Path, kills: list[str]) -> subprocess.CompletedProcess:
    """The command killed at each point of ``kills`` (``K`` or ``K:between``), then run to its end."""
    for point in kills:
        count, _, how = point.partition(":")
        if how == "between":
            kill_between(cmd, journal, cwd, int(count))
        else:
            kill_when(cmd, journal, cwd, int(count))
    return subprocess.run(cmd, capture_output=True, text=True, env=LIVE_ENV, cwd=cwd)


def _recording(game: str, seed: int, fps: float, size: tuple[int, int], work: Path):
    from calibration import default_profile
    from judge.demo import DemoGame, film
    from sim import scenarios

    profile = default_profile(game)
    whole = next(k for k in ("set", "game") if k in scenarios.SCENARIOS[game])  # a whole Novuss set, Cvrnkaná game
    session = scenarios.SCENARIOS[game][whole][0](profile, seed).session
    demo = DemoGame(game, profile, session, session.states_before[0].to_dict(), seed)
    folder = work / f"{game}-seed{seed}-{fps:g}fps-{size[0]}x{size[1]}"
    files = {"background": folder / "empty-board.png", "calibration": folder / "calibration.json",
             "state": folder / "start-state.json", "video": folder / "video.mp4"}
    if all(p.exists() for p in files.values()):
        demo.files.update(files)
    else:
        film(demo, folder, fps, size)
    return demo, folder


def _row(name, rulings, replayed, seconds, starts=None, want_starts=None) -> str:
    flagged = sum(1 for r in rulings if r is not None and r.get("review"))
    same = sum(1 for a, b in zip(rulings, replayed) if a == b)
    calls = sum(1 for a, b in zip(rulings, replayed) if _calls(a) == _calls(b))
    first = next((i + 1 for i, (a, b) in enumerate(zip(rulings, replayed)) if _calls(a) != _calls(b)), None)
    if first is None and len(rulings) != len(replayed):
        first = min(len(rulings), len(replayed)) + 1
    twice = lost = "-"
    if starts is not None and want_starts is not None:
        twice, lost = (str(v) for v in _paired(starts, want_starts))
    return (f"| {name:<13} | {len(rulings):>5} | {sum(r is None for r in rulings):>7} | {flagged:>7} | "
            f"{same:>4}/{len(replayed):<4} | {calls:>4}/{len(replayed):<4} | {first or '-':>10} | {twice:>5} | "
            f"{lost:>4} | {seconds:>7.0f} |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--game", choices=("novuss", "cvrnkana"), default="novuss")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--fps", type=float, default=60.0)
    ap.add_argument("--size", default="960x540")
    ap.add_argument("--kills", default="10,25:between,40", help="kill points (K or K:between); '' for none")
    ap.add_argument("--work", default="/tmp/shotjudge-bench-live", help="where the filmed set is kept")
    args = ap.parse_args(argv)
    w, h = (int(v) for v in args.size.lower().split("x"))
    work = Path(args.work)
    t = time.monotonic()
    demo, folder = _recording(args.game, args.seed, args.fps, (w, h), work)
    print(f"{args.game} seed {args.seed}: {len(demo.session.shots)} shots, {args.fps:g} fps {w}x{h}, "
          f"ready in {time.monotonic() - t:.0f} s ({folder})", flush=True)

    from judge.replay import judge_video

    f = demo.files
    t = time.monotonic()
    res = judge_video(f["video"], args.game, f["calibration"], background=f["background"], state=f["state"])
    replayed, replay_s = [s.ruling for s in res.shots], time.monotonic() - t
    rows = [_row("replay", replayed, replayed, replay_s)]

    runs = {"live": []}
    if args.kills:
        runs["live, killed"] = [k.strip() for k in args.kills.split(",") if k.strip()]
    want_starts = None
    for name, kills in runs.items():
        journal = folder / f"{name.replace(', ', '-')}.sqlite"
        for p in (journal, Path(f"{journal}-wal"), Path(f"{journal}-shm")):
            p.unlink(missing_ok=True)
        cmd = live_command(f, args.game, journal)
        t = time.monotonic()
        done = run_killed(cmd, journal, folder, kills)
        if done.returncode != 0:
            print(f"{name}: exit {done.returncode}: {done.stderr.strip()[-500:]}")
            return 1
        starts = journal_starts(journal)
        want_starts = starts if want_starts is None else want_starts
        rows.append(_row(name, journal_rulings(journal), replayed, time.monotonic() - t, starts, want_starts))
        print(f"{name}: {done.stdout.strip().splitlines()[-1]}", flush=True)
    print()
    print("| run           | shots | refused | flagged | identical | same calls | first diff | twice | lost | seconds |")
    print("|---------------|-------|---------|---------|-----------|------------|------------|-------|------|---------|")
    print("\n".join(rows))
    if args.kills:
        print(f"\nkilled at: {args.kills} (K: after K judged shots; K:between: record K written, its ruling not)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
