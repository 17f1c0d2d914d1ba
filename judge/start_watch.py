"""The first moments of a source: a shot already under way when the video begins is said, not lost silently.

A clip cut on the stroke, as one cut for a dispute often is, shows pieces already on their way: vision opens a
shot for them (flagged: the stroke was not seen). Until vision has seen a shot begin, this watches the pieces
the start state has on the surface: one seen well away from where the state puts it for ``confirm_s`` while
vision sees no shot (a piece that did not travel on: the start state is not the board's, or the video began
as the shot ended) is told to the referee once, with the pieces and how far they lie off; nothing is guessed.
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

    def __init__(self, moved_mm: float = MOVED_MM, confirm_s: float = 0.15):
        self.moved_mm = moved_mm
        self.confirm_s = confirm_s  # how long pieces lie off with no shot before the note (vision opens one sooner)
        self._layout: dict[str, tuple[float, float]] | None = None
        self._since: float | None = None  # when pieces were first found off, with no shot seen since
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
            self._since = None
            return None
        if self._since is None:
            self._since = t_s
        if t_s - self._since < self.confirm_s - 1e-9:
            return None
        self.done = True
        pieces = ", ".join(f"{p} {mm:.0f} mm" for p, mm in sorted(moved.items()))
        return _("at {t} s of the video pieces had moved with no shot seen ({pieces}): the video began during a shot "
                 "(or the start state is not the board's); that shot is not judged, the referee decides it").format(
            t=f"{self._since:.2f}", pieces=pieces)
