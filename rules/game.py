"""The two games as objects: typed geometry, piece ids, pockets, and what differs between them.

Everything outside ``rules/`` that used to ask ``game == "novuss"`` asks the game object instead: an
attribute (``has_pit``, ``striker``, ``sees_whole_field`` ...) or a method. A game is built from the
profile's geometry (``calibration.Profile.spec``); the name picks the class, python-chess style::

    spec = game_for("novuss", profile.geometry)
    spec.geometry.surface_mm, spec.pockets_mm["NE"], spec.kind_of("B3") == ("pawn", "B")
"""
from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any, ClassVar, Iterable, Mapping

__all__ = ["Game", "NovussGame", "CvrnkanaGame", "NovussGeometry", "CvrnkanaGeometry", "GAMES", "game_for",
           "game_class", "piece_key", "owner", "POCKETS", "SIDES", "PLAYERS"]

PLAYERS = ("A", "B")
#: The pocket names in the one order every module uses.
POCKETS = ("NE", "NW", "SE", "SW")
SIDES = ("N", "S", "E", "W")


def piece_key(piece: str) -> tuple[int, str, int]:
    """The one sort key of piece ids: the bat first, then A1..A20, then B1..B20 (numerically)."""
    if piece[:1] in PLAYERS and piece[1:].isdigit():
        return (1, piece[0], int(piece[1:]))
    return (0, piece, 0)


def owner(piece: str) -> str | None:
    """'A' or 'B' for a pawn or marble; None for the bat."""
    return piece[0] if piece[:1] in PLAYERS else None


def _geometry_values(names: Iterable[str], data: Mapping[str, Any], game: str) -> dict[str, float]:
    """The geometry fields ``names`` from the profile's mapping, each checked to be a finite number."""
    values: dict[str, float] = {}
    for name in names:
        if name not in data:
            raise ValueError(f"{game} geometry: {name} is missing")
        value = data[name]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ValueError(f"{game} geometry: {name} must be a finite number, got {value!r}")
        values[name] = float(value)
    return values


@dataclass(frozen=True)
class NovussGeometry:
    """A Novuss board in millimetres (and the simultaneity window in seconds): the profile's numbers."""

    surface_mm: float
    cushion_width_mm: float
    frame_mm: float
    pocket_radius_mm: float
    pawn_diameter_mm: float
    pawn_hole_mm: float
    pawn_mass_g: float
    bat_diameter_mm: float
    bat_hole_mm: float
    bat_mass_g: float
    line_width_mm: float
    zone_depth_mm: float
    zone_half_width_mm: float
    circle_radius_mm: float
    corner_joint_mm: float
    simultaneous_contact_s: float

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> "NovussGeometry":
        return cls(**_geometry_values((f.name for f in fields(cls)), data, "novuss"))


@dataclass(frozen=True)
class CvrnkanaGeometry:
    """A Cvrnkaná field in millimetres: pit, start lines, marbles and the camera's view."""

    pit_diameter_mm: float
    pit_depth_mm: float
    start_line_distance_mm: float
    start_line_gap_mm: float
    start_line_length_mm: float
    relocation_min_mm: float
    marble_diameter_mm: float
    marble_min_mm: float
    marble_max_mm: float
    marbles_per_player: float
    view_half_width_mm: float
    view_half_height_mm: float
    moved_tolerance_mm: float

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> "CvrnkanaGeometry":
        return cls(**_geometry_values((f.name for f in fields(cls)), data, "cvrnkana"))


