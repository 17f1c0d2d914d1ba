"""Pre-shaded sprites (premultiplied BGRA) and the sub-pixel paste that puts them on the canvas.

A sprite is rendered once per clip at 4x supersampling from a height field (bevels, holes, a sphere),
lit by the clip's lamp, then reduced. Pasting warps it with an affine map (translation to 1/32 canvas pixel,
rotation, the parallax scale of its height), so a piece lands exactly where the camera would see it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

__all__ = ["Sprite", "disc_sprites", "marble_sprite", "shadow_sprite", "paste", "paste_shadow", "sprite_from_field"]

SS = 4  # supersampling factor while building sprites


@dataclass(frozen=True)
class Sprite:
    """Premultiplied BGRA (uint8) with its reference point at pixel ``centre`` (x, y)."""

    bgra: np.ndarray
    centre: tuple[float, float]

    @property
    def radius_px(self) -> float:
        h, w = self.bgra.shape[:2]
        cx, cy = self.centre
        return math.hypot(max(cx, w - 1 - cx), max(cy, h - 1 - cy))


def _grid(n: int, ppm: float):
    """Board-mm offsets (x right, y up) of an n x n sprite's supersampled pixels from its centre."""
    c = (n - 1) / 2.0
    idx = (np.arange(n * SS, dtype=np.float32) + 0.5) / SS - 0.5 - c
    return idx[None, :] / ppm, -idx[:, None] / ppm


