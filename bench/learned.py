"""Learned vs classical detector on simulator frames the training never saw; speed of each model format.

    nice python bench/learned.py [--renderers 10] [--frames 10] [--conf 0.25] [--no-speed] [--no-map]
                                 [--misses misses.csv]

Frames: random layouts of both games drawn by domain-randomised renderers whose seeds (900000+) no
training or validation renderer used, so textures, colours, lighting, blur, noise, lens and camera pose
are new; hands and the cue cover pieces in about half the frames. Both detectors see the same frames
through the vision interface (``detect(image) -> Detections``); the classical one is set up as at a
club (empty board, then colours from the opening layout, under the same look).

A piece counts when at least half its top face shows (the rest are neither hits nor false alarms);
"hand/cue in frame": the pieces of the frames with a hand or the cue in them; "partly covered": 50-99 %
showing. A hit is a detection of the right class whose centre lies within half the piece's box size of the
true centre. mAP50 / mAP50-95 come from ultralytics ``val`` on the same frames
at 1280 px (PyTorch weights, the ones the ONNX file was exported from). Speed: median ms per 1280x736
forward pass for each format on 1 and 2 threads, and the whole ``LearnedDetector.detect`` call.
``--misses FILE``: every missed piece, why and in what circumstances (``bench/learned_misses.py``), as CSV,
with a table of causes per class and of miss rates by circumstance.
"""
from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.learned_misses import conf_text  # noqa: E402
from calibration.plane import PlaneMap  # noqa: E402
from judge.training.data import CLASSES, PIECE_CLASSES, make_renderer, render_labelled, yolo_lines  # noqa: E402
from vision.detectors import DEFAULT_CONF, DEFAULT_IOU, parse_conf  # noqa: E402
from vision.types import class_threshold, lowest_threshold  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SEED_BASE = 900_000
COUNT_VISIBLE = 0.5
SWEEP = (0.1, 0.25, 0.4, 0.55)


def unseen_looks(renderers: int, first: int = 0):
    """(k, game, seed, (profile, camera, renderer), plane) of ``renderers`` looks per game, from look
    ``first`` on, that no training or validation renderer used (seeds 900000+)."""
    for gi, game in enumerate(("novuss", "cvrnkana")):
        for k in range(first, first + renderers):
            seed = SEED_BASE + gi * 10_000 + k
            made = make_renderer(game, seed)
            yield k, game, seed, made, plane_of(made[1])


def plane_of(camera) -> PlaneMap:
    return PlaneMap((camera.width, camera.height), camera.K, np.array(camera.dist),
                    np.linalg.inv(camera.board_to_undistorted()))


def opening_frame(game, profile, index: int):
    """A known layout with every class on it, no occluders: what the classical detector learns colours from."""
    from sim.frames import PieceState, SimFrame

    spec = profile.spec
    pcs = []
    if spec.striker:  # Novuss: both rows of pawns and the bat
        r, h = spec.piece_radii_mm["pawn"], spec.half_mm
        for k in range(8):
            x = (k - 3.5) * (2 * r + 1)
            pcs.append(PieceState(f"A{k + 1}", "pawn", "A", x, h - r - 1, 0.0, 0.0, r, True))
            pcs.append(PieceState(f"B{k + 1}", "pawn", "B", x, -h + r + 1, 0.0, 0.0, r, True))
        pcs.append(PieceState("bat", "bat", None, 150.0, -300.0, 0.0, 0.0, spec.piece_radii_mm["bat"], True))
    else:
        r = spec.piece_radii_mm["marble"]
        for k in range(5):
            pcs.append(PieceState(f"A{k + 1}", "marble", "A", -300.0 + 60 * k, -150.0, 0.0, 0.0, r, True))
            pcs.append(PieceState(f"B{k + 1}", "marble", "B", -300.0 + 60 * k, 150.0, 0.0, 0.0, r, True))
    return SimFrame(index, index * 1.0, tuple(pcs), ())


def classical_for(game, profile, camera, renderer, plane):
    import dataclasses

    from vision.detect_classical import ClassicalDetector

    det = ClassicalDetector(plane, profile)
    f0 = opening_frame(game, profile, 10_000)
    empty = dataclasses.replace(f0, index=10_001, pieces=())
    det.learn_background([renderer.render(empty)])
    det.learn_colours(renderer.render(f0), {p.id: (p.x_mm, p.y_mm) for p in f0.pieces})
    return det


