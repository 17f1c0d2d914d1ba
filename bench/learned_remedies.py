"""Inference-side remedies for the learned detector's misses, each measured on the same unseen frames.

    nice python bench/learned_remedies.py [--renderers 10] [--frames 10] [--pt-variants]

The frames, the hit test and the precision count are ``bench/learned.py``'s (seeds 900000+, a piece counts
when half its top face shows; a detection of the wrong class is a miss and a false alarm - never relabelled).
The network runs once per frame (ONNX, exactly as ``LearnedDetector`` calls it) and its raw output is
post-processed by every setting, so settings differ only in what they say they change:

* ``conf``        the confidence threshold (one number, or per class: ``m.15`` = marbles at 0.15);
* ``iou``         the NMS IoU threshold (0.7 is ultralytics' and the detector's default);
* ``agnostic``    class-agnostic NMS (one box per place, whatever its class);
* ``game``        only the game's classes compete for each box (Novuss: pawns, bat, hand, cue; Cvrnkaná:
                  marbles, hand): the pipeline always knows which game it watches;
* ``family``      a box's score is the sum of its class and the other player's same piece (pawn_a + pawn_b,
                  marble_a + marble_b); the class is still the higher of the two;
* ``markers``     a box centred on a calibration marker (board mm, the profile's marker squares plus 5 mm)
                  is dropped: the ArUco markers are the commonest false "pawn";
* ``refine``      ``vision.refine.BoxRefiner`` with ``drop_unfit`` (rim fit; boxes with no plausible rim
                  dropped), against the board around each box (``local``) or the empty-board image (``bg``).

``--pt-variants`` adds settings that need their own forward pass of the PyTorch weights: test-time
augmentation (ultralytics ``augment=True``) and a larger input size.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from collections import defaultdict
from dataclasses import dataclass

import cv2
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.learned import COUNT_VISIBLE, ROOT, opening_frame, score, unseen_looks  # noqa: E402
from judge.training.data import CLASSES, PIECE_CLASSES, render_labelled  # noqa: E402

FLOOR_CONF = 0.01
GAME_CLASSES = {"novuss": ("pawn_a", "pawn_b", "bat", "hand", "cue"), "cvrnkana": ("marble_a", "marble_b", "hand")}
PARTNER = {"pawn_a": "pawn_b", "pawn_b": "pawn_a", "marble_a": "marble_b", "marble_b": "marble_a"}


@dataclass(frozen=True)
class Setting:
    name: str
    conf: float | tuple[tuple[str, float], ...] = 0.25
    iou: float = 0.7
    agnostic: bool = False
    game: bool = False
    family: bool = False
    refine: str | None = None  # None, "local" or "bg"
    markers: bool = False
    source: str = "onnx"  # which forward pass: "onnx", "pt-tta", "pt-1600"

    def conf_of(self, cls: str) -> float:
        return self.conf if isinstance(self.conf, float) else dict(self.conf)[cls]

    @property
    def post(self) -> tuple:
        return self.iou, self.agnostic, self.game, self.family, self.source


def per_class(default: float, **over) -> tuple[tuple[str, float], ...]:
    return tuple((c, over.get(c, default)) for c in PIECE_CLASSES)


MARBLES_15 = per_class(0.25, marble_a=0.15, marble_b=0.15)
LOW_FOR_SMALL = per_class(0.25, bat=0.10, marble_a=0.05, marble_b=0.05)  # pawns .25, the bat .10, marbles .05
SETTINGS = (
    Setting("shipped (conf .25)"),
    Setting("conf .15", 0.15),
    Setting("conf .10", 0.10),
    Setting("iou .5", iou=0.5),
    Setting("iou .9", iou=0.9),
    Setting("agnostic nms", agnostic=True),
    Setting("game", game=True),
    Setting("game conf .15", 0.15, game=True),
    Setting("game conf .10", 0.10, game=True),
    Setting("game m.15", MARBLES_15, game=True),
    Setting("game family", game=True, family=True),
    Setting("game iou .6", iou=0.6, game=True),
    Setting("game iou .5", iou=0.5, game=True),
    Setting("game iou .4", iou=0.4, game=True),
    Setting("game iou .3", iou=0.3, game=True),
    Setting("game iou .5 conf .15", 0.15, iou=0.5, game=True),
    Setting("game iou .5 conf .10", 0.10, iou=0.5, game=True),
    Setting("game iou .5 m.15", MARBLES_15, iou=0.5, game=True),
    Setting("refine local", refine="local"),
    Setting("refine local conf .15", 0.15, refine="local"),
    Setting("refine local conf .10", 0.10, refine="local"),
    Setting("game refine local", game=True, refine="local"),
    Setting("game refine local .15", 0.15, game=True, refine="local"),
    Setting("game refine local .10", 0.10, game=True, refine="local"),
    Setting("game refine bg", game=True, refine="bg"),
    Setting("game refine bg .15", 0.15, game=True, refine="bg"),
    Setting("game refine bg .10", 0.10, game=True, refine="bg"),
    Setting("game iou .5 refine local", iou=0.5, game=True, refine="local"),
    Setting("game iou .5 refine bg", iou=0.5, game=True, refine="bg"),
    Setting("game iou .5 refine bg .15", 0.15, iou=0.5, game=True, refine="bg"),
    Setting("game iou .5 conf .20", 0.20, iou=0.5, game=True),
    Setting("game iou .5 refine local .15", 0.15, iou=0.5, game=True, refine="local"),
    Setting("game iou .5 refine local .20", 0.20, iou=0.5, game=True, refine="local"),
    Setting("game iou .5 markers", iou=0.5, game=True, markers=True),
    Setting("game iou .5 markers .15", 0.15, iou=0.5, game=True, markers=True),
    Setting("game iou .5 markers .10", 0.10, iou=0.5, game=True, markers=True),
    Setting("game iou .5 refine local .10", 0.10, iou=0.5, game=True, refine="local"),
    Setting("game iou .5 refine local .05", 0.05, iou=0.5, game=True, refine="local"),
    Setting("game iou .5 conf .05", 0.05, iou=0.5, game=True),
    Setting("game iou .5 p.25 b.10 m.05", LOW_FOR_SMALL, iou=0.5, game=True),
    Setting("game iou .5 p.25 b.10 m.05 refine local", LOW_FOR_SMALL, iou=0.5, game=True, refine="local"),
)
PT_SETTINGS = (
    Setting("pt 1280 (check)", source="pt-1280"),
    Setting("pt tta", source="pt-tta"),
    Setting("pt tta game .15", 0.15, game=True, source="pt-tta"),
    Setting("pt 1600", source="pt-1600"),
    Setting("pt 1600 game .15", 0.15, game=True, source="pt-1600"),
)


def capturing_predictor():
    """ultralytics' own detection predictor, keeping the raw network output of its last call."""
    from ultralytics.models.yolo.detect import DetectionPredictor

    class Capture(DetectionPredictor):
        def postprocess(self, preds, img, orig_imgs, **kwargs):
            raw = preds[0] if isinstance(preds, (list, tuple)) else preds
            self.raw, self.img_hw = raw.detach().clone(), tuple(img.shape[2:])
            return super().postprocess(preds, img, orig_imgs, **kwargs)

    return Capture


