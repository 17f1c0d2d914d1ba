"""Named looks for benches by stratum: what real tables and cameras differ in, one thing at a time, and
everything at once (``stratum(name, seed)``, a ``RenderSettings``).

Every stratum starts from the bench's standard look (``RenderSettings(seed=seed, blur_samples=4)``, the one
``bench/accuracy.py --detector classical`` films with) and changes what its name says; what a stratum draws
(lamp places, colours, signs of the drift) comes from ``seed``, so a clip is reproducible from
(stratum, seed) and each clip of a bench may get its own draw.

Colour families (:data:`FAMILIES`, OpenCV HSV: hue 0..180, saturation and value 0..255) are the
materials pieces come in: natural wood, cream, dark red, black, blue, green. Two players' pieces are never of
one family. A Cvrnkaná player's marbles take the family's hue, saturation and value for their glass.
"""
from __future__ import annotations

import zlib
from dataclasses import replace

import cv2
import numpy as np

from .render_settings import RenderSettings

__all__ = ["FAMILIES", "STRATA", "stratum", "family_bgr", "family_marble", "two_families", "any_bgr", "in_family",
           "hsv_of"]

#: family -> (hue range, saturation range, value range); a hue range may wrap past 180 (dark red)
FAMILIES: dict[str, tuple[tuple[float, float], tuple[float, float], tuple[float, float]]] = {
    "wood": ((10.0, 20.0), (80.0, 150.0), (150.0, 215.0)),  # natural beech / birch, lacquered
    "cream": ((16.0, 30.0), (25.0, 70.0), (205.0, 245.0)),
    "dark-red": ((172.0, 184.0), (150.0, 230.0), (95.0, 160.0)),
    "black": ((0.0, 180.0), (0.0, 60.0), (22.0, 55.0)),
    "blue": ((100.0, 120.0), (120.0, 230.0), (100.0, 210.0)),
    "green": ((45.0, 80.0), (110.0, 220.0), (70.0, 180.0)),
}

BASE = dict(blur_samples=4)  # the standard look of bench/accuracy.py's classical detector

STRATA: dict[str, str] = {
    "base": "the standard look (one far lamp, nominal colours, global shutter, straight camera)",
    "dim-corners": "one lamp 1 m over the centre: the corners 40 % darker than the centre (no vignetting, no glare)",
    "low-ambient": "a dim room: 25 % of the nominal light, exposure unchanged (noise the same, signal a quarter)",
    "three-lamps": "three lamps 0.6-1.0 m up round the board: fall-off from each, three soft shadows per piece",
    "wb-drift": "white balance drifts 12 % (blue against red, either way) over 1.5 s from 0.3 s",
    "exposure-drift": "exposure drifts 25 % (darker or brighter) over 1.5 s from 0.3 s",
    "dark-pawns-black": "player B's pieces black (A's nominal)",
    "pawns-blue-green": "player A's pieces blue, B's green",
    "pale-board": "a cream board (a pale sand for the pit): player A's ivory pieces of the surface's own shade",
    "bat-any-colour": "the bat of any colour (hue, saturation, value drawn at random)",
    "compressed-2mbit": "H.264 at 2 Mbit/s (webcam stream), decoded again",
    "rolling-shutter-15ms": "rows read over 15 ms top to bottom (Pi Camera Module 3), 48 bands",
    "tilt-10": "camera tilted 10 degrees, yawed up to 4, stronger barrel distortion",
    "everything": "all of the above at once, each drawn from its range (domain randomised look underneath)",
}


def _rng(name: str, seed: int) -> np.random.Generator:
    return np.random.default_rng([int(seed), zlib.crc32(name.encode()), 0x57A7])


def hsv_of(bgr) -> tuple[float, float, float]:
    """OpenCV HSV (hue 0..180) of one BGR colour."""
    h, s, v = cv2.cvtColor(np.uint8([[list(bgr)]]), cv2.COLOR_BGR2HSV)[0, 0]
    return float(h), float(s), float(v)


