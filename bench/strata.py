"""The classical detector by stratum of the harsher simulator: one table, stratum x game x frame rate.

    python bench/strata.py [--quick] [--stratum NAME[,NAME...]] [--games novuss,cvrnkana] [--fps 30,60]
                           [--notes] [--out FILE]

Each stratum is a named look of ``sim.render_strata`` (``stratum(name, seed)``, a ``RenderSettings``: lamps
with fall-off, a dim room, white-balance and exposure drifting, pieces from any colour family, a bat of any
colour, H.264 at 2 Mbit/s, a 15 ms rolling shutter, a 10 degree tilt, everything at once). The clips are the
scripted scenarios of ``sim.scenarios_novuss`` and ``sim.scenarios_cvrnkana`` (seed 1; ``--quick``: three
Novuss and two Cvrnkaná ones), each filmed in the stratum's look drawn from its own seed (clip ``j`` of a
game: seed ``j + 1``, so ``base`` films the first clip exactly as ``bench/accuracy.py`` does), at 30 and 60
frames/s, and judged through ``bench.scoring.run_clip`` with its classical detector (``settings=`` the
stratum's look; ``on_frame=`` the probe that scores the pieces at rest): the renderer and the detector are
``bench.vision_detect.setup`` with the profile's nominal colours, measured once on the first frame's layout
(``expect``), as ``bench/accuracy.py --detector classical`` does — only the look differs. A stratum that
changes something a game does not have is left out for it (``bat-any-colour``: Cvrnkaná has no striker).

Columns: stratum, game, fps; shots (true shots of the clips); same % / flagged % / silent wrong %: rulings
identical to the ground truth's / flagged for review (right or wrong) / confidently wrong (silently: neither a
review call nor vision's own review items), in % of the shots judged (a shot missed, split or invented counts
as not identical); seg err: shots missed, split or invented; rest recall %: detection recall of pieces at rest
(on the surface, in view, not under a hand or the cue, not moved since the frame before; "of N": piece-frames)
and rest misnamed %: the share of those found under another class's name (a piece near a real hand or cue —
the truth's outlines, as in ``bench/vision_detect.py`` — is not counted; one under an occluder only the
detector reports is, as a miss); 1st contact ok/flag/wrong: first contact of the bat where it touched an own
and an opponent pawn, right / flagged / wrong (counts of shots); s: seconds the cell took.

``--notes``: after the table, per stratum the pieces at rest missed or misnamed in over a fifth of their
frames (class, where, the light there relative to the nominal, what they were taken for) and the rulings
that differ: the failure map.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time
from collections import defaultdict

import cv2
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench import scoring  # noqa: E402
from bench.vision_clips import in_view, on_surface  # noqa: E402
from bench.vision_detect import occluder_polygons  # noqa: E402
from calibration import default_profile  # noqa: E402
from calibration.atomic import write_text_atomic  # noqa: E402
from sim.render import Renderer  # noqa: E402
from sim.render_light import drift_gain  # noqa: E402
from sim.render_settings import make_camera  # noqa: E402
from sim.render_strata import STRATA, stratum as look  # noqa: E402
from vision.board import Surface  # noqa: E402

QUICK = {"novuss": ("own-opponent-3ms", "opponent-first", "dark-pawn-direct"), "cvrnkana": ("pit-entry", "hand-nudge")}
#: stratum -> the game object's flag it needs (``bat-any-colour``: a striker, which Cvrnkaná has not)
NEEDS = {"bat-any-colour": "striker"}
LIGHT_BINS = ((0.0, 0.4), (0.4, 0.7), (0.7, 1.0), (1.0, 9.0))  # light at a piece relative to the nominal room
MATCH_MM = 8.0  # as bench.scoring._score_detections
SIZE = (1280, 720)  # the image bench.vision_detect.setup films (its defaults, which run_clip uses)


def scenarios(game: str, quick: bool):
    from sim.scenarios_cvrnkana import SCENARIOS as CVR
    from sim.scenarios_novuss import SCENARIOS as NOV

    table = {"novuss": NOV, "cvrnkana": CVR}[game]
    return [(name, table[name][0]) for name in (QUICK[game] if quick else table)]


def applies(stratum: str, profile) -> bool:
    """Whether ``stratum`` changes something ``profile``'s game has (:data:`NEEDS`)."""
    flag = NEEDS.get(stratum)
    return flag is None or getattr(profile.spec, flag) is not None


