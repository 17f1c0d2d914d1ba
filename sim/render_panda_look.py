"""The look of one clip for the Panda3D evaluation renderer: colours, lights, camera response, textures.

Drawn from a seeded generator of its own, within families a real club room could show (a lacquered birch or
beech board, light-wood and dark-stained pawns, earth or sand under Cvrnkaná marbles), and set here
independently of ``sim.render*``: the point of this renderer is to check that the detector transfers to a
look it was never developed against. Textures are procedural (numpy), nothing is downloaded.
"""
from __future__ import annotations

import colorsys
import math
from dataclasses import dataclass

import cv2
import numpy as np

__all__ = ["Look", "draw_look", "value_noise", "wood_texture", "ring_texture", "earth_texture", "marble_texture"]

RGB = tuple[float, float, float]


def _hsv(rng, h_deg, s, v) -> RGB:
    """An RGB colour (0..1) drawn uniformly within hue (degrees), saturation and value ranges."""
    hue = rng.uniform(*h_deg) % 360.0
    return colorsys.hsv_to_rgb(hue / 360.0, rng.uniform(*s), rng.uniform(*v))


@dataclass(frozen=True)
class Look:
    surface: RGB
    cushion: RGB
    frame: RGB
    line: RGB
    floor: RGB
    pawn: dict  # owner -> RGB
    bat: RGB
    marble: dict  # owner -> RGB
    marble_vanes: float  # probability that a marble is a cat's eye (coloured vanes in clear glass)
    soil: RGB
    soil_kind: str  # 'earth' | 'sand'
    skin: RGB
    sleeve: RGB
    cue: RGB
    grain: float  # contrast of the wood grain
    cushion_mm: float  # height of the cushions over the playing surface
    lights: tuple  # ((x, y, z) mm, (r, g, b) at the board centre)
    ambient: RGB
    specular: float
    shadow: float  # darkness of the faked contact shadows (0..1)
    gains: RGB  # white balance / exposure of the camera (applied to BGR reversed)
    gamma: float
    vignette: float
    blur_px: float
    noise: float  # grey levels at mid-grey
    jpeg_quality: int


def draw_look(seed: int) -> Look:
    """The look of clip ``seed``."""
    rng = np.random.default_rng([int(seed), 0x9A3D])
    n_lights = int(rng.integers(1, 4))
    lights = []
    total = rng.uniform(0.75, 0.95)
    shares = rng.dirichlet(np.full(n_lights, 3.0))
    for share in shares:
        a, d = rng.uniform(0, 2 * math.pi), rng.uniform(0, 900)
        kelvin_warm = rng.uniform(-1, 1)  # warm (+) or cool (-) lamp
        tint = np.array([1.0 + 0.08 * kelvin_warm, 1.0, 1.0 - 0.1 * kelvin_warm])
        lights.append(((d * math.cos(a), d * math.sin(a), rng.uniform(1300, 2600)), tuple(total * share * tint)))
    amb = rng.uniform(0.12, 0.3)
    skin_k = rng.uniform(0, 1)
    skin = tuple(np.array([0.93, 0.76, 0.64]) * (1 - skin_k) + np.array([0.42, 0.27, 0.18]) * skin_k)
    return Look(
        surface=_hsv(rng, (26, 40), (0.28, 0.55), (0.62, 0.86)),
        cushion=_hsv(rng, (0, 30), (0.3, 0.8), (0.12, 0.35)) if rng.random() < 0.6 else _hsv(rng, (0, 360), (0, 0.2), (0.05, 0.2)),
        frame=_hsv(rng, (15, 35), (0.45, 0.75), (0.2, 0.45)),
        line=_hsv(rng, (0, 40), (0.0, 0.5), (0.04, 0.18)),
        floor=_hsv(rng, (0, 50), (0.05, 0.35), (0.15, 0.4)),
        pawn={"A": _hsv(rng, (28, 48), (0.12, 0.32), (0.72, 0.92)), "B": _hsv(rng, (355, 378), (0.45, 0.75), (0.3, 0.55))},
        bat=_hsv(rng, (95, 160), (0.35, 0.75), (0.25, 0.5)),
        marble={"A": _hsv(rng, (200, 235), (0.55, 0.9), (0.45, 0.85)), "B": _hsv(rng, (350, 375), (0.6, 0.9), (0.5, 0.85))},
        marble_vanes=float(rng.uniform(0.0, 0.6)),
        soil=_hsv(rng, (22, 40), (0.25, 0.5), (0.3, 0.55)) if rng.random() < 0.5 else _hsv(rng, (35, 50), (0.2, 0.4), (0.55, 0.75)),
        soil_kind="earth" if rng.random() < 0.5 else "sand",
        skin=tuple(float(c) for c in skin),
        sleeve=tuple(float(c) for c in rng.uniform(0.08, 0.8, 3)),
        cue=_hsv(rng, (25, 40), (0.25, 0.5), (0.55, 0.85)),
        grain=float(rng.uniform(0.06, 0.2)),
        cushion_mm=float(rng.uniform(10.0, 20.0)),
        lights=tuple(lights),
        ambient=(amb, amb, amb * rng.uniform(0.95, 1.05)),
        specular=float(rng.uniform(0.05, 0.3)),
        shadow=float(rng.uniform(0.25, 0.5)),
        gains=tuple(float(g) for g in rng.uniform(0.92, 1.08, 3) * rng.uniform(0.9, 1.12)),
        gamma=float(rng.uniform(0.9, 1.15)),
        vignette=float(rng.uniform(0.05, 0.3)),
        blur_px=float(rng.uniform(0.4, 0.9)),
        noise=float(rng.uniform(1.5, 4.0)),
        jpeg_quality=int(rng.integers(70, 91)),
    )


