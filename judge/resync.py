"""Vision and the game state parted (a refused shot, a state the referee set): where vision starts again.

The pieces are where vision sees them now; their names are the game state's. A piece both have keeps
vision's place under its name. A piece vision holds that the state does not have on the surface (vision
thought it pocketed twice, misnamed one) and a piece the state has that vision lost are paired within
one player's pieces, nearest first, and the pair takes vision's place and the state's name. What the
state has and vision does not see stays at the state's place (vision then finds it there or flags it
lost, with evidence); what vision sees and the state does not have is left unnamed (a spare, if it is
one). Nothing is guessed beyond that: the next shot is judged from this layout, and the refused one
stays with the referee.
"""
from __future__ import annotations

import math
from dataclasses import replace
from typing import Mapping

from rules.game import game_class
from rules.hints import Hints

__all__ = ["resync_layout", "resync_hints"]

Layout = Mapping[str, tuple[float, float]]


def resync_layout(seen: Layout, state: Layout, game: str) -> dict[str, tuple[float, float]]:
    """The layout (id -> board mm) to start vision from, given what it tracks now (``seen``) and where the
    game state has the pieces (``state``)."""
    spec = game_class(game)
    ids = set(spec.piece_ids())
    seen = {p: (float(x), float(y)) for p, (x, y) in seen.items() if p in ids}
    out = {p: seen.get(p, (float(xy[0]), float(xy[1]))) for p, xy in state.items()}
    orphans = [p for p in seen if p not in state]
    lost = [p for p in state if p not in seen]
    pairs = sorted((math.dist(seen[o], state[m]), o, m) for o in orphans for m in lost
                   if spec.kind_of(o) == spec.kind_of(m))
    used: set[str] = set()
    for _, o, m in pairs:
        if o in used or m in used:
            continue
        used.update((o, m))
        out[m] = seen[o]
    return out


def resync_hints(hints: Hints, seen: Layout, game: str) -> Hints:
    """``hints`` with the layout vision starts again from (see :func:`resync_layout`)."""
    return replace(hints, layout=resync_layout(seen, hints.layout, game))