# -- watching what the detector returns ----------------------------------------------------------------
class Probe:
    """``run_clip``'s ``on_frame``: scores every frame's pieces at rest against the truth. It keeps a renderer
    of the clip's camera and look (the same as the one filming: same settings, same image size) for the
    light map and the occluders' outlines; it renders nothing."""

    def __init__(self, profile, ep, fps: float, settings, rest):
        self.profile, self.clip, self.fps, self.rest = profile, ep.clip(), fps, rest
        self.renderer = Renderer(make_camera(profile, *SIZE, settings), profile, settings)
        self.surface = Surface.from_profile(profile)

    def __call__(self, frame, dets) -> None:
        self._score(frame, dets)

    def _light(self, xy, t_s: float) -> float:
        """The light at a board point relative to the nominal room (the renderer's gain map, 128 = 1, times
        the drift at ``t_s``)."""
        gain = self.renderer._gain  # noqa: SLF001 - the bench reads the simulator's own light map
        if gain is None:
            return 1.0
        u, v = self.renderer.camera.project([xy])[0]
        u = int(np.clip(round(u), 0, gain.shape[1] - 1))
        v = int(np.clip(round(v), 0, gain.shape[0] - 1))
        drift = drift_gain(self.renderer.settings, t_s) or (1.0, 1.0, 1.0)
        return float(np.mean(gain[v, u].astype(float) * np.asarray(drift))) / 128.0

    def _hidden(self, polys, p) -> bool:
        """Under a real hand or cue (the truth's outlines, within 10 mm of the piece's disc), as
        ``bench.vision_detect.score_frame`` has it: an occluder the detector only imagines hides nothing."""
        xy = (float(p.x_mm), float(p.y_mm))
        return any(cv2.pointPolygonTest(q.reshape(-1, 1, 2), xy, True) >= -(p.radius_mm + 10.0) for q in polys)

    def _at_rest(self, fr, polys):
        """The pieces of frame ``fr`` a detector must find at rest: still since the frame before, on the
        surface, in view, not under a real hand or cue."""
        before = {p.id: p for p in self.clip.states_at(max(fr.t_s - 1.0 / self.fps, self.clip.t_start_s), fr.index).pieces}
        for p in fr.pieces:
            q = before.get(p.id)
            still = q is not None and math.hypot(p.x_mm - q.x_mm, p.y_mm - q.y_mm) < 0.1 and abs(p.z_mm - q.z_mm) < 0.1
            if still and on_surface(self.surface, p) and in_view(self.profile, p.x_mm, p.y_mm) and not self._hidden(polys, p):
                yield p

    def _score(self, fr, dets) -> None:
        pcs = dets.pieces()
        used = set()
        for p in self._at_rest(fr, occluder_polygons(self.renderer, fr) if fr.occluders else []):
            best = min(((math.dist(d.centre_mm, (p.x_mm, p.y_mm)), j) for j, d in enumerate(pcs) if j not in used),
                       default=None)
            got = None
            if best is not None and best[0] < MATCH_MM:
                used.add(best[1])
                d = pcs[best[1]]
                got = (d.kind, d.owner)
            r = self.rest[p.id]
            r["cls"], r["xy"] = (p.kind, p.owner), (round(p.x_mm), round(p.y_mm))
            r["n"] += 1
            r["light"] += self._light((p.x_mm, p.y_mm), fr.t_s)
            if got is None:
                r["missed"] += 1
                r["phantom"] += bool(dets.occluded((p.x_mm, p.y_mm), 0.0))  # under an occluder only vision saw
            elif got != (p.kind, p.owner):
                r["misnamed"] += 1
                r["as"][f"{got[0]}_{got[1]}" if got[1] else got[0]] += 1


def _new_rest():
    return defaultdict(lambda: {"n": 0, "missed": 0, "misnamed": 0, "phantom": 0, "light": 0.0, "as": defaultdict(int),
                                "cls": None, "xy": None})


