"""The light on the table and the camera's slow reaction to it: the static gain map, the lamps' fall-off,
and white-balance / exposure drift during a clip.

Static gain per image pixel (computed once per clip, see :func:`gain_map`)::

    lens vignetting x (1 + gradient along the lamp's azimuth) x lamp fall-off x (1 + glare of each lamp)
        x ambient x exposure_gain x white balance (tint)

*Fall-off*: each lamp in ``RenderSettings.lamps_mm`` (x, y over the board, height above the surface) is a
point source lighting the surface as ``h / (h^2 + d^2)^(3/2)`` (inverse square and cosine). The lamps'
sum is taken relative to its value at the board centre; with ``corner_falloff`` set, that field is raised
to the power that makes the corners (:func:`corners_mm`: of the Novuss playing surface clear of the
pockets, of the Cvrnkaná view) on average exactly ``corner_falloff`` darker than the centre (``0.4``: 40 % darker). ``corner_falloff``
alone, with no lamps, puts one lamp 1 m over the centre. With no lamps and no fall-off the map is the one
the renderer always had (one lamp far away: ``gradient`` and one glare spot from ``light_dir``).

*Drift* (:func:`drift_gain`): white balance and exposure move by ``wb_drift_bgr`` and ``exposure_drift``
(relative, e.g. ``-0.25`` = a quarter darker) along a smooth ramp from ``drift_start_s`` over ``drift_s``
seconds of clip time, as a camera's auto-exposure and auto-white-balance catch up with a change of light.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["gain_map", "lamps", "lamp_shadows", "falloff", "drift_gain", "corners_mm", "DEFAULT_LAMP_MM", "CORNER_INSET_MM"]

DEFAULT_LAMP_MM = (0.0, 0.0, 1000.0)  # the one lamp ``corner_falloff`` alone implies: 1 m over the centre
CORNER_INSET_MM = 60.0  # Novuss: where "the corners" are measured, clear of the pockets


def lamps(st) -> tuple[tuple[float, float, float], ...]:
    """The lamps of the fall-off model (empty: the far lamp of ``light_dir``, no fall-off)."""
    if st.lamps_mm:
        return tuple(tuple(float(v) for v in lamp) for lamp in st.lamps_mm)
    return (DEFAULT_LAMP_MM,) if st.corner_falloff is not None else ()


def corners_mm(profile) -> np.ndarray:
    """The corners whose darkening ``corner_falloff`` sets: the Novuss playing surface's, 60 mm in along
    each side (clear of the pockets), or the corners of the Cvrnkaná camera view."""
    spec = profile.spec
    if spec.sees_whole_field:
        hx = hy = float(profile.geometry["surface_mm"]) / 2.0 - CORNER_INSET_MM
    else:
        hx, hy = (float(v) for v in spec.bounds_mm)
    return np.array([[sx * hx, sy * hy] for sx in (-1, 1) for sy in (-1, 1)], float)


def _irradiance(lamp_list, x, y):
    total = 0.0
    for lx, ly, lh in lamp_list:
        total = total + lh / (lh * lh + (x - lx) ** 2 + (y - ly) ** 2) ** 1.5
    return total


def falloff(st, profile, x, y):
    """The lamps' light at board points (arrays ``x``, ``y`` in mm) relative to the board centre's."""
    lamp_list = lamps(st)
    if not lamp_list:
        return np.ones_like(np.asarray(x, np.float32))
    centre = _irradiance(lamp_list, 0.0, 0.0)
    rel = (_irradiance(lamp_list, np.asarray(x, np.float64), np.asarray(y, np.float64)) / centre)
    if st.corner_falloff is not None:
        c = corners_mm(profile)
        at_corners = float(np.mean(_irradiance(lamp_list, c[:, 0], c[:, 1]) / centre))
        if at_corners < 0.999 and st.corner_falloff > 0:
            rel = rel ** (math.log(1.0 - st.corner_falloff) / math.log(at_corners))
        elif st.corner_falloff == 0:
            rel = np.ones_like(rel)
    return rel.astype(np.float32)


def lamp_shadows(st) -> list[tuple[np.ndarray, float, float]]:
    """Per lamp that casts piece shadows: (unit vector away from the lamp on the board, tan of its
    elevation seen from the centre, its share of the light at the centre). One entry from ``light_dir``
    when there are no lamps: the renderer's single shadow."""
    lamp_list = lamps(st)
    if not lamp_list:
        light = st.light_dir
        lxy = light[:2]
        n = float(np.linalg.norm(lxy))
        return [(-lxy / n if n > 1e-9 else np.zeros(2), math.tan(math.radians(st.light_elevation_deg)), 1.0)]
    parts = [lh / (lh * lh + lx * lx + ly * ly) ** 1.5 for lx, ly, lh in lamp_list]
    out = []
    for (lx, ly, lh), part in zip(lamp_list, parts):
        d = math.hypot(lx, ly)
        away = np.array([-lx / d, -ly / d]) if d > 1e-6 else np.zeros(2)
        out.append((away, lh / max(d, 1e-6), part / sum(parts)))
    return out


def gain_map(st, camera, board: np.ndarray, profile) -> np.ndarray:
    """Static brightness (uint8, 128 = 1.0) per image pixel and channel (``board``: the surface point, mm,
    each image pixel sees)."""
    h, w = camera.height, camera.width
    v, u = np.mgrid[0:h, 0:w].astype(np.float32)
    rr = ((u - camera.cx) ** 2 + (v - camera.cy) ** 2) / (camera.cx ** 2 + camera.cy ** 2)
    gain = 1.0 - st.vignette * rr
    light = st.light_dir
    lxy = light[:2] / max(float(np.linalg.norm(light[:2])), 1e-9)
    span = max(float(np.abs(board).max()), 1.0)
    gain *= 1.0 + st.gradient * (board[..., 0] * lxy[0] + board[..., 1] * lxy[1]) / span
    c = np.asarray(camera.centre_mm, float)
    lamp_list = lamps(st)
    glare = [tuple(light * 1500.0)] if not lamp_list else lamp_list
    for lamp in glare:
        lamp = np.asarray(lamp, float)
        lam = c[2] / (c[2] + lamp[2])  # mirror image of the lamp seen on the surface
        spot = c[:2] + lam * (lamp[:2] - c[:2])
        d2 = (board[..., 0] - spot[0]) ** 2 + (board[..., 1] - spot[1]) ** 2
        gain *= 1.0 + st.hotspot * np.exp(-d2 / (2 * 280.0 ** 2))
    if lamp_list:
        gain *= falloff(st, profile, board[..., 0], board[..., 1])
    if st.ambient != 1.0:
        gain *= np.float32(st.ambient)
    gain *= st.exposure_gain
    out = gain[..., None] * np.asarray(st.tint_bgr, np.float32)[None, None, :] * 128.0
    return np.clip(out + 0.5, 0, 255).astype(np.uint8)


def drift_gain(st, t_s: float) -> tuple[float, float, float] | None:
    """Per-channel (B, G, R) gain of the white-balance / exposure drift at clip time ``t_s``; None when the
    settings have no drift."""
    if st.exposure_drift == 0.0 and not any(st.wb_drift_bgr):
        return None
    if st.drift_s > 0:
        f = min(max((t_s - st.drift_start_s) / st.drift_s, 0.0), 1.0)
    else:
        f = 1.0 if t_s >= st.drift_start_s else 0.0
    s = f * f * (3.0 - 2.0 * f)  # smoothstep: the camera eases in and out of its new setting
    e = 1.0 + st.exposure_drift * s
    return tuple(e * (1.0 + d * s) for d in st.wb_drift_bgr)