# ---------------------------------------------------------------------- textures (float32 RGB, 0..1)
def value_noise(rng, shape, cells: int, octaves: int = 4) -> np.ndarray:
    """Smooth noise in -1..1: random lattices of ``cells``, 2x, 4x ... cells, resized cubically and summed."""
    h, w = shape
    out = np.zeros(shape, np.float32)
    amp, total = 1.0, 0.0
    for k in range(octaves):
        c = cells * 2 ** k
        lattice = rng.uniform(-1, 1, (max(2, int(c * h / max(h, w))) + 1, max(2, int(c * w / max(h, w))) + 1)).astype(np.float32)
        out += amp * cv2.resize(lattice, (w, h), interpolation=cv2.INTER_CUBIC)
        total += amp
        amp *= 0.5
    return out / total


def wood_texture(rng, size: int, rgb: RGB, grain: float, span_mm: float) -> np.ndarray:
    """A straight-grained veneer (grain along x): growth lines warped by noise, with fine fibres."""
    y = np.linspace(0, span_mm, size, dtype=np.float32)[:, None]
    warp = value_noise(rng, (size, size), 3, 3) * 25.0 + value_noise(rng, (size, size), 12, 2) * 4.0
    period = rng.uniform(4.0, 9.0)
    lines = 0.5 + 0.5 * np.sin(2 * math.pi * (y + warp) / period)
    lines = lines ** 3
    fibre = value_noise(rng, (size, size // 8), 64, 1)
    fibre = cv2.resize(fibre, (size, size), interpolation=cv2.INTER_LINEAR)
    shade = 1.0 - grain * lines + 0.03 * fibre + 0.05 * value_noise(rng, (size, size), 2, 2)
    return np.clip(shade[..., None] * np.asarray(rgb, np.float32), 0, 1)


def ring_texture(rng, size: int, rgb: RGB, grain: float) -> np.ndarray:
    """End-grain-ish rings about an off-centre point: the face of a turned wooden disc."""
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32) / size - 0.5
    cx, cy = rng.uniform(-0.6, 0.6, 2)
    r = np.hypot(xx - cx, yy - cy) + 0.03 * value_noise(rng, (size, size), 4, 2)
    rings = (0.5 + 0.5 * np.sin(2 * math.pi * r * rng.uniform(6, 12))) ** 2
    shade = 1.0 - grain * rings + 0.03 * value_noise(rng, (size, size), 16, 2)
    return np.clip(shade[..., None] * np.asarray(rgb, np.float32), 0, 1)


def earth_texture(rng, shape, rgb: RGB, kind: str, mm_per_px: float) -> np.ndarray:
    """Trodden earth or sand: blotches at several scales, grains, and pebbles (lighter or darker)."""
    h, w = shape
    base = 1.0 + 0.18 * value_noise(rng, shape, 4, 4) + (0.10 if kind == "sand" else 0.05) * rng.normal(0, 1, shape).astype(np.float32)
    img = base[..., None] * np.asarray(rgb, np.float32)
    hue = value_noise(rng, shape, 3, 2)[..., None] * np.array([0.04, 0.0, -0.04], np.float32)
    img = img + hue
    n_pebbles = int(h * w * mm_per_px ** 2 / (900.0 if kind == "sand" else 250.0))
    for _ in range(n_pebbles):
        c = (int(rng.integers(0, w)), int(rng.integers(0, h)))
        ax = max(1, int(rng.uniform(1.0, 4.0) / mm_per_px))
        axes = (ax, max(1, int(ax * rng.uniform(0.5, 1.0))))
        tone = np.asarray(rgb) * rng.uniform(0.6, 1.4) + rng.normal(0, 0.04) + rng.normal(0, 0.012, 3)
        cv2.ellipse(img, c, axes, float(rng.uniform(0, 180)), 0, 360, tuple(float(t) for t in tone), -1, cv2.LINE_AA)
    return np.clip(cv2.GaussianBlur(img, (0, 0), 0.6), 0, 1)


def marble_texture(rng, rgb: RGB, vanes: bool, size: int = 64) -> np.ndarray:
    """A glass marble's colour over (u around, v pole to pole): a tinted body, or clear glass with vanes."""
    u = np.linspace(0, 1, size, dtype=np.float32)[None, :]
    v = np.linspace(0, 1, size // 2, dtype=np.float32)[:, None]
    body = np.asarray(rgb, np.float32) * (0.9 + 0.1 * np.sin(2 * math.pi * (u * 2 + v)))[..., None]
    if not vanes:
        return np.clip(body, 0, 1)
    clear = np.full_like(body, 0.0) + np.array([0.75, 0.8, 0.78], np.float32) * 0.55
    vane = np.abs(np.sin(math.pi * (3 * u + 0.6 * np.sin(2 * math.pi * v)))) > 0.8
    return np.clip(np.where(vane[..., None], body * 1.15, clear), 0, 1)
