"""Pinhole camera with lens distortion over the playing plane (board millimetres, z up).

Shared by the simulator (to render) and by calibration (to know the truth it recovers).
The image→board mapping in production comes from ``calibration/plane.py``; this model is the
physical camera those estimates describe.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import cv2
import numpy as np

__all__ = ["Camera"]


def _look_at(centre: np.ndarray, target: np.ndarray, up=(0.0, 1.0, 0.0)) -> np.ndarray:
    """World→camera rotation for a camera at ``centre`` looking at ``target``; image up ≈ world ``up``."""
    z = target - centre
    z = z / np.linalg.norm(z)
    x = np.cross(z, np.asarray(up, float))
    x = x / np.linalg.norm(x)
    y = np.cross(z, x)
    return np.stack([x, y, z])  # rows: camera axes in world coordinates


@dataclass(frozen=True)
class Camera:
    width: int
    height: int
    fx: float
    fy: float
    cx: float
    cy: float
    dist: tuple[float, ...]  # k1, k2, p1, p2, k3 (OpenCV order)
    rvec: tuple[float, float, float]  # world (board mm) -> camera
    tvec: tuple[float, float, float]

    @classmethod
    def overhead(cls, width: int = 1280, height: int = 720, view_w_mm: float = 1250.0, view_h_mm: float = 1250.0,
                 height_mm: float = 1400.0, tilt_deg: float = 0.0, yaw_deg: float = 0.0,
                 dist: tuple[float, ...] = (0.0, 0.0, 0.0, 0.0, 0.0), target_mm=(0.0, 0.0),
                 shift_mm=(0.0, 0.0, 0.0)) -> "Camera":
        """A camera ``height_mm`` above ``target_mm``, tilted ``tilt_deg`` towards +y (seen from player A's
        side), turned ``yaw_deg`` about the vertical; focal length chosen so the view rectangle fits."""
        t = math.radians(tilt_deg)
        target = np.array([target_mm[0], target_mm[1], 0.0])
        centre = target + height_mm * np.array([0.0, -math.sin(t), math.cos(t)]) + np.asarray(shift_mm, float)
        a = math.radians(yaw_deg)
        up = (-math.sin(a), math.cos(a), 0.0)
        rot = _look_at(centre, target, up)
        f = min(width * height_mm / view_w_mm, height * height_mm / view_h_mm)
        rvec, _ = cv2.Rodrigues(rot)
        tvec = -rot @ centre
        return cls(width, height, f, f, (width - 1) / 2.0, (height - 1) / 2.0, tuple(float(d) for d in dist),
                   tuple(float(v) for v in rvec.ravel()), tuple(float(v) for v in tvec))

    @property
    def K(self) -> np.ndarray:
        return np.array([[self.fx, 0.0, self.cx], [0.0, self.fy, self.cy], [0.0, 0.0, 1.0]])

    @property
    def R(self) -> np.ndarray:
        return cv2.Rodrigues(np.asarray(self.rvec, float))[0]

    @property
    def centre_mm(self) -> np.ndarray:
        return -self.R.T @ np.asarray(self.tvec, float)

    def project(self, points_mm) -> np.ndarray:
        """Board points (N,2) on the plane or (N,3) with height → distorted image pixels (N,2)."""
        pts = np.asarray(points_mm, float).reshape(-1, np.shape(points_mm)[-1])
        if pts.shape[1] == 2:
            pts = np.hstack([pts, np.zeros((len(pts), 1))])
        px, _ = cv2.projectPoints(pts, np.asarray(self.rvec, float), np.asarray(self.tvec, float), self.K,
                                  np.asarray(self.dist, float))
        return px.reshape(-1, 2)

    def board_to_undistorted(self) -> np.ndarray:
        """Exact homography board mm (z=0) → undistorted image pixels: K [r1 r2 t]."""
        r = self.R
        h = self.K @ np.column_stack([r[:, 0], r[:, 1], np.asarray(self.tvec, float)])
        return h / h[2, 2]

    def undistort_points(self, px) -> np.ndarray:
        pts = np.asarray(px, float).reshape(-1, 1, 2)
        return cv2.undistortPoints(pts, self.K, np.asarray(self.dist, float), P=self.K).reshape(-1, 2)

    def image_to_board(self, px) -> np.ndarray:
        """Distorted image pixels → board mm on the plane z=0 (ground truth inverse of ``project``)."""
        und = self.undistort_points(px)
        h = np.linalg.inv(self.board_to_undistorted())
        pts = np.hstack([und, np.ones((len(und), 1))]) @ h.T
        return pts[:, :2] / pts[:, 2:3]

    def moved(self, dx_mm: float = 0.0, dy_mm: float = 0.0, dz_mm: float = 0.0) -> "Camera":
        """The same camera translated in world millimetres (for drift tests)."""
        centre = self.centre_mm + np.array([dx_mm, dy_mm, dz_mm])
        return replace(self, tvec=tuple(float(v) for v in -self.R @ centre))

    def to_dict(self) -> dict:
        return {"width": self.width, "height": self.height, "fx": self.fx, "fy": self.fy, "cx": self.cx,
                "cy": self.cy, "dist": list(self.dist), "rvec": list(self.rvec), "tvec": list(self.tvec)}

    @classmethod
    def from_dict(cls, d: dict) -> "Camera":
        return cls(int(d["width"]), int(d["height"]), float(d["fx"]), float(d["fy"]), float(d["cx"]),
                   float(d["cy"]), tuple(d["dist"]), tuple(d["rvec"]), tuple(d["tvec"]))
