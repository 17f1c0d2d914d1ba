"""Game state documents read field by field: a ``--state`` file, the start a journal keeps, the state a
referee sets. Anything wrong is one :class:`StateError` naming the field (``positions.A3[0]``), never a
traceback or a silent zero; places off the surface are refused as they are in shot records."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from .game import PLAYERS
from .record import _Checker
from .ruling import Outcome

__all__ = ["StateError", "StateFields", "Bat"]

RESULTS = ("win", "draw", "replay")


class StateError(ValueError):
    """A game state document that is not a state of its game; the message names the field."""


@dataclass(frozen=True)
class Bat:
    """The Novuss bat lying on the board when a state starts (a video begun mid-set shows it): where it lies
    (board mm) and, when it was measured there, the colour of its top face (0..255 RGB). Optional in a state
    document (``"bat": {"at": [x, y], "colour_rgb": [r, g, b]}``); documents without it mean no bat down."""

    at: tuple[float, float]
    colour_rgb: tuple[int, int, int] | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"at": [round(self.at[0], 3), round(self.at[1], 3)]}
        if self.colour_rgb is not None:
            out["colour_rgb"] = list(self.colour_rgb)
        return out


class StateFields(_Checker):
    """The fields of one state document of ``game``, checked as they are read."""

    error = StateError

    def __init__(self, data: Any, game: str, where: str = "state") -> None:
        super().__init__(where)
        if not isinstance(data, Mapping):
            self.fail("state", f"must be a JSON object, got {type(data).__name__}")
        self.data = data
        if data.get("game") != game:
            self.fail("game", f"must be {game!r}, got {data.get('game')!r}")

    def get(self, key: str) -> Any:
        if key not in self.data:
            self.fail(key, "is missing")
        return self.data[key]

    def mapping(self, value: Any, path: str) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            self.fail(path, f"must be an object, got {value!r:.60}")
        return value

    def whole(self, value: Any, path: str, lo: int = 0, hi: int = 1_000_000) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            self.fail(path, f"must be a whole number from {lo} to {hi}, got {value!r:.60}")
        return value

    def player(self, value: Any, path: str, none: bool = False) -> Any:
        if value not in PLAYERS and not (none and value is None):
            self.fail(path, f"must be 'A' or 'B'{' or null' if none else ''}, got {value!r:.60}")
        return value

    def per_player(self, key: str, lo: int = 0, hi: int = 1_000_000) -> dict[str, int]:
        """``{"A": n, "B": n}``, each a whole number."""
        value = self.mapping(self.get(key), key)
        return {p: self.whole(value.get(p), f"{key}.{p}", lo, hi) for p in PLAYERS}

    def pieces(self, value: Any, path: str, ids: frozenset[str], game: str) -> list[str]:
        """A list of piece ids, none twice."""
        if not isinstance(value, list):
            self.fail(path, f"must be a list of piece ids, got {value!r:.60}")
        for i, piece in enumerate(value):
            self.piece(piece, f"{path}[{i}]", ids, game)
            if piece in value[:i]:
                self.fail(f"{path}[{i}]", f"{piece} is listed twice")
        return list(value)

    def places(self, value: Any, path: str, ids: frozenset[str], game: str, limit_mm: float,
               unknown: bool = False) -> dict[str, Any]:
        """``{piece: [x_mm, y_mm]}`` on the surface (``unknown``: or null, a place not known)."""
        out: dict[str, Any] = {}
        for piece, xy in self.mapping(value, path).items():
            where = f"{path}.{piece}"
            self.piece(piece, where, ids, game)
            if xy is None and unknown:
                out[piece] = None
                continue
            x, y = self.point(xy, where)
            if abs(x) > limit_mm or abs(y) > limit_mm:
                self.fail(where, f"({x:.6g}, {y:.6g}) mm is off the {game} surface (at most {limit_mm:g} mm from its centre)")
            out[piece] = (x, y)
        return out

    def outcome(self) -> Outcome | None:
        """How the game ended (``outcome``: null while it goes on)."""
        raw = self.data.get("outcome")
        if raw is None:
            return None
        raw = self.mapping(raw, "outcome")
        result = raw.get("result")
        if result not in RESULTS:
            self.fail("outcome.result", f"must be one of {', '.join(RESULTS)}, got {result!r:.60}")
        reason = raw.get("reason")
        if not isinstance(reason, str):
            self.fail("outcome.reason", f"must be a call code, got {reason!r:.60}")
        return Outcome(result, self.player(raw.get("winner"), "outcome.winner", none=result != "win"), reason)

    def bat(self, limit_mm: float) -> Bat | None:
        """The optional ``bat`` entry (absent or null: no bat lies on the board)."""
        raw = self.data.get("bat")
        if raw is None:
            return None
        raw = self.mapping(raw, "bat")
        for key in raw:
            if key not in ("at", "colour_rgb"):
                self.fail(f"bat.{key}", "is not a field of the bat (at, colour_rgb)")
        if "at" not in raw:
            self.fail("bat.at", "is missing")
        x, y = self.point(raw["at"], "bat.at")
        if abs(x) > limit_mm or abs(y) > limit_mm:
            self.fail("bat.at", f"({x:.6g}, {y:.6g}) mm is off the surface (at most {limit_mm:g} mm from its centre)")
        colour = raw.get("colour_rgb")
        if colour is None:
            return Bat((x, y))
        if not isinstance(colour, list) or len(colour) != 3:
            self.fail("bat.colour_rgb", f"must be [red, green, blue], got {colour!r:.60}")
        rgb = tuple(self.whole(c, f"bat.colour_rgb[{i}]", 0, 255) for i, c in enumerate(colour))
        return Bat((x, y), (rgb[0], rgb[1], rgb[2]))
