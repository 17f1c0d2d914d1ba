"""The static background of a clip, painted once on the top-down canvas: the Novuss board or the
Cvrnkaná pit, with the ArUco markers the calibration detects.

Markings are painted from signed distances in board millimetres (exact widths and positions, anti-aliased),
so a zone line is where the profile says it is, to a fraction of a canvas pixel. Lines are centred on
their nominal coordinate (a zone line at ``y = -surface/2 + zone_depth`` spans that ``± line_width/2``).
"""
from __future__ import annotations

import math

import cv2
import numpy as np

from . import textures
from .render_geometry import CanvasGeometry
from .render_settings import RenderSettings

__all__ = ["background", "marker_corners_mm"]


def _cover(d_mm: np.ndarray, ppm: float) -> np.ndarray:
    """Anti-aliased coverage of the region where the signed distance ``d_mm`` is negative."""
    return np.clip(0.5 - d_mm * ppm, 0.0, 1.0).astype(np.float32)


def _paint(img: np.ndarray, cover: np.ndarray, colour, opacity: float = 1.0) -> None:
    """Blend a colour or an image into ``img`` (float32) where ``cover`` is set."""
    a = (cover * opacity)[..., None]
    img *= 1.0 - a
    img += a * (np.asarray(colour, np.float32) if not isinstance(colour, np.ndarray) else colour.astype(np.float32))


def _segment_d(xs, ys, a, b, half_w):
    ax, ay = a
    bx, by = b
    vx, vy = bx - ax, by - ay
    t = np.clip(((xs - ax) * vx + (ys - ay) * vy) / (vx * vx + vy * vy), 0.0, 1.0)
    return np.hypot(xs - (ax + t * vx), ys - (ay + t * vy)) - half_w


def marker_corners_mm(markers) -> dict[int, np.ndarray]:
    """Each marker's corners in board mm, in OpenCV order TL, TR, BR, BL as seen from above (board +y up)."""
    s = float(markers["size_mm"]) / 2.0
    out = {}
    for key, (cx, cy) in markers.get("centres_mm", {}).items():
        out[int(key)] = np.array([[cx - s, cy + s], [cx + s, cy + s], [cx + s, cy - s], [cx - s, cy - s]], float)
    return out


def _markers(img, geom: CanvasGeometry, markers, quiet_mm: float, paper, ink, tile_shadow: float = 0.0) -> None:
    """Print the ArUco markers (with a white quiet zone of ``quiet_mm``) onto the canvas."""
    if not markers:
        return
    dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, markers["dictionary"]))
    size = float(markers["size_mm"])
    bits = None
    for key, (cx, cy) in markers["centres_mm"].items():
        n_bits = dictionary.markerSize + 2
        bits = cv2.aruco.generateImageMarker(dictionary, int(key), n_bits) > 127
        half = size / 2.0 + quiet_mm
        (i0, j0), (i1, j1) = geom.to_canvas([[cx - half - 4, cy + half + 4], [cx + half + 4, cy - half - 4]])
        i0, j0 = max(int(i0) - 2, 0), max(int(j0) - 2, 0)
        i1, j1 = min(int(i1) + 3, geom.width), min(int(j1) + 3, geom.height)
        if i1 <= i0 or j1 <= j0:
            continue
        ss = 4  # supersampling for the bit cells
        ii = (np.arange(i0 * ss, i1 * ss) + 0.5) / ss - 0.5
        jj = (np.arange(j0 * ss, j1 * ss) + 0.5) / ss - 0.5
        xs = geom.x0_mm + ii[None, :] / geom.ppm - cx
        ys = geom.y1_mm - jj[:, None] / geom.ppm - cy
        col = np.floor((xs + size / 2) / size * n_bits).astype(int)
        row = np.floor((size / 2 - ys) / size * n_bits).astype(int)
        inside = (col >= 0) & (col < n_bits) & (row >= 0) & (row < n_bits)
        white = np.where(inside, bits[np.clip(row, 0, n_bits - 1), np.clip(col, 0, n_bits - 1)], True)
        white = cv2.resize(white.astype(np.float32), (i1 - i0, j1 - j0), interpolation=cv2.INTER_AREA)
        xs_c = geom.x0_mm + np.arange(i0, i1)[None, :] / geom.ppm - cx
        ys_c = geom.y1_mm - np.arange(j0, j1)[:, None] / geom.ppm - cy
        plate = _cover(np.maximum(np.abs(xs_c), np.abs(ys_c)) - half, geom.ppm)
        roi = img[j0:j1, i0:i1]
        if tile_shadow > 0:
            shadow = _cover(np.maximum(np.abs(xs_c - 2.0), np.abs(ys_c + 2.0)) - half - 1.5, geom.ppm * 0.4)
            roi *= (1.0 - tile_shadow * shadow)[..., None]
        face = white[..., None] * np.asarray(paper, np.float32) + (1 - white[..., None]) * np.asarray(ink, np.float32)
        _paint(roi, plate, face)


