"""Vision accuracy on simulator clips: one table.

    python bench/accuracy.py [--quick] [--detector oracle|classical|learned] [--gap-seeds N] [--fps 60,30]
                             [--groups 'nov hard,cvr hard'] [--clocks [--conditions 'exact,jitter 3 ms + drop 5 %']]
                             [--strata [dim-corners,low-ambient,...]]

Clips (fixed seeds), each watched at 30 and 60 frames/s from a random frame phase:
* ``nov hard``: every scripted Novuss scenario (sim.scenarios_novuss), seed 1;
* ``nov gaps``: the bat grazes an own and an opponent pawn ``gap`` apart, gap uniform in 0-8 ms, own or
  opponent first at random (``--gap-seeds`` clips): the first-contact statistics;
* ``nov set``: whole Novuss sets (seeds 1-3, ~180 shots) played by the simulator's policy (hands placing the
  bat, cue, penalties);
* ``cvr hard``: every scripted Cvrnkaná scenario; ``cvr game``: whole Cvrnkaná games (seeds 1-3, ~110 flicks).

``oracle`` feeds the simulator's piece positions with 0.3 mm noise, blur-like noise along the motion of
fast pieces (2 % of the streak drawn in half a frame), nothing under a hand or the cue and nothing outside
the camera's view (measures tracking, segmentation, events and records on their own); ``classical``
renders every frame (blur, noise, hand and cue) and runs ``vision.detect_classical``; ``learned`` renders the
same frames and runs the shipped YOLO model (``models/shotjudge-det.onnx``), so the paths compare in one table.

Columns: detection recall/precision and position RMS (pieces on the surface — not falling into a pocket or
the pit, not in the air — in view and not under an occluder), id
switches per shot (a piece's name passing to a detection > 12 mm from that piece), segmentation errors
(shots missed, split or invented), event recall/precision (same kind and pieces within 10 ms) and timing
error of contacts and cushions (median/95th pct), first contact by the gap between the first own and the
first opponent bat contact: correct / flagged for review (a review call, or vision's review items on the
record) / wrong (silently), and rulings identical to the ruling of the ground-truth record, both applied
to the true game state before the shot (calls that only ask for review do not count as different; flagged
rulings — a review call, or vision's own review items on the record, which the judge shows beside the
call — are listed apart, and so are silently wrong ones; in brackets, the right calls flagged where no
flag was due: the truth was not beyond the camera, i.e. not an own/opponent first contact under 2 ms
apart nor a bat within the record's stated position error of its zone line). The share of rulings the same
is also given, in brackets, over the shots whose truth the camera can tell (those where no flag is due).
A shot the pipeline missed, split or invented counts as a wrong ruling. Before a record is judged on the
true state, its pieces are renamed within each player by where they stood at the start
(``vision_clips.same_player_names``; a marble rolling in from an unknown place outside the view takes the
name of the true record's moving marble of that player): the rules tell a player's pawns or marbles apart
only by owner, and the judge folds its own records, so a name passed between two of one player's pieces
changes no call (it still counts as an id switch). "judge fold": the calls the judge itself makes, folding
its own records from the opening (its state keeps vision's names), with the referee overruling each wrong
call so play goes on from the true state; the pipeline is told of penalty and returned pieces from these
rulings, and of the marbles out of its view from the judge's own state (``Ruleset.hints``:
known places only where the judge knows them), as in ``shotjudge replay`` and ``live``: the bench judges
with the same referee step (``judge.referee.Referee``).

The frame-clock stratum, ``--clocks`` (``bench/clocks.py``; ``--conditions`` chooses among them): every clip
under irregular frame times (``run_clip``'s ``clock``) — jitter 1 / 3 ms, drops 2 / 5 % with a burst, jitter
3 ms and 5 % drops together, repeated frames and times going back, the rate drifting +-10 % — against the
ground truth and, shot by shot, against the exact-time run of the same clip.

The strata of the harsher simulator, ``--strata`` (``bench/strata.py``, which says what each column means):
the classical detector on the scripted scenarios filmed in each named look (lamps with fall-off, a dim room,
white balance and exposure drifting, pieces of any colour family, a bat of any colour, H.264 at 2 Mbit/s,
a rolling shutter, a 10 degree tilt, everything at once).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench import clocks  # noqa: E402
from bench.scoring import GAP_BINS, episodes, merge, new_stats, run_clip, summary  # noqa: E402
from bench.scoring import notes as clip_notes  # noqa: E402


def table(rows, detector: str) -> str:
    head = ("fps", "clips", "shots", "det rec%", "det prec%", "pos RMS", "id sw/shot", "seg err", "ev rec%",
            "ev prec%", "t err ms med/p95", "within 2 t_err % contact/cushion") + tuple(f"1st {n} ok/flag/wrong" for _, _, n in GAP_BINS) + \
        ("rulings same% (where the camera can tell)", "judge fold same%", "flagged (right, none due)", "silent wrong", "cvr same% all in view / some out of view",
         "referee entries")
    lines = [f"vision accuracy, {detector} detector (positions mm, times ms; first contact: counts of shots)",
             " | ".join(head)]
    for fps, group, st in rows:
        s = summary(st)
        cells = [f"{fps}", group, f"{s['shots']}", f"{s['det_recall']:.2f}", f"{s['det_precision']:.2f}",
                 f"{s['pos_rms_mm']:.2f}", f"{s['id_switch_per_shot']:.3f}", f"{s['segmentation_errors']}",
                 f"{s['ev_recall']:.1f}", f"{s['ev_precision']:.1f}", f"{s['t_err_med_ms']:.2f}/{s['t_err_p95_ms']:.2f}", f"{s['t_cover_contact']:.1f}/{s['t_cover_cushion']:.1f}"]
        cells += ["{}/{}/{}".format(*s[f"fc_{n}"]) for _, _, n in GAP_BINS]
        cells += [f"{s['rulings_same']:.1f} of {s['rulings_n']} ({s['rulings_decidable_same']:.1f} of {s['rulings_decidable_n']})", f"{s['rulings_fold']:.1f}", f"{s['rulings_flagged']} ({s['rulings_flagged_undue']})",
                  f"{s['rulings_wrong_silent']}"]
        iv, lv = s["rulings_in_view"], s["rulings_left_view"]
        cells.append(f"{iv[0]:.1f} of {iv[1]} / {lv[0]:.1f} of {lv[1]}" if iv[1] + lv[1] else "-")
        cells.append(f"{s['referee_entries']}")
        lines.append(" | ".join(cells))
    return "\n".join(lines)




def parser(description: str = __doc__.split("\n")[0]) -> argparse.ArgumentParser:
    """The bench's options."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--quick", action="store_true", help="a few hard cases and 20 gap clips only")
    ap.add_argument("--detector", choices=("oracle", "classical", "learned"), default="oracle",
                    help="learned: the shipped ONNX model (~150 ms a frame here: use --quick --fps 60)")
    ap.add_argument("--groups", help="comma-separated groups to run (nov hard, nov gaps, nov set, cvr hard, cvr game)")
    ap.add_argument("--gap-seeds", type=int, default=None, help="clips of the own/opponent gap scenario (120)")
    ap.add_argument("--fps", default="60,30")
    ap.add_argument("--notes", action="store_true", help="list every ruling that differs")
    ap.add_argument("--refine", choices=("background", "local", "background-drop", "local-drop"), default=None,
                    help="learned: refine box centres by the rim fit against the empty board or the board around each box")
    ap.add_argument("--referee-unseen", action="store_true",
                    help="Cvrnkaná: the referee enters each flick played wholly out of the camera's view (overlay "
                         "'Flick out of view'); counted in the 'referee entries' column")
    ap.add_argument("--clocks", action="store_true",
                    help="the frame-clock stratum: every clip under irregular frame times (bench/clocks.py), against "
                         "the truth and against the exact-time run")
    ap.add_argument("--strata", nargs="?", const="all", default=None, metavar="NAMES",
                    help="the classical detector on the harsher simulator's looks, one row per stratum, game and rate "
                         "(bench/strata.py; NAMES comma-separated, default all; with --quick, --fps, --notes)")
    ap.add_argument("--conditions", default=None,
                    help="with --clocks: comma-separated conditions (default all: "
                         + ", ".join(clocks.CONDITIONS).replace("%", "%%") + ")")
    return ap




