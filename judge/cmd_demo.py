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
from .options import frame_rate

__all__ = ["register", "run"]


def register(subparsers) -> None:
    from rules.game import GAMES

    p = subparsers.add_parser("demo", help="judge a simulated Novuss set and Cvrnkaná game (start here)",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default="shotjudge-demo", help="output folder (default: ./shotjudge-demo)")
    p.add_argument("--game", choices=(*GAMES, "both"), default="both", help="which game(s) (default both)")
    p.add_argument("--fps", type=frame_rate, default=60.0, help="frame rate of the filmed games (default 60)")
    p.add_argument("--size", default="960x540", help="video size WIDTHxHEIGHT (default 960x540)")
    p.add_argument("--lang", default="en", choices=("en", "cs", "ru"), help="language of the calls")
    p.add_argument("--quick", action="store_true", help="only the first two shots of each game (a smoke test)")
    p.set_defaults(func=run)


def _size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise UserError(f"--size {text!r} must be WIDTHxHEIGHT, e.g. 960x540") from None
    if not (320 <= w <= 3840 and 240 <= h <= 2160):
        raise UserError(f"--size {text!r} is out of range (320x240 .. 3840x2160)")
    return w, h


def run(args) -> int:
    import time
    from pathlib import Path

    from rich.console import Console

    from .demo import GAMES, run_demo

    size = _size(args.size)
    if not 10 <= args.fps <= 240:
        raise UserError(f"--fps must be between 10 and 240, got {args.fps}")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out}: exists and is not a folder")
    console = Console(highlight=False)
    games = GAMES if args.game == "both" else (args.game,)
    started = time.perf_counter()
    console.print(f"simulating, filming ({size[0]}x{size[1]} @ {args.fps:g} fps) and judging: {', '.join(games)}")
    summary = run_demo(out, fps=args.fps, size=size, games=games, lang=args.lang, max_shots=2 if args.quick else None,
                       console=console)
    failed = 0
    for game, g in summary["games"].items():
        if "failed" in g:
            failed += 1
            console.print(f"{game}: [red]not judged: {g['failed']}[/] (video {g['files'].get('video')})")
            continue
        verdict = "[green]all match[/]" if g["rulings_same"] == g["shots_simulated"] == g["shots_judged"] else \
            f"[red]{g['rulings_same']} of {g['shots_simulated']} match[/]"
        t = g["times_s"]
        console.print(f"{game}: {g['shots_judged']} shot(s) judged from {g['video_s']:.1f} s of video, ground truth: "
                      f"{verdict}; review flags: {g['review'] or 'none'}  (simulate {t['simulate']:.1f} s, "
                      f"film {t['render']:.1f} s, judge {t['judge']:.1f} s)")
        console.print(f"  report {g['files']['report']}, overlay {g['files']['overlay']}")
    console.print(f"done in {time.perf_counter() - started:.1f} s; files in {out}/")
    return 1 if failed else 0