def background(geom: CanvasGeometry, profile, settings: RenderSettings) -> np.ndarray:
    """The static canvas (uint8 BGR) for ``profile.game``."""
    paint = _novuss if profile.spec.pockets_mm else _cvrnkana  # a pocketed board, or the open field and pit
    img = paint(geom, profile, settings)
    if not settings.plain:
        img = cv2.GaussianBlur(img, (0, 0), 0.5)  # lens softness, paid once
    return np.clip(img, 0, 255).astype(np.uint8)


def _window(geom: CanvasGeometry, lo_mm, hi_mm):
    """Canvas slice (rows, cols) covering the board rectangle lo..hi, and its board coordinates."""
    (i0, j0), (i1, j1) = geom.to_canvas([[lo_mm[0], hi_mm[1]], [hi_mm[0], lo_mm[1]]])
    i0, j0 = max(int(np.floor(i0)) - 1, 0), max(int(np.floor(j0)) - 1, 0)
    i1, j1 = min(int(np.ceil(i1)) + 2, geom.width), min(int(np.ceil(j1)) + 2, geom.height)
    xs, ys = geom.board_grid()
    return (slice(j0, j1), slice(i0, i1)), xs[:, i0:i1], ys[j0:j1, :]


def _novuss(geom: CanvasGeometry, profile, st: RenderSettings) -> np.ndarray:
    g = profile.geometry
    rng = np.random.default_rng([st.seed, 1])
    full = (geom.height, geom.width)
    ppm = geom.ppm
    sh = g["surface_mm"] / 2.0
    fh = g["frame_mm"] / 2.0
    ch = sh + g["cushion_width_mm"]
    lw = g["line_width_mm"] / 2.0
    light = st.light_dir
    lxy = light[:2] / max(np.linalg.norm(light[:2]), 1e-9)
    plain = st.plain

    if plain:
        canvas = np.empty(full + (3,), np.float32)
        canvas[:] = (70, 70, 70)
    else:
        canvas = textures.floor(rng, full, ppm).astype(np.float32)
    win, xs, ys = _window(geom, (-fh - 120, -fh - 120), (fh + 120, fh + 120))
    img = canvas[win]
    shape = img.shape[:2]
    ax, ay = np.abs(xs) + 0 * ys, np.abs(ys) + 0 * xs
    big = np.maximum(ax, ay)
    if not plain:  # the table's shadow on the floor far below
        img *= (1.0 - 0.55 * _cover(big - fh - 40.0, ppm * 0.02))[..., None]

    frame = _cover(big - fh, ppm)
    if plain:
        _paint(img, frame, st.rail_bgr)
    else:
        along_x = textures.wood(rng, shape, ppm, st.rail_bgr, 1.6 * st.texture_contrast)
        along_y = textures.wood(rng, shape[::-1], ppm, st.rail_bgr, 1.6 * st.texture_contrast).transpose(1, 0, 2)
        horiz = (ay >= ax)[..., None]  # mitred corners: grain follows each side
        _paint(img, frame, np.where(horiz, along_x, along_y))
        edge = np.clip(1.0 - (fh - big) / 8.0, 0, 1) * frame  # rounded outer edge, lit on the lamp side
        facing = np.where(ay >= ax, np.sign(ys) * lxy[1], np.sign(xs) * lxy[0])
        img *= (1.0 + 0.35 * edge * facing)[..., None]

    # cushions: a raised band along each side between the pockets, with a lit or shaded inner face
    cushion = _cover(np.maximum(big - ch, sh - big), ppm) * frame
    cushion_col = np.asarray(st.rail_bgr, np.float32) * (0.8 if plain else 0.72)
    if plain:
        _paint(img, cushion, cushion_col)
    else:
        grain = textures.fractal_noise(rng, shape, 4.0 * ppm, octaves=3, stretch=6.0)
        _paint(img, cushion, cushion_col[None, None, :] * (1 + 0.05 * grain)[..., None])
        face = np.clip(1.0 - (big - sh) / 4.0, 0, 1) * cushion
        inward = np.where(ay >= ax, -np.sign(ys) * lxy[1], -np.sign(xs) * lxy[0])
        img *= (1.0 + 0.45 * face * inward)[..., None]

    surface = _cover(big - sh, ppm)
    if plain:
        _paint(img, surface, st.wood_bgr)
    else:
        _paint(img, surface, textures.wood(rng, shape, ppm, st.wood_bgr, st.texture_contrast))
        # soft shadow of the raised cushions on the surface (away from the lamp)
        tan_e = math.tan(math.radians(st.light_elevation_deg))
        off = -lxy * 15.0 / tan_e
        inner = np.maximum(np.abs(xs - off[0]), np.abs(ys - off[1])) - sh
        rail_shadow = cv2.GaussianBlur(_cover(-inner, ppm), (0, 0), max(2.5 * ppm, 0.8))
        img *= (1.0 - st.shadow_strength * 0.6 * rail_shadow * surface)[..., None]

    # markings
    zy = sh - g["zone_depth_mm"]
    zx = g["zone_half_width_mm"]
    centre = np.maximum(np.abs(xs) - lw, ay - sh)  # centre line x = 0
    zone = np.maximum(np.abs(ay - zy) - lw, ax - zx - lw)  # inner zone lines, both players
    side = np.maximum(np.abs(ax - zx) - lw, np.maximum(zy - lw - ay, ay - sh))  # side lines of the zones
    circle = np.abs(np.hypot(xs, ys) - g["circle_radius_mm"]) - lw
    marks = np.minimum(np.minimum(centre, zone), np.minimum(side, circle))
    _paint(img, _cover(marks, ppm) * surface, st.line_bgr, 1.0 if plain else 0.92)
    pr = g["pocket_radius_mm"]
    for sx in (-1, 1):
        for sy in (-1, 1):  # cushion-joint lines: from the pocket towards the centre
            corner = np.array([sx * sh, sy * sh])
            diag = -np.array([sx, sy]) / math.sqrt(2)
            a, b = corner + diag * pr, corner + diag * g["corner_joint_mm"]
            w2, wx, wy = _window(geom, np.minimum(a, b) - 5, np.maximum(a, b) + 5)
            sub = canvas[w2]
            cover = _cover(_segment_d(wx, wy, a, b, lw), ppm) * _cover(np.maximum(np.abs(wx), np.abs(wy)) - sh, ppm)
            _paint(sub, cover, st.line_bgr, 1.0 if plain else 0.92)
    # pockets: dark holes at the corners, the far wall lit
    for sx in (-1, 1):
        for sy in (-1, 1):
            w2, wx, wy = _window(geom, (sx * sh - pr - 3, sy * sh - pr - 3), (sx * sh + pr + 3, sy * sh + pr + 3))
            sub = canvas[w2]
            dx, dy = wx - sx * sh, wy - sy * sh
            r = np.hypot(dx, dy)
            hole = _cover(r - pr, ppm)
            if plain:
                _paint(sub, hole, (20, 20, 20))
                continue
            rr = np.clip(r / pr, 0, 1)
            facing = -(dx * lxy[0] + dy * lxy[1]) / np.maximum(r, 1e-6)
            tone = 10.0 + 38.0 * rr ** 4 * (1.0 + 0.8 * facing)
            _paint(sub, hole, np.stack([tone, tone * 1.02, tone * 1.05], -1))

    paper = (225, 228, 228) if not plain else (255, 255, 255)
    ink = (28, 26, 26) if not plain else (0, 0, 0)
    _markers(canvas, geom, profile.markers, quiet_mm=float(profile.markers.get("size_mm", 0)) / 6.0 if profile.markers else 0,
             paper=paper, ink=ink)
    return canvas


