"""Choose the detector by configuration: ``make_detector("learned" | "classical", plane, profile, ...)``.

Why a factory: the learned detector depends on an optional extra (ultralytics) and a weights file that may
be missing or damaged on a club's machine. Loading is checked at once — the model is run on one blank
frame, because ultralytics opens an exported file only at its first prediction — so a bad file is a
one-line error at start-up, not a crash mid-match. With ``fallback="classical"`` the pipeline carries on
with the classical detector and the reason is logged.

The weights are always the caller's: vision does not import ``models``; the shipped model's path is
``judge.weights.shipped_weights()``.
"""
from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from .types import VisionError

__all__ = ["DEFAULT_IMGSZ", "DEFAULT_CONF", "DEFAULT_IOU", "make_detector", "load_learned", "parse_conf"]

# the shipped model's operating point, measured by bench/learned.py (models/README.md): a class's boxes
# count from this score; NMS merges boxes overlapping more than DEFAULT_IOU
DEFAULT_CONF: float | dict[str, float] = {"pawn_a": 0.25, "pawn_b": 0.25, "bat": 0.10, "marble_a": 0.05,
                                          "marble_b": 0.05, "hand": 0.25, "cue": 0.25}
DEFAULT_IOU = 0.5
DEFAULT_IMGSZ = (736, 1280)  # height, width the shipped model was exported for (a 1280x720 frame, padded)
HOW_TO_GET = ("use the shipped models/shotjudge-det.onnx (git checkout -- models/) or train one with "
              "'shotjudge train'")

log = logging.getLogger(__name__)


def parse_conf(text: str) -> float | dict[str, float]:
    """A confidence threshold from text: one number (``0.1``) or one per class (``pawn_a=0.25,marble_a=0.1``)."""
    try:
        out = float(text) if "=" not in text else \
            {k.strip(): float(v) for k, v in (part.split("=", 1) for part in text.split(",") if part.strip())}
    except ValueError:
        raise VisionError(f"confidence threshold must be a number or CLASS=NUMBER,...; got {text!r}") from None
    values = list(out.values()) if isinstance(out, dict) else [out]
    if not values or not all(0.0 < v < 1.0 for v in values):
        raise VisionError(f"confidence thresholds must lie between 0 and 1; got {text!r}")
    return out


def load_learned(weights: str | Path | None, plane, imgsz=DEFAULT_IMGSZ, conf: float | dict = DEFAULT_CONF,
                 refine: bool = False, profile=None, background: np.ndarray | None = None, drop_unfit: bool = False,
                 game: str | None = None, iou: float = DEFAULT_IOU):
    """A ``LearnedDetector`` that has already run once; ``VisionError`` (one line, saying how to get a
    model) when the file is missing, empty, damaged or not a detector. ``refine``/``profile``/``background``:
    sub-pixel box centres by the rim fit (``vision.refine``); ``game``: only that game's classes compete
    for a box; ``iou``: the NMS overlap threshold. ``weights`` must be given (the shipped model's path is
    ``judge.weights.shipped_weights()``): ``None`` is a ``VisionError``."""
    if weights is None:
        raise VisionError(f"the learned detector needs weights; {HOW_TO_GET}")
    path = Path(weights)
    if not path.exists():
        raise VisionError(f"learned detector: weights {path} not found; {HOW_TO_GET}")
    if path.is_file() and path.stat().st_size == 0:
        raise VisionError(f"learned detector: weights {path} are empty; {HOW_TO_GET}")
    from .yolo_offline import offline_ultralytics

    try:
        offline_ultralytics()
    except ImportError:
        raise VisionError("learned detector: ultralytics is not installed (pip install 'shotjudge[learned]')") from None
    from .detect_learned import LearnedDetector

    try:
        det = LearnedDetector(path, plane, imgsz=imgsz, conf=conf, refine=refine, profile=profile,
                              background=background, drop_unfit=drop_unfit, game=game, iou=iou)
    except VisionError as exc:
        raise VisionError(f"{str(exc).splitlines()[0]}; {HOW_TO_GET}") from None
    h, w = plane.image_size[1], plane.image_size[0]
    try:
        det.detect(np.zeros((h, w, 3), np.uint8))
    except VisionError:
        raise
    except Exception as exc:  # noqa: BLE001 - ONNX Runtime, torch and ultralytics raise many kinds
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0].replace("ERROR ❌️ ", "")
        reason = reason if len(reason) <= 140 else reason[:137] + "..."
        raise VisionError(f"learned detector: cannot run {path} ({reason}); the file is damaged or not a "
                          f"shotjudge detector; {HOW_TO_GET}") from None
    return det


def make_detector(kind: str, plane, profile, weights: str | Path | None = None, fallback: str | None = None,
                  imgsz=DEFAULT_IMGSZ, conf: float | dict = DEFAULT_CONF, appearance=None, **learned):
    """The detector named by ``kind``; if the learned one cannot be loaded and ``fallback == "classical"``,
    the classical one (with a logged warning) instead of an error. The classical detector (given the
    calibration's piece ``appearance``) still needs ``learn_background`` / ``learn_colours`` from the
    calibration step. ``learned``: ``load_learned``'s options, and ``crop_weights`` (weights that take any
    input size: the shipped ``-crops.onnx``, or ``.pt``): the whole frame only to (re)acquire, crops where the picture changed between
    (``vision.detect_crops``: the learned path in real time); ``game`` defaults to the profile's (only
    that game's classes compete for a box: ``bench/learned_remedies.py`` measured fewer misses and a third
    fewer false alarms; ``game=None`` lets every class compete as before)."""
    if kind not in ("learned", "classical"):
        raise VisionError(f"detector must be 'learned' or 'classical', got {kind!r}")
    if fallback not in (None, "classical"):
        raise VisionError(f"detector fallback must be 'classical' or none, got {fallback!r}")
    if kind == "learned":
        learned.setdefault("game", getattr(profile, "game", None))
        crop_weights = learned.pop("crop_weights", None)
        try:
            found = load_learned(weights, plane, imgsz, conf, profile=profile, **learned)
            if crop_weights is None:
                return found
            from .board import Surface
            from .detect_crops import CroppedDetector

            if _fixed_input(crop_weights):
                raise VisionError(f"learned detector: {crop_weights} takes only whole frames, not crops; export "
                                  f"the network for any input size (shotjudge train --formats onnx-crops)")
            crops = load_learned(crop_weights, plane, imgsz, conf, profile=profile, **learned)
            return CroppedDetector(found, crops, piece_mm=2.0 * max(Surface.from_profile(profile).radius_mm.values()))
        except VisionError as exc:
            if fallback != "classical":
                raise
            log.warning("%s; falling back to the classical detector", exc)
    from .detect_classical import ClassicalDetector

    return ClassicalDetector(plane, profile, appearance=appearance)


def _fixed_input(weights: str | Path) -> bool:
    """Whether an ONNX file's network takes only one input size (a whole frame); ``.pt`` weights and NCNN
    take any size."""
    path = Path(weights)
    if path.suffix != ".onnx" or not path.is_file():
        return False
    import onnx

    try:
        dims = onnx.load(str(path), load_external_data=False).graph.input[0].type.tensor_type.shape.dim
    except Exception:  # noqa: BLE001 - a damaged file: load_learned says so in one line
        return False
    return all(d.HasField("dim_value") for d in dims[2:])
