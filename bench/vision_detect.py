"""Classical detector accuracy per frame on rendered simulator clips: one table.

    python bench/vision_detect.py [--quick] [--every N] [--seed S]

Each scripted scenario of both games is simulated, rendered at 1280x720 with the simulator's camera
(blur, noise, lighting, hand and cue; a straight-down camera and a tilted one with stronger lens distortion)
and every ``--every``-th frame is run through the classical detector. Truth pieces are those on view
and on the playing surface (``vision_clips.on_surface``: visible, not in the air, centre not over a pocket
or the pit: a piece over the hole is falling in and has left the game); a piece whose disc comes within 10 mm of a hand or cue outline is
"near an occluder" and counted apart. Columns: frames, truth pieces away from occluders, recall there,
recall near occluders, precision (detections that are a real piece), position error RMS / 95th pct / max (mm,
away from occluders), wrong classes, touching pieces (centres < 2R + 1 mm) found, hands/cues reported.

The helpers here (``setup``, ``score_frame``) are what ``bench/accuracy.py`` and ``bench/vision_speed.py`` use.
"""
from __future__ import annotations

import argparse
import dataclasses
import math
import os
import sys
import time
from collections import defaultdict

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CAMERAS = {
    "straight": dict(),
    "tilted": dict(camera_tilt_deg=9.0, camera_yaw_deg=2.5, camera_dist=(-0.14, 0.04, 0.0, 0.0, 0.0)),
}


def setup(profile, clip, fps: float, seed: int, camera: str = "straight", blur_samples: int = 4, width: int = 1280,
          height: int = 720, colours: str = "layout", settings=None, renderer_factory=None):
    """(renderer, detector) for a clip: the detector learns the empty board; its piece colours are the
    profile's nominal ones (``colours="appearance"``, refined online from confident detections) or, in
    addition, measured where each class first lies still on view (``"layout"``). ``settings``: the look to
    film with (a ``RenderSettings``, e.g. a stratum of ``bench/strata.py``) instead of the standard one of
    ``seed``, ``camera`` and ``blur_samples``. ``renderer_factory(camera, profile, settings)``: another
    renderer to film with (a second, independent one for evaluation) instead of ``sim.render.Renderer``."""
    from calibration.plane import PlaneMap
    from sim.render import Renderer
    from sim.render_settings import RenderSettings, make_camera
    from vision.detect_classical import ClassicalDetector

    st = settings if settings is not None else RenderSettings(seed=seed, blur_samples=blur_samples, **CAMERAS[camera])
    cam = make_camera(profile, width, height, st)
    renderer = (renderer_factory or Renderer)(cam, profile, st)
    plane = PlaneMap((cam.width, cam.height), cam.K, np.array(cam.dist), np.linalg.inv(cam.board_to_undistorted()))
    det = ClassicalDetector(plane, profile)
    f0 = clip.frame(0, fps)
    empty = dataclasses.replace(f0, pieces=tuple(dataclasses.replace(p, visible=False) for p in f0.pieces), occluders=())
    det.learn_background([renderer.render(empty)])
    if colours == "appearance":
        return renderer, det
    # colours: each class once, where its pieces first lie still on view with no hand over the board
    kind_of = profile.spec.kind_of  # (kind, owner): one class each

    wanted = {kind_of(p.id) for p in f0.pieces}
    for k in range(0, clip.n_frames(fps), 3):
        f = clip.frame(k, fps)
        if f.occluders:
            continue
        layout = {p.id: (p.x_mm, p.y_mm) for p in f.pieces if p.visible and abs(p.z_mm) < 0.5
                  and kind_of(p.id) in wanted}
        if layout:  # only what the camera sees
            px = cam.project(np.array(list(layout.values())))
            layout = {p: xy for (p, xy), (u, v) in zip(layout.items(), px) if 20 < u < width - 20 and 20 < v < height - 20}
        if layout:
            det.learn_colours(renderer.render(f), layout)
            wanted -= {kind_of(p) for p in layout}
        if not wanted:
            break
    return renderer, det


