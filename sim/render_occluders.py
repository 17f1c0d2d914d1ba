"""Painting what comes between the camera and the surface: the cue and a hand (with its forearm).

Both are drawn at their height through the same camera-ray homothety as the pieces, with a soft shadow on
the surface. ``outline_mm`` gives 3-D outline points (board mm) for labelling boxes in the image.
"""
from __future__ import annotations

import math

import cv2
import numpy as np

from .render_geometry import CanvasGeometry
from .render_settings import RenderSettings
from .render_sprites import Sprite, paste, paste_shadow

__all__ = ["OccluderPainter", "CUE_LENGTH_MM", "CUE_TIP_MM", "HAND_RADIUS_MM"]

CUE_LENGTH_MM = 1400.0  # used when an occluder does not say
CUE_TIP_MM = 11.0
CUE_BUTT_MM = 29.0
CUE_RISE = 0.05  # the cue climbs from the tip over the cushion to the player's hand
HAND_RADIUS_MM = 45.0
HAND_Z_MM = 50.0
ARM_LENGTH_R = 13.0  # forearm reaches this many palm radii behind the palm (off the picture)

# (start, end) as fractions of the cue length from the tip, colour BGR
_CUE_SEGMENTS = ((0.0, 0.002, (140, 110, 90)), (0.002, 0.013, (225, 230, 232)), (0.013, 0.55, (165, 200, 225)),
                 (0.55, 0.56, (30, 30, 30)), (0.56, 0.75, (35, 55, 100)), (0.75, 0.92, (40, 38, 38)),
                 (0.92, 1.0, (30, 45, 85)))


