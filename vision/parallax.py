"""Pieces have a height: where the camera sees a piece's top face is not where its base stands.

A point at height ``z_mm`` is seen where the camera ray through it meets the board plane: a homothety
about the camera's nadir ``N`` (the board point straight below the lens), ``p0 = N + (p - N) * Cz / (Cz - z)``.
Under a tilted camera, or far from the nadir, a 7 mm pawn top is seen several millimetres away from its base,
so the detector fits its model in this *apparent plane* (what ``PlaneMap.to_board_mm`` returns) and maps
the result back to the base with :class:`Parallax`.

The camera centre comes from the calibration itself: the plane homography and the camera matrix fix the
camera's pose (``K^-1 H = s [r1 r2 t]``), so no extra measurement is needed. Heights come from the profile
(``geometry.pawn_height_mm`` / ``bat_height_mm``; a marble is seen at its centre, half its diameter up).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Parallax", "camera_centre_mm", "seen_height_mm", "DEFAULT_HEIGHTS_MM"]

# Thickness of the disc pieces when a profile does not give it (the simulator draws the same defaults).
DEFAULT_HEIGHTS_MM = {"pawn": 7.0, "bat": 8.0}


def seen_height_mm(profile, kind: str) -> float:
    """Height of the part of a resting piece whose outline the camera sees: a disc's top face, a marble's
    widest circle (its centre)."""
    g = profile.geometry
    if kind == "marble":
        return float(g["marble_diameter_mm"]) / 2.0
    return float(g.get(f"{kind}_height_mm", DEFAULT_HEIGHTS_MM[kind]))


def camera_centre_mm(plane) -> np.ndarray:
    """Camera centre (x, y, z) in board mm from a ``PlaneMap`` (camera matrix + board homography)."""
    h = np.linalg.inv(np.asarray(plane.homography, float))  # board mm -> undistorted px
    m = np.linalg.inv(np.asarray(plane.camera_matrix, float)) @ h
    scale = 2.0 / (np.linalg.norm(m[:, 0]) + np.linalg.norm(m[:, 1]))
    m = m * scale
    if m[2, 2] < 0:  # the board lies in front of the camera
        m = -m
    r = np.column_stack([m[:, 0], m[:, 1], np.cross(m[:, 0], m[:, 1])])
    u, _, vt = np.linalg.svd(r)
    r = u @ vt
    c = -r.T @ m[:, 2]
    if c[2] < 0:
        c = -c
    return c


@dataclass(frozen=True)
class Parallax:
    """The homothety between board points at a height and where the camera sees them on the plane."""

    centre_mm: tuple[float, float, float]

    @classmethod
    def from_plane(cls, plane) -> "Parallax":
        return cls(tuple(float(v) for v in camera_centre_mm(plane)))

    def scale(self, z_mm: float) -> float:
        """How much larger a horizontal shape at ``z_mm`` looks on the plane."""
        cz = self.centre_mm[2]
        return cz / (cz - z_mm)

    def seen(self, xy_mm, z_mm: float) -> np.ndarray:
        """Base points (N,2) of things at height ``z_mm`` -> where the camera sees them on the plane."""
        n = np.asarray(self.centre_mm[:2])
        return n + (np.asarray(xy_mm, float).reshape(-1, 2) - n) * self.scale(z_mm)

    def base(self, seen_mm, z_mm: float) -> np.ndarray:
        """Inverse of :meth:`seen`."""
        n = np.asarray(self.centre_mm[:2])
        return n + (np.asarray(seen_mm, float).reshape(-1, 2) - n) / self.scale(z_mm)
