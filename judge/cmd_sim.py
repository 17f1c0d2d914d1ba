"""``shotjudge sim``: simulate a scenario, film it with the synthetic camera and write its ground truth."""
from __future__ import annotations

from pathlib import Path

from judge.errors import UserError
from judge.i18n import _

__all__ = ["register", "run", "replay_command"]


def register(sub) -> None:
    from rules.game import GAMES

    p = sub.add_parser("sim", help=_("simulate a scenario: video, exact ground truth (truth.json), YOLO data"),
                       description=_("Simulate a Novuss or Cvrnkaná scenario with real physics, referee every shot "
                                     "with the rule engine and write DIR/truth.json (pixel and board positions per "
                                     "frame, camera, homography, shot records, rulings) and DIR/video.mp4 with what "
                                     "`shotjudge replay` needs beside it: the camera's exact calibration.json, "
                                     "empty-board.png and start-state.json; --yolo adds YOLO images/, labels/ and "
                                     "data.yaml. Same options and seed, same files."))
    p.add_argument("game", nargs="?", choices=list(GAMES), help=_("which game"))
    p.add_argument("--scenario", metavar="NAME", help=_("scenario name (see --list)"))
    p.add_argument("--list", action="store_true", help=_("list the scenarios with one line each and exit"))
    p.add_argument("--seed", type=int, default=0, metavar="N", help=_("random seed, >= 0 (same seed, same files)"))
    p.add_argument("--fps", type=float, default=60.0, help=_("frames per second of the video and truth (1..1000)"))
    p.add_argument("--size", default="1280x720", metavar="WxH", help=_("video size WIDTHxHEIGHT (default 1280x720)"))
    p.add_argument("--profile", help=_("table/field profile name or file (default: the game's default profile)"))
    p.add_argument("--out", metavar="DIR", help=_("output folder, required (except with --list): new, empty, or an earlier "
                                                  "output of this command (replaced); missing parent folders are made"))
    p.add_argument("--video", dest="video", action="store_true", help=_("render the video (default)"))
    p.add_argument("--no-video", dest="video", action="store_false", help=_("ground truth only, no video"))
    p.add_argument("--yolo", action="store_true", help=_("also write YOLO images/, labels/ and data.yaml"))
    p.add_argument("--yolo-every", type=int, metavar="K",
                   help=_("with --yolo: every K-th frame only (default 1; implies --yolo)"))
    cam = p.add_argument_group("camera (all seeded: the same command gives the same files)")
    cam.add_argument("--tilt", type=float, metavar="DEG", help=_("camera tilt towards +y, degrees (-30..30; default 0)"))
    cam.add_argument("--randomise", "--randomize", dest="randomise", action="store_true",
                     help=_("domain randomisation: lighting, colours, textures, blur, noise, lens, camera pose drawn "
                            "from the seed"))
    cam.add_argument("--blur", type=int, metavar="N",
                     help=_("motion blur: N sub-frame states per frame (1 = sharp; default 4)"))
    cam.add_argument("--rolling-shutter", type=float, nargs="?", const=0.02, default=0.0, metavar="SECONDS",
                     help=_("rolling-shutter skew: top-to-bottom readout time (default 0.02 s when given alone)"))
    p.set_defaults(func=run, video=True)


def run(args) -> int:
    from rules.game import GAMES
    from sim.run import parse_size, run_scenario
    from sim.scenarios import list_scenarios

    if args.list:
        for game in [args.game] if args.game else list(GAMES):
            for name, desc in list_scenarios(game):
                print(f"{game:9s} {name:22s} {desc}")
        return 0
    if not args.game:
        raise UserError(_("give the game (novuss or cvrnkana), or --list"))
    if not args.scenario:
        raise UserError(_("--scenario is required (see shotjudge sim --list)"))
    if not args.out:
        raise UserError(_("--out DIR is required"))
    size = parse_size(args.size)
    yolo_every = args.yolo_every if args.yolo_every is not None else (1 if args.yolo else None)
    result = run_scenario(args.game, args.scenario, args.seed, args.out, fps=args.fps, size=size,
                          video=args.video, profile=args.profile, yolo_every=yolo_every, randomise=args.randomise,
                          tilt_deg=args.tilt, blur=args.blur, rolling_shutter_s=args.rolling_shutter)
    parts = [f"{result['frames']} frames", "truth.json"]
    if result["video"]:
        parts.append(f"video.mp4 ({result['codec']})")
        parts.extend(Path(p).name for p in result["replay_inputs"].values())
    if yolo_every is not None:
        parts.append(f"{result['yolo_images']} YOLO images")
    print(_("{game} {scenario} seed {seed}: {shots} shot(s), {value} -> {out}").format(
        game=args.game, scenario=args.scenario, seed=args.seed, shots=result['shots'], value=', '.join(parts), out=result['out']))
    if result["video"]:
        print(_("judge it: ") + replay_command(args.game, Path(args.out), result["replay_inputs"]))
    return 0


def replay_command(game: str, out: Path, inputs: dict) -> str:
    """The ``shotjudge replay`` line for a sim output folder, with exactly the files sim wrote."""
    import shlex

    words = ["shotjudge", "replay", str(out / "video.mp4"), "--game", game]
    for role in ("calibration", "background", "state"):
        if role in inputs:
            words += [f"--{role}", str(out / Path(inputs[role]).name)]
    words += ["--report", str(out / "report.json")]
    return shlex.join(words)
