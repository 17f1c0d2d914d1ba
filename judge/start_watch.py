"""The first moments of a source: a shot already under way when the video begins is said, not lost silently.

Vision needs to see a stroke begin (the Novuss bat leaving its rest, a marble set off) to judge it, so a clip
cut on the stroke, as one cut for a dispute often is, gives no shot for that stroke. Until vision has seen
a shot begin, this watches the pieces the start state has on the surface: one seen well away from where the
state puts it, while vision sees no shot, means the video began during a shot (or the start state is not
the board's). The referee is told once, with the pieces and how far they moved; nothing is guessed.
"""
from __future__ import annotations

import math
from typing import Mapping

from .i18n import _

__all__ = ["StartWatch"]

#: a piece this far from where the state has it moved (the tracker's noise is under a millimetre)
MOVED_MM = 10.0


class StartWatch:
    """Settings in ``__init__``; ``begin`` with the state's layout at the first frame, then ``check`` each frame
    until it returns the note (once) or vision opens its first shot."""

    def __init__(self, moved_mm: float = MOVED_MM):
        self.moved_mm = moved_mm
        self._layout: dict[str, tuple[float, float]] | None = None
        self.done = False  # the note was given, or vision saw a shot begin: nothing more to watch

    def begin(self, layout: Mapping[str, tuple[float, float]]) -> None:
        if self._layout is None:
            self._layout = {p: (float(x), float(y)) for p, (x, y) in layout.items()}

    def check(self, positions: Mapping[str, tuple[float, float]], in_shot: bool, t_s: float) -> str | None:
        """The note for the referee the first time pieces are found moved with no shot seen, else None."""
        if self.done or self._layout is None:
            return None
        if in_shot:  # vision saw a shot begin: from here on it judges what it sees
            self.done = True
            return None
        away = {p: math.dist(xy, self._layout[p]) for p, xy in positions.items() if p in self._layout}
        moved = {p: mm for p, mm in away.items() if mm > self.moved_mm}
        if not moved:
            return None
        self.done = True
        pieces = ", ".join(f"{p} {mm:.0f} mm" for p, mm in sorted(moved.items()))
        return _("at {t} s of the video pieces had moved with no shot seen ({pieces}): the video began during a shot "
                 "(or the start state is not the board's); that shot is not judged, the referee decides it").format(
            t=f"{t_s:.2f}", pieces=pieces)
