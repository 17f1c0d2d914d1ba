"""The scenario library: name -> builder, for both games (``shotjudge sim GAME --list``).

A builder takes ``(profile, seed)`` and returns an :class:`~sim.session.Episode` whose premise it has
verified from the simulated events. Scripted cases do not depend on the seed except through the
Cvrnkaná ground; opening, random and whole-game scenarios draw everything from it.
"""
from __future__ import annotations

import math
import random

from . import scenarios_cvrnkana, scenarios_novuss
from .policy import CvrnkanaPolicy, NovussPolicy, play_cvrnkana_game, play_novuss_set
from .session import CvrnkanaSession, Episode, NovussSession, PremiseError, check

__all__ = ["SimError", "list_scenarios", "build", "SCENARIOS"]


class SimError(ValueError):
    """A scenario that does not exist or cannot be built."""


def _novuss_random(profile, seed):
    g = profile.geometry
    rng = random.Random(seed)
    h, r = g["surface_mm"] / 2, g["pawn_diameter_mm"] / 2
    pawns: dict[str, tuple[float, float]] = {}
    for pid in [f"{p}{i}" for p in "AB" for i in range(1, 9)]:
        while True:
            xy = (rng.uniform(-h + r, h - r), rng.uniform(-h + 130, h - 130))
            near_pocket = math.hypot(abs(xy[0]) - h, abs(xy[1]) - h) < g["pocket_radius_mm"] + r
            if not near_pocket and all(math.dist(xy, q) > 2 * r + 1 for q in pawns.values()):
                pawns[pid] = (round(xy[0], 2), round(xy[1], 2))
                break
    s = NovussSession(profile, seed)
    s.setup(pawns)
    bat, v = NovussPolicy(g, seed).choose(pawns, "A")
    s.place_bat(bat, "A")
    s.shoot("A", v)
    return Episode("novuss", "random", seed, s, {"pawns": len(pawns)})


def _novuss_set(profile, seed):
    s = play_novuss_set(profile, seed)
    check(s.over, f"set: not finished after {len(s.shots)} shots")
    return Episode("novuss", "set", seed, s, {"shots": len(s.shots), "outcome": s.state.outcome.to_dict()})


def _cvrnkana_random(profile, seed):
    rng = random.Random(seed)
    n = int(profile.geometry["marbles_per_player"])
    field: dict[str, tuple[float, float]] = {}
    for pid in [f"{p}{i}" for p in "AB" for i in range(1, 4)]:
        while True:
            a, d = rng.uniform(0, 2 * math.pi), rng.uniform(150, 600)
            xy = (round(d * math.cos(a), 2), round(d * math.sin(a), 2))
            if all(math.dist(xy, q) > 30 for q in field.values()):
                field[pid] = xy
                break
    s = CvrnkanaSession(profile, seed)
    s.setup_state(scenarios_cvrnkana.mid_game_state(profile, field))
    marble, at, v = CvrnkanaPolicy(profile.geometry, seed).choose(s, "A")
    s.flick("A", marble, v, at=at)
    return Episode("cvrnkana", "random", seed, s, {"on_field": len(field), "per_player": n})


def _cvrnkana_game(profile, seed):
    s = play_cvrnkana_game(profile, seed)
    check(s.over, f"game: not finished after {len(s.shots)} flicks")
    return Episode("cvrnkana", "game", seed, s, {"flicks": len(s.shots), "outcome": s.state.outcome.to_dict()})


SCENARIOS = {
    "novuss": {**scenarios_novuss.SCENARIOS,
               "random": (_novuss_random, "random pawn positions, A plays the policy's shot"),
               "set": (_novuss_set, "a whole set from the opening, both players driven by the policy")},
    "cvrnkana": {**scenarios_cvrnkana.SCENARIOS,
                 "random": (_cvrnkana_random, "random marbles near the pit, A flicks the one nearest the pit"),
                 "game": (_cvrnkana_game, "a whole game of flicks, both players driven by the policy")},
}


def list_scenarios(game: str) -> list[tuple[str, str]]:
    if game not in SCENARIOS:
        raise SimError(f"unknown game {game!r}: expected 'novuss' or 'cvrnkana'")
    return [(name, desc) for name, (_, desc) in SCENARIOS[game].items()]


def build(game: str, name: str, profile, seed: int) -> Episode:
    known = dict(list_scenarios(game))
    if name not in known:
        raise SimError(f"unknown {game} scenario {name!r} (known: {', '.join(known)})")
    try:
        return SCENARIOS[game][name][0](profile, seed)
    except PremiseError as exc:
        raise SimError(f"scenario {name!r} with seed {seed} did not show what it is meant to: {exc}") from None
