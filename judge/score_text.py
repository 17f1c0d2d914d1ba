"""A match score (``rules.match.match_score``) in words: one line per game and one for the match."""
from __future__ import annotations

from typing import Any, Mapping

from .i18n import _, ngettext

__all__ = ["game_line", "score_line"]


def _per_player(values: Mapping[str, int]) -> str:
    return f"A {values['A']}, B {values['B']}"


def game_line(result: Mapping[str, Any]) -> str:
    """``game 1: A won, pit A 10, B 3``; a Cvrnkaná draw is scored 0 (clause 7); a replayed Novuss set
    is no game of the match."""
    head = _("game {game_no}: ").format(game_no=result["game_no"])
    pit = _("pit {score}").format(score=_per_player(result["pit"])) if "pit" in result else ""
    if result["result"] == "win":
        return head + _("{winner} won").format(winner=result["winner"]) + (f", {pit}" if pit else "")
    if result["result"] == "replay":
        return head + _("replayed (both last pawns in one stroke), not a game of the match")
    return head + (_("draw, scored 0 (clause 7; {pit})").format(pit=pit) if pit else _("draw"))


def score_line(score: Mapping[str, Any]) -> str:
    """``match over after its 2 games: games won A 1, B 1; marbles A 15, B 13; points (clause 8) A 2, B 1``."""
    played, games = score["played"], score["games"]
    if score["over"]:
        head = ngettext("match over after its {n} game", "match over after its {n} games", games).format(n=games)
    elif games is None:
        head = ngettext("match: {n} game played", "match: {n} games played", played).format(n=played)
    else:
        head = ngettext("match: {played} of {n} game played", "match: {played} of {n} games played",
                        games).format(played=played, n=games)
    parts = [_("games won {score}").format(score=_per_player(score["games_won"]))]
    if "marbles" in score:
        parts.append(_("marbles {score}").format(score=_per_player(score["marbles"])))
    if score.get("points") is not None:
        parts.append(_("points (clause 8) {score}").format(score=_per_player(score["points"])))
    return _("{head}: {parts}").format(head=head, parts="; ".join(parts))
