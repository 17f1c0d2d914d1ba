"""Speed of our paths beside decoding (#20): one table, one run.

    python bench/speed.py [--scenarios opening,own-opponent-3ms,two-pocketed] [--passes 3] [--replay-runs 1]
                          [--work DIR] [--learned] [--no-replay] [--no-classical] [--positions FILE]

*Classical vision by stratum.* Scripted Novuss scenarios (``sim.scenarios_novuss``, seed 1, all 17 pieces)
are filmed at 60 frames/s, 1280x720, tilted camera, as H.264 (``sim.video.VideoWriter``, kept in ``--work``),
then decoded into memory with ``cv2.VideoCapture.read``: the baseline. Our classical path (detector, tracker,
events, shot assembly: ``vision.pipeline.Pipeline`` as ``judge.setup`` builds it, the colours measured on the
first frame's layout as ``bench/scoring.py`` does) is fed the decoded frames in order; one pass of each
alternates with the other ``--passes`` times, in the same process on one core (``cv2.setNumThreads(1)``), so
both see the same load. Every frame is put in a stratum by the simulator's truth: *at rest* (no piece moved
since the frame before), *one moving*, *several moving* (two or more; the most in one frame is printed).
Columns: frames, median ms per frame of decoding and of our path (wall clock, and our thread's CPU time),
frames/s (1000 / median ms) of both, and the ratio ours / decode in frames/s, wall clock (target >= 0.5).

*Replay.* ``judge.replay.judge_video`` on the demo's simulated Novuss match at 60 frames/s 1280x720 (as
``bench/replay.py``: filmed once into ``--work``), beside decoding it alone with PyAV, and the whole
``shotjudge replay`` process (Python, OpenCV and the project imported, the table printed; the project's bytecode
compiled first, as an installed package has it: where ``PYTHONDONTWRITEBYTECODE`` is set, as on these machines,
every process would otherwise compile the project's modules from source again): seconds,
real-time factor (target >= 4x), rulings identical to the simulator's; above the table the CPU time of the
replay (all threads, and the judging thread's per frame) and of the whole process. Every frame's tracked
positions and every shot's record and ruling are written to ``--positions`` (JSON, default
``replay-positions.json`` in ``--work``) the first time, and compared with that file on later runs: a speed-up
must leave them identical (the table says whether they are, and the first frame that is not).

*Learned path* (``--learned``): our learned path with crops (``vision.detect_crops``: the shipped ONNX model on
whole frames only to (re)acquire, ``models/shotjudge-det-crops.onnx`` on crops where the picture changed, inside
the pipeline) beside a plain full-frame ``model.track()`` (ultralytics ByteTrack, the shipped ONNX model) on
every decoded frame of the clips, one thread each, the order alternating: ms a frame, frames/s, how many times
faster than the plain tracker (all frames, and the frames in which a piece moves), recall of the true pieces
on view (target: >= 8x at equal recall), and against decoding.

The machine's cores and load average are printed: on a shared machine the seconds move with the load, the
ratios much less.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import cv2
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = ("judge", "vision", "rules", "hardware", "calibration", "sim")  # what ``shotjudge replay`` imports
sys.path.insert(0, ROOT)

FPS = 60.0
STRATA = ("at rest", "one moving", "several moving")


class _Frame:
    __slots__ = ("image", "index", "t_s")

    def __init__(self, image, index, t_s):
        self.image, self.index, self.t_s = image, index, t_s


def _moving(prev, now, tol_mm: float = 0.05) -> int:
    """Pieces of the simulator's truth that moved between two frames (in view or not, shown or not)."""
    was = {p.id: (p.x_mm, p.y_mm, p.z_mm) for p in prev.pieces}
    return sum(1 for p in now.pieces if p.id in was and math.dist(was[p.id], (p.x_mm, p.y_mm, p.z_mm)) > tol_mm)


def film_clip(profile, name: str, work: Path):
    """(video path, per-frame moving counts, clip, episode): the scenario filmed once (kept in ``work``)."""
    from bench.scoring import _classical
    from sim.scenarios_novuss import SCENARIOS
    from sim.video import VideoWriter

    ep = SCENARIOS[name][0](profile, 1)
    clip = ep.clip()
    n = clip.n_frames(FPS)
    truth = [clip.frame(k, FPS) for k in range(n)]
    moving = [0] + [_moving(truth[k - 1], truth[k]) for k in range(1, n)]
    path = work / f"{name}-1280x720-60.mp4"
    if not path.exists():
        renderer, _ = _classical(profile, clip, FPS, 1)
        with VideoWriter(path, FPS, (1280, 720)) as out:
            for k in range(n):
                out.write(renderer.render(truth[k], clip.states_at))
    return path, moving, clip, ep


