"""A piece whose colour is not known yet, measured where it is put down once it lies still.

The Novuss bat (:mod:`vision.bat_search`) and a Cvrnkaná player's marbles (:mod:`vision.marble_search`) may be
of any colour: they are found by their shape first, and their colour is measured once one has lain where it
was found, with no hand over any of it, for ``still_frames`` frames (the median of what was measured there).
A hand placing a piece can leave its outline sharp while fingers cover part of the top face: measured then,
the colour would be the hand's and the piece's mixed, and the piece would not be recognised again (#16: the
independent renderer's gap clip 4, the bat lost for the whole stroke).
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

__all__ = ["PutDown"]


class PutDown:
    """``seen(centre_mm, colour, frame)`` for each sighting of the unknown-coloured piece; ``settled(dets,
    frame)``: the colour to learn once it lies still (or None)."""

    def __init__(self, rest_mm: float = 1.0, still_frames: int = 2):
        self.rest_mm, self.still_frames = float(rest_mm), int(still_frames)
        # where the unknown-coloured piece lies, its colours measured there, the frame it was first found there
        self._pending: tuple[tuple[float, float], list[np.ndarray], int] | None = None

    def seen(self, centre_mm, colour: np.ndarray, frame: int) -> None:
        if self._pending is None or math.dist(self._pending[0], centre_mm) > self.rest_mm:
            self._pending = ((float(centre_mm[0]), float(centre_mm[1])), [np.asarray(colour).copy()], int(frame))
        else:
            self._pending[1].append(np.asarray(colour).copy())

    def settled(self, found, frame: int, covered: Callable[[tuple[float, float]], bool] = lambda at: False) -> np.ndarray | None:
        """The colour measured on the unknown-coloured piece (the median of what was measured there) once one of
        this frame's detections of its class (``found``) has lain where it was found that long, with nothing
        over it (``covered(centre_mm)``: a hand over it this frame); the search is then over."""
        if self._pending is None:
            return None
        at, colours, first = self._pending
        if covered(at):  # a hand still placing it: measure again once it has left
            self._pending = None
            return None
        if frame <= first:
            return None
        if any(math.dist(d.centre_mm, at) <= self.rest_mm for d in found):
            if frame - first + 1 < self.still_frames:  # (a still blob keeps its fit: frames, not new measurements)
                return None
            self._pending = None
            return np.median(np.stack(colours), axis=0)
        if not found:
            self._pending = None
        return None
