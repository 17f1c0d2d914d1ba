"""When each row of a picture was taken: a rolling shutter.

A rolling-shutter sensor (the Pi Camera Module 3, most webcams) reads its rows one after another over
its readout time, ~15 ms top to bottom on a Module 3: a pawn low in the picture is seen up to that much
later than one high in it. Two contacts 3 ms apart at opposite ends of the board can swap order if
every sighting is dated at the frame's time. ``RowClock`` dates each sighting by its row: the frame's time
belongs to the middle row (a constant offset changes no order and no interval), a row ``v`` px down is read
``readout_s * (v / (height - 1) - 0.5)`` after it. A negative readout reads bottom to top (a picture
flipped upside down after the sensor). A global shutter (the Pi Global Shutter Camera) has 0: nothing
changes.
"""
from __future__ import annotations

import math
from dataclasses import replace

from .types import Detections, VisionError

__all__ = ["RowClock"]


class RowClock:
    """Stamps each detection with when its row was read (``Detection.row_after_s``)."""

    def __init__(self, readout_s: float, height_px: int):
        if not math.isfinite(readout_s) or abs(readout_s) >= 1.0:
            raise VisionError(f"rolling shutter: the readout time must be under a second, got {readout_s!r} s")
        if int(height_px) < 2:
            raise VisionError(f"rolling shutter: the picture must be at least 2 rows high, got {height_px!r}")
        self.readout_s, self.height_px = float(readout_s), int(height_px)

    def __call__(self, dets: Detections) -> Detections:
        if self.readout_s == 0.0:
            return dets
        per_row = self.readout_s / (self.height_px - 1)
        items = tuple(d if d.centre_px is None or d.is_occluder
                      else replace(d, row_after_s=per_row * float(d.centre_px[1]) - 0.5 * self.readout_s)
                      for d in dets.items)
        return Detections(dets.frame, dets.t_s, items)