def decode(path: Path) -> tuple[list[np.ndarray], list[float]]:
    """Every frame, and the seconds each ``cv2.VideoCapture.read`` took."""
    cap = cv2.VideoCapture(str(path))
    frames, times = [], []
    while True:
        t = time.perf_counter()
        ok, img = cap.read()
        dt = time.perf_counter() - t
        if not ok:
            break
        frames.append(img)
        times.append(dt)
    cap.release()
    return frames, times


def classical(profile, clip, frames: list[np.ndarray]) -> tuple[list[float], list[float]]:
    """Seconds per frame of our classical path (detector + tracker + events + assembly) over the frames:
    wall clock, and this thread's CPU time (much less moved by other work on the machine)."""
    from bench.scoring import _classical
    from judge.setup import assembler_for
    from vision.pipeline import Pipeline, hints_for

    _, det = _classical(profile, clip, FPS, 1)
    pipe = Pipeline(profile, detector=det, assembler=assembler_for(profile, det))
    f0 = clip.frame(0, FPS)
    pipe.start(hints_for({p.id: (p.x_mm, p.y_mm) for p in f0.pieces if p.visible and p.z_mm > -20}), 0, 0.0)
    out, cpu = [], []
    for k, img in enumerate(frames):
        t, c = time.perf_counter(), time.thread_time()
        pipe.feed(_Frame(img, k, k / FPS))
        out.append(time.perf_counter() - t)
        cpu.append(time.thread_time() - c)
    t = time.perf_counter()
    pipe.finish()
    out[-1] += time.perf_counter() - t
    return out, cpu


def stratum_of(moving: int) -> str:
    return STRATA[min(moving, 2)]


def classical_table(profile, names: list[str], work: Path, passes: int) -> list[str]:
    per = {s: {"decode": [], "ours": [], "cpu": []} for s in STRATA}
    most = 0
    for name in names:
        path, moving, clip, _ = film_clip(profile, name, work)
        dec_runs, our_runs, cpu_runs = [], [], []
        frames = None
        for _ in range(passes):  # decode and our path alternate: both see the same load
            frames, times = decode(path)
            dec_runs.append(times)
            wall, cpu = classical(profile, clip, frames)
            our_runs.append(wall)
            cpu_runs.append(cpu)
        n = min(len(frames), len(moving))
        for k in range(n):
            s = stratum_of(moving[k])
            per[s]["decode"].append(statistics.median(r[k] for r in dec_runs))
            per[s]["ours"].append(statistics.median(r[k] for r in our_runs))
            per[s]["cpu"].append(statistics.median(r[k] for r in cpu_runs))
            most = max(most, moving[k])
        del frames
    lines = [f"classical vision (detect + track + events + assembly) beside cv2.VideoCapture.read, 1280x720 H.264, "
             f"{FPS:g} frames/s, 17 pieces, scenarios {', '.join(names)}, {passes} alternating pass(es), one core",
             "stratum | frames | decode ms | ours ms | ours CPU ms | decode frames/s | ours frames/s | ours / decode"]
    every = {"decode": [], "ours": [], "cpu": []}
    for s in STRATA:
        if not per[s]["decode"]:
            continue
        for k in every:
            every[k] += per[s][k]
        label = f"{s} (up to {most})" if s == "several moving" else s
        lines.append(_row(label, per[s]))
    lines.append(_row("all frames", every))
    return lines


def _row(label: str, cell: dict) -> str:
    md, mo, mc = (1000 * statistics.median(cell[k]) for k in ("decode", "ours", "cpu"))
    return (f"{label} | {len(cell['decode'])} | {md:.2f} | {mo:.2f} | {mc:.2f} | {1000 / md:.0f} | {1000 / mo:.0f} | "
            f"{md / mo:.2f}")


def replay_record(res) -> dict:
    """What a speed-up must not change: every frame's tracked positions (board mm, as floats print) and
    every shot's record and ruling, in a JSON-ready form."""
    return {"frames": [[i, t, {k: list(v) for k, v in sorted(p.items())}]
                       for i, t, p in zip(res.log.index, res.log.t_s, res.log.positions)],
            "shots": [{"record": s.record, "ruling": s.ruling, "error": s.error} for s in res.shots]}


