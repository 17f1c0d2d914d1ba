"""Procedural, seeded surface textures (wood, soil, floor) for the top-down render canvas.

Textures are built once per clip at the canvas resolution from smooth value noise (random grids resized
with cubic interpolation), so they cost nothing per frame and depend only on the seed.
"""
from __future__ import annotations

import cv2
import numpy as np

__all__ = ["value_noise", "fractal_noise", "wood", "soil", "floor", "shade"]


def value_noise(rng: np.random.Generator, shape: tuple[int, int], cell_px: tuple[float, float]) -> np.ndarray:
    """Smooth noise in about [-1, 1] with features ``cell_px`` (rows, cols) apart."""
    h, w = shape
    ch, cw = max(float(cell_px[0]), 1.0), max(float(cell_px[1]), 1.0)
    gh = max(2, int(np.ceil(h / ch)) + 2)
    gw = max(2, int(np.ceil(w / cw)) + 2)
    grid = rng.uniform(-1.0, 1.0, (gh, gw)).astype(np.float32)
    big = cv2.resize(grid, (max(int(gw * cw), w), max(int(gh * ch), h)), interpolation=cv2.INTER_CUBIC)
    return big[:h, :w]


def fractal_noise(rng: np.random.Generator, shape: tuple[int, int], cell_px: float, octaves: int = 4,
                  persistence: float = 0.5, stretch: float = 1.0) -> np.ndarray:
    """Sum of octaves of value noise (normalised to unit standard deviation); ``stretch`` > 1 elongates
    features along the columns (x)."""
    out = np.zeros(shape, np.float32)
    amp, cell = 1.0, float(cell_px)
    for _ in range(octaves):
        out += amp * value_noise(rng, shape, (cell, cell * stretch))
        amp *= persistence
        cell = max(cell / 2.0, 1.0)
    return out / max(float(out.std()), 1e-6)


def shade(base_bgr, intensity: np.ndarray, warm: np.ndarray | None = None) -> np.ndarray:
    """Colour image = base colour scaled by ``intensity``; ``warm`` (same shape) shifts towards brown."""
    base = np.asarray(base_bgr, np.float32)
    img = intensity[..., None] * base
    if warm is not None:
        img = img + warm[..., None] * np.array([-18.0, -6.0, 10.0], np.float32)
    return np.clip(img, 0, 255).astype(np.uint8)


def wood(rng: np.random.Generator, shape: tuple[int, int], ppm: float, base_bgr, contrast: float = 1.0,
         vertical: bool = False) -> np.ndarray:
    """Lacquered plywood/board: long grain streaks, gently warped growth rings and fine fibres.

    The grain runs along x (image rows) unless ``vertical``."""
    h, w = shape
    if vertical:
        return np.ascontiguousarray(wood(rng, (w, h), ppm, base_bgr, contrast).transpose(1, 0, 2))
    streaks = fractal_noise(rng, shape, 5.0 * ppm, octaves=4, stretch=16.0)
    warp = fractal_noise(rng, shape, 220.0 * ppm, octaves=2, stretch=5.0)
    rows = np.arange(h, dtype=np.float32)[:, None] / ppm
    period = 11.0 * float(rng.uniform(0.8, 1.25))
    rings = np.sin(np.float32(2 * np.pi) * (rows / np.float32(period) + np.float32(0.9) * warp))
    rings *= rings
    rings = rings * rings * rings  # sin^6: thin late-wood bands
    fibres = fractal_noise(rng, shape, 0.8 * ppm, octaves=2, stretch=20.0)
    blotch = fractal_noise(rng, shape, 150.0 * ppm, octaves=3)
    c = float(contrast)
    intensity = 1.0 + c * (0.045 * streaks - 0.06 * rings + 0.025 * fibres + 0.035 * blotch)
    warm = c * (0.6 * rings + 0.3 * np.clip(streaks, 0, None))
    return shade(base_bgr, intensity.astype(np.float32), warm.astype(np.float32))


def soil(rng: np.random.Generator, shape: tuple[int, int], ppm: float, base_bgr, contrast: float = 1.0) -> np.ndarray:
    """Packed soil and sand: damp patches, sand speckle, scattered pebbles with a lit side."""
    h, w = shape
    c = float(contrast)
    patches = fractal_noise(rng, shape, 90.0 * ppm, octaves=4)
    mid = fractal_noise(rng, shape, 8.0 * ppm, octaves=3)
    grain = rng.normal(0.0, 1.0, shape).astype(np.float32)
    grain = cv2.GaussianBlur(grain, (0, 0), max(0.35 * ppm, 0.5))
    grain /= max(float(grain.std()), 1e-6)
    intensity = 1.0 + c * (0.08 * patches + 0.06 * mid + 0.08 * grain)
    img = shade(base_bgr, intensity.astype(np.float32), (c * 0.12 * patches).astype(np.float32)).astype(np.float32)
    # pebbles: lit ellipses with a dark contact rim
    n = int(w * h / (ppm * ppm) / 1600.0)  # about one per 40 x 40 mm
    xs, ys = rng.uniform(0, w, n), rng.uniform(0, h, n)
    sizes = rng.gamma(2.0, 1.0, n) * ppm
    tones = rng.uniform(0.75, 1.3, n)
    grey = float(np.mean(base_bgr))
    angles = rng.uniform(0, 180, n)
    layer = np.zeros_like(img)
    mask = np.zeros(shape, np.float32)
    for x, y, s, t, a in zip(xs, ys, sizes, tones, angles):
        if s < 0.8:
            continue
        axes = (max(int(s * 16), 8), max(int(s * 16 * rng.uniform(0.5, 0.9)), 6))
        col = np.clip((0.5 * np.asarray(base_bgr, float) + 0.5 * grey) * t + rng.normal(0, 5, 3), 0, 255)
        centre = (int(x * 16), int(y * 16))
        cv2.ellipse(mask, centre, axes, a, 0, 360, 1.0, -1, cv2.LINE_AA, 4)
        cv2.ellipse(layer, centre, axes, a, 0, 360, tuple(float(v) for v in col), -1, cv2.LINE_AA, 4)
        hl = (int((x - 0.25 * s) * 16), int((y - 0.25 * s) * 16))
        cv2.ellipse(layer, hl, (axes[0] // 2, axes[1] // 2), a, 0, 360,
                    tuple(float(min(v * 1.25 + 20, 255)) for v in col), -1, cv2.LINE_AA, 4)
    layer = cv2.GaussianBlur(layer, (0, 0), max(0.3 * ppm, 0.5))
    soft = cv2.GaussianBlur(mask, (0, 0), max(0.3 * ppm, 0.5))[..., None]
    contact = cv2.GaussianBlur(mask, (0, 0), max(1.2 * ppm, 0.8))[..., None]
    img = img * (1.0 - 0.35 * np.clip(contact - soft, 0, 1)) * (1 - soft) + layer * soft
    return np.clip(img, 0, 255).astype(np.uint8)


def floor(rng: np.random.Generator, shape: tuple[int, int], ppm: float) -> np.ndarray:
    """The room floor far below the table: dark, out of focus, faint boards."""
    base = (52, 58, 66)
    img = wood(rng, shape, ppm * 0.5, base, contrast=1.5)
    return cv2.GaussianBlur(img, (0, 0), max(2.0 * ppm, 1.0))
