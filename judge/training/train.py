"""Train the learned detector: simulator dataset -> ultralytics YOLO from a model YAML -> ONNX/NCNN in models/.

Why tiles: pieces are 15-25 px in a 1280x720 frame. Shrinking the frame to a training size makes them
5-10 px (too small to learn on a CPU budget); full frames at 1280 px cost 16x a 320 px tile. So training
uses 320 px crops at full resolution, mostly around pieces, and inference runs the fully convolutional
model on the whole frame at its native size (pieces look exactly as in training).

Everything is seeded (dataset seeds, ``seed=``/``deterministic=True``); a run is resumable from its
``last.pt``; the ``time`` bound stops a run after that many hours whatever ``epochs`` says. Nothing is
downloaded: the network is built from the YAML, ultralytics is configured offline (``vision.yolo_offline``).
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from calibration.atomic import write_text_atomic
from models import MODELS_DIR
from rules.game import GAMES
from vision.types import VisionError

__all__ = ["DataSpec", "TrainSpec", "build_dataset", "merge_datasets", "train", "export", "MODEL_YAML"]

MODEL_YAML = MODELS_DIR / "shotjudge-yolo.yaml"
VAL_SEED_OFFSET = 100_000  # validation renderers never share a seed with training ones


@dataclass(frozen=True)
class DataSpec:
    """How many domain-randomised renderers per game, layouts per renderer, and tiles per layout."""

    games: tuple[str, ...] = tuple(GAMES)
    settings_per_game: int = 40
    frames_per_setting: int = 12
    val_settings_per_game: int = 4
    tile_px: int = 320
    tiles_per_frame: int = 6
    seed: int = 0
    size: tuple[int, int] = (1280, 720)
    moving_share: float = 0.12  # pawns and marbles smeared by motion (judge.training.data.MOVING_SHARE)

    def __post_init__(self):
        if self.settings_per_game < 1 or self.frames_per_setting < 1 or self.tiles_per_frame < 1:
            raise VisionError("dataset sizes must be >= 1")
        if not 0.0 <= self.moving_share <= 1.0:
            raise VisionError(f"moving share must be between 0 and 1, got {self.moving_share}")
        unknown = set(self.games) - set(GAMES)
        if unknown or not self.games:
            raise VisionError(f"unknown game(s) {sorted(unknown)}: use novuss and/or cvrnkana")


@dataclass(frozen=True)
class TrainSpec:
    model: str = str(MODEL_YAML)  # a model YAML, or a local .pt to fine-tune (never a name to download)
    imgsz: int = 320
    epochs: int = 6
    batch: int = 16
    nbs: int = 16  # nominal batch: = batch, so a short run makes one optimiser step per batch
    time_h: float | None = None  # hard bound on the run, hours (ultralytics ``time``)
    workers: int = 1
    seed: int = 0
    lr0: float = 0.01
    warmup_epochs: float = 0.3
    mosaic: float = 0.5
    close_mosaic: int = 2
    scale: float = 0.25
    patience: int = 100
    name: str = "shotjudge"
    project: str = "runs/train"


def build_dataset(spec: DataSpec, out_dir: str | Path, progress=print) -> Path:
    """Render the dataset into ``out_dir`` (YOLO layout + ``data.yaml``); reuses a finished one with the
    same spec. Written to a temporary folder and renamed when complete."""
    import cv2

    from .data import CLASSES, render_labelled, tiles, yolo_lines

    out = Path(out_dir)
    stamp = out / "spec.json"
    want = json.dumps(asdict(spec), sort_keys=True)
    if stamp.exists() and _same_spec(stamp.read_text(), spec):
        return out / "data.yaml"
    if out.exists():
        raise VisionError(f"dataset folder {out} holds another dataset: remove it or choose another --data-dir")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    try:
        t0 = time.perf_counter()
        n = 0
        for split, count, offset in (("train", spec.settings_per_game, 0), ("val", spec.val_settings_per_game, VAL_SEED_OFFSET)):
            (tmp / "images" / split).mkdir(parents=True)
            (tmp / "labels" / split).mkdir(parents=True)
            for gi, game in enumerate(spec.games):
                for k in range(count):
                    seed = spec.seed * 1_000_000 + offset + gi * 10_000 + k
                    rng = np.random.default_rng([seed, 0x711E])
                    for lf in render_labelled(game, seed, spec.frames_per_setting, spec.size,
                                              moving_share=spec.moving_share):
                        for j, (img, boxes) in enumerate(tiles(lf, spec.tile_px, spec.tiles_per_frame, rng)):
                            stem = f"{game}_{seed}_{lf.index:03d}_{j}"
                            _, jpeg = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, 95])
                            (tmp / "images" / split / f"{stem}.jpg").write_bytes(jpeg.tobytes())  # a full disk raises
                            lines = yolo_lines(boxes, img.shape[1], img.shape[0])
                            (tmp / "labels" / split / f"{stem}.txt").write_text("".join(s + "\n" for s in lines))
                            n += 1
                    progress(f"dataset: {split} {game} renderer {k + 1}/{count}, {n} tiles, "
                             f"{time.perf_counter() - t0:.0f} s")
        names = "".join(f"  {i}: {c}\n" for i, c in enumerate(CLASSES))
        (tmp / "data.yaml").write_text(f"path: {out.resolve()}\ntrain: images/train\nval: images/val\nnames:\n{names}")
        (tmp / "spec.json").write_text(want)
        os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out / "data.yaml"


def _same_spec(stored: str, spec: DataSpec) -> bool:
    """Whether a finished dataset's ``spec.json`` describes ``spec``; fields added since it was written
    count as their defaults (a dataset made before ``moving_share`` existed used the default)."""
    try:
        got = json.loads(stored)
    except ValueError:
        return False
    defaults = json.loads(json.dumps(asdict(DataSpec())))
    return {**defaults, **got} == json.loads(json.dumps(asdict(spec)))


def merge_datasets(main_yaml: str | Path, others: list[str | Path]) -> Path:
    """A ``data.yaml`` training on ``main_yaml``'s images and every other finished dataset folder's, and
    validating on the main one's; written beside ``main_yaml`` (the datasets themselves are untouched)."""
    main = Path(main_yaml)
    trains = [main.parent.resolve() / "images" / "train"]
    for o in others:
        folder = Path(o)
        if not (folder / "spec.json").exists() or not (folder / "images" / "train").is_dir():
            raise VisionError(f"{folder} is not a finished dataset folder (build it with 'shotjudge train --data-dir')")
        trains.append(folder.resolve() / "images" / "train")
    text = main.read_text().splitlines()
    body = [ln for ln in text if not ln.startswith(("path:", "train:", "val:"))]
    lines = [f"path: {main.parent.resolve()}", "train:", *[f"  - {t}" for t in trains], "val: images/val", *body]
    tag = "+".join(Path(o).resolve().name for o in others)
    merged = main.parent / f"data+{tag}.yaml"
    write_text_atomic(merged, "\n".join(lines) + "\n")
    return merged


