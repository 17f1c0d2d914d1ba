"""The placement assistant's core: where a ruling has pieces put down, and whether they are there yet.

After a penalty pawn (Novuss II), a pawn returned to the circle or to its place (II.4, II.5), or a Cvrnkaná
return (7a: every moved marble back to its spot; 7f: an external factor's effect undone; 7h: a relocation
inside the limit refused) the referee puts pieces down by hand. ``targets_of`` reads those spots from the
ruling's actions; :class:`PlacementCheck` is fed where vision has each piece, frame after frame, and says
for each target whether it is still ``waiting`` (not seen near its spot), ``off`` (how far, and which way to
move it, in the referee's terms) or ``placed`` (within ``tol_mm`` for ``settle_s``), and when all are placed.
A spot the camera does not see (a Cvrnkaná field outside the view) is ``unseen``: the referee places it by
eye and it does not hold play up.

Vision's position noise (~0.5 mm per axis) would make a status read from single frames flicker at the
tolerance; the distance is that of the median of the last ``median_n`` sightings, and a placed piece is
only reported off again once that median is ``hysteresis_mm`` beyond the tolerance.

Every sentence shown to referees is built from ``TEXTS`` below, in English, so it can go through the
translation catalogue in one place. Directions: Novuss, along the board towards a player's cushion (+y is
towards B, who sits opposite A) and left/right as seen from player A's side (+x is A's right); Cvrnkaná,
towards/away from the pit and clockwise/anticlockwise around it as seen from above (the camera's view).
Pure: no OpenCV, no clock of its own (times are the frames').
"""
from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from statistics import median
from typing import Any, Mapping, Sequence

from rules.game import game_class
from rules.hints import PLACED

from .i18n import N_, _

__all__ = ["Target", "PieceStatus", "PlacementStatus", "PlacementCheck", "targets_of", "TEXTS",
           "TOL_MM", "SETTLE_S"]

Point = tuple[float, float]

#: a piece this close to its spot is placed (the issue's figure)
TOL_MM = 2.0
#: ... once it has stayed that close this long (a piece still being slid into place is not yet placed)
SETTLE_S = 0.3

#: every sentence the referee reads; ``{...}`` fields are filled in by ``_text``
TEXTS = {
    "waiting": N_("{piece}: put it down at its spot"),
    "off": N_("{piece}: {off_mm:.1f} mm off — move it {moves}"),
    "placed": N_("{piece} placed ({off_mm:.1f} mm)"),
    "unseen": N_("{piece}: outside the camera's view — place it by eye"),
    "pending": N_("Place {left} of {total}: {pieces}"),
    "done": N_("All pieces placed: play on"),
    "ended": N_("Play went on before {pieces} was placed"),
    "and": N_(" and "),
    # direction parts: what the referee must do to the piece
    "towards_cushion": N_("{mm:.1f} mm towards {player}'s cushion"),
    "right": N_("{mm:.1f} mm to the right (as seen from A's side)"),
    "left": N_("{mm:.1f} mm to the left (as seen from A's side)"),
    "towards_pit": N_("{mm:.1f} mm towards the pit"),
    "away_from_pit": N_("{mm:.1f} mm away from the pit"),
    "clockwise": N_("{mm:.1f} mm clockwise (as seen from above)"),
    "anticlockwise": N_("{mm:.1f} mm anticlockwise (as seen from above)"),
    "slightly": N_("a fraction of a millimetre"),
    # why a piece goes there (the ruling's action reason), for the status list
    "why_penalty_pawn": N_("penalty pawn"),
    "why_debt_settled": N_("penalty debt paid"),
    "why_dark_pawn_hit_direct": N_("back to its place"),
    "why_opponent_pawn_off_direct": N_("back in the circle"),
    "why_pawn_off_board": N_("back in the circle"),
    "why_opponent_marble_moved": N_("back to its spot (7a)"),
    "why_external_returned": N_("back to its spot (7f)"),
    "why_relocation_refused": N_("back to its spot (7h)"),
    "why": N_("put down here"),
}

#: a component of the move smaller than this is not mentioned (noise, and nothing a hand can do)
MENTION_MM = 0.3


def _text(key: str, **values: Any) -> str:
    return _(TEXTS[key]).format(**values)


