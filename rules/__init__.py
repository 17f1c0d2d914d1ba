"""Rule engines for Novuss and Cvrnkaná: pure ``apply(state, shot) -> (state, ruling)``.

Standard library only. Pick a ruleset by name with :func:`engine_for`; geometry comes from the
table profile (``calibration.load_profile(...).geometry``).
"""
from __future__ import annotations

import importlib
from typing import Any, Mapping

from .base import GameOver, Ruleset
from .game import GAMES, Game, game_for
from .record import Event, Kind, RecordError, Shot, ShotRecord, load_records, parse_record
from .ruling import CODES, Action, Call, Outcome, Ruling

__all__ = ["engine_for", "RulesetError", "RULESETS", "Ruleset", "Shot", "ShotRecord", "Event", "Kind", "Game", "GAMES", "game_for", "Ruling", "Call", "Action", "Outcome",
           "RecordError", "GameOver", "parse_record", "load_records", "CODES"]

#: ruleset name -> "module:Class"; variants are subclasses picked by name.
RULESETS = {
    "novuss": "rules.novuss:Novuss",
    "novuss-seed": "rules.novuss:NovussSeed",
    "cvrnkana": "rules.cvrnkana:Cvrnkana",
}


class RulesetError(ValueError):
    """A ruleset name that is not known, or a ruleset of another game than the one asked for."""


def engine_for(name: str, geometry: Mapping[str, Any], game: str | None = None, **options: Any) -> Ruleset[Any]:
    """A ruleset instance by name (``novuss``, ``novuss-seed``, ``cvrnkana``); ``game``: the game it must be for."""
    if name not in RULESETS:
        raise RulesetError(f"unknown ruleset {name!r} (known: {', '.join(RULESETS)})")
    module, cls = RULESETS[name].split(":")
    kind = getattr(importlib.import_module(module), cls)
    if game is not None and kind.game != game:
        raise RulesetError(f"ruleset {name!r} is for {kind.game}, not {game}")
    engine: Ruleset[Any] = kind(geometry, **options)
    return engine
