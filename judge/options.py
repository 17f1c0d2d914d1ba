"""Option values checked where they enter: a frame rate, a count, a port. Each bad value is one argparse
line naming the option and what it must be (exit 2), never a silent zero or a traceback later."""
from __future__ import annotations

import argparse
import math
import re
from pathlib import Path
from typing import Any, Callable

from .errors import UserError
from .i18n import N_, _

__all__ = ["frame_rate", "count", "port", "mqtt_address", "table_name", "add_games_arg", "match_games",
           "output_path", "MAX_FPS"]

MAX_FPS = 1000.0  # no camera or recording we judge runs faster


def frame_rate(text: str) -> float:
    """Frames per second: a finite number from 1 to ``MAX_FPS``."""
    try:
        fps = float(text)
    except ValueError:
        fps = math.nan
    if not math.isfinite(fps) or not 1.0 <= fps <= MAX_FPS:
        raise argparse.ArgumentTypeError(_("must be frames per second from 1 to {max}, got {text}").format(max=f"{MAX_FPS:g}",
                                                                                                       text=repr(text)))
    return fps


def count(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    """A whole number from ``minimum`` (to ``maximum``)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < minimum or (maximum is not None and value > maximum):
            if maximum is not None:
                said = _("must be a whole number from {minimum} to {maximum}, got {text}")
            else:
                said = _("must be a whole number of at least {minimum}, got {text}")
            raise argparse.ArgumentTypeError(said.format(minimum=minimum, maximum=maximum, text=repr(text)))
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
        raise argparse.ArgumentTypeError(_("must be a broker's HOST or HOST:PORT like localhost:1883, got {text}").format(text=repr(text)))
    try:
        return host, port(number)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(_("the port must be a whole number from 1 to 65535, got {text}").format(text=repr(text))) from None


def table_name(text: str) -> str:
    """A table's name in the hall: it is an MQTT topic level, so letters, digits, '-' and '_' (32 at most)."""
    if not TABLE_NAME.fullmatch(text):
        raise argparse.ArgumentTypeError(_("must be letters, digits, '-' or '_' (1 to 32, starting with a letter or "
                                           "digit), got {text}").format(text=repr(text)))
    return text


def add_games_arg(p: Any, default: str = N_("no set number, a shot after a game ends opens the next one")) -> None:
    """``--games N``: the match's length (checked against the game by ``match_games``); ``default``: what
    the command does without it."""
    p.add_argument("--games", type=count(1), metavar="N",
                   help=_("the match has N games (Cvrnkaná: an even number, clause 8; Novuss: the organiser's): after "
                          "the N-th game ends the match is over, no game is opened and a further shot is refused; "
                          "default: {default}").format(default=_(default)))


def match_games(game: str, games: int | None) -> int | None:
    """``--games``' value for a ``game`` match (None: not given): Cvrnkaná needs an even number (clause 8)."""
    from rules.match import check_games

    if games is not None:
        try:
            check_games(game, games)
        except ValueError as exc:
            raise UserError(f"--games {games}: {exc}") from None
    return games


def output_path(option: str, path: str | Path | None) -> Path | None:
    """An output the user named (``--out a/b/file``): its missing folders are made now, as ``mkdir -p`` does;
    a folder that cannot be made (a file in the way, no permission) is one line naming the option."""
    if path is None:
        return None
    target = Path(path)
    folder = target.resolve().parent
    if folder.exists() and not folder.is_dir():
        raise UserError(_("{option} {path}: {folder} is a file, not a folder").format(option=option, path=path,
                                                                                      folder=folder))
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(_("{option} {path}: cannot make the folder {folder}: {reason}").format(
            option=option, path=path, folder=folder, reason=exc.strerror or exc)) from None
    return target