def occluder_polygons(renderer, frame) -> list[np.ndarray]:
    """Board-plane polygons of what each hand/cue hides: its silhouette seen from the camera, and the arm."""
    from bench.vision_clips import occluder_outline

    out = []
    for o in frame.occluders:
        pts3 = renderer.occluders.outline_mm(o)
        out.append(renderer.geom.to_plane(pts3).astype(np.float32))
        out.append(np.asarray(occluder_outline(o), np.float32))
    return out


def _near(polys, xy, reach_mm: float) -> bool:
    import cv2

    return any(cv2.pointPolygonTest(p.reshape(-1, 1, 2), (float(xy[0]), float(xy[1])), True) >= -reach_mm for p in polys)


def score_frame(renderer, frame, dets, stats, near_mm: float = 10.0, match_mm: float = 8.0) -> None:
    """Add one frame's comparison of detections with the truth to ``stats`` (a defaultdict(int) with lists)."""
    polys = occluder_polygons(renderer, frame)
    cam = renderer.camera
    from bench.vision_clips import on_surface
    from vision.board import Surface

    surface = Surface.from_profile(renderer.profile)
    truth = [p for p in frame.pieces if on_surface(surface, p)]
    if truth:  # on view: the whole disc inside the picture
        px = cam.project(np.array([[p.x_mm, p.y_mm] for p in truth]))
        m = 0.6 * np.array([p.radius_mm for p in truth])
        inside = (px[:, 0] > m) & (px[:, 1] > m) & (px[:, 0] < cam.width - 1 - m) & (px[:, 1] < cam.height - 1 - m)
        truth = [p for p, ok in zip(truth, inside) if ok]
    pcs = dets.pieces()
    pairs = sorted((math.dist((p.x_mm, p.y_mm), d.centre_mm), i, j) for i, p in enumerate(truth)
                   for j, d in enumerate(pcs))
    hit, used = {}, set()
    for dist, i, j in pairs:
        if dist > match_mm or i in hit or j in used:
            continue
        hit[i] = j
        used.add(j)
    stats["frames"] += 1
    for i, p in enumerate(truth):
        near = _near(polys, (p.x_mm, p.y_mm), p.radius_mm + near_mm)
        touching = any(q is not p and math.dist((p.x_mm, p.y_mm), (q.x_mm, q.y_mm)) < p.radius_mm + q.radius_mm + 1.0
                       for q in truth)
        key = "near" if near else "away"
        stats[f"{key}_true"] += 1
        if touching and not near:
            stats["touch_true"] += 1
        if i not in hit:
            if not near:
                stats["misses"].append((frame.index, p.id, round(p.x_mm, 1), round(p.y_mm, 1), round(p.z_mm, 1)))
            continue
        d = pcs[hit[i]]
        stats[f"{key}_hit"] += 1
        if touching and not near:
            stats["touch_hit"] += 1
        if (d.kind, d.owner) != (p.kind, p.owner):
            stats["wrong_class"] += 1
            stats["wrong"].append((frame.index, p.id, d.kind, d.owner))
        if not near:
            err = math.dist((p.x_mm, p.y_mm), d.centre_mm)
            stats["err"].append(err)
            if abs(p.z_mm) < 0.5:
                stats["err_rest"].append(err)
    stats["det"] += len(pcs)
    sunk = [p for p in frame.pieces if p.visible and not on_surface(surface, p)]  # falling, flying, sunk: real, not required
    real = [j for j, d in enumerate(pcs) if j in used or any(
        math.dist((p.x_mm, p.y_mm), d.centre_mm) <= match_mm for p in sunk)]
    stats["det_true"] += len(real)
    for j, d in enumerate(pcs):
        if j not in real:
            stats["false"].append((frame.index, d.kind, d.owner, round(d.centre_mm[0], 1), round(d.centre_mm[1], 1)))
    stats["occ_true"] += len(frame.occluders)
    stats["occ_got"] += min(len(dets.occluders()), len(frame.occluders))


def new_stats():
    s = defaultdict(int)
    for k in ("err", "err_rest", "misses", "false", "wrong", "times"):
        s[k] = []
    return s