@dataclass(frozen=True)
class Target:
    """Where a ruling has ``piece`` put down: ``at_mm`` (board/field mm), the action's ``kind`` and reason
    (``why``), the piece's radius (for drawing) and whether the camera sees the spot."""

    piece: str
    at_mm: Point
    kind: str
    why: str
    radius_mm: float
    in_view: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {"piece": self.piece, "at_mm": [round(self.at_mm[0], 2), round(self.at_mm[1], 2)], "kind": self.kind,
                "why": self.why, "why_text": _(TEXTS.get(f"why_{self.why}", TEXTS["why"])),
                "radius_mm": self.radius_mm, "in_view": self.in_view}


def targets_of(ruling: Mapping[str, Any] | None, profile) -> tuple[Target, ...]:
    """The spots a ruling (its JSON form, ``Ruling.to_dict``) has pieces put down at, in the ruling's order:
    the actions that place a piece at a known place (``rules.hints.PLACED``: penalty pawns, returns), one
    target per piece (the last action on a piece wins, as the state has it). ``profile``: the board's
    (``calibration.Profile``), for piece sizes and the camera's view."""
    spec = profile.spec
    out: dict[str, Target] = {}
    for action in (ruling or {}).get("actions") or ():
        piece, at = action.get("piece"), action.get("at")
        if action.get("kind") not in PLACED or not piece or at is None:
            continue
        xy = (float(at[0]), float(at[1]))
        out.pop(piece, None)
        out[piece] = Target(piece, xy, action["kind"], str(action.get("reason") or ""), float(spec.radius_of(piece)),
                            bool(spec.in_view(xy)))
    return tuple(out.values())


@dataclass(frozen=True)
class PieceStatus:
    """One target now: ``state`` is ``waiting``, ``off``, ``placed`` or ``unseen``; ``seen_mm`` where vision
    has the piece (the median of its last sightings; None: not seen near the spot), ``off_mm`` its distance
    from the spot and ``move_mm`` the move that puts it there (spot − seen); ``text`` says it to the referee."""

    target: Target
    state: str
    seen_mm: Point | None = None
    off_mm: float | None = None
    move_mm: Point | None = None
    text: str = ""

    def to_dict(self) -> dict[str, Any]:
        r2 = lambda v: None if v is None else round(v, 2)  # noqa: E731
        return {**self.target.to_dict(), "state": self.state, "text": self.text, "off_mm": r2(self.off_mm),
                "seen_mm": None if self.seen_mm is None else [r2(self.seen_mm[0]), r2(self.seen_mm[1])],
                "move_mm": None if self.move_mm is None else [r2(self.move_mm[0]), r2(self.move_mm[1])]}


@dataclass(frozen=True)
class PlacementStatus:
    """Every target at ``t_s``; ``done`` once each one the camera sees is placed (play may go on);
    ``ended``: the check was closed before that (the next shot began), ``text`` the headline."""

    pieces: tuple[PieceStatus, ...]
    t_s: float
    done: bool
    text: str
    ended: bool = False

    def of(self, piece: str) -> PieceStatus:
        return next(p for p in self.pieces if p.target.piece == piece)

    @property
    def states(self) -> dict[str, str]:
        return {p.target.piece: p.state for p in self.pieces}

    def to_dict(self) -> dict[str, Any]:
        return {"type": "placement", "t_s": round(self.t_s, 3), "done": self.done, "ended": self.ended,
                "text": self.text, "pieces": [p.to_dict() for p in self.pieces]}


@dataclass
class _Track:
    seen: deque = field(default_factory=deque)  # recent sightings near the spot
    within_since_s: float | None = None  # since when the median has been within the tolerance
    placed: bool = False


