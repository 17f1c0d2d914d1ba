"""``shotjudge match``: rule on the shot records of a whole match and print its score.

The records are what ``referee`` takes (JSON Lines or a JSON array; '-' reads standard input), every game
of one match in order: a record after a game ended opens the next game, as in ``live`` and ``replay``
(Cvrnkaná: who starts it by clause 1, from --toss-winner; Novuss: whoever strikes first). Printed: per
game the result (Cvrnkaná: the pit count), then the match score: games won; Cvrnkaná also the marble
totals (a drawn game scored 0, clause 7) and the points of clause 8 (3 for winning on games; on a draw on
games 2 for more marbles, 1 for equal or fewer; 0 for losing on games). ``--json``: the score as one JSON
object instead. Records that do not make a whole match (a refused record, a game not finished, fewer
games than --games, a record after the last game, an odd number of Cvrnkaná games) are one line and exit 2.
"""
from __future__ import annotations

import argparse
import json
import sys

from .errors import UserError
from .i18n import N_, _
from .options import add_games_arg, match_games

__all__ = ["register", "run"]


def register(sub) -> None:
    from rules.game import GAMES

    p = sub.add_parser("match", help=_("rule on a whole match's shot records and print the match score"),
                       description=_(__doc__), formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("shots", help=_("shot records of the match (JSON Lines or a JSON array); '-' reads standard input"))
    p.add_argument("--game", required=True, choices=list(GAMES))
    p.add_argument("--ruleset", help=_("a variant by name (novuss-seed); default: the game's own"))
    p.add_argument("--profile", help=_("table/field profile name or file (default: the game's default profile)"))
    p.add_argument("--first", default="A", choices=["A", "B"], help=_("Novuss: who strikes first in game 1"))
    p.add_argument("--toss-winner", default="A", choices=["A", "B"],
                   help=_("Cvrnkaná: who won the coin toss (starts the odd games, clause 1)"))
    add_games_arg(p, N_("the games the records hold (Cvrnkaná: an even number)"))
    p.add_argument("--json", action="store_true", help=_("the match score as one JSON object"))
    p.set_defaults(func=run, game_number=1)


def run(args) -> int:
    from rules.match import check_games, match_score

    from .cmd_referee import initial_state, read_records
    from .referee import Referee
    from .score_text import game_line, score_line

    games = match_games(args.game, args.games)
    engine, records, source = read_records(args)
    referee = Referee(engine, games)
    played = referee.play(initial_state(engine, args), records, f"{source} record")
    if played.state.outcome is None:
        raise UserError(_("{source}: game {game_no} is not over after the last record; give the records of the whole "
                          "match").format(source=source, game_no=played.game_no))
    score = referee.score(played.state, played.game_no, played.finished)
    if games is not None and not score["over"]:
        raise UserError(_("{source}: the records hold {played} of the match's {games} games (--games {games})").format(
            source=source, played=score['played'], games=games))
    if games is None:  # the match is the games the records hold
        try:
            check_games(args.game, score["played"])
        except ValueError as exc:
            raise UserError(_("{source}: {exc}; give the records of the whole match").format(source=source, exc=exc)) from None
        score = match_score(args.game, score["results"], score["played"])
    if args.json:
        sys.stdout.write(json.dumps(score, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write("".join(game_line(r) + "\n" for r in score["results"]) + score_line(score) + "\n")
    return 0