# -- one cell of the table -------------------------------------------------------------------------------
def run_cell(stratum: str, game: str, fps: int, profile, episodes, row_times: bool = True) -> dict:
    """Every clip of ``game`` in ``stratum`` at ``fps``: the merged ``bench.scoring`` statistics and the
    pieces at rest (per clip and piece); ``row_times``: see ``scoring.run_clip``."""
    stats, rest_all = [], {}
    t = time.perf_counter()
    for j, (name, ep) in enumerate(episodes):
        st = look(stratum, j + 1, codec_fps=float(fps))
        rest = _new_rest()
        s = scoring.new_stats()
        scoring.run_clip(profile, ep, fps, "classical", 1, s, settings=st, on_frame=Probe(profile, ep, fps, st, rest),
                           row_times=row_times)
        stats.append(s)
        for pid, r in rest.items():
            rest_all[(name, pid)] = r
    return {"stats": scoring.merge(stats), "rest": rest_all, "seconds": time.perf_counter() - t}


def row(stratum: str, game: str, fps: int, cell: dict) -> dict:
    st = cell["stats"]
    s = scoring.summary(st)
    n = max(len(st["rulings"]), 1)
    fc = np.sum([s[f"fc_{name}"] for _, _, name in scoring.GAP_BINS], axis=0).astype(int)
    rest = cell["rest"].values()
    n_rest = sum(r["n"] for r in rest)
    missed = sum(r["missed"] for r in rest)
    misnamed = sum(r["misnamed"] for r in rest)
    pct = lambda a, b: 100.0 * a / b if b else float("nan")  # noqa: E731
    return {"stratum": stratum, "game": game, "fps": fps, "shots": s["shots"], "same": pct(sum(st["rulings"]), n),
            "decidable": (s["rulings_decidable_same"], s["rulings_decidable_n"]),
            "flagged": pct(st["rulings_flagged"], n), "undue": pct(st["rulings_flagged_undue"], n), "silent": pct(st["rulings_wrong_silent"], n),
            "seg": s["segmentation_errors"], "rest_recall": pct(n_rest - missed, n_rest), "misnamed": pct(misnamed, n_rest),
            "rest_n": n_rest, "fc": tuple(int(v) for v in fc), "t_err": (s["t_err_med_ms"], s["t_err_p95_ms"]),
            "seconds": cell["seconds"]}


def table(rows) -> str:
    head = ("stratum", "game", "fps", "shots", "same %", "same % where the camera can tell", "flagged % (right or wrong)", "right, flagged, none due %",
            "silent wrong %", "seg err", "rest recall %",
            "rest misnamed %", "1st contact ok/flag/wrong", "contact+cushion time err ms median/p95", "s")
    lines = ["classical detector by stratum (rulings in % of shots judged; pieces at rest: piece-frames)", " | ".join(head)]
    for r in rows:
        lines.append(" | ".join([r["stratum"], r["game"], str(r["fps"]), str(r["shots"]), f"{r['same']:.0f}",
                                 "{:.0f} of {}".format(*r["decidable"]),
                                 f"{r['flagged']:.0f}", f"{r['undue']:.0f}", f"{r['silent']:.0f}", str(r["seg"]),
                                 f"{r['rest_recall']:.1f} of {r['rest_n']}", f"{r['misnamed']:.1f}",
                                 "{}/{}/{}".format(*r["fc"]), "{:.1f}/{:.1f}".format(*r["t_err"]),
                                 f"{r['seconds']:.0f}"]))
    return "\n".join(lines)


