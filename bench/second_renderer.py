"""Does the classical detector transfer? The ``--quick`` clips of ``bench/accuracy.py`` watched by the
classical detector twice: filmed by our renderer (``sim.render``) and by the independent Panda3D one
(``sim.render_panda``: its own 3-D scene, materials, lamps, shadows, blur, noise and JPEG; only the
world states, the camera and the profile's geometry are shared), one table.

    python bench/second_renderer.py [--gap-seeds N] [--fps 60,30] [--groups 'nov hard,cvr hard'] [--all-scenarios] [--looks K]

Needs panda3d (the test extra). Clips: ``bench.scoring.clips(True, N)`` (``nov hard``: the five hard Novuss
scenarios, ``nov gaps``: N own/opponent gap clips, 20 by default; ``cvr hard``: pit entry and a hand
nudge; ``--all-scenarios``: every scripted Novuss and Cvrnkaná scenario in those two groups), at 1280x720 with the standard straight camera of ``bench/vision_detect.py``, both renderers given
the same camera, clip, seed and exposure. Nothing in ``vision/`` is tuned on the second renderer: it only
measures. ``--looks K``: each clip filmed K times, with render seeds ``seed + 1000 k`` (k = 0 .. K-1: each
renderer's own draw of lamps, colours, noise and the frames' phase; k = 0 is the clip's own seed, the figure
without the option): one look per clip says little of what transfers (at 0f80a63 opponent-off-direct at
60 fps was right on its own look and on 4 of 10 others; ``bench/looks.py`` sweeps one scenario so).

Columns are ``bench/accuracy.py``'s (its docstring says what each means); the ``clips`` column names the
renderer then the group: ``ours: nov hard`` is our renderer, ``panda: nov hard`` the Panda3D one on the
same clips. Main ones: detection recall/precision (% of the pieces a camera could see that were found
within 8 mm / % of the detections that are such a piece), position RMS (mm), segmentation errors (shots
missed, split or invented), event recall/precision, contact timing error, first-contact counts, and the
share of rulings identical to the ground truth's. Last, the time each renderer took per frame.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.accuracy import table  # noqa: E402
from bench.scoring import episodes, merge, new_stats, notes, run_clip  # noqa: E402


class Timed:
    """A renderer factory that counts frames and the seconds spent rendering them."""

    def __init__(self, make=None):
        self.make, self.frames, self.seconds = make, 0, 0.0

    def __call__(self, camera, profile, settings):
        from sim.render import Renderer

        inner = (self.make or Renderer)(camera, profile, settings)
        factory = self

        class Counting:
            def __getattr__(self, name):  # camera, profile, ... of the wrapped renderer
                return getattr(inner, name)

            def render(self, frame, states_at=None):
                t = time.perf_counter()
                out = inner.render(frame, states_at)
                factory.seconds += time.perf_counter() - t
                factory.frames += 1
                return out

        return Counting()

    def per_frame_ms(self) -> float:
        return 1000.0 * self.seconds / max(self.frames, 1)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gap-seeds", type=int, default=None, help="clips of the own/opponent gap scenario (20)")
    ap.add_argument("--fps", default="60,30")
    ap.add_argument("--groups", help="comma-separated groups to run (nov hard, nov gaps, cvr hard)")
    ap.add_argument("--all-scenarios", action="store_true",
                    help="every scripted scenario in 'nov hard' and 'cvr hard' (15 and 5), not the quick five and two")
    ap.add_argument("--looks", type=int, default=1, help="looks per clip (render seeds seed + 1000 k; 1: the clip's own)")
    ap.add_argument("--notes", action="store_true", help="list every ruling that differs from the truth's, and every right one flagged (and what asked)")
    args = ap.parse_args(argv)
    if args.looks < 1:
        ap.error(f"--looks must be 1 or more, not {args.looks}")
    from sim.render_panda import PandaRenderer

    groups = args.groups or ("nov hard,nov gaps,cvr hard" if args.all_scenarios else None)
    profiles, built = episodes(argparse.Namespace(quick=not args.all_scenarios,
                                                      gap_seeds=20 if args.gap_seeds is None else args.gap_seeds, groups=groups))
    renderers = {"ours": Timed(), "panda": Timed(PandaRenderer)}
    rows = []
    for fps in (int(f) for f in args.fps.split(",")):
        per_group: dict[tuple[str, str], list] = defaultdict(list)
        for name, factory in renderers.items():
            t = time.perf_counter()
            for group, game, _, seed, ep in built:
                for look in range(args.looks):
                    st = new_stats()
                    run_clip(profiles[game], ep, fps, "classical", seed + 1000 * look, st, renderer_factory=factory)
                    where = f"seed {seed}" + (f", render seed {seed + 1000 * look}" if look else "")
                    for key in ("ruling_notes", "flag_notes"):  # which clip to look at again
                        st[key] = [f"[{where}] {n}" for n in st[key]]
                    per_group[(group, name)].append(st)
            print(f"# {fps} fps, {name}: {time.perf_counter() - t:.0f} s", file=sys.stderr)
        groups = list(dict.fromkeys(g for g, _ in per_group))
        for name in renderers:
            rows += [(fps, f"{name}: {g}", merge(per_group[(g, name)])) for g in groups]
            rows.append((fps, f"{name}: all", merge([st for (g, n), v in per_group.items() if n == name for st in v])))
    print(table(rows, "classical"))
    if args.notes:
        for fps, label, st in rows:
            if not label.endswith(": all"):
                print("\n".join(f"{fps} fps {label}: {n}" for n in notes(st)))
    print("render time per frame (1280x720): " + ", ".join(
        f"{name} {f.per_frame_ms():.0f} ms ({f.frames} frames)" for name, f in renderers.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
