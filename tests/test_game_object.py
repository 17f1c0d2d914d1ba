"""The one game object (``rules.game``): nothing outside ``rules/`` asks the game's name, and the object
itself gives the exact pockets, piece ids, kinds, bounds and errors every layer relies on."""
from __future__ import annotations

import io
import os
import re
import tokenize
from dataclasses import fields
from pathlib import Path

import pytest

from calibration.profile import ProfileError, default_profile, profile_from_dict
from rules.game import (GAMES, POCKETS, CvrnkanaGame, CvrnkanaGeometry, NovussGame, NovussGeometry, game_class,
                        game_for, owner, piece_key)

ROOT = Path(__file__).resolve().parent.parent

# ----- (a) no branch on the game's name outside rules/ ----------------------------------------------------

#: files other engineers are still converting to the game object (paths relative to the repository root);
#: empty this set as each is cleaned - then the test holds for every file
#: not product code of ours: the rule engines (they build the game object), the tests, build output
SKIP_DIRS = {"rules", "tests", "build", "dist", "__pycache__", "node_modules"}

_NAME = r"""["'](?:novuss|cvrnkana)["']"""
#: ``game == "novuss"``, ``"cvrnkana" != game``
COMPARE = re.compile(rf"(?:==|!=)\s*{_NAME}|{_NAME}\s*(?:==|!=)")
#: ``game in ("novuss", ...)``, ``game not in ["cvrnkana"]``
MEMBER = re.compile(rf"\bin\s*[(\[{{]\s*{_NAME}")
#: a loop over the names (``for game in ("novuss", "cvrnkana")``) is no branch
LOOP = re.compile(rf"\bfor\s+[\w\s,()]+?\s+in\s*[(\[{{]\s*{_NAME}")
_GAME_LITERAL = re.compile(r"""[rRbBuU]*(["'])(?:novuss|cvrnkana)\1""")


def _code_lines(text: str) -> list[str]:
    """The lines of a Python source with comments and every string but a bare game name blanked out (so a
    docstring or message that quotes ``game == "novuss"`` is not a branch)."""
    lines = [list(line) for line in text.splitlines()]
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return text.splitlines()
    for tok in tokens:
        if tok.type == tokenize.COMMENT or (tok.type == tokenize.STRING and not _GAME_LITERAL.fullmatch(tok.string)):
            (r0, c0), (r1, c1) = tok.start, tok.end
            for r in range(r0, r1 + 1):
                row = lines[r - 1]
                a = c0 if r == r0 else 0
                b = c1 if r == r1 else len(row)
                row[a:b] = " " * (b - a)
    return ["".join(row) for row in lines]


def name_branches(text: str) -> list[int]:
    """Line numbers (1-based) of comparisons of something with a game-name literal."""
    out = []
    for n, line in enumerate(_code_lines(text), 1):
        if COMPARE.search(line) or (MEMBER.search(line) and not LOOP.search(line)):
            out.append(n)
    return out


def _python_files(root: Path):
    for folder, dirs, files in os.walk(root):
        rel = Path(folder).relative_to(root)
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not d.endswith(".egg-info")
                         and not (rel == Path(".") and d in SKIP_DIRS) and d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                yield (rel / name).as_posix()


def test_the_scanner_finds_branches_and_only_branches():
    src = '''"""Docs may say game == "novuss"."""
if profile.game == "novuss":  # 2
    pass
x = "cvrnkana" != g  # 4
ok = g in ("novuss", "cvrnkana")  # 5
bad = g not in ["cvrnkana"]  # 6
for game in ("novuss", "cvrnkana"):  # a loop
    print("where game == 'novuss' ...")  # 8: a message, not a branch
p.add_argument("--game", choices=("novuss", "cvrnkana"))
raise ValueError("game must be 'novuss' or 'cvrnkana'")
# if game == "novuss": a comment
'''
    assert name_branches(src) == [2, 4, 5, 6]


def test_no_branch_on_the_game_name_outside_rules():
    found = []
    for rel in _python_files(ROOT):
        text = (ROOT / rel).read_text(encoding="utf-8")
        found += [f"{rel}:{n}: {text.splitlines()[n - 1].strip()}" for n in name_branches(text)]
    assert not found, ("ask the game object (profile.spec: has_pit, striker, pockets_mm, kind_of ...) instead of "
                       "comparing the game's name:\n" + "\n".join(found))


# ----- (b) the game object ----------------------------------------------------------------------------------

NOV = default_profile("novuss").spec
CVR = default_profile("cvrnkana").spec


def test_profiles_give_their_game_object():
    assert type(NOV) is NovussGame and type(CVR) is CvrnkanaGame
    assert NOV.name == "novuss" and CVR.name == "cvrnkana"
    assert isinstance(NOV.geometry, NovussGeometry) and isinstance(CVR.geometry, CvrnkanaGeometry)
    assert NOV.geometry.surface_mm == 1000.0 and CVR.geometry.pit_diameter_mm == 100.0
    assert NOV == game_for("novuss", default_profile("novuss").geometry)


