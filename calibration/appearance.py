"""What each kind of piece looks like to the camera: calibration data, not something to guess at run time.

A profile carries nominal colours (``appearance`` section) so a detector can name own pawns, opponent
pawns, the bat and each player's marbles from the first frame, including a piece it has never seen on
this table (the Novuss bat is put down by hand before each stroke, never part of the opening layout).
``shotjudge calibrate --pieces`` measures the same values on a frame of the opening layout and stores
them in the calibration file, which then takes precedence over the profile's.

JSON form (``docs/schemas/profile.schema.json``, ``calibration.schema.json``)::

    "appearance": {"board_rgb": [202, 161, 106],
                   "pieces": {"pawn_A": {"rgb": [230, 229, 220], "spread": 0.15}, ...}}

``rgb`` is the median colour the camera records on the piece's top face (sheen of the lamp included),
``board_rgb`` the colour of the bare playing surface under the same light: the detector compares the
board it sees with it to correct white balance and exposure (a von Kries scaling per channel) before it
uses the piece colours. ``spread`` is how far a top face may lie from ``rgb`` and still be taken for that
class, in the detector's colour distance (sum of |difference| of the red, green and blue shares, plus
0.15 x |difference of the natural log of the brightness relative to the board|).
"""
from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Mapping

from rules.game import GAMES, PLAYERS

__all__ = ["CLASSES", "PieceLook", "Appearance", "AppearanceError", "appearance_from_dict", "merged"]

#: appearance classes per game: each player's pieces (``pawn_A``...), then the striker (``bat``) if any
CLASSES = {name: tuple(f"{game.piece_kind}_{p}" for p in PLAYERS) + ((game.striker,) if game.striker else ())
           for name, game in GAMES.items()}


class AppearanceError(ValueError):
    """An appearance section that is malformed."""


@dataclass(frozen=True)
class PieceLook:
    rgb: tuple[float, float, float]
    spread: float


@dataclass(frozen=True)
class Appearance:
    """Nominal or measured piece colours of one game, with the board colour they were seen against."""

    board_rgb: tuple[float, float, float]
    pieces: Mapping[str, PieceLook]
    source: str = "profile"  # "profile" (nominal) or "measured"

    def to_dict(self) -> dict:
        out: dict[str, Any] = {"board_rgb": [round(v, 1) for v in self.board_rgb],
                               "pieces": {k: {"rgb": [round(v, 1) for v in p.rgb], "spread": round(p.spread, 4)}
                                          for k, p in self.pieces.items()}}
        if self.source != "profile":
            out["source"] = self.source
        return out


def _rgb(value, what: str, where: str) -> tuple[float, float, float]:
    if (not isinstance(value, (list, tuple)) or len(value) != 3
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 255  # nor nan, nor 10**400
                       for v in value)):
        raise AppearanceError(f"{where}: {what} must be [r, g, b] with each 0..255, got {value!r}")
    if sum(value) <= 0:
        raise AppearanceError(f"{where}: {what} must not be black [0, 0, 0]")
    return tuple(float(v) for v in value)


def appearance_from_dict(data: Any, game: str, where: str = "appearance", complete: bool = True) -> Appearance:
    """Validate an ``appearance`` object for ``game``: a profile's must give every class of the game; a
    measured one (``complete=False``) the classes it saw (the rest come from the profile)."""
    if not isinstance(data, Mapping):
        raise AppearanceError(f"{where}: must be an object with board_rgb and pieces")
    board = _rgb(data.get("board_rgb"), "board_rgb", where)
    pieces = data.get("pieces")
    if not isinstance(pieces, Mapping):
        raise AppearanceError(f"{where}: pieces must be an object mapping {', '.join(CLASSES[game])} to their look")
    unknown = sorted(set(pieces) - set(CLASSES[game]))
    if unknown:
        raise AppearanceError(f"{where}: pieces.{unknown[0]} is not a {game} class ({', '.join(CLASSES[game])})")
    missing = [c for c in CLASSES[game] if c not in pieces]
    if (complete and missing) or not pieces:
        raise AppearanceError(f"{where}: pieces.{(missing or CLASSES[game])[0]} is missing")
    looks = {}
    for name in (c for c in CLASSES[game] if c in pieces):
        entry = pieces[name]
        if not isinstance(entry, Mapping):
            raise AppearanceError(f"{where}: pieces.{name} must be an object with rgb and spread")
        spread = entry.get("spread")
        if isinstance(spread, bool) or not isinstance(spread, (int, float)) or not 0 < spread <= 1.0:
            raise AppearanceError(f"{where}: pieces.{name}.spread must be a number in (0, 1], got {spread!r}")
        looks[name] = PieceLook(_rgb(entry.get("rgb"), f"pieces.{name}.rgb", where), float(spread))
    source = data.get("source", "profile")
    if source not in ("profile", "measured"):
        raise AppearanceError(f"{where}: source must be 'profile' or 'measured', got {source!r}")
    return Appearance(board, MappingProxyType(looks), source)


def merged(measured: Appearance | None, nominal: Appearance | None) -> Appearance | None:
    """The measured looks where there are any, the profile's for the classes not measured (their colours
    rescaled from the profile's board colour to the measured one, so both sit in one white balance)."""
    if measured is None or nominal is None:
        return measured or nominal
    gain = [m / max(n, 1.0) for m, n in zip(measured.board_rgb, nominal.board_rgb)]
    looks = {k: PieceLook(tuple(min(255.0, v * g) for v, g in zip(p.rgb, gain)), p.spread)
             for k, p in nominal.pieces.items() if k not in measured.pieces}
    return Appearance(measured.board_rgb, MappingProxyType({**looks, **measured.pieces}), "measured")
