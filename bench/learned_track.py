"""The learned path through shotjudge vs the plain ultralytics ``model.track()`` pipeline: speed and identity.

    nice -n 10 python bench/learned_track.py [--quick] [--frames N] [--from K] [--threads T] [--no-botsort] [--verbose]

Clip: scripted Novuss strikes from ``sim.scenarios_novuss`` (default ``opening``: a 4.2 m/s bat, ~70 mm a
frame, through the far row and back; and ``own-opponent-3ms``), seed 1, rendered on the fly at 1280x720
60 fps by the simulator's renderer (``bench/vision_detect.setup``: blur, noise, hand and cue), from frame
``--from`` (the bat lying still before the strike; its true layout starts our tracker, as the game state
does in ``judge replay``) for ``--frames`` frames after it. Every rendered frame goes, in
turn, through each path (the order rotates frame by frame, so the shared machine's noise falls on all):

* ``shotjudge learned``: ``models/shotjudge-det.onnx`` loaded by ``vision.detectors.make_detector("learned")``
  inside ``vision.pipeline.Pipeline`` (tracker, segmenter, events, shot records) with the shot assembler of
  ``judge.replay``, started from the true layout at the first frame, as ``judge replay`` starts from the state;
* ``shotjudge learned+crops``: the same, with ``crop_weights`` (``--crop-weights``, default the shipped
  ``models/shotjudge-det-crops.onnx``, the same network for any input size): the whole frame only to
  (re)acquire, batched crops where the picture changed between (``vision.detect_crops``), as the judge runs it;
* ``model.track bytetrack (crops' weights)``: the plain tracker on the crops' file, so the speed-up is not the
  file's;
* ``model.track bytetrack`` / ``botsort``: ``YOLO(onnx).track(frame, persist=True, tracker=...)``, ultralytics'
  own defaults (conf 0.1, IoU matching, Kalman boxes), no layout given;
* ``model.predict`` (no tracker): the floor, and what the detector alone finds.

All four are separate ultralytics models on the same ONNX file, each ONNX Runtime session rebuilt with the
same options (``--threads`` intra-op threads, one inter-op, no spin-waiting) and torch/OpenCV set to the same
thread count. Timing: wall time of each path's call per frame; median, 90th percentile, frames/s (frames over
the path's total seconds) and *x faster*: ``model.track bytetrack``'s total seconds over the path's, on every
frame and on the frames in which a true piece moves (the shot itself). *recall*: true pieces on view matched
by a detection within a diameter, over the true pieces on view (summed over frames).

Identity against the simulator's truth: each path's detections (board mm through the calibration's
``PlaneMap.to_board_mm``) are matched one-to-one, nearest first, to the true pieces on view within one piece
diameter. A label is our piece name, or an ultralytics track id (which stands for the piece it first
matched). *id switches*: a label's detection is on a different true piece than that label's previous one
(our names start on their own piece). *fragmented*: per true piece, distinct labels it carried beyond the
first, summed. *bat* (frames where the true bat moves faster than 1 m/s): frames it was found / frames, and
*breaks*: the label on it changing between consecutive found frames. *all right*: frames where every
matched piece carries its own label (ours: its name; ultralytics: the id that first stood for it); a tracker
that outputs nothing for a piece is not wrong there, so read it with *bat found*. ``--verbose`` lists each switch.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

ROOT = Path(__file__).resolve().parent.parent
FPS = 60.0
STRIKE_MM_S = 1000.0  # the bat counts as struck (fast) above this speed
OCCLUDER_CLASSES = ("hand", "cue")


# -- identity scoring (pure: tested in tests/test_bench_learned_track.py) ------------------------------------
def match(labelled, truth) -> list[tuple[object, str]]:
    """``labelled``: [(label, (x_mm, y_mm))]; ``truth``: {piece: (x_mm, y_mm, radius_mm)}. One-to-one,
    nearest pairs first, a detection within one diameter of a true centre: [(label, piece)]."""
    pairs = []
    for j, (_, xy) in enumerate(labelled):
        for piece, (x, y, r) in truth.items():
            d = math.dist(xy, (x, y))
            if d <= 2.0 * r:
                pairs.append((d, j, piece))
    pairs.sort(key=lambda p: (p[0], p[1], p[2]))
    used_d, used_t, out = set(), set(), []
    for _, j, piece in pairs:
        if j in used_d or piece in used_t:
            continue
        used_d.add(j)
        used_t.add(piece)
        out.append((labelled[j][0], piece))
    return out


@dataclass
class IdentityScore:
    """Identity figures of one path, fed frame by frame with matched (label, true piece) pairs.
    ``named=True``: labels are piece names (each stands for itself from the start); otherwise track ids,
    standing for the piece they first matched. A ``None`` label is a detection nobody named."""

    named: bool
    switches: int = 0
    frames: int = 0
    frames_right: int = 0
    bat_frames: int = 0
    bat_found: int = 0
    bat_breaks: int = 0
    on_view: int = 0
    found: int = 0
    owner: dict = field(default_factory=dict)
    last: dict = field(default_factory=dict)
    labels_of: dict = field(default_factory=dict)
    _bat_label: object = None

    def add(self, pairs, bat_struck: bool = False, log=None, on_view: int = 0) -> None:
        """One frame's matched pairs; ``log(text)`` is told each switch and bat break; ``on_view``: the true
        pieces a camera could see (recall = matched / on view)."""
        self.on_view += on_view
        self.found += len(pairs)
        right = True
        for label, piece in pairs:
            if label is None:
                right = False
                continue
            self.labels_of.setdefault(piece, set()).add(label)
            owner = self.owner.setdefault(label, label if self.named else piece)
            prev = self.last.get(label, owner)
            if piece != prev:
                self.switches += 1
                if log:
                    log(f"id switch: {label} from {prev} to {piece}")
            self.last[label] = piece
            right &= piece == owner
        if pairs:
            self.frames += 1
            self.frames_right += right
        if bat_struck:
            self.bat_frames += 1
            on_bat = [label for label, piece in pairs if piece == "bat"]
            if on_bat:
                self.bat_found += 1
                if self._bat_label is not None and on_bat[0] != self._bat_label:
                    self.bat_breaks += 1
                    if log:
                        log(f"bat break: {self._bat_label} -> {on_bat[0]}")
                self._bat_label = on_bat[0]

    @property
    def recall(self) -> float:
        return self.found / self.on_view if self.on_view else float("nan")

    @property
    def fragmented(self) -> int:
        return sum(len(v) - 1 for v in self.labels_of.values())

    def merged(self, other: "IdentityScore") -> "IdentityScore":
        """Figures of two clips together (labels of different clips never meet)."""
        out = IdentityScore(self.named)
        for k in ("switches", "frames", "frames_right", "bat_frames", "bat_found", "bat_breaks", "on_view", "found"):
            setattr(out, k, getattr(self, k) + getattr(other, k))
        out.labels_of = {(i, p): v for i, s in enumerate((self, other)) for p, v in s.labels_of.items()}
        return out


# -- the clip -------------------------------------------------------------------------------------------------
def truth_of(profile, frame) -> dict:
    """{piece: (x_mm, y_mm, radius_mm)} of the pieces a camera could see (on the surface, in view)."""
    from bench.vision_clips import in_view

    return {p.id: (p.x_mm, p.y_mm, p.radius_mm) for p in frame.pieces
            if p.visible and p.z_mm > -20.0 and in_view(profile, p.x_mm, p.y_mm)}


def bat_speed_mm_s(clip, t_s: float) -> float:
    h = 1e-3
    a, b = ({p.id: p for p in clip.states_at(t).pieces}.get("bat") for t in (t_s - h, t_s + h))
    if a is None or b is None or not (a.visible and b.visible):
        return 0.0
    return math.dist((a.x_mm, a.y_mm), (b.x_mm, b.y_mm)) / (2 * h)


# -- the paths ------------------------------------------------------------------------------------------------
def pin_session(yolo, weights: Path, threads: int) -> None:
    """Rebuild the ONNX Runtime session of an ultralytics model with fixed threads and no spin-waiting, so
    every path runs the network the same way."""
    import onnxruntime as ort

    backend = yolo.predictor.model.backend
    so = ort.SessionOptions()
    so.intra_op_num_threads, so.inter_op_num_threads = threads, 1
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    backend.session = ort.InferenceSession(str(weights), so, providers=["CPUExecutionProvider"])
    backend.session_options = so


class Ours:
    def __init__(self, profile, plane, weights: Path, threads: int, conf: float, crop_weights: Path | None = None):
        from judge.setup import assembler_for
        from vision.detectors import make_detector
        from vision.pipeline import Pipeline

        self.name = "shotjudge learned+crops" if crop_weights else "shotjudge learned"
        self.detector = make_detector("learned", plane, profile, weights=weights, conf=conf, crop_weights=crop_weights)
        pin_session(getattr(self.detector, "full", self.detector).model, weights, threads)
        self.pipe = Pipeline(profile, detector=self.detector, assembler=assembler_for(profile, self.detector))
        self.split = {"detect": [], "track+events": []}
        self.records = 0

    def start(self, layout, frame: int, t_s: float) -> None:
        from vision.pipeline import hints_for

        self.pipe.start(hints_for(layout), frame, t_s)

    def step(self, image, frame: int, t_s: float):
        t0 = time.perf_counter()
        dets = self.detector.detect(image, frame, t_s)
        t1 = time.perf_counter()
        self.records += self.pipe.feed(dets) is not None
        t2 = time.perf_counter()
        self.split["detect"].append(t1 - t0)
        self.split["track+events"].append(t2 - t1)
        return [(d.piece, d.centre_mm) for d in self.pipe.last_named.pieces()]

    def finish(self) -> None:
        self.records += self.pipe.finish() is not None


class Ultra:
    """Plain ultralytics on the same ONNX file: ``track`` with one of its trackers, or ``predict``."""

    def __init__(self, weights: Path, plane, threads: int, tracker: str | None, conf: float | None, imgsz, tag: str = ""):
        from ultralytics import YOLO

        self.name = (f"model.track {tracker}" if tracker else "model.predict") + (f" ({tag})" if tag else "")
        self.model, self.plane, self.tracker, self.conf, self.imgsz = YOLO(str(weights), task="detect"), plane, tracker, conf, imgsz
        h, w = plane.image_size[1], plane.image_size[0]
        self._call(np.zeros((h, w, 3), np.uint8))  # builds the predictor (ultralytics opens the file here)
        self.onnx = weights.suffix == ".onnx"
        if self.onnx:  # PyTorch weights run on torch's threads (set for every path in run_clip)
            pin_session(self.model, weights, threads)
        self.session = self.model.predictor.model.backend.session if self.onnx else None
        if tracker:
            del self.model.predictor.trackers  # the clip starts with a fresh tracker (made at the next call)

    def start(self, layout, frame: int, t_s: float) -> None:
        pass

    def _call(self, image):
        if self.tracker:
            return self.model.track(image, persist=True, tracker=f"{self.tracker}.yaml", imgsz=self.imgsz, conf=self.conf,
                                    verbose=False)[0]
        return self.model.predict(image, imgsz=self.imgsz, conf=self.conf, verbose=False)[0]

    def step(self, image, frame: int, t_s: float):
        r = self._call(image)
        if self.onnx and self.model.predictor.model.backend.session is not self.session:
            raise RuntimeError(f"{self.name}: ultralytics rebuilt its ONNX session; the thread settings are lost")
        if r.boxes is None or len(r.boxes) == 0:
            return []
        xyxy = r.boxes.xyxy.cpu().numpy()
        cls = r.boxes.cls.cpu().numpy().astype(int)
        ids = r.boxes.id.cpu().numpy().astype(int) if r.boxes.id is not None else [None] * len(xyxy)
        keep = [i for i in range(len(xyxy)) if r.names[int(cls[i])] not in OCCLUDER_CLASSES]
        if self.tracker:
            keep = [i for i in keep if ids[i] is not None]
        if not keep:
            return []
        centres_px = np.array([[(xyxy[i, 0] + xyxy[i, 2]) / 2, (xyxy[i, 1] + xyxy[i, 3]) / 2] for i in keep])
        mm = self.plane.to_board_mm(centres_px)
        return [(int(ids[i]) if ids[i] is not None else None, (float(x), float(y))) for i, (x, y) in zip(keep, mm)]

    def finish(self) -> None:
        pass


# -- one clip -------------------------------------------------------------------------------------------------
def run_clip(args, profile, scenario: str, times: dict, scores: dict) -> dict:
    import torch

    from bench.vision_detect import setup
    from sim.scenarios_novuss import SCENARIOS
    from vision.detectors import DEFAULT_IMGSZ

    clip = SCENARIOS[scenario][0](profile, args.seed).clip()
    renderer, classical = setup(profile, clip, FPS, args.seed, colours="appearance")
    plane = classical.plane
    weights = Path(args.weights)
    crop_weights = Path(args.crop_weights)
    paths = [Ours(profile, plane, weights, args.threads, args.conf),
             Ours(profile, plane, weights, args.threads, args.conf, crop_weights=crop_weights),
             Ultra(weights, plane, args.threads, "bytetrack", None, DEFAULT_IMGSZ),
             Ultra(crop_weights, plane, args.threads, "bytetrack", None, DEFAULT_IMGSZ, tag="crops' weights")]
    if not args.no_botsort:
        paths.append(Ultra(weights, plane, args.threads, "botsort", None, DEFAULT_IMGSZ))
    paths.append(Ultra(weights, plane, args.threads, None, args.conf, DEFAULT_IMGSZ))
    torch.set_num_threads(args.threads)  # after the models: ultralytics' select_device sets it to cpu_count - 1
    first = args.start
    last = min(clip.n_frames(FPS), first + 1 + args.frames if args.frames else clip.n_frames(FPS))
    f0 = clip.frame(first, FPS)
    layout = {p: (x, y) for p, (x, y, _) in truth_of(profile, f0).items()}
    for p in paths:
        p.start(layout, first, f0.t_s)
    clip_scores = {p.name: IdentityScore(named=isinstance(p, Ours)) for p in paths}
    struck = 0
    for k in range(first + 1, last):  # frame `first` is the layout (a second observation at its time would be a
        # duplicate timestamp in the tracker's history)
        fr = clip.frame(k, FPS)
        image = renderer.render(fr, clip.states_at)
        truth = truth_of(profile, fr)
        fast = "bat" in truth and bat_speed_mm_s(clip, fr.t_s) > STRIKE_MM_S
        struck += fast
        before = clip.frame(k - 1, FPS)
        was = {q.id: (q.x_mm, q.y_mm) for q in before.pieces}
        times.setdefault("_moving", []).append(any(math.dist((q.x_mm, q.y_mm), was.get(q.id, (q.x_mm, q.y_mm))) > 0.05
                                                   for q in fr.pieces))
        n = len(paths)
        for j in range(n):
            p = paths[(k + j) % n]  # rotate the order every frame
            t = time.perf_counter()
            got = p.step(image, k, fr.t_s)
            times.setdefault(p.name, []).append(time.perf_counter() - t)
            log = (lambda text, name=p.name: print(f"  {scenario} frame {k} {name}: {text}", file=sys.stderr)) \
                if args.verbose else None
            if p.name == "model.predict":
                got = [(None, xy) for _, xy in got]
            clip_scores[p.name].add(match(got, truth), fast, log, on_view=len(truth))
    for p in paths:
        p.finish()
        scores[p.name] = scores[p.name].merged(clip_scores[p.name]) if p.name in scores else clip_scores[p.name]
    ours, cropped = paths[0], paths[1]
    for stage, v in ours.split.items():
        times.setdefault(f"  {stage}", []).extend(v)
    for stage, v in cropped.split.items():
        times.setdefault(f"  {stage} ", []).extend(v)
    crops = cropped.detector
    return {"scenario": scenario, "frames": last - first - 1, "from": first + 1, "struck": struck, "records": ours.records,
            "records_crops": cropped.records, "whole": crops.whole_frames, "crops": crops.crops_run,
            "crop_px": crops.crop_px_run, "frame_px": (last - first - 1) * plane.image_size[0] * plane.image_size[1]}


# -- the table ------------------------------------------------------------------------------------------------
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenarios", default="opening,own-opponent-3ms", help="comma-separated sim.scenarios_novuss names")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--from", dest="start", type=int, default=60, help="first frame of each clip (60: bat lying still)")
    ap.add_argument("--frames", type=int, default=0, help="frames per clip (0: to the end of the clip)")
    ap.add_argument("--threads", type=int, default=2, help="ONNX Runtime intra-op, torch and OpenCV threads, every path")
    ap.add_argument("--conf", type=float, default=0.25, help="shotjudge's detector threshold (model.track keeps its 0.1)")
    ap.add_argument("--weights", default=str(ROOT / "models" / "shotjudge-det.onnx"))
    ap.add_argument("--crop-weights", default=str(ROOT / "models" / "shotjudge-det-crops.onnx"),
                    help="weights of any input size for the crops path (and the second plain tracker)")
    ap.add_argument("--no-botsort", action="store_true")
    ap.add_argument("--verbose", action="store_true", help="print every id switch and bat break (stderr)")
    ap.add_argument("--quick", action="store_true", help="the 'opening' strike only, frames 101-200, no botsort")
    args = ap.parse_args(argv)
    if args.quick:
        args.scenarios, args.start, args.frames, args.no_botsort = "opening", 100, args.frames or 100, True
    from vision.yolo_offline import offline_ultralytics

    offline_ultralytics()
    import logging

    import cv2

    logging.getLogger("ultralytics").setLevel(logging.WARNING)  # no "Loading ..." lines in the table
    import torch

    from calibration import default_profile

    torch.set_num_threads(args.threads)
    cv2.setNumThreads(args.threads)
    profile = default_profile("novuss")
    times, scores, clips = {}, {}, []
    t_all = time.perf_counter()
    for name in args.scenarios.split(","):
        clips.append(run_clip(args, profile, name.strip(), times, scores))
        print(f"  {name}: {clips[-1]['frames']} frames in {time.perf_counter() - t_all:.0f} s", file=sys.stderr)
    base = "model.track bytetrack"
    n = sum(c["frames"] for c in clips)
    print(f"Novuss {', '.join(c['scenario'] + ' frames ' + str(c['from']) + '-' + str(c['from'] + c['frames'] - 1) for c in clips)}"
          f" (seed {args.seed}), 1280x720 {FPS:g} fps rendered, {n} frames, bat struck (>1 m/s) in "
          f"{sum(c['struck'] for c in clips)}; ONNX Runtime {args.threads} intra-op thread(s), torch "
          f"{torch.get_num_threads()}, OpenCV {cv2.getNumThreads()}; order rotated per frame")
    moving = np.array(times.pop("_moving"), bool)
    print(f"{'path':<36} | {'ms/frame med':>12} | {'p90':>6} | {'fps':>6} | {'x faster all':>12} | {'x faster moving':>15} | "
          f"{'recall %':>8} | {'id switches':>11} | {'bat found':>9} | {'bat breaks':>10} | {'fragmented':>10} | "
          f"{'all right %':>11}")
    order = ["shotjudge learned", "  detect", "  track+events", "shotjudge learned+crops", "  detect ", "  track+events ",
             base, f"{base} (crops' weights)", "model.track botsort", "model.predict"]
    for name in [n for n in order if n in times]:
        ts = np.array(times[name])
        ms = 1000 * ts
        med = float(np.median(ms))
        s = scores.get(name)
        if s is None:  # a stage of ours
            print(f"{name:<36} | {med:12.1f} | {np.percentile(ms, 90):6.1f} | {'':>6} | {'':>12} | {'':>15} |")
            continue
        bt = np.array(times[base])
        faster = bt.sum() / ts.sum()  # throughput over the clip: the plain tracker's seconds over ours
        faster_moving = bt[moving].sum() / ts[moving].sum() if moving.any() else float("nan")
        ids = s.named or name != "model.predict"
        print(f"{name:<36} | {med:12.1f} | {np.percentile(ms, 90):6.1f} | {1000 * len(ts) / ms.sum():6.1f} | "
              f"{faster:12.2f} | {faster_moving:15.2f} | {100 * s.recall:8.1f} | "
              f"{s.switches if ids else '-':>11} | {f'{s.bat_found}/{s.bat_frames}':>9} | "
              f"{s.bat_breaks if ids else '-':>10} | {s.fragmented if ids else '-':>10} | "
              f"{(f'{100 * s.frames_right / max(s.frames, 1):.1f}' if ids else '-'):>11}")
    print(f"fps: frames over the path's total seconds; x faster: {base}'s total seconds over the path's, on all "
          f"{len(moving)} frames and on the {int(moving.sum())} in which a piece moves; recall: true pieces on view "
          f"matched within a diameter / on view")
    print(f"shot records from shotjudge: {', '.join(c['scenario'] + ' ' + str(c['records']) for c in clips)}, with crops "
          f"{', '.join(c['scenario'] + ' ' + str(c['records_crops']) for c in clips)} (each clip is one shot); crops path: "
          f"{sum(c['whole'] for c in clips)} whole frames, {sum(c['crops'] for c in clips)} crops "
          f"({100 * sum(c['crop_px'] for c in clips) / sum(c['frame_px'] for c in clips):.1f} % of the frames' pixels); "
          f"total {time.perf_counter() - t_all:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
