"""Is a zone line inside the bat's hole? Look at the image through the hole.

The rule (Novuss III.5) is about what shows through the bat's hole, so the geometric call from the bat's
fitted centre (``rules.novuss.Novuss.bat_zone_margin_mm``) is confirmed by the pixels: board points inside
the hole are projected into the image with the calibration's plane mapping and classified by colour as
line or board, against references sampled on the same zone line and on the bare board next to the bat.
The function needs only the image and the board->image mapping, not any detector's internals.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import cv2
import numpy as np

__all__ = ["HoleLook", "look_in_hole"]


@dataclass(frozen=True)
class HoleLook:
    """What the pixels inside the hole show: the share that has the line's colour, the share the
    geometry predicts for the fitted centre, and whether the two tell the same story."""

    line_share: float
    expected_share: float
    samples: int
    contrast: float  # colour distance between the line and board references (0: the check means nothing)
    px_across: float = 0.0  # the sampled inside of the hole, in image pixels

    @property
    def decisive(self) -> bool:
        """Enough pixels and contrast to tell line from board (at 1280x720 over a whole Novuss board a
        pixel is ~1.7 mm and the inside of a 12 mm hole is ~4 px: not decisive, the geometry decides)."""
        return self.contrast >= 25.0 and self.px_across >= 6.0

    @property
    def sees_line(self) -> bool:
        return self.line_share >= 0.08

    @property
    def agrees(self) -> bool | None:
        """Whether the pixels confirm the geometry (None: the look is not decisive)."""
        if not self.decisive:
            return None
        return self.sees_line == (self.expected_share >= 0.04)


def _band_share(pts: np.ndarray, line_y_mm: float, half_w_mm: float) -> float:
    return float(np.mean(np.abs(pts[:, 1] - line_y_mm) <= half_w_mm)) if len(pts) else 0.0


def look_in_hole(image: np.ndarray, to_image_px: Callable[[np.ndarray], np.ndarray], centre_mm: tuple[float, float],
                 hole_radius_mm: float, bat_radius_mm: float, line_y_mm: float, line_width_mm: float,
                 line_x_range_mm: tuple[float, float], step_mm: float = 0.5, rim_mm: float = 2.5) -> HoleLook:
    """Sample the image inside the hole of a disc resting at ``centre_mm`` (board mm).

    The zone line is the horizontal band ``y = line_y_mm +- line_width_mm/2`` for x in ``line_x_range_mm``;
    ``rim_mm`` keeps the samples off the hole's chamfer (a tilted view also hides a sliver of the hole).
    """
    img = image.astype(np.float32)
    r_in = max(hole_radius_mm - rim_mm, step_mm)
    g = np.arange(-r_in, r_in + 1e-9, step_mm)
    gx, gy = np.meshgrid(g, g)
    keep = np.hypot(gx, gy) <= r_in
    pts = np.stack([gx[keep] + centre_mm[0], gy[keep] + centre_mm[1]], axis=1)
    colours = _sample(img, to_image_px, pts)
    # references: the same line away from the bat, and the bare board beside the bat off the line
    xs = [x for x in np.arange(line_x_range_mm[0] + 10, line_x_range_mm[1] - 10, 5.0)
          if abs(x - centre_mm[0]) > bat_radius_mm + 25]
    line_pts = np.array([(x, line_y_mm + dy) for x in xs for dy in (-0.25 * line_width_mm, 0.0, 0.25 * line_width_mm)])
    ang = np.linspace(0, 2 * math.pi, 48, endpoint=False)
    ring = np.stack([centre_mm[0] + (bat_radius_mm + 8) * np.cos(ang), centre_mm[1] + (bat_radius_mm + 8) * np.sin(ang)], 1)
    ring = ring[np.abs(ring[:, 1] - line_y_mm) > line_width_mm + 3]
    if len(line_pts) == 0 or len(ring) == 0 or len(colours) == 0:
        return HoleLook(0.0, _band_share(pts, line_y_mm, line_width_mm / 2), len(colours), 0.0)
    line_ref = np.median(_sample(img, to_image_px, line_pts), axis=0)
    board_ref = np.median(_sample(img, to_image_px, ring), axis=0)
    # the hole's own wall shows where the view is tilted: the disc's colour, lit and in shade
    face_r = (hole_radius_mm + bat_radius_mm) / 2
    face = np.stack([centre_mm[0] + face_r * np.cos(ang), centre_mm[1] + face_r * np.sin(ang)], 1)
    disc_ref = np.median(_sample(img, to_image_px, face), axis=0)
    refs = np.stack([line_ref, board_ref, disc_ref, 0.6 * disc_ref, 0.35 * disc_ref])
    nearest = np.argmin(np.linalg.norm(colours[:, None, :] - refs[None], axis=2), axis=1)
    share = float(np.mean(nearest == 0))
    edge = np.asarray(to_image_px(np.array([[centre_mm[0] - r_in, centre_mm[1]], [centre_mm[0] + r_in, centre_mm[1]]])), float)
    return HoleLook(share, _band_share(pts, line_y_mm, line_width_mm / 2), len(colours),
                    float(np.linalg.norm(line_ref - board_ref)), float(np.hypot(*(edge[1] - edge[0]))))


def _sample(img: np.ndarray, to_image_px, pts_mm: np.ndarray) -> np.ndarray:
    px = np.asarray(to_image_px(np.asarray(pts_mm, np.float64)), np.float32).reshape(-1, 1, 2)
    h, w = img.shape[:2]
    inside = (px[:, 0, 0] >= 0) & (px[:, 0, 0] <= w - 1) & (px[:, 0, 1] >= 0) & (px[:, 0, 1] <= h - 1)
    px = px[inside]
    if len(px) == 0:
        return np.zeros((0, img.shape[2] if img.ndim == 3 else 1), np.float32)
    out = cv2.remap(img, px[:, :, 0].copy(), px[:, :, 1].copy(), cv2.INTER_LINEAR)
    return out.reshape(len(px), -1)
