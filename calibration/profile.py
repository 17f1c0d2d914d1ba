"""Table and field profiles: the geometry every call is measured against, kept as data.

A profile is a JSON file (see ``docs/schemas/profile.schema.json``). The shipped ones live in
``calibration/profiles/``; a club describes its own table by copying one and editing the numbers.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, fields
from functools import cached_property
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

from rules.game import GAMES, CvrnkanaGame, NovussGame, game_class

from .errors import parse_json

__all__ = ["Profile", "ProfileError", "load_profile", "default_profile", "list_profiles", "profile_for", "profile_from_dict",
           "save_profile"]

SCHEMA = "shotjudge.profile/1"

#: game name -> the geometry keys its profile must give: the fields of the game's geometry (``rules.game``)
_REQUIRED = {name: tuple(f.name for f in fields(game.geometry_type)) for name, game in GAMES.items()}
#: Cvrnkana clause 5: a marble's diameter, inclusive
MARBLE_MM = (10.0, 16.5)


class ProfileError(ValueError):
    """A profile that is missing, malformed or physically impossible."""


@dataclass(frozen=True)
class Profile:
    game: str
    name: str
    geometry: Mapping[str, float]
    markers: Mapping[str, Any] = field(default_factory=dict)
    defaults_unconfirmed: bool = False
    source: str = ""
    appearance: Any = None  # calibration.appearance.Appearance: nominal piece colours, or None

    def __getitem__(self, key: str) -> float:
        return self.geometry[key]

    @cached_property
    def spec(self):
        """The game object (``rules.game``): typed geometry, piece ids, pockets and the game's flags."""
        from rules.game import game_for

        return game_for(self.game, self.geometry)

    def to_dict(self) -> dict:
        out = {
            "schema": SCHEMA, "game": self.game, "name": self.name,
            "defaults_unconfirmed": self.defaults_unconfirmed,
            "geometry": dict(self.geometry), "markers": _plain(self.markers),
        }
        if self.appearance is not None:
            out["appearance"] = self.appearance.to_dict()
        return out


def _plain(obj):
    if isinstance(obj, Mapping):
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    return obj


def _freeze(obj):
    if isinstance(obj, dict):
        return MappingProxyType({k: _freeze(v) for k, v in obj.items()})
    if isinstance(obj, list):
        return tuple(_freeze(v) for v in obj)
    return obj


def _check_geometry(game: str, geo: Mapping[str, Any], where: str) -> None:
    for key in _REQUIRED[game]:
        if key not in geo:
            raise ProfileError(f"{where}: geometry.{key} is missing")
    for key, value in geo.items():  # the optional sizes (piece heights, used by vision and the simulator) too
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1e300:
            raise ProfileError(f"{where}: geometry.{key} must be a positive number, got {value!r:.60}")
    _PLAUSIBLE[game_class(game)](geo, where)


def _check_novuss(geo: Mapping[str, Any], where: str) -> None:
    half = geo["surface_mm"] / 2
    if geo["pawn_hole_mm"] >= geo["pawn_diameter_mm"] or geo["bat_hole_mm"] >= geo["bat_diameter_mm"]:
        raise ProfileError(f"{where}: a hole must be smaller than its piece")
    for key in ("pawn_diameter_mm", "bat_diameter_mm"):  # a piece no pocket can take could never be pocketed
        if geo[key] >= 2 * geo["pocket_radius_mm"]:
            raise ProfileError(f"{where}: geometry.{key} ({geo[key]:g} mm) must be smaller than a pocket "
                               f"(2 x pocket_radius_mm = {2 * geo['pocket_radius_mm']:g} mm)")
    if geo["pocket_radius_mm"] >= half:
        raise ProfileError(f"{where}: geometry.pocket_radius_mm must be less than half the board's surface_mm")
    if geo["zone_depth_mm"] >= half or geo["circle_radius_mm"] >= half - geo["zone_depth_mm"]:
        raise ProfileError(f"{where}: striking zones and the centre circle must fit on the board without overlapping")
    if geo["zone_half_width_mm"] > half:
        raise ProfileError(f"{where}: geometry.zone_half_width_mm is wider than the board")


def _check_cvrnkana(geo: Mapping[str, Any], where: str) -> None:
    if not 50.0 <= geo["pit_diameter_mm"] <= 120.0:
        raise ProfileError(f"{where}: geometry.pit_diameter_mm must be 50-120 mm (rules clause 6), got {geo['pit_diameter_mm']}")
    for key in ("marble_min_mm", "marble_max_mm"):  # the organiser's limits lie within the rules' own
        if not MARBLE_MM[0] <= geo[key] <= MARBLE_MM[1]:
            raise ProfileError(f"{where}: geometry.{key} must be {MARBLE_MM[0]:g}-{MARBLE_MM[1]:g} mm (rules clause 5), "
                               f"got {geo[key]:g}")
    if not geo["marble_min_mm"] <= geo["marble_diameter_mm"] <= geo["marble_max_mm"]:
        raise ProfileError(f"{where}: geometry.marble_diameter_mm is outside marble_min_mm..marble_max_mm")
    if geo["marbles_per_player"] not in (10, 15, 20):
        raise ProfileError(f"{where}: geometry.marbles_per_player must be 10, 15 or 20 (rules clause 5)")


#: game class -> the checks that its numbers are physically possible (after every key is a positive number)
_PLAUSIBLE = {NovussGame: _check_novuss, CvrnkanaGame: _check_cvrnkana}


