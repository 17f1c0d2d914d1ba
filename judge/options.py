"""Option values checked where they enter: a frame rate, a count, a port. Each bad value is one argparse
line naming the option and what it must be (exit 2), never a silent zero or a traceback later."""
from __future__ import annotations

import argparse
import math
from typing import Any, Callable

from .errors import UserError

__all__ = ["frame_rate", "count", "port", "add_games_arg", "match_games", "MAX_FPS"]

MAX_FPS = 1000.0  # no camera or recording we judge runs faster


def frame_rate(text: str) -> float:
    """Frames per second: a finite number from 1 to ``MAX_FPS``."""
    try:
        fps = float(text)
    except ValueError:
        fps = math.nan
    if not math.isfinite(fps) or not 1.0 <= fps <= MAX_FPS:
        raise argparse.ArgumentTypeError(f"must be frames per second from 1 to {MAX_FPS:g}, got {text!r}")
    return fps


def count(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    """A whole number from ``minimum`` (to ``maximum``)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < minimum or (maximum is not None and value > maximum):
            bounds = f"from {minimum} to {maximum}" if maximum is not None else f"of at least {minimum}"
            raise argparse.ArgumentTypeError(f"must be a whole number {bounds}, got {text!r}")
        return value
    parse.__name__ = "count"
    return parse


def port(text: str) -> int:
    """A TCP port, 1 to 65535."""
    return count(1, 65535)(text)


def add_games_arg(p: Any, default: str = "no set number, a shot after a game ends opens the next one") -> None:
    """``--games N``: the match's length (checked against the game by ``match_games``); ``default``: what
    the command does without it."""
    p.add_argument("--games", type=count(1), metavar="N",
                   help="the match has N games (Cvrnkaná: an even number, clause 8; Novuss: the organiser's): "
                        f"after the N-th game ends the match is over, no game is opened and a further shot is "
                        f"refused; default: {default}")


def match_games(game: str, games: int | None) -> int | None:
    """``--games``' value for a ``game`` match (None: not given): Cvrnkaná needs an even number (clause 8)."""
    from rules.match import check_games

    if games is not None:
        try:
            check_games(game, games)
        except ValueError as exc:
            raise UserError(f"--games {games}: {exc}") from None
    return games
