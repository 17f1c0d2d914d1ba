"""The values a frame source hands on: a frame, and the gaps between frames.

A frame is immutable (its image is made read-only) so a ring buffer, the recorder and the
vision pipeline can share it without copies. A gap is an event, not a silence: whoever drops or
misses frames says so with a :class:`FrameGap`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping

import numpy as np

__all__ = ["Frame", "FrameGap", "GapDetector", "SourceError", "SourceLost", "TruncatedVideo"]


class SourceError(ValueError):
    """A frame source that cannot be opened or read; the message names the source and the fix."""


class SourceLost(SourceError):
    """A live source stopped delivering frames (unplugged, stream down); it may come back."""


class TruncatedVideo(SourceError):
    """A video file that breaks off: cut short (fewer frames than its header announced, or a last packet
    cut in two) or damaged (data the decoder refuses). ``frames_read`` frames before it are good;
    ``detail`` says what was found, for the one-line message."""

    def __init__(self, message: str, frames_read: int, frames_expected: int | None, detail: str = ""):
        super().__init__(message)
        self.frames_read = frames_read
        self.frames_expected = frames_expected
        self.detail = detail


@dataclass(frozen=True, eq=False)
class Frame:
    """One image with its place in time.

    ``index`` counts the frames the source delivered (0, 1, 2, ...); ``t_s`` is the capture time in
    seconds: the sensor timestamp for a Pi camera (monotonic clock), the V4L2 buffer timestamp for a
    webcam whose driver gives a plausible one (monotonic clock; else the host's monotonic clock at grab
    time, as for a stream: ``metadata["clock"]`` says which), ``index / fps`` for a file or an image folder.
    """

    image: np.ndarray
    index: int
    t_s: float
    source: str
    metadata: Mapping[str, Any] = field(default_factory=dict)
    #: what the consumer worked out from the image alone on the capture thread, while the frame was fresh in
    #: that core's cache (``judge.live``: vision's ``prepare``); None: nothing
    prepared: Any = None

    def __post_init__(self):
        self.image.flags.writeable = False
        if not isinstance(self.metadata, MappingProxyType):
            object.__setattr__(self, "metadata", MappingProxyType(dict(self.metadata)))

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) in pixels."""
        return int(self.image.shape[1]), int(self.image.shape[0])

    def __repr__(self) -> str:
        w, h = self.size
        return f"Frame({self.source} #{self.index} t={self.t_s:.4f}s {w}x{h})"


@dataclass(frozen=True)
class FrameGap:
    """Frames that never reached the judge: ``count`` frames between ``from_index`` and ``to_index``.

    ``reason`` says where they were lost: ``camera`` (the sensor or driver skipped them),
    ``reconnect`` (the source was down), ``queue`` (the judge was too slow and dropped the oldest).
    """

    from_index: int
    from_t_s: float
    to_index: int
    to_t_s: float
    count: int
    reason: str = "camera"

    @property
    def duration_s(self) -> float:
        return self.to_t_s - self.from_t_s

    def to_dict(self) -> dict:
        return {"from_index": self.from_index, "from_t_s": round(self.from_t_s, 6), "to_index": self.to_index,
                "to_t_s": round(self.to_t_s, 6), "count": self.count, "reason": self.reason}

    def describe(self) -> str:
        return (f"{self.count} frame(s) missing between #{self.from_index} and #{self.to_index} "
                f"({self.duration_s * 1000:.0f} ms, {self.reason})")


class GapDetector:
    """Finds missed frames from the timestamps against the nominal frame interval.

    A step longer than ``tolerance`` intervals means ``round(dt / interval) - 1`` frames were lost.
    Index jumps count too (a source that knows its sequence numbers may skip indices).
    """

    def __init__(self, fps: float, tolerance: float = 1.5, reason: str = "camera"):
        if not fps or fps <= 0:
            raise SourceError(f"gap detection needs a positive frame rate, got {fps!r}")
        self.interval_s = 1.0 / float(fps)
        self.tolerance = tolerance
        self.reason = reason
        self._last: Frame | None = None

    def check(self, frame: Frame, reason: str | None = None) -> FrameGap | None:
        last, self._last = self._last, frame
        if last is None:
            return None
        dt = frame.t_s - last.t_s
        by_time = round(dt / self.interval_s) - 1 if dt > self.tolerance * self.interval_s else 0
        by_index = frame.index - last.index - 1
        missing = max(by_time, by_index)
        if missing <= 0:
            return None
        if reason is None:
            reason = "reconnect" if frame.metadata.get("after_reconnect") else self.reason
        return FrameGap(last.index, last.t_s, frame.index, frame.t_s, int(missing), reason)
