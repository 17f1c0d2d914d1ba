"""``shotjudge sim``: simulate a scenario and write its ground truth (and, once wired, its video)."""
from __future__ import annotations

from judge.errors import UserError

__all__ = ["register", "run"]


def register(sub) -> None:
    p = sub.add_parser("sim", help="simulate a scenario: exact ground truth (truth.json) and video",
                       description="Simulate a Novuss or Cvrnkaná scenario with real physics, referee every shot "
                                   "with the rule engine and write DIR/truth.json.")
    p.add_argument("game", nargs="?", choices=["novuss", "cvrnkana"], help="which game")
    p.add_argument("--scenario", help="scenario name (see --list)")
    p.add_argument("--list", action="store_true", help="list the scenarios with one line each and exit")
    p.add_argument("--seed", type=int, default=0, help="random seed (same seed, same files)")
    p.add_argument("--fps", type=float, default=60.0, help="frames per second of the truth table and video")
    p.add_argument("--size", default="1280x720", help="video size WIDTHxHEIGHT")
    p.add_argument("--profile", help="table/field profile name or file (default: the game's default profile)")
    p.add_argument("--out", help="output folder")
    p.add_argument("--video", dest="video", action="store_true", help="also render the video")
    p.add_argument("--no-video", dest="video", action="store_false", help="ground truth only (default)")
    p.set_defaults(func=run, video=False)


def run(args) -> int:
    from sim.run import parse_size, run_scenario
    from sim.scenarios import list_scenarios

    if args.list:
        for game in [args.game] if args.game else ["novuss", "cvrnkana"]:
            for name, desc in list_scenarios(game):
                print(f"{game:9s} {name:22s} {desc}")
        return 0
    if not args.game:
        raise UserError("give the game (novuss or cvrnkana), or --list")
    if not args.scenario:
        raise UserError("--scenario is required (see shotjudge sim --list)")
    if not args.out:
        raise UserError("--out DIR is required")
    size = parse_size(args.size)
    result = run_scenario(args.game, args.scenario, args.seed, args.out, fps=args.fps, size=size,
                          video=args.video, profile=args.profile)
    print(f"{args.game} {args.scenario} seed {args.seed}: {result['shots']} shot(s), {result['frames']} frames "
          f"-> {result['truth']}")
    return 0
