"""What every ruleset shares: pure ``apply(state, shot) -> (state, ruling)`` and replay as a fold."""
from __future__ import annotations

from typing import Any, ClassVar, Iterable, Mapping

from .record import RecordError, ShotRecord

__all__ = ["Ruleset", "GameOver"]


class GameOver(RecordError):
    """A shot record after the game has ended."""


class Ruleset:
    """Base of the game rulesets. Subclasses set ``game``, ``name`` and class-level option flags.

    Options are class attributes listed in ``OPTIONS``; a house rule is a subclass or a keyword
    to ``__init__`` that overrides one of them. ``geometry`` is the profile's geometry mapping:
    every distance a call depends on comes from it.
    """

    game: ClassVar[str] = ""
    name: ClassVar[str] = ""
    OPTIONS: ClassVar[tuple[str, ...]] = ()

    def __init__(self, geometry: Mapping[str, Any], **options: Any):
        self.geometry = dict(geometry)
        for key, value in options.items():
            if key not in self.OPTIONS:
                raise ValueError(f"{self.name}: unknown option {key!r} (known: {', '.join(self.OPTIONS)})")
            setattr(self, key, value)

    def options(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.OPTIONS}

    def initial(self, **kwargs: Any):
        raise NotImplementedError

    def apply(self, state, shot: ShotRecord):
        raise NotImplementedError

    def state_from_dict(self, data: Mapping[str, Any]):
        raise NotImplementedError

    def replay(self, records: Iterable[ShotRecord], state=None):
        """Fold the records over the state: returns (final state, rulings). Undo is replay of a prefix."""
        state = self.initial() if state is None else state
        rulings = []
        for shot in records:
            state, ruling = self.apply(state, shot)
            rulings.append(ruling)
        return state, rulings