def main(argv=None) -> int:
    ap = parser()
    args = ap.parse_args(argv)
    chosen = [c.strip() for c in args.conditions.split(",")] if args.conditions else list(clocks.CONDITIONS)
    unknown = [c for c in chosen if c not in clocks.CONDITIONS]
    if unknown:
        ap.error(f"unknown condition(s): {', '.join(unknown)}")
    if args.conditions and not args.clocks:
        ap.error("--conditions needs --clocks")
    if args.strata is not None:
        from bench import strata
        return strata.main((["--stratum", args.strata] if args.strata != "all" else []) + ["--fps", args.fps]
                           + ["--quick"] * args.quick + ["--notes"] * args.notes)
    profiles, built = episodes(args)
    if args.clocks:
        clocks.run(built, profiles, [int(f) for f in args.fps.split(",")], chosen, notes=args.notes, detector=args.detector)
        return 0
    rows, notes = [], []
    for fps in (int(f) for f in args.fps.split(",")):
        t = time.perf_counter()
        per_group: dict[str, list] = defaultdict(list)
        for group, game, name, seed, ep in built:
            st = new_stats()
            run_clip(profiles[game], ep, fps, args.detector, seed, st, refine=args.refine,
                     referee_unseen=args.referee_unseen)
            per_group[group].append(st)
            notes += [f"{fps} fps {n}" for n in clip_notes(st)]
        groups = [(fps, g, merge(v)) for g, v in per_group.items()]
        rows += groups + [(fps, "all", merge([st for _, _, st in groups]))]
        print(f"# {fps} fps: {time.perf_counter() - t:.0f} s", file=sys.stderr)
    print(table(rows, args.detector + (f" refined ({args.refine})" if args.refine else "")))
    if args.notes and notes:
        print("\nrulings that differ:\n" + "\n".join(notes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