def det_points(dets, plane, min_score: float | dict = 0.0) -> list[tuple[str, float, float]]:
    """(class, x_px, y_px) of every piece detection scoring at least ``min_score`` (one threshold, or one
    per class name: a class not named takes the lowest given)."""
    out = []
    for d in dets.pieces():
        cls = "bat" if d.kind == "bat" else f"{d.kind}_{(d.owner or '?').lower()}"
        if d.score < class_threshold(min_score, cls):
            continue
        if d.centre_px is not None:
            u, v = d.centre_px
        else:
            u, v = plane.to_image_px(np.array([d.centre_mm]))[0]
        out.append((cls, float(u), float(v)))
    return out


def score(boxes, points, stats, occluded: bool = False) -> None:
    """Greedy matching by distance within each class; updates per-class/stratum counts (``occluded``: the
    frame has a hand or the cue in it)."""
    truth = [b for b in boxes if b.cls in PIECE_CLASSES]
    used_t = set()
    pairs = []
    for j, (cls, u, v) in enumerate(points):
        for i, b in enumerate(truth):
            if b.cls != cls:
                continue
            cx, cy = b.centre_px
            tol = 0.5 * max(b.xyxy[2] - b.xyxy[0], b.xyxy[3] - b.xyxy[1])
            d = math.hypot(u - cx, v - cy)
            if d <= tol:
                pairs.append((d, i, j))
    pairs.sort()
    used_d = set()
    for d, i, j in pairs:
        if i in used_t or j in used_d:
            continue
        used_t.add(i)
        used_d.add(j)
    for i, b in enumerate(truth):
        if b.visible < COUNT_VISIBLE:
            continue
        strata = ["all"] + (["hand/cue in frame"] if occluded else []) + (["partly covered"] if b.visible < 0.99 else [])
        for s in strata:
            stats[(b.cls, s)][0] += 1
            stats[(b.cls, s)][1] += i in used_t
    counted_hits = sum(1 for i in used_t if truth[i].visible >= COUNT_VISIBLE)
    ignored_hits = len(used_t) - counted_hits
    stats["_det"][0] += len(points) - ignored_hits
    stats["_det"][1] += counted_hits


