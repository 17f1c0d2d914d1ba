"""Small renderer for the calibration tests and bench/calibration_accuracy.py: a plane texture seen through
a known ``Camera`` with exact lens distortion (every output sample is traced back through undistortion and
the plane homography), 2x2 supersampled so edges are anti-aliased like a real sensor's."""
from __future__ import annotations

import json
from functools import lru_cache

import cv2
import numpy as np

from calibration.camera import Camera
from calibration.markers import aruco_dictionary, marker_corners_mm
from calibration.profile import Profile, profile_from_dict

__all__ = ["render_plane", "board_texture", "render_board", "charuco_texture", "noisy"]

_CRIT = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 40, 1e-12)


@lru_cache(maxsize=16)
def _plane_coords(camera: Camera, ss: int) -> np.ndarray:
    """Board mm (h*ss, w*ss, 2) hit by each sub-sample of each pixel of ``camera``'s image."""
    w, h = camera.width, camera.height
    offs = (np.arange(ss) + 0.5) / ss - 0.5
    u = (np.arange(w)[:, None] + offs[None, :]).ravel()
    v = (np.arange(h)[:, None] + offs[None, :]).ravel()
    uu, vv = np.meshgrid(u, v)
    pts = np.stack([uu.ravel(), vv.ravel()], 1)
    if any(camera.dist):
        pts = cv2.undistortPoints(pts.reshape(-1, 1, 2), camera.K, np.asarray(camera.dist, float), R=np.eye(3),
                                  P=camera.K, criteria=_CRIT).reshape(-1, 2)
    hinv = np.linalg.inv(camera.board_to_undistorted())
    q = np.hstack([pts, np.ones((len(pts), 1))]) @ hinv.T
    return (q[:, :2] / q[:, 2:3]).reshape(h * ss, w * ss, 2)


def render_plane(camera: Camera, texture: np.ndarray, mm_to_tex: np.ndarray, background: int = 60,
                 ss: int = 2) -> np.ndarray:
    """Image (uint8, texture's channels) of a texture lying on the board plane. ``mm_to_tex`` is the 2x3
    affine from board mm to *continuous* texture coordinates (texel i spans [i, i+1))."""
    xy = _plane_coords(camera, ss)
    a = np.asarray(mm_to_tex, float)
    mx = (a[0, 0] * xy[..., 0] + a[0, 1] * xy[..., 1] + a[0, 2] - 0.5).astype(np.float32)
    my = (a[1, 0] * xy[..., 0] + a[1, 1] * xy[..., 1] + a[1, 2] - 0.5).astype(np.float32)
    border = (background,) * (texture.shape[2] if texture.ndim == 3 else 1)
    big = cv2.remap(texture, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=border)
    if ss == 1:
        return big
    return cv2.resize(big, (camera.width, camera.height), interpolation=cv2.INTER_AREA)


def board_texture(profile: Profile, px_per_mm: float = 4.0, half_extent_mm: float = 680.0):
    """Top-down grey texture of the table (frame, surface, lines, pockets) with the profile's markers on
    white quiet zones; returns ``(texture, mm_to_tex)``."""
    s, e = px_per_mm, half_extent_mm
    n = int(round(2 * e * s))
    tex = np.full((n, n), 70, np.uint8)

    def px(x, y):
        return (x + e) * s, (e - y) * s

    def rect(x0, y0, x1, y1, value):
        (a, b), (c, d) = px(x0, y1), px(x1, y0)
        tex[int(round(b)):int(round(d)), int(round(a)):int(round(c))] = value

    geo = profile.geometry
    if profile.spec.pockets_mm:  # a board: frame, surface, zones, centre circle, pockets; else the pit
        fr, half = geo["frame_mm"] / 2, geo["surface_mm"] / 2
        rect(-fr, -fr, fr, fr, 120)
        rect(-half, -half, half, half, 205)
        lw = geo["line_width_mm"]
        for sign in (-1, 1):
            y_in = sign * (half - geo["zone_depth_mm"])
            zx = geo["zone_half_width_mm"]
            rect(-zx, min(y_in, sign * half) - lw / 2, zx, max(y_in, sign * half) + lw / 2, 205)
            rect(-zx, y_in - lw / 2, zx, y_in + lw / 2, 40)
            rect(-zx - lw / 2, min(y_in, sign * half), -zx + lw / 2, max(y_in, sign * half), 40)
            rect(zx - lw / 2, min(y_in, sign * half), zx + lw / 2, max(y_in, sign * half), 40)
        cx, cy = px(0, 0)
        cv2.circle(tex, (int(round(cx * 16)), int(round(cy * 16))), int(round(geo["circle_radius_mm"] * s * 16)), 40,
                   max(1, int(round(lw * s))), cv2.LINE_AA, 4)
        for x in (-half, half):
            for y in (-half, half):
                p = px(x, y)
                cv2.circle(tex, (int(round(p[0] * 16)), int(round(p[1] * 16))), int(round(geo["pocket_radius_mm"] * s * 16)),
                           15, -1, cv2.LINE_AA, 4)
    else:
        r = geo["pit_diameter_mm"] / 2
        cx, cy = px(0, 0)
        cv2.circle(tex, (int(round(cx * 16)), int(round(cy * 16))), int(round(r * s * 16)), 20, -1, cv2.LINE_AA, 4)
    size = float(profile.markers["size_mm"])
    dictionary = aruco_dictionary(profile.markers["dictionary"])
    side_px = int(round(size * s))
    for mid, corners in marker_corners_mm(profile).items():
        x0, y1 = corners[0]
        quiet = size / (dictionary.markerSize + 2)
        rect(x0 - quiet, y1 - size - quiet, x0 + size + quiet, y1 + quiet, 235)
        img = cv2.aruco.generateImageMarker(dictionary, mid, side_px, borderBits=1)
        a, b = px(x0, y1)
        r0, c0 = int(round(b)), int(round(a))
        tex[r0:r0 + side_px, c0:c0 + side_px] = np.where(img > 127, 235, 20)
    mm_to_tex = np.array([[s, 0.0, e * s], [0.0, -s, e * s]])
    return tex, mm_to_tex


