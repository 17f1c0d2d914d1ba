"""Manual fallback UI: click the four reference points in a window (thin wrapper over cv2.setMouseCallback).

Needs an OpenCV build with GUI support; the headless wheel has none, and then this says so. The maths
(``plane.from_points``) is the tested part; ``shotjudge calibrate --points`` takes the same points as text.
"""
from __future__ import annotations

import numpy as np

from .errors import CalibrationError

__all__ = ["click_points"]


def click_points(image: np.ndarray, names: list[str], window: str = "shotjudge: click the reference points"):
    """Show ``image`` and return one clicked pixel per name, in order (Esc cancels)."""
    import cv2

    points: list[tuple[float, float]] = []

    def on_mouse(event, x, y, flags, param):
        if event == cv2.EVENT_LBUTTONDOWN and len(points) < len(names):
            points.append((float(x), float(y)))

    try:
        cv2.namedWindow(window, cv2.WINDOW_NORMAL)
    except cv2.error:
        raise CalibrationError("this OpenCV has no window support (headless): give the points with --points") from None
    cv2.setMouseCallback(window, on_mouse)
    try:
        while len(points) < len(names):
            shown = image.copy()
            for p in points:
                cv2.circle(shown, (int(p[0]), int(p[1])), 6, (0, 0, 255), 2)
            cv2.putText(shown, f"click: {names[len(points)]}", (10, 30), cv2.FONT_HERSHEY_SIMPLEX, 0.8, (0, 0, 255), 2)
            cv2.imshow(window, shown)
            if cv2.waitKey(30) == 27:
                raise CalibrationError("point clicking cancelled")
    finally:
        cv2.destroyWindow(window)
    return np.array(points)