def evaluate(args):
    from vision.detectors import load_learned

    frames_out = []
    misses = None
    if args.misses:
        from bench.learned_misses import MissLog, candidates, scene_context

        misses = MissLog(args.conf, COUNT_VISIBLE)
    stats = {"learned": defaultdict(lambda: [0, 0]), "classical": defaultdict(lambda: [0, 0])}
    sweep = {c: defaultdict(lambda: [0, 0]) for c in SWEEP}
    t0 = time.perf_counter()
    for k, game, seed, made, plane in unseen_looks(args.renderers, args.first_look):
        profile, camera, renderer = made
        learned = load_learned(args.weights, plane, conf=min(SWEEP + (lowest_threshold(args.conf),)),
                               game=None if args.every_class else game, iou=args.iou)
        classical = classical_for(game, profile, camera, renderer, plane) if not args.no_classical else None
        context = scene_context(game, seed, args.frames, profile, renderer.settings) if misses else None
        for lf in render_labelled(game, seed, args.frames, made=made):
            dets = learned.detect(lf.image)
            if misses is not None:
                misses.add(lf, context[lf.index], candidates(learned, lf.image), profile)
            score(lf.boxes, det_points(dets, plane, args.conf), stats["learned"], lf.occluded)
            for c in SWEEP:
                score(lf.boxes, det_points(dets, plane, c), sweep[c])
            if classical is not None:
                try:
                    got = det_points(classical.detect(lf.image), plane)
                except cv2.error as exc:  # counted and shown: a crash is a frame with nothing found
                    stats["classical"]["_errors"][0] += 1
                    print(f"  classical detector failed on {game} seed {seed} frame {lf.index}: "
                          f"{str(exc).strip().splitlines()[-1][:120]}", file=sys.stderr)
                    got = []
                score(lf.boxes, got, stats["classical"], lf.occluded)
            frames_out.append(lf)
        print(f"  {game} look {k}: {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return frames_out, stats, plane, sweep, misses


def map_figures(frames, pt: Path):
    from vision.yolo_offline import offline_ultralytics

    offline_ultralytics()
    from ultralytics import YOLO

    with tempfile.TemporaryDirectory() as td:
        root = Path(td)
        (root / "images" / "val").mkdir(parents=True)
        (root / "labels" / "val").mkdir(parents=True)
        for n, lf in enumerate(frames):
            cv2.imwrite(str(root / "images" / "val" / f"{n:05d}.png"), lf.image)
            h, w = lf.image.shape[:2]
            (root / "labels" / "val" / f"{n:05d}.txt").write_text("".join(s + "\n" for s in yolo_lines(lf.boxes, w, h)))
        names = "".join(f"  {i}: {c}\n" for i, c in enumerate(CLASSES))
        (root / "data.yaml").write_text(f"path: {root}\ntrain: images/val\nval: images/val\nnames:\n{names}")
        m = YOLO(str(pt)).val(data=str(root / "data.yaml"), imgsz=1280, batch=4, rect=True, plots=False,
                              device="cpu", workers=0, verbose=False, project=str(root / "runs"))
    per = {CLASSES[c]: (float(m.box.ap50[i]), float(m.box.ap[i])) for i, c in enumerate(m.box.ap_class_index)}
    return float(m.box.map50), float(m.box.map), per


def speed(args, image):
    rows = []
    x = cv2.resize(image, (1280, 720))
    blob = np.zeros((1, 3, 736, 1280), np.float32)
    blob[0, :, 8:728] = x[..., ::-1].transpose(2, 0, 1) / 255.0
    n = args.speed_frames

    def med(fn):
        fn()
        ts = []
        for _ in range(n):
            t = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t)
        return statistics.median(ts) * 1000

    pt, onnx_path, ncnn_dir = Path(args.pt), Path(args.weights), Path(args.ncnn)
    if pt.exists():
        import torch

        from vision.yolo_offline import offline_ultralytics

        offline_ultralytics()
        from ultralytics import YOLO

        net = YOLO(str(pt)).model.fuse().eval()
        t = torch.from_numpy(blob)
        for th in (1, 2):
            torch.set_num_threads(th)
            with torch.inference_mode():
                rows.append(("PyTorch", th, med(lambda: net(t))))
        torch.set_num_threads(2)
    if onnx_path.exists():
        import onnxruntime as ort

        for th in (1, 2):
            so = ort.SessionOptions()
            so.intra_op_num_threads, so.inter_op_num_threads = th, 1
            sess = ort.InferenceSession(str(onnx_path), so, providers=["CPUExecutionProvider"])
            name = sess.get_inputs()[0].name
            rows.append(("ONNX Runtime", th, med(lambda: sess.run(None, {name: blob}))))
    if (ncnn_dir / "model.ncnn.param").exists():
        import ncnn

        for th in (1, 2):
            net = ncnn.Net()
            net.opt.num_threads = th
            net.load_param(str(ncnn_dir / "model.ncnn.param"))
            net.load_model(str(ncnn_dir / "model.ncnn.bin"))
            mat = ncnn.Mat(blob[0])

            def run():
                ex = net.create_extractor()
                ex.input("in0", mat)
                ex.extract("out0")

            rows.append(("NCNN", th, med(run)))
    return rows


