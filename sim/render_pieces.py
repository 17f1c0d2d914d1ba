"""Painting pawns, the bat and marbles on the canvas: shadow on the surface, side wall, then top face.

A disc piece is a cylinder with a through hole: its side sprite is pasted where the camera ray through its
bottom meets the surface and its top sprite where the ray through its top face does; the board shows
through the hole only where the top and bottom openings overlap, as a real tilted view would show it.
"""
from __future__ import annotations

import math
import zlib

import numpy as np

from .render_geometry import CanvasGeometry, piece_height_mm
from .render_light import lamp_shadows
from .render_settings import RenderSettings
from .render_sprites import Sprite, disc_sprites, marble_sprite, paste, paste_shadow, shadow_sprite

__all__ = ["PiecePainter"]


def _id_seed(seed: int, piece_id: str) -> int:
    return (seed * 1_000_003 + zlib.crc32(piece_id.encode())) & 0x7FFFFFFF


class PiecePainter:
    def __init__(self, geom: CanvasGeometry, profile, settings: RenderSettings):
        self.geom, self.profile, self.st = geom, profile, settings
        self._sprites: dict[tuple, tuple[Sprite, Sprite | None, list[np.ndarray] | None]] = {}
        self._light = settings.light_dir
        # one shadow per lamp: (away from the lamp, tan of its elevation, its share of the light)
        self._lamps = lamp_shadows(settings)

    def _hole_mm(self, kind: str) -> float:
        g = self.profile.geometry
        return float(g.get(f"{kind}_hole_mm", 0.0)) if kind in ("pawn", "bat") else 0.0

    def _colour(self, piece):
        st = self.st
        if piece.kind == "bat":
            return st.bat_bgr
        return st.pawn_a_bgr if piece.owner == "A" else st.pawn_b_bgr

    def sprites(self, piece) -> tuple[Sprite, Sprite | None, list[np.ndarray] | None]:
        kind = piece.kind
        key = (kind, piece.owner, round(piece.radius_mm, 3), piece.id if kind == "marble" else "")
        got = self._sprites.get(key)
        if got is not None:
            return got
        st, ppm = self.st, self.geom.ppm
        height = piece_height_mm(self.profile, kind)
        r = float(piece.radius_mm)
        casts = not st.plain and st.shadow_strength > 0
        if kind == "marble":
            a = piece.owner == "A"
            top = marble_sprite(ppm, r, st.marble_a_hue if a else st.marble_b_hue, self._light, st.plain,
                                _id_seed(st.seed, piece.id), st.marble_a_sv if a else st.marble_b_sv)
            side = None
            shadow = None if not casts else [shadow_sprite(ppm, 0.8 * r, 0.0, st.shadow_blur_mm * 0.8, height / tan_e, away)
                                             for away, tan_e, _ in self._lamps]
        else:
            hole = self._hole_mm(kind)
            top, side = disc_sprites(ppm, r, hole, self._colour(piece), self._light, st.plain,
                                     _id_seed(st.seed, kind + str(piece.owner)))
            shadow = None if not casts else [shadow_sprite(ppm, r, hole, st.shadow_blur_mm, 0.8 * height / tan_e, away)
                                             for away, tan_e, _ in self._lamps]
        got = (top, side, shadow)
        self._sprites[key] = got
        return got

    def _zs(self, piece) -> tuple[float, float]:
        """(bottom z, top z) of what is painted: disc bottom and top face; a marble's centre twice."""
        h = piece_height_mm(self.profile, piece.kind)
        z = float(piece.z_mm)
        if piece.kind == "marble":
            return z + h / 2.0, z + h / 2.0
        return z, z + h

    def bbox(self, piece) -> tuple[int, int, int, int]:
        """Canvas pixels (x0, y0, x1, y1) this piece and its shadow may touch."""
        top, side, shadow = self.sprites(piece)
        zb, zt = self._zs(piece)
        pts = [self.geom.canvas_point(piece.x_mm, piece.y_mm, zb), self.geom.canvas_point(piece.x_mm, piece.y_mm, zt)]
        rad = top.radius_px * self.geom.scale_at(zt) + 3
        if shadow is not None:
            for k, sprite in enumerate(shadow):
                pts.append(self._shadow_at(piece, k))
                rad = max(rad, 0.75 * sprite.shape[0] + 3)
        pts = np.asarray(pts)
        lo, hi = pts.min(0) - rad, pts.max(0) + rad
        return int(math.floor(lo[0])), int(math.floor(lo[1])), int(math.ceil(hi[0])) + 1, int(math.ceil(hi[1])) + 1

    def _shadow_at(self, piece, lamp: int = 0) -> tuple[float, float]:
        away, tan_e, _ = self._lamps[lamp]
        z = max(float(piece.z_mm), 0.0)
        off = away * z / tan_e
        return self.geom.canvas_point(piece.x_mm + off[0], piece.y_mm + off[1], 0.0)

    def z_order(self, piece) -> tuple[float, str]:
        return self._zs(piece)[1], piece.id

    def draw_shadow(self, target: np.ndarray, ox: int, oy: int, piece) -> None:
        if self.st.plain or piece.z_mm < -0.5:
            return
        _, _, shadow = self.sprites(piece)
        if shadow is None:
            return
        fade = 1.0 / (1.0 + max(float(piece.z_mm), 0.0) / 40.0)
        for k, sprite in enumerate(shadow):  # each lamp's shadow, as dark as its share of the light
            sx, sy = self._shadow_at(piece, k)
            paste_shadow(target, sprite, sx - ox, sy - oy, self.st.shadow_strength * fade * self._lamps[k][2])

    def draw_body(self, target: np.ndarray, ox: int, oy: int, piece) -> None:
        top, side, _ = self.sprites(piece)
        zb, zt = self._zs(piece)
        gain = 1.0 if piece.z_mm >= 0 else max(0.15, 1.0 + float(piece.z_mm) / 12.0)  # sinking into a hole
        geom = self.geom
        if side is not None and not self.st.plain:
            bx, by = geom.canvas_point(piece.x_mm, piece.y_mm, zb)
            paste(target, side, bx - ox, by - oy, geom.scale_at(zb), float(piece.angle_rad), gain)
        tx, ty = geom.canvas_point(piece.x_mm, piece.y_mm, zt)
        paste(target, top, tx - ox, ty - oy, geom.scale_at(zt), float(piece.angle_rad), gain)
