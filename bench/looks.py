"""One scripted scenario under many looks: does its call transfer, or did one look happen to suit it?

    python bench/looks.py --scenario opponent-off-direct [--game novuss] [--seeds 1-11] [--fps 60,30]
                          [--renderers panda,ours] [--notes]

The scenario (``sim.scenarios``: a game's scripted ones, its random and whole ones; built from seed 1) is filmed once per render
seed (each renderer's own draw of lamps, colours, noise and the frames' phase) and judged through
``bench.scoring.run_clip`` with the classical detector, as ``bench/second_renderer.py`` does for its one seed a
clip. ``panda`` is the independent renderer (``sim.render_panda``), ``ours`` ``sim.render``.

Columns, counts of shots: right (unflagged), right but flagged, refused by the rules (the judge hands it to the
referee), wrong and flagged, wrong and silent (the one that must stay 0); ``--notes`` lists each look's outcome.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.scoring import new_stats, run_clip  # noqa: E402

COLUMNS = ("renderer", "fps", "looks", "right", "right, flagged", "refused", "wrong, flagged", "wrong, silent", "s")


def _seeds(text: str) -> list[int]:
    """'1-11' or '1,4,9' (or both, comma-separated) as a list of render seeds."""
    out: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.strip().partition("-")
        try:
            out += list(range(int(lo), int(hi or lo) + 1))
        except ValueError:
            raise ValueError(f"--seeds: {part.strip()!r} is not a seed or a range like 1-11") from None
    if not out:
        raise ValueError("--seeds: no seed given")
    return out


def outcome(st: dict) -> dict[str, int]:
    """The shots of one clip's stats by what the referee would see."""
    same = sum(bool(r) for r in st["rulings"])
    right_flagged = st["rulings_flagged"] - st["rulings_wrong_flagged"]
    return {"right": same - right_flagged, "right, flagged": right_flagged, "refused": st["rulings_refused"],
            "wrong, flagged": st["rulings_wrong_flagged"], "wrong, silent": st["rulings_wrong_silent"]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scenario", required=True)
    ap.add_argument("--game", default="novuss", choices=("novuss", "cvrnkana"))
    ap.add_argument("--seeds", default="1-11", help="render seeds: a range 1-11 or a list 1,4,9")
    ap.add_argument("--fps", default="60,30")
    ap.add_argument("--renderers", default="panda,ours")
    ap.add_argument("--notes", action="store_true", help="each look's outcome and what differed or asked")
    args = ap.parse_args(argv)
    from calibration import default_profile
    from sim.scenarios import SCENARIOS as BY_GAME

    SCENARIOS = BY_GAME[args.game]
    try:
        seeds = _seeds(args.seeds)
        fps_list = [int(f) for f in args.fps.split(",")]
    except ValueError as exc:
        ap.error(str(exc))
    if args.scenario not in SCENARIOS:
        ap.error(f"--scenario: no {args.game} scenario {args.scenario!r} (one of {', '.join(sorted(SCENARIOS))})")
    factories = {}
    for name in (r.strip() for r in args.renderers.split(",")):
        if name == "panda":
            from sim.render_panda import PandaRenderer

            factories[name] = PandaRenderer
        elif name == "ours":
            factories[name] = None
        else:
            ap.error(f"--renderers: {name!r} is neither panda nor ours")
    profile = default_profile(args.game)
    rows, notes = [], []
    for name, factory in factories.items():
        for fps in fps_list:
            t = time.perf_counter()
            total = dict.fromkeys(COLUMNS[3:8], 0)
            for seed in seeds:
                st = new_stats()
                run_clip(profile, SCENARIOS[args.scenario][0](profile, 1), fps, "classical", seed, st,
                         renderer_factory=factory)
                got = outcome(st)
                total = {k: total[k] + got[k] for k in total}
                said = "; ".join(st["ruling_notes"] + st["flag_notes"]) or "right"
                notes.append(f"{name} {fps} fps render seed {seed}: {said}")
            rows.append((name, fps, len(seeds), *total.values(), f"{time.perf_counter() - t:.0f}"))
    print(f"{args.game} {args.scenario}, render seeds {args.seeds} (counts of shots)")
    print(" | ".join(COLUMNS))
    for row in rows:
        print(" | ".join(str(v) for v in row))
    if args.notes:
        print("\n".join(notes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