@lru_cache(maxsize=4)
def _cached_board_texture(profile_json: str):
    return board_texture(profile_from_dict(json.loads(profile_json)))


def _paint_disc(tex: np.ndarray, a: np.ndarray, x: float, y: float, d: float, hole: float, grey: int) -> None:
    """Exact anti-aliased disc (4x4 samples per texel; cv2.circle's AA discs are ~1/3 texel too large)."""
    s = a[0, 0]
    cu, cv = a[0, 2] + s * x, a[1, 2] - s * y  # continuous texture coords of the centre
    r = d / 2 * s
    u0, u1 = int(np.floor(cu - r - 1)), int(np.ceil(cu + r + 1))
    v0, v1 = int(np.floor(cv - r - 1)), int(np.ceil(cv + r + 1))
    sub = (np.arange(4) + 0.5) / 4
    uu = (np.arange(u0, u1)[:, None] + sub).ravel()
    vv = (np.arange(v0, v1)[:, None] + sub).ravel()
    dist = np.hypot(uu[None, :] - cu, vv[:, None] - cv)
    shape = (v1 - v0, 4, u1 - u0, 4)
    cover = (dist <= r).reshape(shape).mean(axis=(1, 3))
    if hole:
        cover -= (dist <= hole / 2 * s).reshape(shape).mean(axis=(1, 3))
    patch = tex[v0:v1, u0:u1].astype(float)
    tex[v0:v1, u0:u1] = np.round(patch * (1 - cover) + grey * cover).astype(np.uint8)


def render_board(camera: Camera, profile: Profile, ss: int = 2, discs=()) -> np.ndarray:
    """BGR image of the profile's table with its markers, seen by ``camera``; ``discs`` adds flat pieces
    ``(x_mm, y_mm, diameter_mm, hole_mm or 0, grey)`` lying on the board."""
    tex, a = _cached_board_texture(json.dumps(profile.to_dict(), sort_keys=True))
    if discs:
        tex = tex.copy()
        for x, y, d, hole, grey in discs:
            _paint_disc(tex, a, x, y, d, hole, grey)
    gray = render_plane(camera, tex, a, ss=ss)
    return cv2.cvtColor(gray, cv2.COLOR_GRAY2BGR)


def charuco_texture(board: "cv2.aruco.CharucoBoard", px_per_mm: float = 4.0, margin_mm: float = 20.0):
    """Texture of a ChArUco board centred on the plane origin, oriented so that its object frame (x right,
    y down, z into the board) faces a camera above the plane; returns ``(texture, mm_to_tex)``."""
    sx, sy = board.getChessboardSize()
    sq = board.getSquareLength()
    w_mm, h_mm = sx * sq, sy * sq
    m = int(round(margin_mm * px_per_mm))
    size = (int(round(w_mm * px_per_mm)) + 2 * m, int(round(h_mm * px_per_mm)) + 2 * m)
    tex = board.generateImage(size, marginSize=m, borderBits=1)
    # object (X, Y) = (x + w/2, h/2 - y); texel = X * s + m
    mm_to_tex = np.array([[px_per_mm, 0.0, w_mm / 2 * px_per_mm + m], [0.0, -px_per_mm, h_mm / 2 * px_per_mm + m]])
    return tex, mm_to_tex


def noisy(image: np.ndarray, rng: np.random.Generator, sigma: float = 2.0, gain: float = 1.0) -> np.ndarray:
    """Sensor noise and a global brightness change (flicker) applied to a rendered frame."""
    out = image.astype(np.float32) * gain + rng.normal(0.0, sigma, image.shape).astype(np.float32)
    return np.clip(out, 0, 255).astype(np.uint8)