def post(raw, img_hw, orig_hw, game: str, iou: float, agnostic: bool, game_only: bool, family: bool):
    """Boxes (cls, score, xyxy in the original image) down to ``FLOOR_CONF`` by ultralytics' NMS."""
    import torch
    from ultralytics.utils import nms, ops

    p = raw.clone()  # (1, 4 + classes, anchors)
    nc = len(CLASSES)
    sc = p[:, 4:4 + nc]  # a view: changes go into p
    if game_only:
        for k, c in enumerate(CLASSES):
            if c not in GAME_CLASSES[game]:
                sc[:, k] = 0.0
    if family:  # the winning class takes its family's total; the other member drops out
        s = sc.clone()
        for c, other in PARTNER.items():
            k, o = CLASSES.index(c), CLASSES.index(other)
            win = s[:, k] >= s[:, o]
            sc[:, k] = torch.where(win, s[:, k] + s[:, o], torch.zeros_like(s[:, k]))
    out = nms.non_max_suppression(p, FLOOR_CONF, iou, None, agnostic, max_det=2000, nc=nc)[0]
    if not len(out):
        return []
    boxes = ops.scale_boxes(img_hw, out[:, :4].clone(), orig_hw)
    return [(CLASSES[int(c)], float(s), tuple(map(float, b))) for b, s, c in
            zip(boxes.tolist(), out[:, 4].tolist(), out[:, 5].tolist())]


def on_marker(xyxy, plane, profile, margin_mm: float = 5.0) -> bool:
    """Whether a box's centre lies on one of the profile's calibration markers (axis-aligned squares)."""
    x, y = plane.to_board_mm(np.array([[(xyxy[0] + xyxy[2]) / 2, (xyxy[1] + xyxy[3]) / 2]]))[0]
    half = profile.markers["size_mm"] / 2 + margin_mm
    return any(abs(x - mx) <= half and abs(y - my) <= half for mx, my in profile.markers["centres_mm"].values())


def to_detections(boxes, image, plane):
    """The boxes as ``LearnedDetector`` hands them on (an ultralytics ``Results`` through ``from_ultralytics``)."""
    import torch
    from ultralytics.engine.results import Results

    from vision.detect_learned import DEFAULT_CLASSES
    from vision.types import Detections

    data = torch.tensor([[*b[2], b[1], CLASSES.index(b[0])] for b in boxes], dtype=torch.float32).reshape(-1, 6)
    res = Results(image, path="", names=dict(enumerate(CLASSES)), boxes=data)
    return Detections.from_ultralytics(res, plane.to_board_mm, 0, 0.0, DEFAULT_CLASSES, 0.0)