def _bgr(h: float, s: float, v: float) -> tuple[int, int, int]:
    hsv = np.uint8([[[int(round(h)) % 180, int(np.clip(round(s), 0, 255)), int(np.clip(round(v), 0, 255))]]])
    return tuple(int(c) for c in cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR)[0, 0])


def _draw_hsv(family: str, rng: np.random.Generator) -> tuple[float, float, float]:
    (h0, h1), (s0, s1), (v0, v1) = FAMILIES[family]
    return float(rng.uniform(h0, h1)) % 180.0, float(rng.uniform(s0, s1)), float(rng.uniform(v0, v1))


def family_bgr(family: str, rng: np.random.Generator) -> tuple[int, int, int]:
    """A pawn or bat colour of ``family``."""
    return _bgr(*_draw_hsv(family, rng))


def family_marble(family: str, rng: np.random.Generator) -> tuple[float, tuple[float, float]]:
    """(hue, (saturation, value)) of a player's marbles of ``family``."""
    h, s, v = _draw_hsv(family, rng)
    return h, (s, v)


def in_family(hsv, family: str, slack: tuple[float, float, float] = (0.0, 0.0, 0.0)) -> bool:
    """Whether an HSV colour lies in ``family``'s ranges widened by ``slack`` (hue, saturation, value); the hue
    is not checked for a family of every hue (black)."""
    (h0, h1), (s0, s1), (v0, v1) = FAMILIES[family]
    h, s, v = (float(x) for x in hsv)
    dh, ds, dv = slack
    hue_ok = h1 - h0 >= 180 or any(h0 - dh <= h + k <= h1 + dh for k in (-180.0, 0.0, 180.0))
    return hue_ok and s0 - ds <= s <= s1 + ds and v0 - dv <= v <= v1 + dv


def two_families(rng: np.random.Generator) -> tuple[str, str]:
    """Two different families, one per player."""
    a, b = rng.choice(len(FAMILIES), 2, replace=False)
    names = list(FAMILIES)
    return names[int(a)], names[int(b)]


def any_bgr(rng: np.random.Generator) -> tuple[int, int, int]:
    """A colour of any hue, from greyish to saturated, dark to light (the bat)."""
    return _bgr(float(rng.uniform(0, 180)), float(rng.uniform(40, 255)), float(rng.uniform(50, 240)))


def _lamps_round(rng: np.random.Generator, n: int) -> tuple[tuple[float, float, float], ...]:
    start = float(rng.uniform(0, 2 * np.pi))
    out = []
    for k in range(n):
        a = start + 2 * np.pi * k / n + float(rng.uniform(-0.4, 0.4))
        d = float(rng.uniform(150, 600)) if n > 1 else float(rng.uniform(0, 300))
        out.append((round(d * np.cos(a), 1), round(d * np.sin(a), 1), round(float(rng.uniform(600, 1000)), 1)))
    return tuple(out)


def _toward(lamp) -> dict:
    """light_azimuth/elevation (the sprites' shading, the rails' shadow) towards a lamp seen from the centre.
    The elevation is kept within 45..70 degrees: the sprites' sheen is the same on every top face (a straight-
    down view of a far lamp), so a lamp nearly overhead would whiten every piece, not only those near its
    mirror image on the board."""
    x, y, h = lamp
    elevation = float(np.degrees(np.arctan2(h, max(np.hypot(x, y), 1e-6))))
    return dict(light_azimuth_deg=float(np.degrees(np.arctan2(y, x))) % 360.0,
                light_elevation_deg=min(max(elevation, 45.0), 70.0))


