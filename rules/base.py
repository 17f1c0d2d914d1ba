"""What every ruleset shares: pure ``apply(state, shot) -> (state, ruling)`` and replay as a fold."""
from __future__ import annotations

from typing import Any, ClassVar, Generic, Iterable, Mapping, Self, TypeVar

from .hints import Hints
from .record import RecordError, Shot
from .ruling import Ruling

__all__ = ["Ruleset", "GameOver"]

#: the state type of a ruleset (``NovussState``, ``CvrnkanaState``): a frozen value
S = TypeVar("S")


class GameOver(RecordError):
    """A shot record after the game has ended."""


class Ruleset(Generic[S]):
    """Base of the game rulesets. Subclasses set ``game``, ``name`` and class-level option flags.

    Options are class attributes listed in ``OPTIONS``; a house rule is a subclass or a keyword
    to ``__init__`` that overrides one of them. ``geometry`` is the profile's geometry mapping:
    every distance a call depends on comes from it. ``Ruleset[S]`` is a ruleset whose states are ``S``.
    """

    game: ClassVar[str] = ""
    name: ClassVar[str] = ""
    OPTIONS: ClassVar[tuple[str, ...]] = ()
    #: calls the referee may decide where the camera could not: code -> the values (a ``Shot.referee`` item
    #: ``{"code", "value"}`` then replaces what vision timed or measured); none by default
    DECISIONS: ClassVar[Mapping[str, tuple[str, ...]]] = {}

    def __init__(self, geometry: Mapping[str, Any], **options: Any) -> None:
        self.geometry: dict[str, float] = dict(geometry)
        for key, value in options.items():
            if key not in self.OPTIONS:
                raise ValueError(f"{self.name}: unknown option {key!r} (known: {', '.join(self.OPTIONS)})")
            setattr(self, key, value)

    def options(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.OPTIONS}

    def initial(self, *args: Any, **kwargs: Any) -> S:
        """The state a game starts from (each ruleset names its own arguments)."""
        raise NotImplementedError

    def apply(self, state: S, shot: Shot) -> tuple[S, Ruling]:
        raise NotImplementedError

    def state_from_dict(self, data: Mapping[str, Any], where: str = "state") -> S:
        """The state a document (``state.to_dict()`` form) describes; anything wrong is a
        ``rules.state_doc.StateError`` naming ``where`` and the field."""
        raise NotImplementedError

    def next_game(self, state: S, shot: Shot | None, game_no: int) -> S:
        """The state game ``game_no`` starts from when ``shot`` is played after ``state``'s game ended
        (``shot`` None: the referee starts it before any stroke)."""
        raise NotImplementedError

    def hints(self, state: S, ruling: Ruling | None = None) -> Hints:
        """What vision must know of ``state`` before the next shot (after ``ruling``, if one was just made)."""
        raise NotImplementedError

    def field_limit_mm(self) -> float:
        """How far from the centre a piece on this surface can lie at all (``Game.field_limit_mm``)."""
        from .game import game_for

        return game_for(self.game, self.geometry).field_limit_mm

    def check_places(self, shot: Shot, where: str) -> None:
        """Every place in the record lies on the surface (``Game.field_limit_mm``): a pawn at 1e300 mm or
        99,999 mm with no off event is a measurement gone wrong, refused as a record error."""
        limit = self.field_limit_mm()
        for part, places in (("before", shot.before), ("after", shot.after)):
            for piece, (x, y) in places.items():
                if abs(x) > limit or abs(y) > limit:
                    raise RecordError(f"{where}: {part}.{piece}: ({x:.6g}, {y:.6g}) mm is off the {self.game} surface "
                                      f"(at most {limit:g} mm from its centre)")

    def told(self, shot: Shot) -> Self:
        """This ruleset told how well ``shot``'s positions are known (``meta.position_tolerance_mm``): a
        geometric call closer than that goes to the referee. The same ruleset when it has no such option."""
        tol = shot.meta.get("position_tolerance_mm")
        if tol is None or "position_tolerance_mm" not in self.OPTIONS:
            return self
        return type(self)(self.geometry, **{**self.options(), "position_tolerance_mm": float(tol)})

    def replay(self, records: Iterable[Shot], state: S | None = None) -> tuple[S, list[Ruling]]:
        """Fold the records over the state: returns (final state, rulings). Undo is replay of a prefix."""
        state = self.initial() if state is None else state
        rulings: list[Ruling] = []
        for shot in records:
            state, ruling = self.apply(state, shot)
            rulings.append(ruling)
        return state, rulings
