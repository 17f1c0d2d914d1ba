"""Standings from what the tables published: each match's score folded from its entries exactly as the table's
own judge folds its journal (``journal.fold_entries`` and ``Match``), then points: Cvrnkaná clause 8
(``rules.match``); Novuss the organiser's (``--points-novuss``, default win 2, draw 1, loss 0 for the match,
decided on games won once it is over, or as it stands in a match of no set length).
"""
from __future__ import annotations

import argparse
from dataclasses import replace
from typing import Any, Mapping

from rules.game import game_class

from .journal import fold_entries
from .i18n import _

__all__ = ["match_standing", "player_ranking", "novuss_points", "NOVUSS_POINTS"]

NOVUSS_POINTS = {"win": 2, "draw": 1, "loss": 0}


def novuss_points(text: str) -> dict[str, int]:
    """``win=2,draw=1,loss=0`` (any of the three; the rest keep their default)."""
    points = dict(NOVUSS_POINTS)
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, eq, value = part.partition("=")
        if not eq or name.strip() not in points or not value.strip().isdigit():
            raise argparse.ArgumentTypeError(_("must be like win=2,draw=1,loss=0 (whole numbers), got {text}").format(text=repr(text)))
        points[name.strip()] = int(value)
    return points


def engine_of(match: Mapping[str, Any]):
    """The table's rule engine, from its journal's ``match`` entry (ruleset, profile, options)."""
    from calibration import profile_for
    from rules import engine_for

    game = match["game"]
    profile = profile_for(game, match.get("profile"))
    return engine_for(match.get("ruleset") or game, profile.geometry, game, **dict(match.get("options") or {}))


def match_standing(entries: list[dict[str, Any]], points_novuss: Mapping[str, int] = NOVUSS_POINTS) -> dict[str, Any]:
    """A table's match from its entries (seq order, no hole): players, score, points, shots, the last call."""
    from .match import fold_games

    info = next((dict(e["payload"]) for e in entries if e["kind"] == "match"), None)
    if info is None:
        return {"error": "the match entry has not arrived"}
    players = {"A": "A", "B": "B", **dict(info.get("players") or {})}
    # folded as the table's own Match folds its journal (a record written ahead and not judged is the table's
    # to settle: the hub is never sent one)
    resume = replace(fold_entries(info, entries), pending=())
    try:
        score = fold_games(engine_of(info), resume, info.get("games"))
    except ValueError as exc:  # a profile or ruleset this hub does not know, a record it refuses
        return {"game": info.get("game"), "players": players, "error": str(exc).splitlines()[0]}
    if game_class(info["game"]).points_by_rule:
        points, rule = score.get("points"), "clause 8"
    else:
        points, rule = _novuss(score, points_novuss), "organiser " + ",".join(f"{k}={v}" for k, v in points_novuss.items())
    shots = [e for e in entries if e["kind"] == "shot"]
    last = {"game_no": shots[-1]["game_no"], "shot_no": shots[-1]["shot_no"],
            "ruling": shots[-1]["payload"]["ruling"]} if shots else None
    return {"game": info["game"], "players": players, "score": score, "points": points, "points_rule": rule,
            "shots": len(shots), "game_no": resume.game_no, "last": last, "error": None}


def _novuss(score: Mapping[str, Any], points: Mapping[str, int]) -> dict[str, int] | None:
    if not score["played"] or not (score["over"] or score["games"] is None):
        return None
    a, b = score["games_won"]["A"], score["games_won"]["B"]
    if a == b:
        return {"A": points["draw"], "B": points["draw"]}
    return {"A": points["win"], "B": points["loss"]} if a > b else {"A": points["loss"], "B": points["win"]}


def player_ranking(standings: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The hall's table of players: per name the matches, points and games won, best first."""
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for s in standings:
        if s.get("error") is not None:
            continue
        for side in ("A", "B"):
            name = s["players"][side] if s["players"][side] not in ("A", "B") else f"{s['table']}:{side}"
            row = rows.setdefault((s["game"], name), {"player": name, "game": s["game"], "matches": 0, "points": 0,
                                                     "games_won": 0, "tables": []})
            row["matches"] += 1
            row["points"] += (s["points"] or {}).get(side, 0)
            row["games_won"] += s["score"]["games_won"][side]
            row["tables"].append(s["table"])
    return sorted(rows.values(), key=lambda r: (r["game"], -r["points"], -r["games_won"], r["player"]))
