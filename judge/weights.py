"""Where the shipped learned-detector weights are: the judge side passes them to ``vision.detectors``
(vision may not import ``models``)."""
from __future__ import annotations

from pathlib import Path

from models import MODELS_DIR

__all__ = ["shipped_weights", "crop_weights_for"]


def shipped_weights() -> Path:
    """The shipped detector, ``models/shotjudge-det.onnx`` (it may be missing in a broken checkout:
    ``vision.detectors.load_learned`` says so in one line)."""
    return MODELS_DIR / "shotjudge-det.onnx"


def crop_weights_for(weights: str | Path | None) -> Path | None:
    """The network for the learned path's crops beside ``weights`` (default: the shipped model):
    ``<stem>-crops.onnx``, the same network taking any input size (``shotjudge train --formats onnx-crops``);
    ``.pt`` weights take any size themselves; None where there is none (every frame is then run whole)."""
    path = Path(weights) if weights is not None else shipped_weights()
    if path.suffix == ".pt":
        return path
    crops = path.with_name(f"{path.stem}-crops.onnx")
    return crops if crops.is_file() else None