def _colours(st, rng, family_a: str | None, family_b: str | None, bat: bool):
    changes = {}
    for player, family in (("a", family_a), ("b", family_b)):
        if family is None:
            continue
        changes[f"pawn_{player}_bgr"] = family_bgr(family, rng)
        hue, sv = family_marble(family, rng)
        changes[f"marble_{player}_hue"], changes[f"marble_{player}_sv"] = hue, sv
    if bat:
        changes["bat_bgr"] = any_bgr(rng)
    return replace(st, **changes)


def stratum(name: str, seed: int, **changes) -> RenderSettings:
    """The settings of stratum ``name`` for ``seed`` (see :data:`STRATA`: ``base``, ``dim-corners``,
    ``low-ambient``, ``three-lamps``, ``wb-drift``, ..., ``everything``), with ``changes`` on top."""
    return replace(_stratum(name, seed), **changes)


def _stratum(name: str, seed: int) -> RenderSettings:
    if name not in STRATA:
        raise ValueError(f"unknown stratum {name!r} (known: {', '.join(STRATA)})")
    rng = _rng(name, seed)
    st = RenderSettings(seed=seed, **BASE)
    sign = 1.0 if rng.random() < 0.5 else -1.0
    if name == "base":
        return st
    if name == "dim-corners":
        return replace(st, lamps_mm=((0.0, 0.0, 1000.0),), corner_falloff=0.4, vignette=0.0, gradient=0.0, hotspot=0.0)
    if name == "low-ambient":
        return replace(st, ambient=0.25)
    if name == "three-lamps":
        lamps = _lamps_round(rng, 3)
        return replace(st, lamps_mm=lamps, corner_falloff=None, gradient=0.0, shadow_blur_mm=4.0, **_toward(lamps[0]))
    if name == "wb-drift":
        return replace(st, wb_drift_bgr=(0.12 * sign, 0.0, -0.12 * sign))
    if name == "exposure-drift":
        return replace(st, exposure_drift=-0.25 if sign < 0 else 0.25)
    if name == "dark-pawns-black":
        return _colours(st, rng, None, "black", False)
    if name == "pawns-blue-green":
        return _colours(st, rng, "blue", "green", False)
    if name == "pale-board":
        pale = family_bgr("cream", rng)
        return replace(st, wood_bgr=pale, soil_bgr=pale)
    if name == "bat-any-colour":
        return _colours(st, rng, None, None, True)
    if name == "compressed-2mbit":
        return replace(st, compression="h264", bitrate_mbps=2.0)
    if name == "rolling-shutter-15ms":
        return replace(st, rolling_shutter_s=0.015, rolling_bands=48)
    if name == "tilt-10":
        return replace(st, camera_tilt_deg=10.0, camera_yaw_deg=float(rng.uniform(-4, 4)),
                       camera_dist=(-0.14, 0.04, 0.0, 0.0, 0.0))
    return _everything(seed, rng)


def _everything(seed: int, rng: np.random.Generator) -> RenderSettings:
    st = RenderSettings.randomised(seed, blur_samples=4)
    lamps = _lamps_round(rng, int(rng.integers(1, 4)))
    family_a, family_b = two_families(rng)
    st = _colours(st, rng, family_a, family_b, True)
    u = lambda a, b: float(rng.uniform(a, b))  # noqa: E731
    return replace(
        st, lamps_mm=lamps, corner_falloff=u(0.2, 0.5), ambient=u(0.2, 1.0), gradient=0.0, **_toward(lamps[0]),
        vignette=u(0.1, 0.4),
        exposure_drift=u(-0.25, 0.25), wb_drift_bgr=(u(-0.12, 0.12), 0.0, u(-0.12, 0.12)),
        drift_start_s=u(0.0, 1.0), drift_s=u(0.8, 3.0),
        compression="h264", bitrate_mbps=u(2.0, 8.0),
        rolling_shutter_s=0.015 if rng.random() < 0.5 else 0.0, rolling_bands=48,
        camera_tilt_deg=u(0.0, 10.0), noise_sigma=u(1.0, 5.0))
