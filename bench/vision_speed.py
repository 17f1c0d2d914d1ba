"""Classical detector throughput at 1280x720 on one core, on rendered frames of whole scripted shots.

    python bench/vision_speed.py [--scenario own-opponent-3ms] [--camera tilted]

Prints per-stage medians (ms), frames/s, and the ratio to a baseline measured in the same process on the same
frames: one plain full-frame ``cv2.remap`` (fixed-point CV_16SC2 maps, bilinear), i.e. what rectifying every
frame alone would cost. Two runs: *stream* (frames in order, as live: pieces that did not move keep their
last fit) and *cold* (the detector forgets its last fits before every frame: every piece is fitted anew).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _run(det, frames, cold: bool):
    total, stages = [], {}
    for k, img in enumerate(frames):
        if cold:
            det._cache = {}
        t = time.perf_counter()
        det.detect(img, k, k / 60.0)
        total.append(time.perf_counter() - t)
        for name, v in det.timings.items():
            stages.setdefault(name, []).append(v)
    return np.array(total), {k: np.array(v) for k, v in stages.items()}


def main(argv=None) -> int:
    import cv2

    from bench.vision_detect import setup
    from calibration import default_profile
    from sim.scenarios_cvrnkana import SCENARIOS as CVR
    from sim.scenarios_novuss import SCENARIOS as NOV

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--game", default="novuss", choices=("novuss", "cvrnkana"))
    ap.add_argument("--scenario", default=None)
    ap.add_argument("--camera", default="tilted", choices=("straight", "tilted"))
    ap.add_argument("--frames", type=int, default=240)
    args = ap.parse_args(argv)
    cv2.setNumThreads(1)
    profile = default_profile(args.game)
    novuss = bool(profile.spec.striker)  # the bat's game: its scenarios, else Cvrnkaná's
    table_ = NOV if novuss else CVR
    name = args.scenario or ("opening" if novuss else "pit-entry")
    ep = table_[name][0](profile, 1)
    clip = ep.clip()
    renderer, det = setup(profile, clip, 60.0, 1, args.camera)
    n = min(clip.n_frames(60.0), args.frames)
    frames = [renderer.render(clip.frame(k, 60.0), clip.states_at) for k in range(n)]
    h, w = frames[0].shape[:2]
    u, v = np.meshgrid(np.arange(w, dtype=np.float32), np.arange(h, dtype=np.float32))
    m1, m2 = cv2.convertMaps(u * 0.999 + 0.3, v * 0.999 + 0.2, cv2.CV_16SC2)
    base = []
    for img in frames:
        t = time.perf_counter()
        cv2.remap(img, m1, m2, cv2.INTER_LINEAR)
        base.append(time.perf_counter() - t)
    base_ms = 1000 * float(np.median(base))
    _run(det, frames[:5], False)  # warm up
    det._cache = {}
    rows = []
    for label, cold in (("stream", False), ("cold", True)):
        total, stages = _run(det, frames, cold)
        rows.append((label, total, stages))
    print(f"classical detector, {args.game} '{name}', {args.camera} camera, {w}x{h}, {n} frames, one core "
          f"(cv2.setNumThreads(1))")
    names = list(rows[0][2])
    print("run | " + " | ".join(f"{s} ms" for s in names) + " | total median ms | p90 ms | frames/s (median) | "
          "x full-frame remap")
    for label, total, stages in rows:
        med = 1000 * float(np.median(total))
        print(f"{label} | " + " | ".join(f"{1000 * float(np.median(stages[s])):.3f}" for s in names)
              + f" | {med:.2f} | {1000 * float(np.percentile(total, 90)):.2f} | {1000 / med:.0f} | {med / base_ms:.2f}")
    print(f"baseline: full-frame cv2.remap (CV_16SC2, bilinear) {base_ms:.2f} ms median -> {1000 / base_ms:.0f} frames/s; "
          f"target >= 240 frames/s (<= 4.17 ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