def _args(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--weights", default=str(ROOT / "models" / "shotjudge-det.onnx"))
    ap.add_argument("--pt", default=str(ROOT / "models" / "shotjudge-det.pt"))
    ap.add_argument("--ncnn", default=str(ROOT / "models" / "shotjudge-det_ncnn_model"))
    ap.add_argument("--renderers", type=int, default=10, help="unseen looks per game")
    ap.add_argument("--frames", type=int, default=10, help="layouts per look")
    ap.add_argument("--first-look", type=int, default=0,
                    help="start at this look (e.g. 10: looks 10-19, a second unseen set to confirm settings chosen on 0-9)")
    ap.add_argument("--conf", type=parse_conf, default=DEFAULT_CONF,
                    help=f"learned: confidence threshold, one or per class (pawn_a=0.25,marble_a=0.1,...); default "
                         f"the shipped detector's ({conf_text(DEFAULT_CONF)})")
    ap.add_argument("--speed-frames", type=int, default=20)
    ap.add_argument("--no-classical", action="store_true")
    ap.add_argument("--no-map", action="store_true")
    ap.add_argument("--no-speed", action="store_true")
    ap.add_argument("--game-classes", action="store_true",
                    help="learned: only the game's classes compete for a box (LearnedDetector game=...): the default")
    ap.add_argument("--every-class", action="store_true", help="learned: every class competes for a box")
    ap.add_argument("--iou", type=float, default=DEFAULT_IOU,
                    help=f"learned: NMS IoU threshold (default the shipped detector's, {DEFAULT_IOU:g})")
    ap.add_argument("--misses", metavar="FILE", help="write every missed piece (CSV) and print the causes")
    return ap.parse_args(argv)


def _print_sweep(sweep) -> None:
    print("learned, by confidence threshold: recall of pawns+bat / marbles (all, partly covered), precision")
    for c in SWEEP:
        st = sweep[c]

        def rec(classes, stratum):
            n = sum(st[(k, stratum)][0] for k in classes)
            return f"{100 * sum(st[(k, stratum)][1] for k in classes) / n:6.2f}%" if n else "     -"
        got, hit = st["_det"]
        print(f"  conf {c:.2f}: {rec(PIECE_CLASSES[:3], 'all')} {rec(PIECE_CLASSES[:3], 'partly covered')}  "
              f"{rec(PIECE_CLASSES[3:], 'all')} {rec(PIECE_CLASSES[3:], 'partly covered')}  "
              f"precision {100 * hit / max(got, 1):6.2f}%")


def main(argv=None) -> int:
    args = _args(argv)
    cv2.setNumThreads(1)
    frames, stats, plane, sweep, misses = evaluate(args)
    n_occ = sum(lf.occluded for lf in frames)
    print(f"unseen frames: {len(frames)} (1280x720, looks {args.first_look}-{args.first_look + args.renderers - 1} "
          f"x {args.frames} layouts x 2 games, "
          f"{n_occ} with a hand or the cue), conf {conf_text(args.conf)}, NMS IoU {args.iou:g}"
          + (", every class competing" if args.every_class else ", game classes only"))
    print(f"{'class':<10} {'pieces':<17} {'n':>5} {'learned':>8} {'classical':>10}")
    for cls in PIECE_CLASSES:
        for s in ("all", "hand/cue in frame", "partly covered"):
            n, hit = stats["learned"][(cls, s)]
            if n == 0:
                continue
            c_n, c_hit = stats["classical"][(cls, s)]
            crec = f"{100 * c_hit / c_n:9.2f}%" if c_n else f"{'-':>10}"
            print(f"{cls:<10} {s:<17} {n:5d} {100 * hit / n:7.2f}% {crec}")
    for name in ("learned", "classical"):
        got, hit = stats[name]["_det"]
        if got or name == "learned":
            print(f"precision {name:<10} {100 * hit / max(got, 1):7.2f}% ({got - hit} false of {got})")
    _print_sweep(sweep)
    if misses is not None:
        misses.write(args.misses)
        learned_missed = sum(stats["learned"][(cls, "all")][0] - stats["learned"][(cls, "all")][1]
                             for cls in PIECE_CLASSES)
        print(misses.tables())
        got, hit = stats["learned"]["_det"]
        if learned_missed != len(misses.misses) or got - hit != sum(misses.false.values()):
            # the causes are read from the network's raw boxes; the detector then drops the second box on one
            # disc (vision.detect_learned.one_box_per_disc), which removes false alarms and, rarely, a hit
            print(f"note: the causes come from the raw boxes ({len(misses.misses)} misses, "
                  f"{sum(misses.false.values())} false alarms); after one box per disc: {learned_missed} misses, "
                  f"{got - hit} false alarms (counted above)")
        print(f"every miss: {args.misses}")
    if stats["classical"]["_errors"][0]:
        print(f"classical detector raised on {stats['classical']['_errors'][0]} frames (counted as nothing found)")
    if not args.no_map and Path(args.pt).exists():
        m50, m5095, per = map_figures(frames, Path(args.pt))
        print(f"ultralytics val at 1280 px (PyTorch weights): mAP50 {m50:.3f}  mAP50-95 {m5095:.3f}")
        for cls, (a50, a) in per.items():
            print(f"  {cls:<10} AP50 {a50:.3f}  AP50-95 {a:.3f}")
    if not args.no_speed:
        rows = speed(args, frames[0].image)
        print("speed, one 1280x736 forward pass (median ms):")
        for fmt, th, ms in rows:
            print(f"  {fmt:<13} {th} thread{'s' if th > 1 else ' '} {ms:8.1f}")
        from vision.detectors import load_learned

        det = load_learned(args.weights, plane, conf=args.conf, iou=args.iou)
        ts = []
        for lf in frames[-args.speed_frames:]:
            t = time.perf_counter()
            det.detect(lf.image)
            ts.append(time.perf_counter() - t)
        print(f"  LearnedDetector.detect (ONNX via ultralytics, default threads): {statistics.median(ts) * 1000:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
