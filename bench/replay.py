"""Replay speed and accuracy on a simulated match: one table.

    python bench/replay.py [--fps 60] [--size 1280x720] [--runs 3] [--work DIR] [--scripted]

The demo's Novuss stretch (several shots of a set, from a mid-game position, both players driven by the
simulator's policy) is filmed once at the given frame rate and size (kept in ``--work`` so later runs
skip the rendering), then judged ``--runs`` times by ``judge.replay.judge_video`` exactly as
``shotjudge replay`` does. Baseline in the same process: decoding the video alone (alternating with the
replay, run by run). Columns: median seconds, real-time factor (video duration / processing time; target
>= 4x at 60 fps 1280x720), ratio to the decode-only baseline, share of rulings identical to the
simulator's ground truth (target >= 99 %), and the per-stage split (decode runs on its own thread,
overlapping the rest). ``--scripted`` replaces vision by the simulator's own records: it measures the
judge's side alone. The machine's load average and the replay's CPU time are printed too (all threads, and
the judging thread alone: vision and rules, the critical path): on a shared machine the seconds depend on
the load, the CPU time much less.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from hardware import open_source  # noqa: E402
from judge.cmd_replay import same_ruling  # noqa: E402
from judge.demo import film, simulate  # noqa: E402
from judge.replay import judge_video  # noqa: E402


def decode_only(video: Path) -> float:
    t = time.perf_counter()
    with open_source(str(video)) as source:
        for _ in source:
            pass
    return time.perf_counter() - t


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fps", type=float, default=60.0)
    ap.add_argument("--size", default="1280x720")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--work", default="bench-replay-work", help="folder for the filmed match (reused)")
    ap.add_argument("--scripted", action="store_true", help="vision replaced by the simulator's records")
    args = ap.parse_args(argv)
    w, h = (int(v) for v in args.size.lower().split("x"))
    work = Path(args.work) / f"novuss-{w}x{h}-{args.fps:g}"
    demo = simulate("novuss")
    if not (work / "video.mp4").exists():
        t = time.perf_counter()
        film(demo, work, args.fps, (w, h))
        print(f"filmed {len(demo.session.shots)} shot(s) in {time.perf_counter() - t:.1f} s -> {work}", file=sys.stderr)
    else:
        demo.files.update({k: work / n for k, n in (("background", "empty-board.png"), ("calibration", "calibration.json"),
                                                    ("state", "start-state.json"), ("video", "video.mp4"))})
    factory = None
    if args.scripted:
        from sim.scripted_vision import ScriptedVision
        factory = lambda cal, bg: ScriptedVision(demo, args.fps)  # noqa: E731
    truth = demo.truth
    load0 = os.getloadavg()[0]
    base, runs, same, stages, cpu = [], [], [], [], []
    frames = duration = 0
    for _ in range(args.runs):  # the baseline and the replay alternate, so both see the same load
        base.append(decode_only(work / "video.mp4"))
        c0, m0 = time.process_time(), time.thread_time()
        res = judge_video(work / "video.mp4", "novuss", work / "calibration.json", background=str(work / "empty-board.png"),
                          state=work / "start-state.json", vision_factory=factory)
        cpu.append((time.process_time() - c0, time.thread_time() - m0))
        runs.append(res.seconds)
        frames, duration = res.frames, res.duration_s
        ok = sum(same_ruling(s.ruling, w_) for s, w_ in zip(res.shots, truth))
        same.append(100.0 * ok / max(len(truth), len(res.shots), 1))
        stages.append(res.stages_s)
    med, med_base = statistics.median(runs), statistics.median(base)
    split = {k: statistics.median(s[k] for s in stages) for k in stages[0]}
    other = max(0.0, med - sum(v for k, v in split.items() if k != "decode"))
    print(f"replay on a simulated Novuss match: {frames} frames, {duration:.1f} s of video at {args.fps:g} fps {w}x{h}, "
          f"{len(truth)} shot(s), median of {args.runs} run(s){' (scripted vision)' if args.scripted else ''}")
    print(f"machine: {os.cpu_count()} cores, load average (1 min) {load0:.2f} before, {os.getloadavg()[0]:.2f} after; "
          f"replay CPU time {statistics.median(c for c, _ in cpu):.2f} s (all threads), "
          f"{statistics.median(m for _, m in cpu):.2f} s (judging thread), medians")
    print("run          | seconds | real-time x | vs decode | rulings same % | decode s | detect s | track+events s | rules s | other s")
    print(f"decode only  | {med_base:7.2f} | {duration / med_base:11.1f} | {1.0:9.2f} | {'-':>14} | {med_base:8.2f} | "
          f"{'-':>8} | {'-':>14} | {'-':>7} | {'-':>7}")
    print(f"replay       | {med:7.2f} | {duration / med:11.1f} | {med / med_base:9.2f} | {statistics.median(same):14.1f} | "
          f"{split['decode']:8.2f} | {split['detect']:8.2f} | {split['track+events']:14.2f} | {split['rules']:7.3f} | {other:7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