class Game:
    """What one game is, for every layer: class-level flags, piece ids, and the surface's shape.

    Subclasses set the flags; code elsewhere reads them instead of comparing the game's name.
    """

    name: ClassVar[str] = ""
    #: the kind of a player's pieces ("pawn" or "marble")
    piece_kind: ClassVar[str] = ""
    #: the piece struck or flicked that belongs to nobody and is placed before every stroke (None: none)
    striker: ClassVar[str | None] = None
    #: what can cover pieces from the camera
    occluders: ClassVar[tuple[str, ...]] = ("hand",)
    #: pieces bounce off cushions at the edge of the surface
    walls: ClassVar[bool] = False
    #: the camera sees the whole playing surface (else pieces leave and enter its view)
    sees_whole_field: ClassVar[bool] = True
    #: what a piece that set off with no contact explaining it is: "external" (outside interference) or
    #: "touch" (a player touched it)
    unexplained_launch: ClassVar[str] = "external"
    #: the most pieces a player can have (ids run 1..this)
    max_per_player: ClassVar[int] = 0
    #: a coin toss decides who starts, and a match is a run of numbered games (else a player is simply
    #: named to strike first)
    starts_by_toss: ClassVar[bool] = False
    #: the rules score a match in points of their own (Cvrnkaná clause 8); else the organiser sets them
    points_by_rule: ClassVar[bool] = False
    #: the dataclass of the game's geometry (its fields are the profile's required geometry keys)
    geometry_type: ClassVar[type] = object

    geometry: Any

    def __init__(self, geometry: Mapping[str, Any] | Any):
        self.geometry = geometry if not isinstance(geometry, Mapping) else self._geometry(geometry)

    @classmethod
    def _geometry(cls, data: Mapping[str, Any]) -> Any:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.geometry!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Game) and type(other) is type(self) and other.geometry == self.geometry

    def __hash__(self) -> int:
        return hash((type(self), self.geometry))

    # ----- pieces ---------------------------------------------------------------------------------------
    @classmethod
    def ids(cls) -> frozenset[str]:
        """Every piece id a shot record of this game may name."""
        players = frozenset(f"{p}{i}" for p in PLAYERS for i in range(1, cls.max_per_player + 1))
        return players | ({cls.striker} if cls.striker else frozenset())

    @classmethod
    def piece_ids(cls) -> tuple[str, ...]:
        """Every piece id of the game in the one order (``piece_key``)."""
        return tuple(sorted(cls.ids(), key=piece_key))

    @classmethod
    def kind_of(cls, piece: str) -> tuple[str, str | None]:
        """(kind, owner) of a piece id: ``("pawn", "B")`` for B3, ``("bat", None)`` for the bat."""
        if piece == cls.striker:
            return piece, None
        return cls.piece_kind, owner(piece)

    @property
    def kinds(self) -> tuple[str, ...]:
        """The kinds of piece on the surface, the player's first."""
        return (self.piece_kind,) + ((self.striker,) if self.striker else ())

    @classmethod
    def seen_kinds(cls) -> tuple[str, ...]:
        """Every kind of thing the camera can see over the surface: the kinds of piece (as ``kinds``), then
        the ``occluders``."""
        return (cls.piece_kind,) + ((cls.striker,) if cls.striker else ()) + cls.occluders

    @property
    def piece_radii_mm(self) -> dict[str, float]:
        """Radius of each kind of piece."""
        raise NotImplementedError

    def radius_of(self, piece: str) -> float:
        return self.piece_radii_mm[self.kind_of(piece)[0]]

    # ----- the surface ----------------------------------------------------------------------------------
    @property
    def bounds_mm(self) -> tuple[float, float]:
        """Half width and half height of what vision watches: the cushion lines, or the camera's view."""
        raise NotImplementedError

    @property
    def field_limit_mm(self) -> float:
        """How far from the centre (along x or y) a piece on the surface can lie at all: a place beyond it is
        a measurement gone wrong, not a position."""
        raise NotImplementedError

    @property
    def pockets_mm(self) -> dict[str, tuple[float, float]]:
        """Pocket name -> centre, in the order of ``POCKETS`` (none: no pockets)."""
        return {}

    @property
    def pocket_radius_mm(self) -> float:
        return 0.0

    @property
    def cushion_width_mm(self) -> float:
        """How far the cushions framing the surface reach beyond ``bounds_mm`` (0: no cushions)."""
        return 0.0

    @property
    def pit_radius_mm(self) -> float:
        """The pit's radius (0: no pit)."""
        return 0.0

    @property
    def has_pit(self) -> bool:
        return self.pit_radius_mm > 0

    def in_view(self, xy: tuple[float, float]) -> bool:
        """Whether the camera sees a place on the surface."""
        hx, hy = self.bounds_mm
        return abs(xy[0]) <= hx and abs(xy[1]) <= hy


