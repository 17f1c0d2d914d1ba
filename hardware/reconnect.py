"""Keep a live source going through unplugs and stream drops, a bounded number of times.

When the camera stops delivering, the wrapper closes it, waits with exponential backoff and opens
a fresh one. Frame indices continue where they were; the first frame after a reopen is marked
``after_reconnect`` so the gap detector names the reason for the missing frames. A camera that
comes back with another image size is refused: the calibration would no longer fit.
"""
from __future__ import annotations

import time
from typing import Callable

from .frame import SourceError, SourceLost
from .source import Captured, FrameSource

__all__ = ["ReconnectingSource"]


class ReconnectingSource(FrameSource):
    """Wraps a live source made by ``factory``; reopens it up to ``max_attempts`` times per loss."""

    live = True

    def __init__(self, factory: Callable[[], FrameSource], max_attempts: int = 5, backoff_s: float = 0.25,
                 max_backoff_s: float = 4.0, sleep: Callable[[float], None] = time.sleep,
                 on_event: Callable[[str, str], None] | None = None):
        self._factory = factory
        self._inner = factory()
        super().__init__(self._inner.name)
        self.max_attempts = max_attempts
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self._sleep = sleep
        self._on_event = on_event or (lambda kind, message: None)
        self.losses = 0
        self.reconnects = 0
        self._mark_next = False

    @property
    def inner(self) -> FrameSource:
        return self._inner

    def _open(self) -> None:
        self._inner.open()
        self.info = self._inner.info

    def _capture(self) -> Captured | None:
        while True:
            try:
                cap = self._inner._capture()
            except SourceLost as exc:
                self._reconnect(exc)
                continue
            if cap is not None and self._mark_next:
                cap.metadata = {**cap.metadata, "after_reconnect": True}
                self._mark_next = False
            return cap

    def _reconnect(self, exc: SourceLost) -> None:
        self.losses += 1
        self._on_event("lost", str(exc))
        size = self._inner.size
        try:
            self._inner.close()
        except Exception:  # noqa: BLE001 - the device is gone; closing it may fail too
            pass
        delay = self.backoff_s
        last: Exception = exc
        for attempt in range(1, self.max_attempts + 1):
            self._sleep(delay)
            fresh = self._factory()
            try:
                fresh.open()
            except SourceError as err:
                last = err
                self._on_event("retry", f"{self.name}: reopen attempt {attempt} of {self.max_attempts} failed: {err}")
                delay = min(delay * 2, self.max_backoff_s)
                continue
            if fresh.size != size:
                fresh.close()
                raise SourceError(f"{self.name}: the camera came back with {fresh.size[0]}x{fresh.size[1]} "
                                  f"instead of {size[0]}x{size[1]}; the calibration no longer fits")
            self._inner = fresh
            self.info = fresh.info
            self.reconnects += 1
            self._mark_next = True
            self._on_event("reconnected", f"{self.name}: reopened after {attempt} attempt(s)")
            return
        raise SourceError(f"{self.name}: stopped delivering frames and could not be reopened after "
                          f"{self.max_attempts} attempts (last error: {last})")

    def _close(self) -> None:
        self._inner.close()

    @property
    def fps(self) -> float:
        return self._inner.fps

    @property
    def size(self) -> tuple[int, int]:
        return self._inner.size

    @property
    def warnings(self) -> list[str]:
        return list(getattr(self._inner, "warnings", []))