def _cvrnkana(geom: CanvasGeometry, profile, st: RenderSettings) -> np.ndarray:
    g = profile.geometry
    rng = np.random.default_rng([st.seed, 2])
    xs, ys = geom.board_grid()
    shape = (geom.height, geom.width)
    ppm = geom.ppm
    light = st.light_dir
    lxy = light[:2] / max(np.linalg.norm(light[:2]), 1e-9)
    if st.plain:
        img = np.empty(shape + (3,), np.float32)
        img[:] = st.soil_bgr
    else:
        img = textures.soil(rng, shape, ppm, st.soil_bgr, st.texture_contrast).astype(np.float32)
    R = g["pit_diameter_mm"] / 2.0
    r = np.hypot(xs, ys)
    hole = _cover(r - R, ppm)
    if st.plain:
        _paint(img, hole, (25, 28, 32))
    else:
        # a low rim of loosened soil, then the pit: lit far wall, shaded near wall, dark floor
        rim = np.clip(1.0 - np.abs(r - 1.15 * R) / (0.25 * R), 0, 1)
        with np.errstate(invalid="ignore", divide="ignore"):
            ux, uy = np.nan_to_num(xs / np.maximum(r, 1e-6)), np.nan_to_num(ys / np.maximum(r, 1e-6))
        outer_lit = ux * lxy[0] + uy * lxy[1]
        img *= (1.0 + rim * (0.10 + 0.12 * outer_lit))[..., None]
        depth = np.clip(r / R, 0, 1)
        wall_lit = -(ux * lxy[0] + uy * lxy[1])
        tone = (0.18 + 0.5 * depth ** 3 * (1.0 + 0.7 * wall_lit))
        pit = img * tone[..., None] * 0.9
        _paint(img, hole, pit)
        edge = np.clip(1.0 - np.abs(r - R) * ppm / 1.5, 0, 1)
        img *= (1.0 - 0.3 * edge)[..., None]
    _markers(img, geom, profile.markers, quiet_mm=float(profile.markers.get("size_mm", 0)) * 0.22 if profile.markers else 0,
             paper=(218, 222, 222) if not st.plain else (255, 255, 255), ink=(30, 28, 28) if not st.plain else (0, 0, 0),
             tile_shadow=0.0 if st.plain else 0.45)
    return img
