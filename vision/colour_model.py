"""Piece colours of the classical detector: one prototype per class (own/opponent pawns, the bat, each
player's marbles), where it came from, how far a top face may lie from it, and how it follows the light.

A colour is four numbers measured on a top face (:class:`vision.rim.RimFit` ``colour``): the B, G, R shares
(chromaticity) and the natural log of its brightness relative to the empty board at that place, so a
lamp's fall-off or a shadow over the board does not change it. :func:`distance` compares two.

Prototypes start from the calibration's or profile's piece colours (white-balanced by the board seen here),
are replaced by what is measured where a known layout says each class lies (``learn``), and follow each
class's confident, sharp detections online (``adapt``).
"""
from __future__ import annotations

import math
from typing import Mapping

import numpy as np

__all__ = ["ColourModel", "distance", "class_name", "looks"]

Class = tuple[str, "str | None"]

_CLASSES = {"pawn_A": ("pawn", "A"), "pawn_B": ("pawn", "B"), "bat": ("bat", None), "marble_A": ("marble", "A"),
            "marble_B": ("marble", "B")}


def distance(colour: np.ndarray, proto: np.ndarray) -> np.ndarray:
    """Colour distance: chromaticity (L1 of the B, G, R shares) plus 0.15 x |log brightness difference|."""
    colour, proto = np.asarray(colour), np.asarray(proto)
    return np.abs(colour[..., :3] - proto[..., :3]).sum(-1) + 0.15 * np.abs(colour[..., 3] - proto[..., 3])


def class_name(cls: Class) -> str:
    return cls[0] if cls[1] is None else f"{cls[0]}_{cls[1]}"


def looks(appearance, kinds: tuple[str, ...]):
    """(board BGR, {class: (piece BGR, spread)}) of the pieces of ``kinds`` (the game's) from a
    ``calibration.appearance.Appearance`` or its JSON form; None when there is none."""
    if appearance is None:
        return None
    if isinstance(appearance, Mapping):
        board = appearance["board_rgb"]
        items = [(k, v["rgb"], v["spread"]) for k, v in appearance["pieces"].items()]
    else:
        board = appearance.board_rgb
        items = [(k, v.rgb, v.spread) for k, v in appearance.pieces.items()]
    pieces = {_CLASSES[k]: (np.asarray(rgb, np.float32)[::-1], float(spread)) for k, rgb, spread in items
              if k in _CLASSES and _CLASSES[k][0] in kinds}
    return np.asarray(board, np.float32)[::-1], pieces