def _last(spec: TrainSpec) -> Path:
    return Path(spec.project).resolve() / spec.name / "weights" / "last.pt"


def train(spec: TrainSpec, data_yaml: str | Path, resume: bool = True) -> Path:
    """Train (or resume from ``last.pt``); returns ``best.pt``. Runs on the CPU unless ``device`` says
    otherwise via ``SHOTJUDGE_DEVICE`` (a GPU run is the same command with bigger numbers)."""
    from vision.yolo_offline import offline_ultralytics

    offline_ultralytics()
    from ultralytics import YOLO

    device = os.environ.get("SHOTJUDGE_DEVICE", "cpu")
    last = _last(spec)
    if resume and last.exists():
        model = YOLO(str(last))
        try:
            model.train(resume=True, device=device, workers=spec.workers, plots=False)
        except AssertionError as exc:  # ultralytics: the run already finished
            if "nothing to resume" not in str(exc):
                raise
    else:
        local_pt = str(spec.model).endswith(".pt") and Path(spec.model).is_file()  # fine-tuning our own weights
        if not (str(spec.model).endswith((".yaml", ".yml")) or local_pt):
            raise VisionError(f"train from a model YAML or a local .pt file, not {spec.model} (nothing is downloaded)")
        model = YOLO(str(spec.model), task="detect")
        kw = dict(data=str(data_yaml), imgsz=spec.imgsz, epochs=spec.epochs, batch=spec.batch, workers=spec.workers,
                  device=device, seed=spec.seed, deterministic=True, amp=False, plots=False, pretrained=local_pt,
                  optimizer="SGD", lr0=spec.lr0, nbs=spec.nbs, cos_lr=True, warmup_epochs=spec.warmup_epochs,
                  mosaic=spec.mosaic, close_mosaic=spec.close_mosaic, scale=spec.scale, degrees=0.0,
                  fliplr=0.5, flipud=0.5, hsv_h=0.01, patience=spec.patience, project=str(Path(spec.project).resolve()),
                  name=spec.name, exist_ok=True, verbose=True, val=True)
        if spec.time_h:
            kw["time"] = spec.time_h
        model.train(**kw)
    best = last.parent / "best.pt"
    return best if best.exists() else last


def export(weights: str | Path, out_dir: str | Path, stem: str, imgsz: tuple[int, int] = (736, 1280),
           formats: tuple[str, ...] = ("onnx",)) -> dict[str, Path]:
    """Export ``weights`` for inference on whole frames (``imgsz`` = height, width) into ``out_dir`` as
    ``<stem>.pt`` / ``<stem>.onnx`` / ``<stem>_ncnn_model/``, and ``onnx-crops``: ``<stem>-crops.onnx``, the
    same network taking any input size and batch (the learned path's crops, ``vision.detect_crops``);
    returns what was written. NCNN needs the ``pnnx`` converter installed (``pip install pnnx ncnn``); a
    format that fails is a ``VisionError``."""
    from vision.yolo_offline import offline_ultralytics

    offline_ultralytics()
    from ultralytics import YOLO

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    with tempfile.TemporaryDirectory() as td:
        src = Path(td) / f"{stem}.pt"
        shutil.copy(weights, src)
        for fmt in formats:
            if fmt == "pt":  # the trained weights themselves (optimizer stripped): for fine-tuning and PyTorch
                shutil.copy(src, out / src.name)
                written[fmt] = out / src.name
                continue
            model = YOLO(str(src), task="detect")
            crops = fmt == "onnx-crops"
            kw = dict(format="onnx" if crops else fmt, imgsz=[128, 128] if crops else list(imgsz), device="cpu",
                      dynamic=crops)
            if fmt in ("onnx", "onnx-crops"):
                kw.update(simplify=False, opset=None)
            try:
                path = Path(model.export(**kw))
            except Exception as exc:  # e.g. NCNN without its converter installed
                raise VisionError(f"export to {fmt} failed: {exc}") from None
            dest = out / (f"{stem}-crops.onnx" if crops else path.name)
            if dest.exists():
                shutil.rmtree(dest) if dest.is_dir() else dest.unlink()
            shutil.move(str(path), dest)
            written[fmt] = dest
    return written