def test_pockets():
    assert NOV.pockets_mm == {"NE": (500.0, 500.0), "NW": (-500.0, 500.0), "SE": (500.0, -500.0),
                              "SW": (-500.0, -500.0)}
    assert tuple(NOV.pockets_mm) == POCKETS == ("NE", "NW", "SE", "SW")
    assert NOV.pocket_radius_mm == 45.0
    assert CVR.pockets_mm == {} and CVR.pocket_radius_mm == 0.0


def test_pieces():
    assert NOV.kind_of("bat") == ("bat", None)
    assert NOV.kind_of("B3") == ("pawn", "B")
    assert CVR.kind_of("B3") == ("marble", "B")
    assert CVR.kind_of("A20") == ("marble", "A")
    assert owner("A7") == "A" and owner("bat") is None
    assert NOV.piece_ids() == ("bat", *(f"A{i}" for i in range(1, 9)), *(f"B{i}" for i in range(1, 9)))
    assert CVR.piece_ids() == (*(f"A{i}" for i in range(1, 21)), *(f"B{i}" for i in range(1, 21)))
    assert sorted(["B2", "A10", "bat", "A9", "B10", "A1"], key=piece_key) == ["bat", "A1", "A9", "A10", "B2", "B10"]
    assert NOV.kinds == ("pawn", "bat") and CVR.kinds == ("marble",)
    assert NovussGame.seen_kinds() == ("pawn", "bat", "hand", "cue") and CvrnkanaGame.seen_kinds() == ("marble", "hand")
    assert NOV.piece_radii_mm == {"pawn": 16.0, "bat": 18.0} and CVR.piece_radii_mm == {"marble": 7.0}
    assert NOV.radius_of("bat") == 18.0 and NOV.radius_of("A1") == 16.0 and CVR.radius_of("B4") == 7.0


def test_flags():
    assert (NOV.striker, CVR.striker) == ("bat", None)
    assert (NOV.piece_kind, CVR.piece_kind) == ("pawn", "marble")
    assert (NOV.occluders, CVR.occluders) == (("hand", "cue"), ("hand",))
    assert (NOV.walls, CVR.walls) == (True, False)
    assert (NOV.sees_whole_field, CVR.sees_whole_field) == (True, False)
    assert (NOV.unexplained_launch, CVR.unexplained_launch) == ("external", "touch")
    assert (NOV.starts_by_toss, CVR.starts_by_toss) == (False, True)
    assert (NOV.max_per_player, CVR.max_per_player) == (8, 20)


def test_surface():
    assert NOV.bounds_mm == (500.0, 500.0) and NOV.half_mm == 500.0
    assert CVR.bounds_mm == (600.0, 340.0)
    assert NOV.cushion_width_mm == 45.0 and CVR.cushion_width_mm == 0.0
    assert NOV.in_view((500.0, -500.0)) and not NOV.in_view((500.5, 0.0))
    assert CVR.in_view((600.0, 340.0)) and CVR.in_view((-600.0, -340.0))
    assert not CVR.in_view((600.1, 0.0)) and not CVR.in_view((0.0, -340.5))
    assert not CVR.in_view((0.0, -3000.0))  # the start lines are out of view
    assert (NOV.has_pit, CVR.has_pit) == (False, True)
    assert (NOV.pit_radius_mm, CVR.pit_radius_mm) == (0.0, 50.0)
    assert NOV.zone_rect("A") == (-340.0, 340.0, -500.0, -390.0)
    assert NOV.zone_rect("B") == (-340.0, 340.0, 390.0, 500.0)
    assert CVR.start_lines_mm() == (((-1250.0, -3000.0), (-250.0, -3000.0)), ((1250.0, -3000.0), (250.0, -3000.0)))


def test_geometry_keys_are_the_profile_keys():
    for name, cls in GAMES.items():
        data = dict(default_profile(name).geometry)
        assert {f.name for f in fields(cls.geometry_type)} <= set(data)


@pytest.mark.parametrize("game,key", [("novuss", "surface_mm"), ("novuss", "simultaneous_contact_s"),
                                      ("cvrnkana", "pit_depth_mm"), ("cvrnkana", "view_half_height_mm")])
def test_a_missing_geometry_key_is_named(game, key):
    data = dict(default_profile(game).geometry)
    del data[key]
    with pytest.raises(ValueError, match=rf"^{game} geometry: {key} is missing$"):
        game_for(game, data)
    doc = default_profile(game).to_dict()
    del doc["geometry"][key]
    with pytest.raises(ProfileError, match=rf"geometry\.{key} is missing"):
        profile_from_dict(doc, "test")


def test_a_geometry_value_must_be_a_number():
    data = dict(default_profile("novuss").geometry, surface_mm="wide")
    with pytest.raises(ValueError, match="novuss geometry: surface_mm must be a finite number, got 'wide'"):
        game_for("novuss", data)


def test_unknown_game_names_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown game 'chess' \(expected 'novuss' or 'cvrnkana'\)"):
        game_class("chess")
    with pytest.raises(ValueError, match="'novuss' or 'cvrnkana'"):
        game_for("chess", {})
    assert game_class("novuss") is NovussGame and game_class("cvrnkana") is CvrnkanaGame
    assert tuple(GAMES) == ("novuss", "cvrnkana")