class PlacementCheck:
    """Fed where vision has each piece (``update(positions_mm, t_s)``, every frame), it says how the placing
    of ``targets`` stands. ``reach_mm``: a piece farther than this from its spot (not yet brought over) is
    ``waiting``, as one not seen at all; ``game``: ``novuss`` or ``cvrnkana`` (how directions are named)."""

    def __init__(self, targets: Sequence[Target], game: str, tol_mm: float = TOL_MM, settle_s: float = SETTLE_S,
                 median_n: int = 5, hysteresis_mm: float = 0.5, reach_mm: float = 100.0):
        if not targets:
            raise ValueError("a placement check needs at least one target")
        self.targets = tuple(targets)
        self.game = game
        self.tol_mm, self.settle_s, self.median_n = float(tol_mm), float(settle_s), int(median_n)
        self.hysteresis_mm, self.reach_mm = float(hysteresis_mm), float(reach_mm)
        self._tracks = {t.piece: _Track(deque(maxlen=self.median_n)) for t in self.targets}
        self.status: PlacementStatus | None = None

    def update(self, positions_mm: Mapping[str, Sequence[float]], t_s: float) -> PlacementStatus:
        pieces = tuple(self._piece(t, positions_mm.get(t.piece), t_s) for t in self.targets)
        self.status = self._summary(pieces, t_s)
        return self.status

    def end(self, t_s: float) -> PlacementStatus:
        """Close the check (play went on): the last status, marked ``ended``, naming what was not placed."""
        last = self.status or self._summary(tuple(self._piece(t, None, t_s) for t in self.targets), t_s)
        if last.done:
            self.status = PlacementStatus(last.pieces, t_s, True, last.text, True)
        else:
            left = [p.target.piece for p in last.pieces if p.state in ("waiting", "off")]
            self.status = PlacementStatus(last.pieces, t_s, False, _text("ended", pieces=", ".join(left)), True)
        return self.status

    # ----- inside ----------------------------------------------------------------------------------------
    def _piece(self, target: Target, xy, t_s: float) -> PieceStatus:
        track = self._tracks[target.piece]
        if not target.in_view:
            return PieceStatus(target, "unseen", text=_text("unseen", piece=target.piece))
        if xy is None or math.dist(target.at_mm, (float(xy[0]), float(xy[1]))) > self.reach_mm:
            track.seen.clear()
            track.within_since_s, track.placed = None, False
            return PieceStatus(target, "waiting", text=_text("waiting", piece=target.piece))
        track.seen.append((float(xy[0]), float(xy[1])))
        seen = (median(p[0] for p in track.seen), median(p[1] for p in track.seen))
        off = math.dist(target.at_mm, seen)
        limit = self.tol_mm + (self.hysteresis_mm if track.placed else 0.0)
        if off <= limit:
            if track.within_since_s is None:
                track.within_since_s = t_s
            track.placed = track.placed or t_s - track.within_since_s >= self.settle_s - 1e-9
        else:
            track.within_since_s, track.placed = None, False
        move = (target.at_mm[0] - seen[0], target.at_mm[1] - seen[1])
        if track.placed:
            return PieceStatus(target, "placed", seen, off, move, _text("placed", piece=target.piece, off_mm=off))
        text = _text("off", piece=target.piece, off_mm=off, moves=self._moves(target.at_mm, seen))
        return PieceStatus(target, "off", seen, off, move, text)

    def _moves(self, at: Point, seen: Point) -> str:
        """The move from ``seen`` to ``at`` in the referee's terms (see the module docstring)."""
        if not game_class(self.game).walls:  # a field around a pit: no cushions to name
            parts = _around_pit(at, seen)
        else:
            dx, dy = at[0] - seen[0], at[1] - seen[1]
            parts = [("towards_cushion", dy, {"player": "B" if dy > 0 else "A"}),
                     ("right" if dx > 0 else "left", dx, {})]
        said = [_text(key, mm=abs(mm), **more) for key, mm, more in parts if abs(mm) >= MENTION_MM]
        return _(TEXTS["and"]).join(said) if said else _(TEXTS["slightly"])

    def _summary(self, pieces: tuple[PieceStatus, ...], t_s: float) -> PlacementStatus:
        seen = [p for p in pieces if p.state != "unseen"]
        left = [p.target.piece for p in seen if p.state != "placed"]
        if not left:
            return PlacementStatus(pieces, t_s, True, _(TEXTS["done"]))
        return PlacementStatus(pieces, t_s, False,
                               _text("pending", left=len(left), total=len(seen), pieces=", ".join(left)))


def _around_pit(at: Point, seen: Point) -> list[tuple[str, float, dict]]:
    """The move from ``seen`` to ``at`` split into its part towards/away from the pit centre (the origin) and
    its part around it, both taken at the piece's place."""
    r = math.hypot(*seen)
    dx, dy = at[0] - seen[0], at[1] - seen[1]
    if r < 1e-6:
        return [("away_from_pit", math.hypot(dx, dy), {})]
    ux, uy = seen[0] / r, seen[1] / r
    radial, around = dx * ux + dy * uy, -dx * uy + dy * ux  # around > 0: anticlockwise (x right, y up)
    return [("away_from_pit" if radial > 0 else "towards_pit", radial, {}),
            ("anticlockwise" if around > 0 else "clockwise", around, {})]
