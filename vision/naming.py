"""Who a new or returning detection is: the tracker's names for pieces it did not follow into view.

A detection no live track explains, once believed (``Tracker.hit_min`` frames), is named here, in this
order: a marble that just rolled over the pit and out (``hopped_pit``: the same marble), a piece put down
where a ruling said (``Roster.expected_for``), then ``Roster.spare_id``: a Cvrnkaná marble rolling in from
the start lines (one still behind them), one of the owner's marbles the game state has outside the view
whose place its path comes from, any spare id of its class, and the one bat. The ``Roster`` holds what
the game state told the tracker: the ids that may still appear and where it has pieces it cannot see.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Mapping

import numpy as np

from rules.game import PLAYERS, Game, game_class

from .types import Detection, VisionError

if TYPE_CHECKING:
    from .tracker import _Live

__all__ = ["piece_kind", "Roster", "hopped_pit", "came_from_line", "from_start_lines"]


def piece_kind(game: str | type[Game], piece: str) -> tuple[str, str | None]:
    """(kind, owner) of a piece id, from the game (``rules.game``): Novuss ``bat`` / ``A3`` pawns,
    Cvrnkaná ``B12`` marbles. A ``VisionError`` for an id no game has."""
    if piece != "bat" and (piece[:1] not in PLAYERS or not piece[1:].isdigit()):
        raise VisionError(f"unknown piece id {piece!r}")
    return (game_class(game) if isinstance(game, str) else game).kind_of(piece)


@dataclass
class Roster:
    """What the game state told the tracker about pieces it does not follow: the ids that may still appear
    (``spares``, in order of preference), the Cvrnkaná marbles behind the start lines (``behind``: they may
    roll in; ``sent_back``: the state has them there, a hand takes them), the pieces a hand is about to put
    down (``expected``) and those on the surface outside the view (``off_view``)."""

    game: type[Game]
    spares: list[str] = field(default_factory=list)
    behind: set[str] = field(default_factory=set)
    sent_back: set[str] = field(default_factory=set)
    expected: dict[str, tuple[float, float]] = field(default_factory=dict)
    off_view: dict[str, tuple[float, float]] = field(default_factory=dict)

    def kind_of(self, piece: str) -> tuple[str, str | None]:
        return piece_kind(self.game, piece)

    def take(self, piece: str) -> None:
        """``piece`` is on the surface again: it is no longer a spare id."""
        if piece in self.spares:
            self.spares.remove(piece)

    def expected_for(self, d: Detection, gate_margin_mm: float, reach_mm: float | None = None) -> str | None:
        """The expected placement of ``d``'s class nearest to it, within ``reach_mm`` (default: two radii
        plus ``gate_margin_mm``)."""
        best = None
        for piece, xy in self.expected.items():
            if self.kind_of(piece) != d.cls:
                continue
            gap = math.dist(xy, d.centre_mm)
            reach = 2.0 * d.radius_mm + gate_margin_mm if reach_mm is None else reach_mm
            if gap <= reach and (best is None or gap < best[0]):
                best = (gap, piece)
        return best[1] if best else None

    def _from_off_view(self, piece: str) -> str:
        del self.off_view[piece]
        self.take(piece)
        return piece

    def spare_id(self, d: Detection, first: Detection | None, live: Mapping[str, object],
                 off_view_reach_mm: float) -> str | None:
        """The id a newcomer first seen at ``first`` and now at ``d`` takes (and is taken off the roster),
        or None when no id fits. ``live``: the pieces tracked now."""
        if from_start_lines(first, d):
            # rule 2: a player flicks every marble from the start line before any on the field, so one rolling
            # in from the lines' side while its owner still has marbles there is one of those, even when a
            # field marble lies out of view on its way
            for piece in self.spares:
                if piece in self.behind and self.kind_of(piece) == d.cls:
                    self.spares.remove(piece)
                    self.behind.discard(piece)
                    return piece
        # out-of-view pieces of its class whose place its path comes from, nearest first: one within reach
        # before any spare id; failing every spare, one from farther off (a field marble flicked in from 3 m)
        came = sorted((math.dist(xy, d.centre_mm), p) for p, xy in self.off_view.items()
                      if self.kind_of(p) == d.cls and p not in live
                      and came_from_line(first, d, xy))
        if came and came[0][0] <= off_view_reach_mm:
            return self._from_off_view(came[0][1])
        for piece in self.spares:
            if self.kind_of(piece) == d.cls:
                self.spares.remove(piece)
                return piece
        if came:
            return self._from_off_view(came[0][1])
        if d.cls == ("bat", None) and "bat" not in live:
            return "bat"  # there is one bat: a bat seen while none is tracked is it, whatever it left as
        return None


def hopped_pit(gone: Mapping[str, _Live], d: Detection, first: Detection | None, game: type[Game],
               gate_margin_mm: float, within_s: float = 0.4, min_speed_mm_s: float = 300.0) -> str | None:
    """A marble called into the pit moments ago (among the ended tracks ``gone``) whose straight path, run
    on to this newcomer's first sighting, meets it: it rolled over the hollow (out of sight in it) and out
    the far side."""
    f = first or d
    for piece, g in gone.items():
        speed = float(np.hypot(*g.vel))
        dt = f.t_s - (g.left_t_s or 0.0)
        if g.left != "pit" or g.left_where == "hand" or speed < min_speed_mm_s or not 0.0 < dt <= within_s \
                or piece_kind(game, piece) != d.cls:
            continue
        if math.dist(g.pos + g.vel * dt, f.centre_mm) <= gate_margin_mm + 0.25 * speed * dt:
            return piece
    return None


def came_from_line(first: Detection | None, d: Detection, xy, step_mm: float = 10.0) -> bool:
    """Whether a piece first seen at ``first`` and now at ``d`` can have set off from ``xy``: a moving
    newcomer's path run backwards must pass over that place (within a few radii, more the further back);
    one that hardly moved (put down by hand) may have come from anywhere near."""
    if first is None:
        return True
    a, b, c = np.asarray(first.centre_mm, float), np.asarray(d.centre_mm, float), np.asarray(xy, float)
    travel = b - a
    run = float(np.hypot(*travel))
    if run < step_mm:
        return True
    u = travel / run
    back = float((a - c) @ u)  # how far before the first sighting the place lies along the path
    if back < -2.0 * d.radius_mm:
        return False  # the place is ahead of the piece, not behind it
    off = abs(float((c - a)[0] * u[1] - (c - a)[1] * u[0]))
    return off <= 3.0 * d.radius_mm + 0.05 * max(back, 0.0)


def from_start_lines(first: Detection | None, d: Detection, step_mm: float = 10.0) -> bool:
    """Whether a newcomer rolled in heading away from the Cvrnkaná start lines (towards +y, within 45°)."""
    if first is None:
        return False
    dx, dy = d.centre_mm[0] - first.centre_mm[0], d.centre_mm[1] - first.centre_mm[1]
    run = math.hypot(dx, dy)
    return run >= step_mm and dy >= 0.7 * run