_DICT_NAME = re.compile(r"^DICT_(\d)X\1_(50|100|250|1000)$")


def _check_markers(markers: Any, where: str) -> None:
    """The ``markers`` section: ArUco dictionary, black-square side ``size_mm`` and each id's centre in board
    mm (squares axis-aligned with the board frame; see docs/calibration.md for the corner order)."""
    if not isinstance(markers, dict):
        raise ProfileError(f"{where}: markers must be an object")
    if not markers:
        return
    name = markers.get("dictionary")
    match = _DICT_NAME.match(name) if isinstance(name, str) else None
    if match is None:
        raise ProfileError(f"{where}: markers.dictionary must be an ArUco name like 'DICT_4X4_50', got {name!r}")
    size = markers.get("size_mm")
    if isinstance(size, bool) or not isinstance(size, (int, float)) or not 0 < size < 1e300:
        raise ProfileError(f"{where}: markers.size_mm must be a positive number, got {size!r}")
    centres = markers.get("centres_mm")
    if not isinstance(centres, dict) or len(centres) < 1:
        raise ProfileError(f"{where}: markers.centres_mm must map marker ids to [x_mm, y_mm]")
    count = int(match.group(2))
    points = []
    for key, xy in centres.items():
        if not (isinstance(key, str) and key.isdigit() and int(key) < count):
            raise ProfileError(f"{where}: markers.centres_mm key {key!r} is not an id of {name} (0..{count - 1})")
        if (not isinstance(xy, list) or len(xy) != 2
                or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and abs(v) < 1e300 for v in xy)):
            raise ProfileError(f"{where}: markers.centres_mm[{key}] must be [x_mm, y_mm], got {xy!r}")
        points.append((key, float(xy[0]), float(xy[1])))
    for i, (ka, xa, ya) in enumerate(points):
        for kb, xb, yb in points[i + 1:]:
            if max(abs(xa - xb), abs(ya - yb)) < size:
                raise ProfileError(f"{where}: markers {ka} and {kb} overlap (centres closer than size_mm)")


def _from_dict(data: Any, where: str) -> Profile:
    if not isinstance(data, dict):
        raise ProfileError(f"{where}: a profile must be a JSON object")
    if data.get("schema") != SCHEMA:
        raise ProfileError(f"{where}: schema must be {SCHEMA!r}, got {data.get('schema')!r}")
    game = data.get("game")
    if game not in _REQUIRED:
        raise ProfileError(f"{where}: game must be 'novuss' or 'cvrnkana', got {game!r}")
    geo = data.get("geometry")
    if not isinstance(geo, dict):
        raise ProfileError(f"{where}: geometry must be an object")
    _check_geometry(game, geo, where)
    _check_markers(data.get("markers") or {}, where)
    if not isinstance(data.get("defaults_unconfirmed", False), bool):
        raise ProfileError(f"{where}: defaults_unconfirmed must be true or false, got {data['defaults_unconfirmed']!r:.60}")
    appearance = None
    if data.get("appearance") is not None:
        from .appearance import AppearanceError, appearance_from_dict

        try:
            appearance = appearance_from_dict(data["appearance"], game, f"{where}: appearance")
        except AppearanceError as exc:
            raise ProfileError(str(exc)) from None
    return Profile(
        game=game, name=str(data.get("name") or Path(where).stem), geometry=_freeze(geo),
        markers=_freeze(data.get("markers") or {}), defaults_unconfirmed=bool(data.get("defaults_unconfirmed")),
        source=where, appearance=appearance,
    )


def profile_from_dict(data: Any, where: str = "profile") -> Profile:
    """Validate a profile given as a parsed JSON object (e.g. the snapshot inside a calibration file)."""
    return _from_dict(data, where)


def save_profile(profile: Profile, path: str | Path) -> Path:
    """Write a profile as JSON atomically (temp file + rename): how a measured profile is offered to a club."""
    from .atomic import write_text_atomic

    return write_text_atomic(path, json.dumps(profile.to_dict(), indent=2) + "\n")


def list_profiles() -> list[str]:
    """Names of the profiles shipped with shotjudge."""
    folder = resources.files("calibration") / "profiles"
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".json"))


def load_profile(name_or_path: str | Path) -> Profile:
    """Load a shipped profile by name (``novuss-default``) or any profile file by path."""
    text_path = str(name_or_path)
    if text_path in list_profiles():
        ref = resources.files("calibration") / "profiles" / f"{text_path}.json"
        where, raw = text_path, ref.read_text(encoding="utf-8")
    else:
        path = Path(text_path)
        if not path.is_file():
            known = ", ".join(list_profiles())
            raise ProfileError(f"profile {text_path!r} does not exist (shipped profiles: {known}; or give a path to a profile file)")
        try:
            where, raw = str(path), path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise ProfileError(f"{path}: not a profile (not UTF-8 text)") from None
    return _from_dict(parse_json(raw, where, ProfileError, "a profile"), where)


def default_profile(game: str) -> Profile:
    if game not in _REQUIRED:
        raise ProfileError(f"unknown game {game!r}: expected 'novuss' or 'cvrnkana'")
    return load_profile(f"{game}-default")


def profile_for(game: str, name_or_path: str | Path | None = None) -> Profile:
    """The profile a command uses for ``game``: the given one (name or file) or the game's default;
    a profile for the other game is refused."""
    profile = default_profile(game) if name_or_path is None else load_profile(name_or_path)
    if profile.game != game:
        raise ProfileError(f"profile {profile.name!r} is for {profile.game}, not {game}")
    return profile