def summary(s) -> dict:
    pct = lambda a, b: 100.0 * a / b if b else float("nan")  # noqa: E731
    e = np.array(s["err"]) if s["err"] else np.array([np.nan])
    er = np.array(s["err_rest"]) if s["err_rest"] else np.array([np.nan])
    return {"frames": s["frames"], "away": s["away_true"], "recall_away": pct(s["away_hit"], s["away_true"]),
            "recall_near": pct(s["near_hit"], s["near_true"]), "precision": pct(s["det_true"], s["det"]),
            "rms_mm": float(np.sqrt(np.mean(e ** 2))), "rms_rest_mm": float(np.sqrt(np.mean(er ** 2))),
            "p95_mm": float(np.percentile(e, 95)), "max_mm": float(np.max(e)), "wrong_class": s["wrong_class"],
            "touch": f"{s['touch_hit']}/{s['touch_true']}", "occluders": f"{s['occ_got']}/{s['occ_true']}",
            "ms": 1000 * float(np.median(s["times"])) if s["times"] else float("nan")}


def table(rows) -> str:
    head = ("case | frames | pieces away | recall away % | recall near % | precision % | RMS mm (resting) | p95 mm | "
            "max mm | wrong class | touching found | occluders seen | detect ms (median)")
    lines = [head]
    for name, s in rows:
        m = summary(s)
        lines.append(f"{name} | {m['frames']} | {m['away']} | {m['recall_away']:.2f} | {m['recall_near']:.1f} | "
                     f"{m['precision']:.2f} | {m['rms_mm']:.3f} ({m['rms_rest_mm']:.3f}) | {m['p95_mm']:.2f} | "
                     f"{m['max_mm']:.2f} | {m['wrong_class']} | {m['touch']} | {m['occluders']} | {m['ms']:.2f}")
    return "\n".join(lines)


def run_case(profile, ep, camera: str, every: int, fps: float, seed: int, stats, colours: str = "layout") -> None:
    clip = ep.clip()
    renderer, det = setup(profile, clip, fps, seed, camera, colours=colours)
    for k in range(0, clip.n_frames(fps), every):
        fr = clip.frame(k, fps)
        img = renderer.render(fr, clip.states_at)
        t = time.perf_counter()
        dets = det.detect(img, k, fr.t_s)
        stats["times"].append(time.perf_counter() - t)
        score_frame(renderer, fr, dets, stats)


def main(argv=None) -> int:
    import cv2

    from calibration import default_profile
    from sim.scenarios_cvrnkana import SCENARIOS as CVR
    from sim.scenarios_novuss import SCENARIOS as NOV

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="a few scenarios only")
    ap.add_argument("--every", type=int, default=3, help="detect every N-th frame of each 60 fps clip")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cameras", default="straight,tilted")
    ap.add_argument("--verbose", action="store_true", help="list misses, false detections and wrong classes")
    ap.add_argument("--colours", choices=("layout", "appearance"), default="layout",
                    help="piece colours measured on each clip (layout) or only the profile's, refined online")
    args = ap.parse_args(argv)
    cv2.setNumThreads(1)
    games = [("novuss", NOV, ("opening", "own-opponent-3ms", "touching", "bat-off", "two-pocketed")),
             ("cvrnkana", CVR, ("pit-entry", "hand-nudge"))]
    rows = []
    for camera in args.cameras.split(","):
        for game, table_, quick in games:
            profile = default_profile(game)
            stats = new_stats()
            for name in (quick if args.quick else tuple(table_)):
                ep = table_[name][0](profile, args.seed)
                run_case(profile, ep, camera, args.every, 60.0, args.seed, stats, args.colours)
            rows.append((f"{game} {camera}", stats))
            if args.verbose:
                print(f"-- {game} {camera}: misses {stats['misses'][:20]}\n   false {stats['false'][:20]}\n"
                      f"   wrong {stats['wrong'][:20]}")
    print("classical detector on rendered 1280x720 frames (every %d-th frame at 60 fps, seed %d, colours: %s)"
          % (args.every, args.seed, args.colours))
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