def evaluate(args, settings):
    from vision.refine import BoxRefiner
    from vision.yolo_offline import offline_ultralytics

    offline_ultralytics()
    from ultralytics import YOLO

    Capture = capturing_predictor()
    onnx = YOLO(args.weights, task="detect")
    pt = YOLO(args.pt, task="detect") if any(s.source.startswith("pt") for s in settings) else None
    stats = {s.name: defaultdict(lambda: [0, 0]) for s in settings}
    t0 = time.perf_counter()
    for k, game, seed, made, plane in unseen_looks(args.renderers):
        profile, camera, renderer = made
        refiner = BoxRefiner(plane, profile, drop_unfit=True)
        background = None
        if any(s.refine == "bg" for s in settings):
            f0 = opening_frame(game, profile, 10_000)
            background = renderer.render(dataclasses.replace(f0, index=10_001, pieces=()))
        for lf in render_labelled(game, seed, args.frames, made=made):
            raw = {}
            for src in sorted({s.source for s in settings}):
                model, kw = (onnx, dict(imgsz=(736, 1280))) if src == "onnx" else \
                    (pt, dict(imgsz=1280, augment=True)) if src == "pt-tta" else \
                    (pt, dict(imgsz=1280)) if src == "pt-1280" else (pt, dict(imgsz=1600))
                model.predict(lf.image, conf=FLOOR_CONF, max_det=2000, verbose=False, predictor=Capture, **kw)
                raw[src] = (model.predictor.raw, model.predictor.img_hw)
            cache = {}
            for s in settings:
                if s.post not in cache:
                    rt, img_hw = raw[s.source]
                    cache[s.post] = post(rt, img_hw, lf.image.shape[:2], game, s.iou, s.agnostic, s.game, s.family)
                boxes = [b for b in cache[s.post] if b[0] in PIECE_CLASSES and b[1] >= s.conf_of(b[0])]
                if s.markers:
                    boxes = [b for b in boxes if not on_marker(b[2], plane, profile)]
                if s.refine:
                    dets = refiner.refine(lf.image, to_detections(boxes, lf.image, plane),
                                          background if s.refine == "bg" else None)
                    points = [("bat" if d.kind == "bat" else f"{d.kind}_{d.owner.lower()}", *d.centre_px)
                              for d in dets.pieces()]
                else:
                    points = [(c, (b[0] + b[2]) / 2, (b[1] + b[3]) / 2) for c, _, b in boxes]
                score(lf.boxes, points, stats[s.name])
        print(f"  {game} renderer {k + 1}/{args.renderers}: {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return stats


def table(settings, stats) -> str:
    lines = [f"{'setting':<29} " + " ".join(f"{c:>9}" for c in PIECE_CLASSES)
             + f" {'pieces':>8} {'precision':>10} {'false':>6}"]
    for s in settings:
        st = stats[s.name]
        cells = [f"{100 * st[(c, 'all')][1] / max(st[(c, 'all')][0], 1):8.2f}%" for c in PIECE_CLASSES]
        n = sum(st[(c, "all")][0] for c in PIECE_CLASSES)
        hit = sum(st[(c, "all")][1] for c in PIECE_CLASSES)
        got, true = st["_det"]
        lines.append(f"{s.name:<29} " + " ".join(cells) + f" {100 * hit / max(n, 1):7.2f}% "
                     f"{100 * true / max(got, 1):9.2f}% {got - true:6d}")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--weights", default=str(ROOT / "models" / "shotjudge-det.onnx"))
    ap.add_argument("--pt", default=str(ROOT / "models" / "shotjudge-det.pt"))
    ap.add_argument("--renderers", type=int, default=10, help="unseen looks per game")
    ap.add_argument("--frames", type=int, default=10, help="layouts per look")
    ap.add_argument("--pt-variants", action="store_true", help="also TTA and a larger input (PyTorch weights)")
    ap.add_argument("--only", default="", help="comma-separated words: only the settings whose name holds one "
                    "(e.g. 'shipped,refine')")
    args = ap.parse_args(argv)
    cv2.setNumThreads(1)
    settings = SETTINGS + (PT_SETTINGS if args.pt_variants else ())
    words = [w.strip() for w in args.only.split(",") if w.strip()]
    if words:
        settings = tuple(s for s in settings if any(w in s.name for w in words))
        if not settings:
            ap.error(f"--only {args.only!r} names no setting")
    stats = evaluate(args, settings)
    n = sum(stats[settings[0].name][(c, "all")][0] for c in PIECE_CLASSES)
    print(f"unseen frames: {2 * args.renderers * args.frames} "
          f"({args.renderers} looks x {args.frames} layouts x 2 games), "
          f"{n} counted pieces (>= {COUNT_VISIBLE:.0%} showing); recall per class, all pieces, precision")
    print(table(settings, stats))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
