"""Option values checked where they enter: a frame rate, a count, a port. Each bad value is one argparse
line naming the option and what it must be (exit 2), never a silent zero or a traceback later."""
from __future__ import annotations

import argparse
import math
import re
from typing import Any, Callable

from .errors import UserError

__all__ = ["frame_rate", "count", "port", "mqtt_address", "table_name", "add_games_arg", "match_games", "MAX_FPS"]

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


MQTT_PORT = 1883
TABLE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,31}")


def mqtt_address(text: str) -> tuple[str, int]:
    """``HOST[:PORT]`` of an MQTT broker (port 1883 unless given)."""
    host, colon, number = text.rpartition(":") if ":" in text else (text, "", "")
    if not colon:
        host, number = text, str(MQTT_PORT)
    if not host or any(c.isspace() or c in "/#+" for c in host):
        raise argparse.ArgumentTypeError(f"must be a broker's HOST or HOST:PORT like localhost:1883, got {text!r}")
    try:
        return host, port(number)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"the port must be a whole number from 1 to 65535, got {text!r}") from None


def table_name(text: str) -> str:
    """A table's name in the hall: it is an MQTT topic level, so letters, digits, '-' and '_' (32 at most)."""
    if not TABLE_NAME.fullmatch(text):
        raise argparse.ArgumentTypeError(f"must be letters, digits, '-' or '_' (1 to 32, starting with a letter or "
                                         f"digit), got {text!r}")
    return text


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
