"""A match: how many games it has and its score from the games finished so far. Pure, standard library only.

Cvrnkaná (clause 8): a match is an even number of games; games won, marble totals (a drawn game scored
"0", clause 7) and points 3 / 2-1 / 1-1 / 0 (``rules.cvrnkana.match_tally``). Novuss: the organiser's
number of games; the score is the games won. A game the rules replay (Novuss ``both_last_pawns``:
the set is replayed) is listed but is no game of the match: the match has ``games`` games that count.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from .cvrnkana import CvrnkanaState, game_result, match_tally, match_totals
from .game import PLAYERS

__all__ = ["check_games", "result_of", "match_score"]


def check_games(game: str, games: int) -> None:
    """``games`` can be the length of a ``game`` match: 1 or more; Cvrnkaná: even (clause 8)."""
    if isinstance(games, bool) or not isinstance(games, int) or games < 1:
        raise ValueError(f"a match has 1 game or more, got {games!r}")
    if game == "cvrnkana" and games % 2:
        raise ValueError(f"a Cvrnkaná match is an even number of games (clause 8), got {games}")


def result_of(state: Any, game_no: int) -> dict[str, Any]:
    """Game ``game_no`` of the match, finished in ``state``: ``{"game_no", "result", "winner"}`` and, for
    Cvrnkaná, ``pit`` (the count per player, clause 7i)."""
    if state.outcome is None:
        raise ValueError(f"game {game_no} is not over yet")
    if isinstance(state, CvrnkanaState):
        return {"game_no": game_no, **game_result(state)}
    return {"game_no": game_no, "result": state.outcome.result, "winner": state.outcome.winner}


def match_score(game: str, results: Sequence[Mapping[str, Any]], games: int | None = None) -> dict[str, Any]:
    """The score of a match from its finished games (``result_of`` each, in order); ``games``: its length
    (None: open, as many games as are played).

    ``{"game", "games", "played", "over", "results", "games_won"}``; Cvrnkaná adds ``marbles`` and
    ``points`` (clause 8), the points once the match is over (an open match: whenever an even number of
    games is played, the points it would end with), else None. ``played`` counts the games of the match
    (not a replayed one); ``over``: all ``games`` are played."""
    counted = [r for r in results if r.get("result") != "replay"]
    over = games is not None and len(counted) >= games
    score: dict[str, Any] = {"game": game, "games": games, "played": len(counted), "over": over,
                             "results": [dict(r) for r in results]}
    if game != "cvrnkana":
        score["games_won"] = {p: sum(1 for r in counted if r.get("result") == "win" and r.get("winner") == p)
                              for p in PLAYERS}
        return score
    final = bool(counted) and len(counted) % 2 == 0 and (over or games is None)
    tally = match_tally(counted) if final else {**match_totals(counted), "points": None}
    return {**score, **tally}