def failure_notes(stratum: str, game: str, fps: int, cell: dict, share: float = 0.2) -> list[str]:
    """The pieces at rest missed or misnamed in over ``share`` of their frames, and the rulings that differ."""
    out = []
    by_light = defaultdict(lambda: [0, 0])
    for r in cell["rest"].values():
        mean_light = r["light"] / max(r["n"], 1)
        for lo, hi in LIGHT_BINS:
            if lo <= mean_light < hi:
                by_light[(lo, hi)][0] += r["n"]
                by_light[(lo, hi)][1] += r["missed"]
    if any(m for _, m in by_light.values()):
        out.append(f"{stratum} {game} {fps}: missed at rest by light: " + ", ".join(
            f"{lo:.1f}-{hi:.1f}: {m}/{n}" for (lo, hi), (n, m) in sorted(by_light.items())))
    for (clip, pid), r in sorted(cell["rest"].items()):
        if r["n"] and (r["missed"] + r["misnamed"]) / r["n"] > share:
            kind, who = r["cls"]
            taken = ", ".join(f"{k} {v}" for k, v in sorted(r["as"].items()))
            out.append(f"{stratum} {game} {fps}: {clip} {pid} ({kind}{' ' + who if who else ''} at {r['xy']}, light "
                       f"{r['light'] / r['n']:.2f}): missed {r['missed']}/{r['n']}"
                       + (f" ({r['phantom']} under an occluder vision imagined)" if r["phantom"] else "")
                       + (f", misnamed {r['misnamed']} ({taken})" if r["misnamed"] else ""))
    out += [f"{stratum} {game} {fps}: ruling {n}" for n in scoring.notes(cell["stats"])]
    return out


def _rolling(stratum: str, fps: int) -> bool:
    """Whether any clip of ``stratum`` is filmed with a rolling shutter."""
    return any(look(stratum, j + 1, codec_fps=float(fps)).rolling_shutter_s > 0 for j in range(20))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help=f"only {', '.join(QUICK['novuss'] + QUICK['cvrnkana'])}")
    ap.add_argument("--stratum", help="comma-separated strata to run (default all: " + ", ".join(STRATA) + ")")
    ap.add_argument("--games", default="novuss,cvrnkana")
    ap.add_argument("--fps", default="30,60")
    ap.add_argument("--notes", action="store_true", help="the failure map after the table")
    ap.add_argument("--out", help="also write what is printed to this file")
    ap.add_argument("--frame-times", action="store_true",
                    help="also run each rolling-shutter cell with every sighting at its frame's time (the baseline "
                         "before vision dated sightings by their row), as a row of its own")
    args = ap.parse_args(argv)
    cv2.setNumThreads(1)
    chosen = [s.strip() for s in args.stratum.split(",")] if args.stratum else list(STRATA)
    unknown = [s for s in chosen if s not in STRATA]
    if unknown:
        ap.error(f"unknown stratum {unknown[0]!r} (known: {', '.join(STRATA)})")
    if args.out and not os.path.isdir(os.path.dirname(os.path.abspath(args.out))):
        ap.error(f"--out {args.out}: folder {os.path.dirname(os.path.abspath(args.out))} does not exist")
    games = [g.strip() for g in args.games.split(",")]
    rates = [int(f) for f in args.fps.split(",")]
    t0 = time.perf_counter()
    profiles = {g: default_profile(g) for g in games}
    episodes = {g: [(name, build(profiles[g], 1)) for name, build in scenarios(g, args.quick)] for g in games}
    rows, notes = [], []
    for stratum in chosen:
        for game in games:
            if not applies(stratum, profiles[game]):
                continue
            for fps, row_times in [(f, rt) for f in rates for rt in (True, False)
                                   if rt or (args.frame_times and _rolling(stratum, f))]:
                cell = run_cell(stratum, game, fps, profiles[game], episodes[game], row_times)
                label = stratum if row_times else f"{stratum} (frame times)"
                r = row(label, game, fps, cell)
                rows.append(r)
                notes += failure_notes(label, game, fps, cell)
                print(f"# {label} {game} {fps} fps: {r['seconds']:.0f} s, same {r['same']:.0f} %, rest recall "
                      f"{r['rest_recall']:.1f} %", file=sys.stderr, flush=True)
    text = table(rows) + f"\n(total {time.perf_counter() - t0:.0f} s)"
    if args.notes:
        text += "\n\nfailure map (pieces at rest missed or misnamed in over 20 % of their frames; rulings that differ):\n"
        text += "\n".join(notes) if notes else "(none)"
    print(text)
    if args.out:
        write_text_atomic(args.out, text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
