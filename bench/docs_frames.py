"""Render the example frames in docs/images/ (what the synthetic camera sees).

    python bench/docs_frames.py [--out docs/images] [--width 960]

Frames are rendered at 1280x720 and stored reduced to ``--width`` (narrower if needed) as 256-colour
PNGs so each stays under 300 KB. The scenes are hand-placed here; the physics writes the real clips.
"""
from __future__ import annotations

import argparse
import io
import math
import os
import sys
from pathlib import Path

import cv2
import numpy as np
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from calibration.profile import default_profile  # noqa: E402
from sim.frames import Occluder, PieceState, SimFrame  # noqa: E402
from sim.render import Renderer  # noqa: E402
from sim.render_settings import RenderSettings, make_camera  # noqa: E402

LIMIT_BYTES = 300_000


def novuss_opening(profile, t_s=0.0, bat_xy=(120.0, -440.0), moving=()):
    g = profile.geometry
    rp, half = g["pawn_diameter_mm"] / 2, g["surface_mm"] / 2
    pieces = {}
    for k in range(8):
        x = (k - 3.5) * 2 * rp
        pieces[f"A{k + 1}"] = PieceState(f"A{k + 1}", "pawn", "A", x, half - rp, 0.0, 0.3 * k, rp, True)
        pieces[f"B{k + 1}"] = PieceState(f"B{k + 1}", "pawn", "B", x, -half + rp, 0.0, 0.5 * k, rp, True)
    pieces["bat"] = PieceState("bat", "bat", None, *bat_xy, 0.0, 0.0, g["bat_diameter_mm"] / 2, True)
    for pid, x, y in moving:
        p = pieces[pid]
        pieces[pid] = PieceState(pid, p.kind, p.owner, x, y, 0.0, p.angle_rad + t_s * 8, p.radius_mm, True)
    return tuple(pieces.values())


def shot_states(profile):
    """The bat struck from the S zone towards the N row at 3.5 m/s; the cue follows through."""
    def at(t_s, index=0):
        bx, by = 60.0 + 900.0 * t_s, -440.0 + 3400.0 * t_s
        pieces = novuss_opening(profile, t_s, (bx, by), moving=(("B3", -40.0 - 500 * t_s, 180 + 2500 * t_s),))
        cue = Occluder("cue", 60.0 + 200 * t_s - 30, -470.0 + 500 * t_s, math.atan2(3400, 900), 3.0)
        hand = Occluder("hand", -90.0, -560.0, math.pi / 2 + 0.25, 45.0, radius_mm=45.0)
        return SimFrame(index, t_s, pieces, (cue, hand))
    return at


def cvrnkana_scene(profile):
    g = profile.geometry
    r = g["marble_diameter_mm"] / 2
    rng = np.random.default_rng(7)
    pieces = []
    for owner, n in (("A", 10), ("B", 10)):
        for k in range(n):
            a, d = rng.uniform(0, 2 * math.pi), rng.uniform(70, 330)
            pieces.append(PieceState(f"{owner}{k + 1}", "marble", owner, d * math.cos(a) * 1.5, d * math.sin(a) * 0.8,
                                     0.0, rng.uniform(0, 6), r, True))
    pieces[0] = PieceState("A1", "marble", "A", 12.0, -18.0, -22.0, 1.0, r, True)  # in the pit
    pieces[1] = PieceState("A2", "marble", "A", -28.0, 10.0, -20.0, 2.0, r, True)
    hand = Occluder("hand", 330.0, -200.0, math.pi * 0.62, 70.0, radius_mm=48.0)
    return SimFrame(0, 0.0, tuple(pieces), (hand,))


def novuss_midgame(profile, seed=3):
    g = profile.geometry
    rng = np.random.default_rng(seed)
    pieces = []
    lim = g["surface_mm"] / 2 - g["pawn_diameter_mm"]
    for owner, n in (("A", 5), ("B", 6)):
        for k in range(n):
            pieces.append(PieceState(f"{owner}{k + 1}", "pawn", owner, rng.uniform(-lim, lim), rng.uniform(-lim, lim),
                                     0.0, rng.uniform(0, 6), g["pawn_diameter_mm"] / 2, True))
    pieces.append(PieceState("bat", "bat", None, -150.0, -430.0, 0.0, 0.0, g["bat_diameter_mm"] / 2, True))
    hand = Occluder("hand", -150.0, -440.0, math.pi / 2 - 0.2, 40.0, radius_mm=45.0)
    return SimFrame(0, 0.0, tuple(pieces), (hand,))


def save_small(img: np.ndarray, path: Path, width: int) -> tuple[int, int]:
    """Store ``img`` as a 256-colour PNG at ``width`` (or narrower, until it fits the size limit)."""
    while True:
        h = round(img.shape[0] * width / img.shape[1])
        small = cv2.resize(img, (width, h), interpolation=cv2.INTER_AREA)
        pil = Image.fromarray(cv2.cvtColor(small, cv2.COLOR_BGR2RGB)).quantize(
            256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
        buf = io.BytesIO()
        pil.save(buf, format="PNG", optimize=True)
        data = buf.getvalue()
        if len(data) <= LIMIT_BYTES:
            break
        width = int(width * 0.92)
    tmp = path.with_name(f".{path.name}.part")
    tmp.write_bytes(data)
    os.replace(tmp, path)
    return len(data), width


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="docs/images")
    ap.add_argument("--width", type=int, default=960)
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    nov, cvr = default_profile("novuss"), default_profile("cvrnkana")
    shots = []
    st = RenderSettings(seed=1, camera_tilt_deg=6.0)
    shots.append(("novuss_opening.png", nov, st, SimFrame(0, 0.0, novuss_opening(nov), ()), None))
    at = shot_states(nov)
    st = RenderSettings(seed=2, camera_tilt_deg=6.0, blur_samples=8, exposure_s=0.012)
    shots.append(("novuss_shot_blur_cue.png", nov, st, at(0.05, 3), at))
    st = RenderSettings(seed=4, camera_tilt_deg=8.0)
    shots.append(("cvrnkana_pit.png", cvr, st, cvrnkana_scene(cvr), None))
    st = RenderSettings.randomised(21)
    shots.append(("novuss_randomised.png", nov, st, novuss_midgame(nov), None))
    for name, profile, settings, frame, states_at in shots:
        cam = make_camera(profile, 1280, 720, settings)
        img = Renderer(cam, profile, settings).render(frame, states_at)
        size, width = save_small(img, out / name, args.width)
        print(f"{name:<28} {width:5d} px wide {size / 1000:6.0f} kB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
