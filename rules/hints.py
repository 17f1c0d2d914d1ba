"""What the game state tells vision before the next shot: a frozen value, built by the ruleset.

Vision sees the surface; the rules know what it cannot see. After every judged shot (and every
referee action) the judge hands vision ``Ruleset.hints(state, ruling)``: who is to move, where the
state has each piece, which pieces are about to be put down by hand (penalty pawns, returned
marbles) and, where the camera does not see the whole field, which ids may still come into play.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from .ruling import Ruling

__all__ = ["Hints", "PLACED"]

Point = tuple[float, float]

#: the ruling actions after which a piece is put down by hand at a known place
PLACED = ("place_penalty", "return")


@dataclass(frozen=True)
class Hints:
    """``layout``: every piece the state has on the surface at a known place (board mm);
    ``placements``: pieces the ruling has the referee put down, and where; ``spares``: the ids that may
    still come into play, in order of preference (None: every id not in the layout); ``behind``: those of
    them still behind the start lines."""

    player: str | None
    layout: Mapping[str, Point] = field(default_factory=dict)
    placements: Mapping[str, Point] = field(default_factory=dict)
    spares: tuple[str, ...] | None = None
    behind: tuple[str, ...] = ()


def placements_of(ruling: Ruling | None) -> dict[str, Point]:
    """The pieces a ruling has put down by hand at a known place: ``{piece: (x_mm, y_mm)}``."""
    if ruling is None:
        return {}
    return {a.piece: (float(a.at[0]), float(a.at[1])) for a in ruling.actions
            if a.kind in PLACED and a.piece and a.at is not None}
