"""Where the shipped learned-detector weights are: the judge side passes them to ``vision.detectors``
(vision may not import ``models``)."""
from __future__ import annotations

from pathlib import Path

from models import MODELS_DIR

__all__ = ["shipped_weights"]


def shipped_weights() -> Path:
    """The shipped detector, ``models/shotjudge-det.onnx`` (it may be missing in a broken checkout:
    ``vision.detectors.load_learned`` says so in one line)."""
    return MODELS_DIR / "shotjudge-det.onnx"
