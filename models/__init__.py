"""Model weights shipped with shotjudge (see README.md here): a package so they install with it."""
from pathlib import Path

__all__ = ["MODELS_DIR"]

MODELS_DIR = Path(__file__).resolve().parent
