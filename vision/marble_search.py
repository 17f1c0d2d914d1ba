"""Finding a player's marbles before their colour is known: only the player to move puts one in play.

The colour of the marbles on the field is measured where the game state puts them (``learn_colours``); a
player whose marbles are all behind the start line, out of the camera's view (the opening flick, or a last
marble flicked in from afar), has only the profile's nominal colour, and a club's marbles may be of any
colour. Under blue and green marbles the opening marble was never found and a flick rolled in unseen (#16,
the harsher simulator's pawns-blue-green: the opening missed, a last flick judged as a touch of the marble it
struck). So, as the Novuss bat is found by its size (:mod:`vision.bat_search`): until the marbles of the
player to move have been seen here, a sharp disc of a marble's size on the field, of a colour no class
claims and unlike the ground's, is that player's marble, whatever its colour; its colour is learnt once it
has lain still (:class:`vision.put_down.PutDown`). An opponent's marble it knocks has a colour measured on
the field, or the other player's nominal one: the search names only the mover's.
"""
from __future__ import annotations

from .put_down import PutDown

__all__ = ["MarbleSearch"]


class MarbleSearch(PutDown):
    """``turn(player)``: who is to move (None: not known); ``wanted(colour_source)``: the class looked for
    (the mover's marbles while their colour has not been seen on this camera) or None."""

    def __init__(self, spec, rest_mm: float = 1.0, still_frames: int = 3):
        super().__init__(rest_mm, still_frames)
        # a game whose players flick their own pieces (no striker) and whose pieces are marbles
        self.kind = spec.piece_kind if spec.striker is None and spec.piece_kind == "marble" else None
        self.player: str | None = None

    def turn(self, player: str | None) -> None:
        if player != self.player:
            self._pending = None
        self.player = player

    def wanted(self, colour_source) -> tuple[str, str] | None:
        """The mover's marble class while its colour is only the profile's (source ``appearance``, or none)."""
        if self.kind is None or self.player is None:
            return None
        cls = (self.kind, self.player)
        return cls if colour_source.get(cls, "appearance") == "appearance" else None
