"""A piece seen at rest stays that piece while its shape is there, whatever its colour drifts to.

Colour tells the players apart, but on a small, dark piece in dim light a webcam's codec (its chroma at a
quarter of the pixels, smeared with the board's) and the noise move the measured colour by as much as two
classes lie apart: a marble that was named on one frame matches neither class well enough on the next, and
the detector would drop it while its outline is plainly there (#16: a green marble in a 0.3 light lost on
102 of 104 frames). :class:`RestHold` keeps the class each piece was last found under where it was found; a
well-fitted outline that no colour class claims, found within a fraction of a radius of such a place (the
piece has not moved), takes that class. A place is forgotten once no piece has been found there for
``keep_s``: the shape is gone (moved, pocketed, under a hand), and a piece put down there later is named by
its colour again.
"""
from __future__ import annotations

import math
from typing import Callable, Sequence

__all__ = ["RestHold"]


class RestHold:
    """Where each class's pieces were last found (``claim`` lends the class, ``update`` records a frame)."""

    def __init__(self, radius_mm: Callable[[str], float], near_share: float = 0.25, keep_s: float = 1.0):
        self.radius_mm, self.near_share, self.keep_s = radius_mm, float(near_share), float(keep_s)
        # (centre, class, t_s last found)
        self._places: list[tuple[tuple[float, float], tuple[str, str | None], float]] = []

    def claim(self, centres_mm: Sequence, classes: list, kinds: Sequence[str]) -> list[int]:
        """Give each unclassified fit (``classes[j]`` None, ``centres_mm[j]`` not None, fitted as a piece of
        ``kinds[j]``) the class last found where it lies, if any; returns the indices given one."""
        given = []
        for j, (c, cls) in enumerate(zip(centres_mm, classes)):
            if c is None or cls is not None:
                continue
            best = None
            for at, held, _ in self._places:
                if held[0] != kinds[j]:
                    continue
                d = math.dist(at, (float(c[0]), float(c[1])))
                if d <= self.near_share * self.radius_mm(held[0]) and (best is None or d < best[0]):
                    best = (d, held)
            if best is not None:
                classes[j] = best[1]
                given.append(j)
        return given

    def places(self) -> list[tuple[tuple[float, float], str]]:
        """(board mm centre, kind) of every place a piece was found lately. The empty board's upkeep keeps
        off them (a faint piece blended into the empty board would vanish for good)."""
        return [(at, cls[0]) for at, cls, _ in self._places]

    def update(self, found: Sequence, t_s: float) -> None:
        """Record a frame's pieces (``(kind, owner, centre_mm, sharp)``): each piece's place replaces those
        within a fraction of a radius of it (whichever class stood there); a new place needs a ``sharp`` fit
        (a board's texture can fit a faint disc once, and held it would stay); places unseen for ``keep_s``
        are dropped."""
        places = [p for p in self._places if t_s - p[2] <= self.keep_s]
        fresh = []
        for kind, who, c, sharp in found:
            at = (float(c[0]), float(c[1]))
            near = self.near_share * self.radius_mm(kind)
            here = [math.dist(p[0], at) <= near for p in places]  # whoever stood there, this piece does now
            kept = any(h and p[1] == (kind, who) for h, p in zip(here, places))
            places = [p for h, p in zip(here, places) if not h]
            if sharp or kept:  # a place is made by a whole, sharp outline; a fainter one only keeps it
                fresh.append((at, (kind, who), t_s))
        self._places = places + fresh