class ColourModel:
    """The prototypes (``prototypes``, ``tolerance``, ``colour_source``, ``anchors``) and their upkeep."""

    def __init__(self, colour_tolerance: float = 0.09, adapt_rate: float = 0.1, adapt_after: int = 3):
        self.colour_tolerance = colour_tolerance
        self.adapt_rate, self.adapt_after = float(adapt_rate), int(adapt_after)
        self.prototypes: dict[Class, np.ndarray] = {}
        self.tolerance: dict[Class, float] = {}  # colour distance accepted per class
        self.colour_source: dict[Class, str] = {}  # "appearance", "layout", "put down" or "online"
        # a player's marbles differ among themselves, so the one prototype that follows the marbles lately
        # in view drifts to one end of the family: the family's own colour (appearance or layout) stays too,
        # and so does each marble's own, measured where a known layout put it (``members``): a blue marble
        # in a family of pale ones is far from their median, and a webcam codec moves it further
        self.anchors: dict[Class, np.ndarray] = {}
        self.members: dict[Class, np.ndarray] = {}
        self.member_tolerance = 2.0  # x colour_tolerance around each member (a codec moves one by ~0.12)
        self._confident: dict[Class, int] = {}  # confident detections seen per class

    def _anchor(self, cls, measured: list | None = None) -> None:
        if cls[0] == "marble":
            self.anchors[cls] = self.prototypes[cls].copy()
            if measured:
                self.members[cls] = np.stack([np.asarray(c, float) for c in measured])
            else:
                self.members.pop(cls, None)

    def learned_tolerance(self, cls) -> float:
        # marbles of one player differ among themselves (one colour family, each its own swirl): wider
        return self.colour_tolerance * (2.8 if cls[0] == "marble" else 1.0)

    def from_appearance(self, appearance, kinds: tuple[str, ...], board_bgr: np.ndarray,
                        striker: str | None = None) -> None:
        """Prototypes of the classes not yet measured on this camera, from the calibration's or profile's
        piece colours, white-balanced by the board seen here (``board_bgr``) against the board they were
        given with. Not the ``striker``'s: a table's bat may be of any colour, so it is measured where it is
        put down (``put_down``), never assumed."""
        given = looks(appearance, kinds)
        if given is None:
            return
        nominal_board, pieces = given
        gain = board_bgr / np.maximum(nominal_board, 1.0)
        board_sum = float(board_bgr.sum()) + 3.0
        for cls, (bgr, spread) in pieces.items():
            if cls[0] == striker or self.colour_source.get(cls, "appearance") != "appearance":
                continue
            seen = np.minimum(bgr * gain, 255.0)
            total = float(seen.sum()) + 3.0
            self.prototypes[cls] = np.array([*(seen / total), math.log(total / board_sum)])
            self.tolerance[cls] = float(spread)
            self._anchor(cls)
            self.colour_source[cls] = "appearance"

    def learn(self, samples: Mapping[Class, list[np.ndarray]]) -> dict:
        """Each class's prototype from top-face colours measured where a known layout says it lies
        (``samples``): whatever colour they have is that class's (a black pawn standing where player B's
        pawn stands is B's), and the tolerance is three times their median distance from it, at least the
        floor of one measurement (``learned_tolerance``). Returns the samples used."""
        kept = {k: list(v) for k, v in samples.items() if len(v)}
        for k, v in kept.items():
            proto = np.median(np.stack(v), axis=0)
            self.prototypes[k] = proto
            self.tolerance[k] = max(self.learned_tolerance(k), 3.0 * float(np.median(distance(np.stack(v), proto))))
            self.colour_source[k] = "layout"
            self._anchor(k, v)
        return kept

    def put_down(self, cls: Class, colour: np.ndarray) -> None:
        """A class first measured on one piece put down where it must be (the bat in a striking zone, the
        mover's marble put in play): the nominal colour it replaces is no longer the family's."""
        self.prototypes[cls] = np.asarray(colour, float).copy()
        self.tolerance[cls] = self.learned_tolerance(cls)
        self.colour_source[cls] = "put down"
        self._anchor(cls, [colour])
        self._confident.pop(cls, None)

    def classify(self, colours: np.ndarray, confident: list | None = None,
                 board: np.ndarray | None = None) -> list[Class | None]:
        """Nearest class prototype (for marbles the nearest of the followed, the family's and each marble's own
        colour) within that class's tolerance, and clearly nearer than the next class, distances measured in
        each class's tolerance, and nearer its class than the empty board's colour (``board``, if given, as a
        colour: shares and a log brightness of 0);
        ``confident`` (if given) gets per colour whether the match is close enough to learn from."""
        classes = list(self.prototypes)
        if not classes:
            if confident is not None:
                confident[:] = [False] * len(colours)
            return [None] * len(colours)
        raw, tol = self._raw(colours, classes)
        d = raw / tol[None, :]
        best = np.argmin(d, axis=1)
        second = np.sort(d, axis=1)[:, 1] if len(classes) > 1 else np.full(len(d), np.inf)
        # nearer the empty board's colour than its class's: the board's texture (a crack, a pebble's ring)
        # outlined as a disc, not a piece
        plain = distance(colours, board) if board is not None else np.full(len(d), np.inf)
        piece = [bool(plain[j] >= raw[j, b]) for j, b in enumerate(best)]
        if confident is not None:
            confident[:] = [piece[j] and bool(d[j, b] <= 0.6 and d[j, b] < 0.35 * second[j]) for j, b in enumerate(best)]
        return [classes[b] if piece[j] and d[j, b] <= 1.0 and d[j, b] < 0.6 * second[j] else None
                for j, b in enumerate(best)]

    def _raw(self, colours: np.ndarray, classes: list[Class]) -> tuple[np.ndarray, np.ndarray]:
        """(colours x classes distances, each class's tolerance): to the followed prototype, the anchor or, for
        a marble, its own colour, whichever is nearest. Each class's own tolerance: a family of marbles that
        differ among themselves is a wide ball, a pawn colour a narrow one, and "nearer" means nearer in those
        units."""
        d = distance(colours[:, None, :], np.stack([self.prototypes[c] for c in classes])[None, :, :])
        tol = np.array([self.tolerance[c] if c in self.tolerance else self.learned_tolerance(c) for c in classes])
        for k, c in enumerate(classes):
            if c in self.anchors:
                d[:, k] = np.minimum(d[:, k], distance(colours, self.anchors[c]))
            if c in self.members:  # one marble's own colour: a narrower ball than the family's, scaled to it
                own = distance(colours[:, None, :], self.members[c][None]).min(axis=1)
                d[:, k] = np.minimum(d[:, k], own * tol[k] / (self.member_tolerance * self.colour_tolerance))
        return d, tol

    def ground_shaded(self, board: np.ndarray | None) -> list[Class]:
        """The classes whose colour lies within their tolerance of the empty board's (``board``, as a colour:
        shares and a log brightness of 0): a clay marble on the soil it was made of. ``classify`` gives such
        a piece nothing (the board is as near); only its outline tells it (``by_outline``)."""
        if board is None or not self.prototypes:
            return []
        classes = list(self.prototypes)
        raw, tol = self._raw(np.asarray(board, float)[None, :], classes)
        return [c for c, d, t in zip(classes, raw[0], tol) if d <= t]

    def by_outline(self, colour: np.ndarray, among: list[Class], within: float = 0.5) -> Class | None:
        """The class of ``among`` (ground-shaded ones) a piece of ``colour`` is, where a whole sharp outline
        says a piece is there: the nearest class, within ``within`` of its tolerance (the colour is all that
        tells it from the ground's texture, so well inside it) and clearly nearer than the next, the board's
        colour not asked (``classify`` without a board)."""
        cls = self.classify(np.asarray(colour, float)[None, :])[0]
        return cls if cls in among and self.distances(colour)[cls] <= within else None

    def distances(self, colour: np.ndarray) -> dict[Class, float]:
        """Each class's distance from ``colour`` in units of that class's tolerance, as ``classify`` measures it."""
        classes = list(self.prototypes)
        if not classes:
            return {}
        raw, tol = self._raw(np.asarray(colour, float)[None, :], classes)
        return {c: float(v) for c, v in zip(classes, raw[0] / tol)}

    def adapt(self, samples: Mapping[Class, list[np.ndarray]]) -> None:
        """Move each class's prototype towards the colours of this frame's confident, sharp detections of
        it; a class known only from nominal colours takes the measured tolerance once seen often enough."""
        for cls, cols in samples.items():
            if self.adapt_rate <= 0 or cls not in self.prototypes:
                continue
            mean = np.median(np.stack(cols), axis=0)
            seen = self._confident.get(cls, 0)
            # the first sightings weigh as much as the nominal colour did; later ones slowly track the light
            rate = max(self.adapt_rate, len(cols) / (seen + len(cols) + 1.0)) if seen < self.adapt_after else self.adapt_rate
            self.prototypes[cls] = self.prototypes[cls] + rate * (mean - self.prototypes[cls])
            n = self._confident[cls] = seen + len(cols)
            if self.colour_source.get(cls) == "appearance" and n >= self.adapt_after:
                if cls[0] != "marble":  # a player's marbles differ among themselves: keep the family's width
                    self.tolerance[cls] = max(self.learned_tolerance(cls), 0.5 * self.tolerance[cls])
                self.colour_source[cls] = "online"

    def appearance(self, samples: Mapping[Class, list[np.ndarray]], board_bgr: np.ndarray) -> dict:
        """The measured classes in the calibration file's ``appearance`` form (``calibration.appearance``):
        per class the prototype as an RGB colour against ``board_bgr`` and the spread of ``samples``."""
        board_sum = float(board_bgr.sum()) + 3.0
        pieces = {}
        for cls, v in samples.items():
            c = self.prototypes[cls]
            total = math.exp(float(c[3])) * board_sum
            bgr = np.clip(c[:3] * total, 0.0, 255.0)
            dev = [distance(x, c) for x in v]
            spread = max(self.learned_tolerance(cls), 3.0 * float(np.median(dev)) if dev else 0.0)
            pieces[class_name(cls)] = {"rgb": [round(float(x), 1) for x in bgr[::-1]], "spread": round(min(spread, 1.0), 4)}
        return {"board_rgb": [round(float(x), 1) for x in board_bgr[::-1]], "pieces": pieces, "source": "measured"}