def same_as_saved(res, path: Path) -> str:
    """'identical to FILE' (or 'saved to FILE' on the first run), else where the first difference is."""
    now = json.loads(json.dumps(replay_record(res)))
    if not path.exists():
        path.write_text(json.dumps(now), encoding="utf-8")
        return f"saved to {path}"
    was = json.loads(path.read_text(encoding="utf-8"))
    if now == was:
        return f"identical to {path}"
    for a, b in zip(now["frames"], was["frames"]):
        if a != b:
            return f"DIFFER from {path}: first at frame {a[0]}"
    return f"DIFFER from {path}: {len(now['frames'])} frames against {len(was['frames'])}, or the shots"


def replay_table(work: Path, runs: int, positions: Path | None = None) -> list[str]:
    from bench.replay import decode_only
    from judge.cmd_replay import same_ruling
    from judge.demo import film, simulate
    from judge.replay import judge_video

    where = work / "novuss-1280x720-60"
    demo = simulate("novuss")
    if not (where / "video.mp4").exists():
        film(demo, where, FPS, (1280, 720))
    base, secs, same, whole, cpu, kept, whole_cpu = [], [], [], [], [], [], []
    res = None
    command = [sys.executable, "-m", "judge.cli", "replay", str(where / "video.mp4"), "--game", "novuss", "--calibration",
               str(where / "calibration.json"), "--background", str(where / "empty-board.png"), "--state",
               str(where / "start-state.json"), "--quiet"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")]))}
    # the project's bytecode, as pip writes it at install and Python at a first run (into the ignored __pycache__)
    subprocess.run([sys.executable, "-m", "compileall", "-q", *PACKAGES], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    for _ in range(runs):  # decode alone, the replay in this process, and the whole `shotjudge replay` alternate
        base.append(decode_only(where / "video.mp4"))
        c0, m0 = time.process_time(), time.thread_time()
        res = judge_video(where / "video.mp4", "novuss", where / "calibration.json",
                          background=str(where / "empty-board.png"), state=where / "start-state.json")
        secs.append(res.seconds)
        cpu.append((time.process_time() - c0, time.thread_time() - m0))
        ok = sum(same_ruling(s.ruling, t) for s, t in zip(res.shots, demo.truth))
        same.append(100.0 * ok / max(len(demo.truth), len(res.shots), 1))
        kept.append(same_as_saved(res, positions or work / "replay-positions.json"))
        t, r0 = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        whole.append(time.perf_counter() - t)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        whole_cpu.append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
    b, r, wp = statistics.median(base), statistics.median(secs), statistics.median(whole)
    dur = res.duration_s
    return [f"replay of the simulated Novuss match: {res.frames} frames, {dur:.1f} s at {FPS:g} frames/s 1280x720, "
            f"{len(demo.truth)} shot(s), median of {runs} run(s) (decode on its own thread through PyAV); replay CPU "
            f"{statistics.median(c for c, _ in cpu):.2f} s (all threads), {statistics.median(m for _, m in cpu):.2f} s "
            f"(judging thread: vision and rules, {1000 * statistics.median(m for _, m in cpu) / res.frames:.2f} ms "
            f"per frame), whole process {statistics.median(whole_cpu):.2f} s (all threads; on a shared machine the "
            f"wall clock follows the load, this much less); tracked positions, records and rulings: "
            f"{'; '.join(sorted(set(kept)))}",
            "run | seconds | x real time | vs decode | rulings same %",
            f"decode only (PyAV) | {b:.2f} | {dur / b:.1f} | 1.00 | -",
            f"replay (judge_video, in this process) | {r:.2f} | {dur / r:.1f} | {r / b:.2f} | {statistics.median(same):.0f}",
            f"shotjudge replay (whole process: imports, table) | {wp:.2f} | {dur / wp:.1f} | {wp / b:.2f} | -"]


def learned_table(profile, names: list[str], work: Path) -> list[str]:
    """Our learned path with crops (``vision.detect_crops``, the shipped networks, inside the pipeline as the
    judge runs it) beside a plain full-frame ``model.track()`` (ByteTrack, the shipped ONNX file) and beside
    decoding, on every frame of the filmed clips, the order alternating frame by frame; one thread each.
    Recall: true pieces on view matched within a diameter (``bench.learned_track.match``)."""
    from bench.learned_track import IdentityScore, Ours, Ultra, match, truth_of
    from bench.scoring import _classical
    from judge.weights import crop_weights_for, shipped_weights
    from vision.detectors import DEFAULT_IMGSZ
    from vision.yolo_offline import offline_ultralytics

    offline_ultralytics()
    import logging

    import torch

    logging.getLogger("ultralytics").setLevel(logging.WARNING)
    torch.set_num_threads(1)
    full, crops = Path(str(shipped_weights())), crop_weights_for(shipped_weights())
    took: dict[str, list[float]] = {"decode": [], "plain model.track()": [], "ours, learned with crops": []}
    moving_all: list[bool] = []
    score = {name: IdentityScore(named=False) for name in took if name != "decode"}
    for name in names:
        path, moving, clip, _ = film_clip(profile, name, work)
        frames, times = decode(path)
        plane = _classical(profile, clip, FPS, 1)[1].plane
        paths = {"plain model.track()": Ultra(full, plane, 1, "bytetrack", None, DEFAULT_IMGSZ),
                 "ours, learned with crops": Ours(profile, plane, full, 1, 0.25, crop_weights=crops)}
        torch.set_num_threads(1)  # after the models: ultralytics' select_device sets it to cpu_count - 1
        f0 = clip.frame(0, FPS)
        for p in paths.values():
            p.start({q: (x, y) for q, (x, y, _) in truth_of(profile, f0).items()}, 0, 0.0)
        for k in range(1, len(frames)):
            took["decode"].append(times[k])
            moving_all.append(moving[k] > 0)
            truth = truth_of(profile, clip.frame(k, FPS))
            for j in range(2):
                label = list(paths)[(k + j) % 2]
                t = time.perf_counter()
                got = paths[label].step(frames[k], k, k / FPS)
                took[label].append(time.perf_counter() - t)
                score[label].add(match([(None, xy) for _, xy in got], truth), on_view=len(truth))
        paths["ours, learned with crops"].finish()
    mv = np.array(moving_all, bool)
    base = np.array(took["plain model.track()"])
    rows = [f"learned path: {len(base)} frames of {', '.join(names)} ({int(mv.sum())} with a piece moving), "
            f"decoded from H.264; the shipped {full.name} (whole frames) and {crops.name if crops else '-'} (crops), "
            f"one thread each",
            "run | ms/frame median | frames/s | x plain model.track(), all frames | the same, frames moving | "
            "recall % | x decode"]
    dec = np.array(took["decode"])
    for label, ts in took.items():
        ts = np.array(ts)
        r = f"{100 * score[label].recall:.1f}" if label in score else "-"
        rows.append(f"{label} | {1000 * float(np.median(ts)):.1f} | {len(ts) / ts.sum():.1f} | {base.sum() / ts.sum():.2f} | "
                    f"{base[mv].sum() / ts[mv].sum():.2f} | {r} | {dec.sum() / ts.sum():.3f}")
    return rows


def main(argv=None) -> int:
    from calibration import default_profile

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scenarios", default="opening,own-opponent-3ms,two-pocketed")
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--replay-runs", type=int, default=1)
    ap.add_argument("--work", default="bench-replay-work", help="folder for the filmed clips and match (reused)")
    ap.add_argument("--learned", action="store_true",
                    help="also our learned path with crops beside a plain full-frame model.track()")
    ap.add_argument("--no-replay", action="store_true")
    ap.add_argument("--no-classical", action="store_true", help="no table by stratum (the replay only)")
    ap.add_argument("--positions", help="the replay's tracked positions to compare with (JSON; written when missing; "
                                        "default replay-positions.json in --work)")
    args = ap.parse_args(argv)
    cv2.setNumThreads(1)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    profile = default_profile("novuss")
    names = [s for s in args.scenarios.split(",") if s]
    load0 = os.getloadavg()[0]
    out = [] if args.no_classical else classical_table(profile, names, work, args.passes)
    if not args.no_replay:
        cv2.setNumThreads(0)  # replay as the judge runs it
        out += [""] * bool(out) + replay_table(work, args.replay_runs, Path(args.positions) if args.positions else None)
    if args.learned:
        out += [""] + learned_table(profile, names, work)
    print(f"machine: {os.cpu_count()} cores, load average (1 min) {load0:.2f} before, {os.getloadavg()[0]:.2f} after")
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
