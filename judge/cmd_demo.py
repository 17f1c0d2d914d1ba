"""``shotjudge demo``: judge a simulated Novuss set and Cvrnkaná game, no camera and no files needed.

The simulator plays a short stretch of each game from a mid-game position, the synthetic overhead
camera films it, and the judge replays the video with the vision pipeline and the rule engine, exactly
as ``shotjudge replay`` does. The calls are printed next to the simulator's ground truth, differences
and referee-review flags included. Everything is written to ``--out`` (default ./shotjudge-demo): per
game the video, its calibration and empty-board picture, the judged overlay video and the report.
"""
from __future__ import annotations

import argparse

from .errors import UserError
from .i18n import _, add_lang_arg
from .options import frame_rate

__all__ = ["register", "run"]


def register(subparsers) -> None:
    from rules.game import GAMES

    p = subparsers.add_parser("demo", help=_("judge a simulated Novuss set and Cvrnkaná game (start here)"),
                              description=_(__doc__), formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default="shotjudge-demo", help=_("output folder (default: ./shotjudge-demo)"))
    p.add_argument("--game", choices=(*GAMES, "both"), default="both", help=_("which game(s) (default both)"))
    p.add_argument("--fps", type=frame_rate, default=60.0, help=_("frame rate of the filmed games (default 60)"))
    p.add_argument("--size", default="960x540", help=_("video size WIDTHxHEIGHT (default 960x540)"))
    add_lang_arg(p)
    p.add_argument("--quick", action="store_true", help=_("only the first two shots of each game (a smoke test)"))
    p.set_defaults(func=run)


def _size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise UserError(_("--size {text} must be WIDTHxHEIGHT, e.g. 960x540").format(text=repr(text))) from None
    if not (320 <= w <= 3840 and 240 <= h <= 2160):
        raise UserError(_("--size {text} is out of range (320x240 .. 3840x2160)").format(text=repr(text)))
    return w, h


def run(args) -> int:
    import time
    from pathlib import Path

    from rich.console import Console
    from rich.markup import escape

    from .demo import GAMES, run_demo

    size = _size(args.size)
    if not 10 <= args.fps <= 240:
        raise UserError(_("--fps must be between 10 and 240, got {fps}").format(fps=args.fps))
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UserError(_("--out {out}: exists and is not a folder").format(out=out))
    console = Console(highlight=False)
    games = GAMES if args.game == "both" else (args.game,)
    started = time.perf_counter()
    console.print(_("simulating, filming ({width}x{height} @ {fps} fps) and judging: {games}").format(
        width=size[0], height=size[1], fps=f"{args.fps:g}", games=", ".join(games)))
    summary = run_demo(out, fps=args.fps, size=size, games=games, lang=args.lang, max_shots=2 if args.quick else None,
                       console=console)
    failed = 0
    for game, g in summary["games"].items():
        if "failed" in g:
            failed += 1
            console.print(f"{game}: [red]" + escape(_("not judged: {error}").format(error=g["failed"])) + "[/] "
                          + escape(_("(video {path})").format(path=g["files"].get("video"))))
            continue
        verdict = "[green]" + _("all match") + "[/]" if g["rulings_same"] == g["shots_simulated"] == g["shots_judged"] else \
            "[red]" + _("{same} of {simulated} match").format(same=g["rulings_same"], simulated=g["shots_simulated"]) + "[/]"
        t = g["times_s"]
        console.print(f"{game}: " + _("{judged} shot(s) judged from {video_s} s of video, ground truth: {verdict}; review "
                                      "flags: {review}  (simulate {simulate} s, film {film} s, judge {judge} s)").format(
            judged=g["shots_judged"], video_s=f"{g['video_s']:.1f}", verdict=verdict,
            review=escape(str(g["review"])) if g["review"] else _("none"), simulate=f"{t['simulate']:.1f}",
            film=f"{t['render']:.1f}", judge=f"{t['judge']:.1f}"))
        console.print("  " + escape(_("report {report}, overlay {overlay}").format(report=g["files"]["report"],
                                                                                  overlay=g["files"]["overlay"])))
    console.print(escape(_("done in {seconds} s; files in {out}/").format(seconds=f"{time.perf_counter() - started:.1f}",
                                                                        out=out)))
    return 1 if failed else 0