def _reduce(bgr: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """Supersampled straight colour + coverage → premultiplied BGRA uint8 at sprite size."""
    n = bgr.shape[0] // SS
    pm = np.concatenate([bgr * alpha[..., None], alpha[..., None] * 255.0], -1).astype(np.float32)
    small = cv2.resize(pm, (n, n), interpolation=cv2.INTER_AREA)
    return np.clip(small + 0.5, 0, 255).astype(np.uint8)


def sprite_from_field(bgr: np.ndarray, alpha: np.ndarray) -> Sprite:
    n = bgr.shape[0] // SS
    return Sprite(_reduce(bgr, alpha), ((n - 1) / 2.0, (n - 1) / 2.0))


def _lit(nx, ny, nz, light, ambient=0.45, shine=0.35, power=30.0):
    """Lambert + Blinn highlight for a camera looking straight down; a flat face has shade 1."""
    l = np.asarray(light, np.float32)
    lam = np.clip(nx * l[0] + ny * l[1] + nz * l[2], 0, None)
    shade = ambient + (1 - ambient) * lam / max(l[2], 1e-3)
    h = l + np.array([0, 0, 1], np.float32)
    h /= np.linalg.norm(h)
    spec = shine * np.clip(nx * h[0] + ny * h[1] + nz * h[2], 0, None) ** power
    return shade.astype(np.float32), spec.astype(np.float32)


def disc_sprites(ppm: float, radius_mm: float, hole_mm: float, bgr, light, plain: bool,
                 seed: int) -> tuple[Sprite, Sprite | None]:
    """Top face (rounded outer edge, chamfered hole, a turned groove) and side wall of a pawn or the bat."""
    n = int(math.ceil(2 * radius_mm * ppm)) + 5
    xs, ys = _grid(n, ppm)
    r = np.hypot(xs, ys)
    rh = hole_mm / 2.0
    px = 1.0 / (ppm * SS)
    alpha = np.clip((radius_mm - r) / px + 0.5, 0, 1) * np.clip((r - rh) / px + 0.5, 0, 1)
    base = np.asarray(bgr, np.float32)
    if plain:
        return sprite_from_field(np.broadcast_to(base, alpha.shape + (3,)), alpha), None
    bevel = 0.16 * radius_mm
    chamfer = 0.12 * radius_mm
    with np.errstate(invalid="ignore", divide="ignore"):
        ux, uy = np.nan_to_num(xs / r), np.nan_to_num(ys / r)
    t = np.clip((r - (radius_mm - bevel)) / bevel, 0, 0.97)
    slope = t / np.sqrt(1 - t * t)  # quarter-round edge: dh/dr
    tc = np.clip((rh + chamfer - r) / chamfer, 0, 1)
    slope = slope - 0.8 * tc  # chamfer leans into the hole
    groove = 0.9 * np.exp(-((r - 0.66 * radius_mm) / (0.03 * radius_mm)) ** 2) * np.sign(r - 0.66 * radius_mm)
    slope = slope + groove
    nz = 1.0 / np.sqrt(1 + slope * slope)
    nx, ny = slope * ux * nz, slope * uy * nz
    shade, spec = _lit(nx, ny, nz, light, shine=0.45, power=40.0)
    rng = np.random.default_rng(seed)
    grain = cv2.GaussianBlur(rng.normal(0, 1, r.shape).astype(np.float32), (0, 0), SS * 1.2)
    grain /= max(float(grain.std()), 1e-6)
    col = base[None, None, :] * (shade * (1 + 0.03 * grain))[..., None] + 255.0 * spec[..., None]
    top = sprite_from_field(np.clip(col, 0, 255), alpha)
    # side wall: the cylinder's outside and the hole's inside, in half shade
    side_col = np.broadcast_to(base * 0.5, alpha.shape + (3,))
    side_alpha = np.clip((radius_mm - r) / px + 0.5, 0, 1) * np.clip((r - rh) / px + 0.5, 0, 1)
    return top, sprite_from_field(side_col, side_alpha)


def marble_sprite(ppm: float, radius_mm: float, hue: float, light, plain: bool, seed: int,
                  sv: tuple[float, float] | None = None) -> Sprite:
    """A glass marble: saturated body darker at the rim, a cat's-eye swirl, a sharp highlight and the
    caustic glow on the side away from the lamp. ``sv``: the body's (saturation, value) about which each
    marble varies (a colour family's; default bright saturated glass)."""
    n = int(math.ceil(2 * radius_mm * ppm)) + 5
    xs, ys = _grid(n, ppm)
    r = np.hypot(xs, ys) / radius_mm
    px = 1.0 / (ppm * SS * radius_mm)
    alpha = np.clip((1.0 - r) / px + 0.5, 0, 1)
    rng = np.random.default_rng(seed)
    h = (hue + rng.uniform(-6, 6)) % 180
    sat, val = rng.uniform(190, 250), rng.uniform(200, 245)
    if sv is not None:  # the same draws, about the family's saturation and value
        sat, val = np.clip(sv[0] + (sat - 220) * 0.5, 0, 255), np.clip(sv[1] + (val - 222.5) * 0.5, 0, 255)
    body = cv2.cvtColor(np.uint8([[[h, sat, val]]]), cv2.COLOR_HSV2BGR)[0, 0]
    body = body.astype(np.float32)
    if plain:
        return sprite_from_field(np.broadcast_to(body, alpha.shape + (3,)), alpha)
    rc = np.clip(r, 0, 0.999)
    nz = np.sqrt(1 - rc * rc)
    nx, ny = xs / radius_mm, ys / radius_mm
    l = np.asarray(light, np.float32)
    shade = 0.5 + 0.5 * nz ** 0.6
    col = body[None, None, :] * shade[..., None]
    # swirl: an S-shaped ribbon of a second colour through the middle
    ang = rng.uniform(0, np.pi)
    u = nx * math.cos(ang) + ny * math.sin(ang)
    v = -nx * math.sin(ang) + ny * math.cos(ang)
    ribbon = np.exp(-((v - 0.35 * np.sin(2.8 * u)) / 0.10) ** 2) * (r < 0.92)
    h2 = (h + rng.choice([-12, 12])) % 180
    second = cv2.cvtColor(np.uint8([[[h2, 120, 240]]]), cv2.COLOR_HSV2BGR)[0, 0].astype(np.float32)
    col = col * (1 - 0.7 * ribbon[..., None]) + 0.7 * ribbon[..., None] * second * shade[..., None]
    # caustic: light focused through the glass onto the far side
    lx, ly = l[0], l[1]
    glow = np.exp(-(((nx + 0.45 * lx / max(math.hypot(lx, ly), 1e-6)) ** 2 +
                     (ny + 0.45 * ly / max(math.hypot(lx, ly), 1e-6)) ** 2) / 0.08))
    col = col + 0.6 * glow[..., None] * body
    # reflections: sharp lamp highlight, a soft sheen, a dark rim
    hvec = l + np.array([0, 0, 1], np.float32)
    hvec /= np.linalg.norm(hvec)
    ndoth = np.clip(nx * hvec[0] + ny * hvec[1] + nz * hvec[2], 0, None)
    col = col + 255.0 * (0.9 * ndoth ** 300 + 0.15 * ndoth ** 20)[..., None]
    col = col * (1 - 0.35 * np.clip((r - 0.85) / 0.15, 0, 1))[..., None]
    return sprite_from_field(np.clip(col, 0, 255), alpha)


def shadow_sprite(ppm: float, radius_mm: float, hole_mm: float, blur_mm: float, stretch_mm: float,
                  direction_xy) -> np.ndarray:
    """Soft shadow coverage (uint8, centred): a disc (or ring, light passes the hole) smeared
    ``stretch_mm`` away from the lamp and blurred ``blur_mm``."""
    pad = radius_mm + stretch_mm + 3 * blur_mm + 2
    n = int(math.ceil(2 * pad * ppm)) + 3
    n += (n + 1) % 2  # odd: centre on a pixel
    c = (n - 1) / 2.0
    m = np.zeros((n, n), np.float32)
    d = np.asarray(direction_xy, float)
    steps = max(2, int(stretch_mm * ppm) + 2)
    for k in range(steps):
        off = d * stretch_mm * k / (steps - 1)
        cx, cy = c + off[0] * ppm, c - off[1] * ppm
        cv2.circle(m, (int(round(cx * 16)), int(round(cy * 16))), int(round(radius_mm * ppm * 16)), 1.0, -1, cv2.LINE_AA, 4)
    if hole_mm > 0:
        hole = np.zeros_like(m)
        cv2.circle(hole, (int(round((c + d[0] * stretch_mm) * 16)), int(round((c - d[1] * stretch_mm) * 16))),
                   int(round(hole_mm / 2 * ppm * 16)), 0.6, -1, cv2.LINE_AA, 4)
        m = np.clip(m - hole, 0, 1)
    m = cv2.GaussianBlur(m, (0, 0), max(blur_mm * ppm, 0.5))
    return np.clip(m * 255 + 0.5, 0, 255).astype(np.uint8)


def _warp(img: np.ndarray, centre, cx: float, cy: float, scale: float, angle_rad: float, bounds):
    """Warp ``img`` so its ``centre`` lands at target (cx, cy), producing only the part inside ``bounds``
    (w, h). Returns (patch, x0, y0) or None. Pixel values depend on the fractional part of (cx, cy) only,
    so a sprite renders identically into any target."""
    h, w = img.shape[:2]
    ca, sa = math.cos(angle_rad) * scale, math.sin(angle_rad) * scale
    # canvas y points down: a counter-clockwise board rotation is clockwise on the canvas
    m = np.array([[ca, sa, 0.0], [-sa, ca, 0.0]])
    corners = np.array([[-0.5, -0.5], [w - 0.5, -0.5], [w - 0.5, h - 0.5], [-0.5, h - 0.5]]) - np.asarray(centre, float)
    reach = corners @ m[:, :2].T
    fx, fy = math.floor(cx), math.floor(cy)
    x0 = fx + int(math.floor(reach[:, 0].min())) - 1
    y0 = fy + int(math.floor(reach[:, 1].min())) - 1
    x1 = fx + int(math.ceil(reach[:, 0].max())) + 3
    y1 = fy + int(math.ceil(reach[:, 1].max())) + 3
    x0, y0 = max(x0, 0), max(y0, 0)
    x1, y1 = min(x1, bounds[0]), min(y1, bounds[1])
    if x1 <= x0 or y1 <= y0:
        return None
    m[:, 2] = np.array([cx - x0, cy - y0]) - m[:, :2] @ np.asarray(centre, float)
    patch = cv2.warpAffine(img, m, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT,
                           borderValue=0)
    return patch, x0, y0


def paste(target: np.ndarray, sprite: Sprite, cx: float, cy: float, scale: float = 1.0, angle_rad: float = 0.0,
          gain: float = 1.0) -> None:
    """Composite ``sprite`` over ``target`` (uint8 BGR) with its centre at (cx, cy) target pixels."""
    got = _warp(sprite.bgra, sprite.centre, cx, cy, scale, angle_rad, (target.shape[1], target.shape[0]))
    if got is None:
        return
    p, x0, y0 = got
    roi = target[y0:y0 + p.shape[0], x0:x0 + p.shape[1]]
    a = p[..., 3:4].astype(np.float32) * (1.0 / 255.0)
    out = roi.astype(np.float32) * (1.0 - a) + p[..., :3].astype(np.float32) * gain
    roi[:] = np.clip(out + 0.5, 0, 255).astype(np.uint8)


def paste_shadow(target: np.ndarray, shadow: np.ndarray, cx: float, cy: float, strength: float,
                 scale: float = 1.0, angle_rad: float = 0.0, centre=None) -> None:
    """Darken ``target`` by a shadow coverage sprite whose ``centre`` (default: middle) lands at (cx, cy)."""
    h, w = shadow.shape[:2]
    centre = ((w - 1) / 2.0, (h - 1) / 2.0) if centre is None else centre
    got = _warp(shadow, centre, cx, cy, scale, angle_rad, (target.shape[1], target.shape[0]))
    if got is None:
        return
    p, x0, y0 = got
    roi = target[y0:y0 + p.shape[0], x0:x0 + p.shape[1]]
    f = 1.0 - (strength / 255.0) * p.astype(np.float32)
    roi[:] = np.clip(roi.astype(np.float32) * f[..., None] + 0.5, 0, 255).astype(np.uint8)
