"""``shotjudge referee``: shot records in, one ruling per line out (or the final state, ``--print-state``).

``--state FILE`` is a start state, as everywhere (``replay``, ``live``): the records are judged from it.
``--games N``: the records are of a match of N games: a record after a game ended opens the next one (as
``live`` and ``replay`` do), and one after the N-th game is refused; without it they are of one game.
``shotjudge match`` rules on a whole match's records and prints its score."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from judge.errors import UserError
from judge.i18n import N_, _, add_lang_arg
from judge.options import add_games_arg, match_games

__all__ = ["register", "run", "read_records", "initial_state"]


def register(sub) -> None:
    from rules.game import GAMES

    p = sub.add_parser("referee", help=_("rule on shot records (JSON Lines or a JSON array)"),
                       description=_("Read shot records and write one ruling per line (docs/schemas/ruling.schema.json)."))
    p.add_argument("shots", help=_("shot records file (JSON Lines or a JSON array); '-' reads standard input"))
    p.add_argument("--game", required=True, choices=list(GAMES))
    p.add_argument("--ruleset", help=_("a variant by name (novuss-seed); default: the game's own"))
    p.add_argument("--profile", help=_("table/field profile name or file (default: the game's default profile)"))
    add_lang_arg(p)
    p.add_argument("--first", default="A", choices=["A", "B"], help=_("Novuss: who strikes first"))
    p.add_argument("--toss-winner", default="A", choices=["A", "B"], help=_("Cvrnkaná: who won the coin toss"))
    p.add_argument("--game-number", type=int, default=1, help=_("Cvrnkaná: number of this game in the match"))
    p.add_argument("--pretty", action="store_true", help=_("indented JSON for people"))
    p.add_argument("--state", metavar="FILE", help=_("start state: judge the records from this game state (JSON, as "
                                                     "for replay and live); default: the opening (--first, "
                                                     "--toss-winner)"))
    p.add_argument("--print-state", action="store_true", help=_("print the final game state instead of the rulings"))
    add_games_arg(p, N_("the records are of one game (a record after it ends is refused)"))
    p.set_defaults(func=run)


def initial_state(engine, args):
    from rules.game import game_class

    if not game_class(engine.game).starts_by_toss:  # Novuss: a player is named to strike first
        return engine.initial(first=args.first)
    if args.game_number < 1:
        raise UserError(_("--game-number must be 1 or more, got {game_number}").format(game_number=args.game_number))
    return engine.initial(toss_winner=args.toss_winner, game_number=args.game_number)


def read_records(args):
    """``(engine, records, source)``: the ruleset of ``--game`` (``--ruleset``, ``--profile``) and the shot
    records of ``args.shots`` (a file, or '-': standard input), read whole; ``source`` names them in errors."""
    from calibration import profile_for
    from rules import engine_for, load_records

    if args.shots == "-":
        source, text = "stdin", sys.stdin.read()
    else:
        path = Path(args.shots)
        if not path.is_file():
            raise UserError(_("{shots}: no such file").format(shots=args.shots))
        source = path.name
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise UserError(_("{source}: not a UTF-8 text file").format(source=source)) from None
    profile = profile_for(args.game, args.profile)
    engine = engine_for(args.ruleset or args.game, profile.geometry, args.game)
    if engine.game != args.game:
        raise UserError(_("ruleset {ruleset} is for {game}, not {game2}").format(
            ruleset=repr(args.ruleset), game=engine.game, game2=args.game))
    return engine, load_records(text, source=source, game=args.game), source


def run(args) -> int:
    games = match_games(args.game, args.games)
    engine, records, source = read_records(args)
    if args.state is not None:
        from .replay import load_state

        state = load_state(engine, args.state)
    else:
        state = initial_state(engine, args)
    if games is not None:  # a match: the one referee step opens each next game
        from .referee import Referee

        played = Referee(engine, games).play(state, records, f"{source} record")
        state, lines = played.state, [r.to_dict(args.lang) for r in played.rulings]
    else:
        lines = []
        for i, record in enumerate(records, 1):
            try:
                state, ruling = engine.apply(state, record)
            except ValueError as exc:
                raise type(exc)(f"{source} record {i}: {exc}") from None
            lines.append(ruling.to_dict(args.lang))
    indent = 2 if args.pretty else None
    out = [state.to_dict()] if args.print_state else lines
    # Everything was judged before anything is written: a bad record leaves no half output.
    sys.stdout.write("".join(json.dumps(o, ensure_ascii=False, indent=indent) + "\n" for o in out))
    return 0
