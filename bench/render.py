"""Renderer speed on one core: frames per second at 1280x720 (median of several runs).

    taskset -c 0 python bench/render.py [--size 1280x720] [--frames 120] [--runs 3]

Each row renders the same moving scene (the bat and two pawns, or three marbles, in motion; the rest at
rest; a cue in the first 20 frames) at 60 fps. "sharp" uses one state per frame (no motion blur);
"blur N" averages N sub-frame states over the exposure. Set-up (textures, remap maps, the first frame,
which builds the piece sprites) is timed apart. The machine's load matters: run it on an idle core.
"""
from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time

import cv2

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from calibration.profile import default_profile  # noqa: E402
from sim.frames import Occluder, PieceState, SimFrame  # noqa: E402
from sim.render import Renderer  # noqa: E402
from sim.render_settings import RenderSettings, make_camera  # noqa: E402


def _bounce(p0, v, t, half):
    """Straight-line motion reflected off walls at +-half (a stand-in for the physics)."""
    out = []
    for p, vv in zip(p0, v):
        x = (p + vv * t + half) % (4 * half)
        out.append((x if x < 2 * half else 4 * half - x) - half)
    return out


def novuss_scene(profile):
    g = profile.geometry
    half = g["surface_mm"] / 2 - g["bat_diameter_mm"] / 2
    rp = g["pawn_diameter_mm"] / 2

    def states_at(t_s: float, index: int = 0) -> SimFrame:
        pieces = []
        for k in range(8):
            x = (k - 3.5) * 2 * rp
            pieces.append(PieceState(f"A{k + 1}", "pawn", "A", x, half + 2 - rp, 0.0, 0.0, rp, True))
            pieces.append(PieceState(f"B{k + 1}", "pawn", "B", x, -half - 2 + rp, 0.0, 0.0, rp, True))
        bx, by = _bounce((120.0, -440.0), (900.0, 2600.0), t_s, half)
        pieces.append(PieceState("bat", "bat", None, bx, by, 0.0, 3.0 * t_s, g["bat_diameter_mm"] / 2, True))
        for pid, p0, v in (("A1", (-300.0, 100.0), (-700.0, 1500.0)), ("B8", (200.0, -50.0), (1200.0, -400.0))):
            x, y = _bounce(p0, v, t_s, half)
            pieces = [PieceState(pid, q.kind, q.owner, x, y, 0.0, t_s, q.radius_mm, True) if q.id == pid else q for q in pieces]
        occ = (Occluder("cue", 120.0, -470.0 - 400 * t_s, math.pi / 2, 2.0),) if t_s < 20 / 60 else ()
        return SimFrame(index, t_s, tuple(pieces), occ)

    return states_at


def cvrnkana_scene(profile):
    g = profile.geometry
    r = g["marble_diameter_mm"] / 2
    hh = g["view_half_height_mm"] - r

    def states_at(t_s: float, index: int = 0) -> SimFrame:
        pieces = []
        for k in range(10):
            for owner, dy in (("A", -120.0), ("B", 120.0)):
                x, y, spin = -400.0 + 85.0 * k, dy + 30.0 * math.sin(k), 0.0
                if k < 3 and owner == "A":
                    x, y = _bounce((x, y), (500.0 + 300 * k, 700.0), t_s, hh)
                    spin = 5 * t_s
                pieces.append(PieceState(f"{owner}{k + 1}", "marble", owner, x, y, 0.0, spin, r, True))
        occ = (Occluder("hand", 300.0, -200.0 + 200 * t_s, math.pi / 2, 60.0, 0.0, 0.0, 45.0),) if t_s < 20 / 60 else ()
        return SimFrame(index, t_s, tuple(pieces), occ)

    return states_at


def measure(game: str, settings: RenderSettings, size, n_frames: int, runs: int, fps: float = 60.0):
    profile = default_profile(game)
    camera = make_camera(profile, size[0], size[1], settings)
    scene = novuss_scene(profile) if profile.spec.striker else cvrnkana_scene(profile)
    frames = [scene(i / fps, i) for i in range(n_frames)]
    rates, setups = [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        renderer = Renderer(camera, profile, settings)
        renderer.render(frames[0], scene)  # builds the sprites of the clip's pieces: part of set-up
        setups.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        for f in frames[1:]:
            renderer.render(f, scene)
        rates.append((n_frames - 1) / (time.perf_counter() - t0))
    return statistics.median(rates), statistics.median(setups)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="1280x720")
    ap.add_argument("--frames", type=int, default=120)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args(argv)
    size = tuple(int(v) for v in args.size.lower().split("x"))
    cv2.setNumThreads(1)
    base = RenderSettings(seed=1)
    rows = [
        ("sharp", base),
        ("blur 4", RenderSettings(seed=1, blur_samples=4)),
        ("blur 8", RenderSettings(seed=1, blur_samples=8)),
        ("rolling 8 bands + blur 4", RenderSettings(seed=1, blur_samples=4, rolling_shutter_s=0.012)),
        ("flat (tests)", RenderSettings.flat(seed=1)),
    ]
    print(f"renderer, {size[0]}x{size[1]}, one thread (cv2.setNumThreads(1)), {args.frames} frames, median of {args.runs} runs")
    print(f"{'game':<9} {'settings':<26} {'frames/s':>9} {'vs sharp':>9} {'set-up s':>9}")
    for game in ("novuss", "cvrnkana"):
        sharp = None
        for name, st in rows:
            rate, setup = measure(game, st, size, args.frames, args.runs)
            sharp = sharp or rate
            print(f"{game:<9} {name:<26} {rate:9.1f} {rate / sharp:9.2f} {setup:9.2f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
