"""The placement assistant on the live video: each target spot as a ring of its piece's size, coloured by
its status, with a short label, the headline at the top and, while pieces go back to where they stood
(returns), the last picture of the board at rest before the shot faintly underneath, so the referee sees
where every piece was.

Board millimetres become pixels through the calibration (``judge.replay_draw.Board``), as every other mark
on the video. Labels are ASCII (OpenCV's fonts); the headline goes through ``judge.textdraw`` (any language).
"""
from __future__ import annotations

import numpy as np

from .placement import PlacementStatus
from .replay_draw import Board

__all__ = ["PlacementView", "COLOURS"]

#: BGR per status: waiting white, off orange-red, placed green, outside the view grey
COLOURS = {"waiting": (255, 255, 255), "off": (40, 90, 255), "placed": (80, 220, 60), "unseen": (160, 160, 160)}
#: how strongly the picture before the shot shows through while pieces are being returned
BEFORE_OPACITY = 0.3


class PlacementView:
    """Draws a :class:`PlacementStatus` on frames of one calibrated camera."""

    def __init__(self, calibration, before_opacity: float = BEFORE_OPACITY):
        self.board = Board(calibration)
        self.before_opacity = float(before_opacity)

    def draw(self, image: np.ndarray, status: PlacementStatus | None, before: np.ndarray | None = None) -> np.ndarray:
        """A copy of ``image`` with ``status`` drawn on it; ``before`` (the board at rest before the shot, same
        size) blended in underneath. Without a status the image is returned as it is."""
        import cv2

        if status is None:
            return image
        if before is not None and before.shape == image.shape:  # a new array either way: the input stays as it was
            out = cv2.addWeighted(before, self.before_opacity, image, 1.0 - self.before_opacity, 0.0)
        else:
            out = np.array(image, copy=True)
        scale = max(1.0, out.shape[1] / 1280.0)
        thick = max(1, int(round(2 * scale)))
        for p in status.pieces:
            t = p.target
            centre = self.board.px([t.at_mm])[0]
            if not np.all(np.isfinite(centre)):
                continue
            r_px = max(3, int(round(t.radius_mm * self.board.px_per_mm(t.at_mm))))
            c = (int(round(centre[0])), int(round(centre[1])))
            colour = COLOURS[p.state]
            cv2.circle(out, c, r_px, colour, thick, cv2.LINE_AA)
            cv2.drawMarker(out, c, colour, cv2.MARKER_CROSS, max(6, r_px // 2), 1, cv2.LINE_AA)
            label = t.piece if p.off_mm is None else f"{t.piece} {p.off_mm:.1f} mm"
            cv2.putText(out, label, (c[0] + r_px + 3, c[1] + 4), cv2.FONT_HERSHEY_SIMPLEX, 0.45 * scale, colour,
                        thick, cv2.LINE_AA)
        from .textdraw import draw_lines

        head = COLOURS["placed"] if status.done else COLOURS["off"]
        lines = [(status.text, head)] + [(p.text, COLOURS[p.state]) for p in status.pieces if p.state != "placed"]
        return draw_lines(out, lines[:4], (int(10 * scale), int(10 * scale)), int(16 * scale),
                          max_width=out.shape[1] - int(20 * scale))
