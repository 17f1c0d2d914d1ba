"""Option values checked where they enter: a frame rate, a count, a port. Each bad value is one argparse
line naming the option and what it must be (exit 2), never a silent zero or a traceback later."""
from __future__ import annotations

import argparse
import math
from typing import Callable

__all__ = ["frame_rate", "count", "port", "MAX_FPS"]

MAX_FPS = 1000.0  # no camera or recording we judge runs faster


def frame_rate(text: str) -> float:
    """Frames per second: a finite number from 1 to ``MAX_FPS``."""
    try:
        fps = float(text)
    except ValueError:
        fps = math.nan
    if not math.isfinite(fps) or not 1.0 <= fps <= MAX_FPS:
        raise argparse.ArgumentTypeError(f"must be frames per second from 1 to {MAX_FPS:g}, got {text!r}")
    return fps


def count(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    """A whole number from ``minimum`` (to ``maximum``)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < minimum or (maximum is not None and value > maximum):
            bounds = f"from {minimum} to {maximum}" if maximum is not None else f"of at least {minimum}"
            raise argparse.ArgumentTypeError(f"must be a whole number {bounds}, got {text!r}")
        return value
    parse.__name__ = "count"
    return parse


def port(text: str) -> int:
    """A TCP port, 1 to 65535."""
    return count(1, 65535)(text)
