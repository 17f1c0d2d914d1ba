"""Where things land in the picture: the top-down canvas, heights of pieces, and the canvas→image map.

The renderer paints a top-down canvas in board millimetres and warps it to the camera image with one
precomputed ``cv2.remap`` (distortion included). Anything above the surface (a pawn's top face, a marble's
centre, a hand) is painted where the camera ray through it meets the surface: a homothety about the point
below the camera, ``p0 = C + (p - C) * Cz / (Cz - z)``, which is exact for a pinhole camera.

**What vision sees as a piece's centre**: the top face of a pawn or the bat (``piece_top_z_mm``) and the
centre of a marble's sphere; :func:`apparent_point_mm` gives that 3-D point, and
``camera.project(apparent_point_mm(profile, piece))`` is its pixel.
"""
from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

__all__ = ["CanvasGeometry", "piece_height_mm", "piece_top_z_mm", "apparent_point_mm", "DEFAULT_HEIGHTS_MM"]

# Used when a profile does not give the heights (profiles may set geometry.pawn_height_mm / bat_height_mm).
DEFAULT_HEIGHTS_MM = {"pawn": 7.0, "bat": 8.0}


def piece_height_mm(profile, kind: str) -> float:
    """Thickness of a disc piece; a marble's diameter."""
    g = profile.geometry
    if kind == "marble":
        return float(g["marble_diameter_mm"])
    return float(g.get(f"{kind}_height_mm", DEFAULT_HEIGHTS_MM[kind]))


def piece_top_z_mm(profile, kind: str) -> float:
    """Height of the point the camera sees as the piece's centre when it rests on the surface: the top face
    of a pawn or the bat, the centre of a marble."""
    h = piece_height_mm(profile, kind)
    return h / 2.0 if kind == "marble" else h


def apparent_point_mm(profile, piece) -> tuple[float, float, float]:
    """3-D board point whose projection is the rendered centre of ``piece`` (a ``sim.frames.PieceState``,
    whose ``z_mm`` is the offset from its resting height)."""
    return float(piece.x_mm), float(piece.y_mm), piece_top_z_mm(profile, piece.kind) + float(piece.z_mm)


@dataclass(frozen=True)
class CanvasGeometry:
    """Top-down canvas: pixel (i, j) centre is board (x0_mm + i/ppm, y1_mm - j/ppm); board +y is canvas up."""

    ppm: float
    x0_mm: float
    y1_mm: float
    width: int
    height: int
    camera_mm: tuple[float, float, float]  # camera centre in board mm

    @classmethod
    def for_camera(cls, camera, oversample: float = 1.25, margin_mm: float = 60.0, limit_mm: float = 3000.0,
                   max_pixels: int = 12_000_000) -> "CanvasGeometry":
        """The smallest canvas that covers everything the camera sees, at ``oversample`` canvas pixels per
        image pixel where the image is most detailed."""
        w, h = camera.width, camera.height
        u = np.linspace(0, w - 1, 33)
        v = np.linspace(0, h - 1, 19)
        border = np.concatenate([np.stack([u, np.zeros_like(u)], 1), np.stack([u, np.full_like(u, h - 1)], 1),
                                 np.stack([np.zeros_like(v), v], 1), np.stack([np.full_like(v, w - 1), v], 1)])
        pts = camera.image_to_board(border)
        lo = np.maximum(pts.min(0) - margin_mm, -limit_mm)
        hi = np.minimum(pts.max(0) + margin_mm, limit_mm)
        # image pixels per mm, sampled over the view
        grid = np.stack(np.meshgrid(np.linspace(0.1 * w, 0.9 * w, 5), np.linspace(0.1 * h, 0.9 * h, 5)), -1).reshape(-1, 2)
        b = camera.image_to_board(grid)
        dx = camera.project(b + [1.0, 0.0]) - camera.project(b - [1.0, 0.0])
        dy = camera.project(b + [0.0, 1.0]) - camera.project(b - [0.0, 1.0])
        px_per_mm = float(max(np.linalg.norm(dx, axis=1).max(), np.linalg.norm(dy, axis=1).max()) / 2.0)
        ppm = oversample * px_per_mm
        area = float((hi[0] - lo[0]) * (hi[1] - lo[1]))
        ppm = min(ppm, (max_pixels / area) ** 0.5)
        cw = int(np.ceil((hi[0] - lo[0]) * ppm)) + 1
        ch = int(np.ceil((hi[1] - lo[1]) * ppm)) + 1
        return cls(ppm, float(lo[0]), float(hi[1]), cw, ch, tuple(float(c) for c in camera.centre_mm))

    def to_plane(self, pts_mm) -> np.ndarray:
        """Points (N,3) in board mm → where the camera ray through each meets z = 0 (N,2)."""
        p = np.asarray(pts_mm, float).reshape(-1, 3)
        c = np.asarray(self.camera_mm)
        s = c[2] / (c[2] - p[:, 2])
        return c[:2] + (p[:, :2] - c[:2]) * s[:, None]

    def scale_at(self, z_mm: float) -> float:
        """How much larger a horizontal shape at height ``z_mm`` is painted on the canvas."""
        return self.camera_mm[2] / (self.camera_mm[2] - z_mm)

    def to_canvas(self, pts_mm) -> np.ndarray:
        """Board points (N,2) on the surface → canvas pixel coordinates (N,2)."""
        p = np.asarray(pts_mm, float).reshape(-1, 2)
        return np.stack([(p[:, 0] - self.x0_mm) * self.ppm, (self.y1_mm - p[:, 1]) * self.ppm], 1)

    def canvas_point(self, x_mm: float, y_mm: float, z_mm: float = 0.0) -> tuple[float, float]:
        """Canvas pixel where a point at height ``z_mm`` is painted."""
        c = self.camera_mm
        s = c[2] / (c[2] - z_mm)
        x = c[0] + (x_mm - c[0]) * s
        y = c[1] + (y_mm - c[1]) * s
        return (x - self.x0_mm) * self.ppm, (self.y1_mm - y) * self.ppm

    def board_grid(self) -> tuple[np.ndarray, np.ndarray]:
        """Board x (1, W) and y (H, 1) of every canvas pixel centre, for building textures and masks."""
        xs = self.x0_mm + np.arange(self.width, dtype=np.float32)[None, :] / self.ppm
        ys = self.y1_mm - np.arange(self.height, dtype=np.float32)[:, None] / self.ppm
        return xs, ys

    def remap_maps(self, camera) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Fixed-point maps (CV_16SC2 + CV_16UC1) from every image pixel to the canvas, plus the board mm
        of every image pixel (H, W, 2) for lighting."""
        w, h = camera.width, camera.height
        u, v = np.meshgrid(np.arange(w, dtype=np.float64), np.arange(h, dtype=np.float64))
        board = camera.image_to_board(np.stack([u.ravel(), v.ravel()], 1)).reshape(h, w, 2)
        mx = ((board[..., 0] - self.x0_mm) * self.ppm).astype(np.float32)
        my = ((self.y1_mm - board[..., 1]) * self.ppm).astype(np.float32)
        m1, m2 = cv2.convertMaps(mx, my, cv2.CV_16SC2)
        return m1, m2, board.astype(np.float32)
