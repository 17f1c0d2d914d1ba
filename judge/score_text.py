"""A match score (``rules.match.match_score``) in words: one line per game and one for the match."""
from __future__ import annotations

from typing import Any, Mapping

__all__ = ["game_line", "score_line"]


def _per_player(values: Mapping[str, int]) -> str:
    return f"A {values['A']}, B {values['B']}"


def _games(n: int) -> str:
    return f"{n} game{'' if n == 1 else 's'}"


def game_line(result: Mapping[str, Any]) -> str:
    """``game 1: A won, pit A 10, B 3``; a Cvrnkaná draw is scored 0 (clause 7); a replayed Novuss set
    is no game of the match."""
    head = f"game {result['game_no']}: "
    pit = f"pit {_per_player(result['pit'])}" if "pit" in result else ""
    if result["result"] == "win":
        return head + f"{result['winner']} won" + (f", {pit}" if pit else "")
    if result["result"] == "replay":
        return head + "replayed (both last pawns in one stroke), not a game of the match"
    return head + "draw" + (f", scored 0 (clause 7; {pit})" if pit else "")


def score_line(score: Mapping[str, Any]) -> str:
    """``match over after its 2 games: games won A 1, B 1; marbles A 15, B 13; points (clause 8) A 2, B 1``."""
    played, games = score["played"], score["games"]
    if score["over"]:
        head = f"match over after its {_games(games)}"
    elif games is None:
        head = f"match: {_games(played)} played"
    else:
        head = f"match: {played} of {_games(games)} played"
    parts = [f"games won {_per_player(score['games_won'])}"]
    if "marbles" in score:
        parts.append(f"marbles {_per_player(score['marbles'])}")
    if score.get("points") is not None:
        parts.append(f"points (clause 8) {_per_player(score['points'])}")
    return f"{head}: " + "; ".join(parts)