class NovussGame(Game):
    name = "novuss"
    piece_kind = "pawn"
    striker = "bat"
    occluders = ("hand", "cue")
    walls = True
    sees_whole_field = True
    unexplained_launch = "external"
    max_per_player = 8
    geometry_type = NovussGeometry
    geometry: NovussGeometry

    @classmethod
    def _geometry(cls, data: Mapping[str, Any]) -> NovussGeometry:
        return NovussGeometry.from_mapping(data)

    @property
    def half_mm(self) -> float:
        return self.geometry.surface_mm / 2.0

    @property
    def piece_radii_mm(self) -> dict[str, float]:
        return {"pawn": self.geometry.pawn_diameter_mm / 2.0, "bat": self.geometry.bat_diameter_mm / 2.0}

    @property
    def bounds_mm(self) -> tuple[float, float]:
        return (self.half_mm, self.half_mm)

    @property
    def pockets_mm(self) -> dict[str, tuple[float, float]]:
        h = self.half_mm
        at = {"NE": (h, h), "NW": (-h, h), "SE": (h, -h), "SW": (-h, -h)}
        return {name: at[name] for name in POCKETS}

    @property
    def pocket_radius_mm(self) -> float:
        return self.geometry.pocket_radius_mm

    @property
    def cushion_width_mm(self) -> float:
        return self.geometry.cushion_width_mm

    @property
    def field_limit_mm(self) -> float:
        """The board inside its frame: the cushion lines plus the cushions."""
        return self.half_mm + self.cushion_width_mm

    def zone_rect(self, player: str) -> tuple[float, float, float, float]:
        """The player's striking zone (x0, x1, y0, y1) along their own cushion, to the lines' centres."""
        g, h = self.geometry, self.half_mm
        hw, depth = g.zone_half_width_mm, g.zone_depth_mm
        return (-hw, hw, -h, -h + depth) if player == "A" else (-hw, hw, h - depth, h)


class CvrnkanaGame(Game):
    name = "cvrnkana"
    piece_kind = "marble"
    striker = None
    occluders = ("hand",)
    walls = False
    sees_whole_field = False
    unexplained_launch = "touch"
    max_per_player = 20
    starts_by_toss = True
    points_by_rule = True
    geometry_type = CvrnkanaGeometry
    geometry: CvrnkanaGeometry

    @classmethod
    def _geometry(cls, data: Mapping[str, Any]) -> CvrnkanaGeometry:
        return CvrnkanaGeometry.from_mapping(data)

    @property
    def piece_radii_mm(self) -> dict[str, float]:
        return {"marble": self.geometry.marble_diameter_mm / 2.0}

    @property
    def bounds_mm(self) -> tuple[float, float]:
        return (self.geometry.view_half_width_mm, self.geometry.view_half_height_mm)

    @property
    def pit_radius_mm(self) -> float:
        return self.geometry.pit_diameter_mm / 2.0

    @property
    def field_limit_mm(self) -> float:
        """Twice the reach of the start lines: the field has no edge, but a marble is flicked towards the pit."""
        g = self.geometry
        return 2.0 * max(g.start_line_distance_mm, g.start_line_gap_mm / 2 + g.start_line_length_mm)

    def start_lines_mm(self) -> tuple[tuple[tuple[float, float], tuple[float, float]], ...]:
        """The two start lines, each (outer end, inner end), left then right."""
        g = self.geometry
        y, gap, length = -g.start_line_distance_mm, g.start_line_gap_mm, g.start_line_length_mm
        return (((-gap / 2 - length, y), (-gap / 2, y)), ((gap / 2 + length, y), (gap / 2, y)))


#: game name -> class
GAMES: dict[str, type[Game]] = {"novuss": NovussGame, "cvrnkana": CvrnkanaGame}


def game_class(name: str) -> type[Game]:
    """The game class by name; a ``ValueError`` naming the known games for any other."""
    if name not in GAMES:
        raise ValueError(f"unknown game {name!r} (expected {' or '.join(repr(g) for g in GAMES)})")
    return GAMES[name]


def game_for(name: str, geometry: Mapping[str, Any]) -> Game:
    """The game object of ``name`` on this geometry (the profile's ``geometry`` mapping)."""
    return game_class(name)(geometry)
