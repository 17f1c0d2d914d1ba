"""Draw the calibrated board back onto a camera image, so a person sees at a glance that it fits."""
from __future__ import annotations

import cv2
import numpy as np

from .calfile import Calibration
from .landmarks import drawing_mm

__all__ = ["draw_overlay"]

_COLOURS = {"outline": (0, 255, 255), "zone": (255, 128, 0), "circle": (255, 0, 255), "line": (0, 200, 0),
            "pocket": (0, 128, 255), "marker": (0, 0, 255)}


def draw_overlay(image: np.ndarray, calibration: Calibration, thickness: int = 2) -> np.ndarray:
    """A copy of ``image`` (BGR) with outline, zones, circle, lines, pockets and markers drawn through the
    calibration (distortion included), and the plane residual written in a corner."""
    out = image.copy() if image.ndim == 3 else cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    w, h = calibration.plane.image_size
    for kind, poly_mm, closed in drawing_mm(calibration.profile):
        px = calibration.plane.to_image_px(poly_mm)
        ok = np.all(np.isfinite(px), axis=1) & (np.abs(px[:, 0]) < 4 * w) & (np.abs(px[:, 1]) < 4 * h)
        if ok.sum() < 2:
            continue
        pts = np.round(px[ok] * 16).astype(np.int32).reshape(-1, 1, 2)
        cv2.polylines(out, [pts], closed and bool(ok.all()), _COLOURS[kind], thickness, cv2.LINE_AA, 4)
    text = (f"{calibration.profile.name}: residual {calibration.rms_mm:.2f} mm rms, {calibration.max_mm:.2f} mm max "
            f"({calibration.method}, {calibration.points} points)")
    (tw, th), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, 0.6, 1)
    cv2.rectangle(out, (4, 4), (16 + tw, 32), (0, 0, 0), -1)
    cv2.putText(out, text, (10, 24), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (255, 255, 255), 1, cv2.LINE_AA)
    return out