class OccluderPainter:
    def __init__(self, geom: CanvasGeometry, settings: RenderSettings):
        self.geom, self.st = geom, settings
        self.light = settings.light_dir
        lxy = self.light[:2]
        n = float(np.linalg.norm(lxy))
        self.away = -lxy / n if n > 1e-9 else np.zeros(2)
        self.tan_e = math.tan(math.radians(settings.light_elevation_deg))
        self._hands: dict[float, tuple[Sprite, np.ndarray, tuple[float, float], np.ndarray]] = {}

    # ---------------------------------------------------------------- cue
    def _cue_axis(self, occ):
        length = occ.length_mm or CUE_LENGTH_MM
        tip_w = occ.width_mm or CUE_TIP_MM
        d = np.array([math.cos(occ.direction_rad), math.sin(occ.direction_rad)])
        perp = np.array([-d[1], d[0]])
        tip = np.array([occ.x_mm, occ.y_mm])
        z0 = float(occ.z_mm) + tip_w / 2.0

        def at(f, s):
            """Point on the cue surface outline: fraction f of the length from the tip, lateral s in -1..1."""
            w = tip_w + (CUE_BUTT_MM - tip_w) * f
            p = tip - d * (f * length) + perp * (s * w / 2.0)
            return (p[0], p[1], z0 + CUE_RISE * f * length)

        return at, length

    def _cue_polys(self, occ):
        """(canvas polygons (M, 4, 2), colours (M, 3)): strips along each cue segment, shaded as a cylinder."""
        length = occ.length_mm or CUE_LENGTH_MM
        tip_w = occ.width_mm or CUE_TIP_MM
        strips = 1 if self.st.plain else 5
        s = np.linspace(-1, 1, strips + 1)
        f = np.array([seg[0] for seg in _CUE_SEGMENTS] + [1.0])
        d = np.array([math.cos(occ.direction_rad), math.sin(occ.direction_rad)])
        perp = np.array([-d[1], d[0]])
        w = tip_w + (CUE_BUTT_MM - tip_w) * f
        xy = (np.array([occ.x_mm, occ.y_mm])[None, None, :] - (f * length)[:, None, None] * d
              + (s[None, :, None] * w[:, None, None] / 2.0) * perp)
        z = np.broadcast_to((float(occ.z_mm) + tip_w / 2.0 + CUE_RISE * f * length)[:, None], xy.shape[:2])
        pts = np.concatenate([xy, z[..., None]], -1).reshape(-1, 3)
        cv = self.geom.to_canvas(self.geom.to_plane(pts)).reshape(len(f), len(s), 2)
        polys = np.stack([cv[:-1, :-1], cv[1:, :-1], cv[1:, 1:], cv[:-1, 1:]], 2).reshape(-1, 4, 2)
        base = np.array([seg[2] for seg in _CUE_SEGMENTS], float)[:, None, :]
        if self.st.plain:
            cols = np.broadcast_to(base, (len(_CUE_SEGMENTS), strips, 3))
        else:
            mid = 0.5 * (s[:-1] + s[1:])
            n = np.stack([mid * perp[0], mid * perp[1], np.sqrt(np.clip(1 - mid * mid, 0, None))], 1)
            lam = np.clip(n @ self.light, 0, None)
            hv = self.light + np.array([0, 0, 1.0])
            spec = np.clip(n @ (hv / np.linalg.norm(hv)), 0, None) ** 25
            cols = base * (0.4 + 0.75 * lam)[None, :, None] + 120 * spec[None, :, None]
        return polys, np.clip(cols, 0, 255).reshape(-1, 3)

    # ---------------------------------------------------------------- hand
    def _hand(self, radius_mm: float):
        got = self._hands.get(radius_mm)
        if got is not None:
            return got
        R, ppm, ss = radius_mm, self.geom.ppm, 2
        back, front, side = ARM_LENGTH_R * R, 2.6 * R, 1.7 * R
        w, h = int(math.ceil((back + front) * ppm * ss)), int(math.ceil(2 * side * ppm * ss))
        cx, cy = back * ppm * ss, side * ppm * ss  # palm centre in the supersampled image

        def px(x_mm, y_mm):
            return int(round((cx + x_mm * ppm * ss) * 16)), int(round((cy - y_mm * ppm * ss) * 16))

        def capsule(mask, a, b, width_mm):
            cv2.line(mask, px(*a), px(*b), 1.0, max(int(round(width_mm * ppm * ss)), 1), cv2.LINE_AA, 4)

        skin = np.zeros((h, w), np.float32)
        cv2.ellipse(skin, px(0, 0), (int(R * ppm * ss * 16), int(0.85 * R * ppm * ss * 16)), 0, 0, 360, 1.0, -1,
                    cv2.LINE_AA, 4)
        fingers = ((-0.62, 1.0, -9), (-0.21, 1.18, -3), (0.2, 1.12, 2), (0.6, 0.88, 8))
        for y0, length, spread in fingers:
            a = math.radians(spread)
            start = (0.7 * R, y0 * R)
            end = (start[0] + length * R * math.cos(a), start[1] + length * R * math.sin(a))
            capsule(skin, start, end, 0.36 * R)
        ta = math.radians(55)
        capsule(skin, (0.05 * R, 0.7 * R), (0.05 * R + 0.95 * R * math.cos(ta), 0.7 * R + 0.95 * R * math.sin(ta)), 0.42 * R)
        capsule(skin, (-0.5 * R, 0.0), (-3.0 * R, 0.0), 1.25 * R)  # wrist and forearm
        sleeve = np.zeros_like(skin)
        capsule(sleeve, (-3.0 * R, 0.0), (-back, 0.0), 1.6 * R)
        alpha = np.clip(skin + sleeve, 0, 1)
        height = cv2.GaussianBlur(alpha, (0, 0), 0.22 * R * ppm * ss)
        gy, gx = np.gradient(height)
        k = 0.35 * R * ppm * ss  # bulge height in pixels
        nx, ny, nz = -gx * k, gy * k, np.ones_like(gx)
        norm = np.sqrt(nx * nx + ny * ny + nz * nz)
        lam = np.clip((nx * self.light[0] + ny * self.light[1] + nz * self.light[2]) / norm, 0, None)
        shade = (0.45 + 0.7 * lam) * (0.7 + 0.3 * np.clip(height / max(float(height.max()), 1e-6) * 1.6, 0, 1))
        is_sleeve = np.clip(sleeve - skin, 0, 1)[..., None]
        col = (1 - is_sleeve) * np.asarray(self.st.skin_bgr, np.float32) + is_sleeve * np.asarray(self.st.sleeve_bgr, np.float32)
        col = col * (shade if not self.st.plain else np.ones_like(shade))[..., None]
        pm = np.concatenate([col * alpha[..., None], alpha[..., None] * 255], -1)
        small = cv2.resize(pm, (w // ss, h // ss), interpolation=cv2.INTER_AREA)
        sprite = Sprite(np.clip(small + 0.5, 0, 255).astype(np.uint8), (cx / ss - 0.5 + 0.5 / ss, cy / ss - 0.5 + 0.5 / ss))
        sh = cv2.GaussianBlur(cv2.resize(alpha, (w // ss, h // ss), interpolation=cv2.INTER_AREA), (0, 0), max(6.0 * ppm, 0.8))
        shadow = np.clip(sh * 255 + 0.5, 0, 255).astype(np.uint8)
        hand_only = (skin > 0.5).astype(np.uint8)
        hand_only[:, : int(cx - 1.2 * R * ppm * ss)] = 0  # the box of a hand stops at the wrist
        cnts, _ = cv2.findContours(hand_only, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        hull = cv2.convexHull(np.concatenate(cnts)).reshape(-1, 2).astype(float)
        outline = np.stack([(hull[:, 0] - cx) / (ppm * ss), -(hull[:, 1] - cy) / (ppm * ss)], 1)
        got = (sprite, shadow, sprite.centre, outline)
        self._hands[radius_mm] = got
        return got

    def _hand_z(self, occ) -> float:
        return float(occ.z_mm) if occ.z_mm > 0 else HAND_Z_MM

    # ---------------------------------------------------------------- interface
    def outline_mm(self, occ) -> np.ndarray:
        """3-D outline points (N, 3) in board mm: the cue's silhouette, or the hand up to the wrist."""
        if occ.kind == "cue":
            at, _ = self._cue_axis(occ)
            return np.array([at(0, -1), at(0, 1), at(1, 1), at(1, -1)])
        _, _, _, outline = self._hand(occ.radius_mm or HAND_RADIUS_MM)
        a = occ.direction_rad
        rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
        xy = outline @ rot.T + [occ.x_mm, occ.y_mm]
        return np.column_stack([xy, np.full(len(xy), self._hand_z(occ))])

    def _footprint(self, occ) -> np.ndarray:
        """Canvas points covering everything painted for ``occ`` (body and shadow)."""
        geom = self.geom
        if occ.kind == "cue":
            at, _ = self._cue_axis(occ)
            body = np.array([at(f, s) for f in (0, 1) for s in (-1, 1)])
        else:
            sprite, _, centre, _ = self._hand(occ.radius_mm or HAND_RADIUS_MM)
            z = self._hand_z(occ)
            h, w = sprite.bgra.shape[:2]
            u = np.array([-1.0, w, w, -1.0]) - centre[0]
            v = np.array([-1.0, -1.0, h, h]) - centre[1]
            a = float(occ.direction_rad)
            lx, ly = u / geom.ppm, -v / geom.ppm
            bx = occ.x_mm + lx * math.cos(a) - ly * math.sin(a)
            by = occ.y_mm + lx * math.sin(a) + ly * math.cos(a)
            body = np.column_stack([bx, by, np.full(4, z)])
        shadow = body.copy()
        shadow[:, :2] += self.away[None, :] * (body[:, 2:3] / self.tan_e)
        shadow[:, 2] = 0
        return geom.to_canvas(np.concatenate([geom.to_plane(body), geom.to_plane(shadow)]))

    def bbox(self, occ) -> tuple[int, int, int, int]:
        pts = self._footprint(occ)
        pad = 4 + 15 * self.geom.ppm
        lo, hi = pts.min(0) - pad, pts.max(0) + pad
        lo = np.maximum(lo, -1)
        hi = np.minimum(hi, [self.geom.width + 1, self.geom.height + 1])
        return int(math.floor(lo[0])), int(math.floor(lo[1])), int(math.ceil(hi[0])) + 1, int(math.ceil(hi[1])) + 1

    def draw_shadow(self, target: np.ndarray, ox: int, oy: int, occ) -> None:
        if self.st.plain or self.st.shadow_strength <= 0:
            return
        geom = self.geom
        strength = 0.8 * self.st.shadow_strength
        if occ.kind == "hand":
            _, shadow, centre, _ = self._hand(occ.radius_mm or HAND_RADIUS_MM)
            z = self._hand_z(occ)
            off = self.away * z / self.tan_e
            cx, cy = geom.canvas_point(occ.x_mm + off[0], occ.y_mm + off[1], 0.0)
            paste_shadow(target, shadow, cx - ox, cy - oy, strength / (1 + z / 150.0), 1.0,
                         float(occ.direction_rad), centre)
            return
        at, _ = self._cue_axis(occ)
        pts = []
        for f, s in ((0, -1), (0, 1), (1, 1), (1, -1)):
            x, y, z = at(f, s)
            pts.append((x + self.away[0] * z / self.tan_e, y + self.away[1] * z / self.tan_e))
        poly = geom.to_canvas(np.array(pts)) - [ox, oy]
        _soft_polygon(target, poly, max(3.0 * geom.ppm, 1.0), strength * 0.7)

    def draw_body(self, target: np.ndarray, ox: int, oy: int, occ) -> None:
        geom = self.geom
        if occ.kind == "hand":
            sprite, _, centre, _ = self._hand(occ.radius_mm or HAND_RADIUS_MM)
            z = self._hand_z(occ)
            cx, cy = geom.canvas_point(occ.x_mm, occ.y_mm, z)
            paste(target, sprite, cx - ox, cy - oy, geom.scale_at(z), float(occ.direction_rad))
            return
        polys, cols = self._cue_polys(occ)
        fixed = np.round((polys - [ox, oy]) * 16).astype(np.int32)
        for poly, colour in zip(fixed, cols):
            cv2.fillConvexPoly(target, poly, tuple(float(c) for c in colour), cv2.LINE_AA, 4)


def _soft_polygon(target: np.ndarray, poly: np.ndarray, sigma_px: float, strength: float) -> None:
    """Darken ``target`` under a blurred polygon (drawn at quarter resolution: shadows are soft anyway)."""
    h, w = target.shape[:2]
    pad = 3 * sigma_px
    x0, y0 = max(int(poly[:, 0].min() - pad), 0), max(int(poly[:, 1].min() - pad), 0)
    x1, y1 = min(int(poly[:, 0].max() + pad) + 1, w), min(int(poly[:, 1].max() + pad) + 1, h)
    if x1 <= x0 or y1 <= y0:
        return
    q = 4
    mw, mh = max((x1 - x0) // q, 1), max((y1 - y0) // q, 1)
    mask = np.zeros((mh, mw), np.float32)
    cv2.fillConvexPoly(mask, np.round((poly - [x0, y0]) / q * 16).astype(np.int32), 1.0, cv2.LINE_AA, 4)
    mask = cv2.GaussianBlur(mask, (0, 0), max(sigma_px / q, 0.5))
    mask = cv2.resize(mask, (x1 - x0, y1 - y0), interpolation=cv2.INTER_LINEAR)
    roi = target[y0:y1, x0:x1]
    roi[:] = np.clip(roi.astype(np.float32) * (1 - strength * mask)[..., None] + 0.5, 0, 255).astype(np.uint8)
