"""A stand-in for ``cv2.VideoCapture`` on a V4L2 webcam, and a clock that time can be skipped on.

Behaves like OpenCV's V4L2 backend at its surface: ``VideoCapture(index, cv2.CAP_V4L2)``;
``isOpened()`` is False for a missing device; ``set(CAP_PROP_*)`` returns True and the driver
negotiates the nearest mode it supports; ``get(CAP_PROP_*)`` reads back what it really gives
(``CAP_PROP_FOURCC`` as the packed float); ``grab()`` returns False once the device is gone, and
``read()`` then gives ``(False, None)``. A device's ``refuse`` lists the controls its driver will not take
(``set`` returns False, as OpenCV does), ``image`` is a BGR picture every frame shows instead of black (of
the mode's size); each open's ``sets`` keeps (prop, value, accepted) in order.

Frames come as from a V4L2 driver: captured every 1/fps from the open on, queued in ``buffers``
driver buffers (a frame captured while all are full is dropped, as the driver drops it), and handed
out oldest first by ``grab()``, which waits for the next capture when none is queued. The host
receives a frame ``latency_s`` after its capture at the earliest (the USB transfer and the wakeup:
the jitter host stamping suffers). ``get(CAP_PROP_POS_MSEC)`` after a grab gives the dequeued
buffer's timestamp as the backend does (milliseconds; 0 before the first capture): the capture time
on the monotonic clock, or none (0), or on the wall clock, or shifted, or stuck, as the device's
``timestamps`` settings say. (The real backend's value is a timeval, to the microsecond; the fake's is
not rounded, so that frame times are the same as the clock's arithmetic, to the last bit.)
"""
from __future__ import annotations

from dataclasses import dataclass, field
from itertools import cycle

import cv2
import numpy as np


#: the wall clock's reading when the fake monotonic clock reads 0 (a realtime-stamping driver's epoch)
REALTIME_EPOCH_S = 1.7e9


class Clock:
    """Monotonic seconds that advance only when a frame is exposed or the code sleeps."""

    def __init__(self):
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, s: float) -> None:
        self.now += s


@dataclass
class Device:
    """A webcam: its modes (w, h, fps, fourcc), and a script of failures."""

    modes: list = field(default_factory=lambda: [(640, 480, 30.0, "YUYV"), (1280, 720, 30.0, "YUYV"),
                                                 (1280, 720, 60.0, "MJPG")])
    plugged: bool = True
    frames_until_death: int | None = None   # frames delivered before the device vanishes
    refuse_opens: int = 0                   # opens that fail after it vanished (it is being replugged)
    gone_after: int | None = None           # frames delivered in all before it vanishes for good
    timestamps: str = "monotonic"           # buffer timestamps: "monotonic", "none" (0), "realtime" (wall clock)
    stamp_offset_s: float = 0.0             # added to every buffer timestamp (a clock with another origin)
    stamps_stall_after: int | None = None   # frames of an open with their own timestamp; later ones repeat it
    latency_s: tuple = (0.0,)               # capture to host delivery, per frame (cycled)
    buffers: int = 4                        # driver buffers; frames captured while all are full are lost
    opens: int = 0
    frames: int = 0
    lost: int = 0                           # frames the driver dropped, all buffers being full
    refuse: tuple = ()                      # CAP_PROP_* controls the driver refuses (set returns False)
    image: np.ndarray | None = None         # what every frame shows (None: black, frame count in a pixel)


class FakeVideoCapture:
    devices: dict[int, Device] = {}
    clock: Clock | None = None
    instances: list["FakeVideoCapture"] = []

    def __init__(self, index, api=None, params=None):
        self.api = api
        self.device = self.devices.get(index)
        self.opened = False
        type(self).instances.append(self)
        dev = self.device
        if dev is None:
            return
        dev.opens += 1
        if not dev.plugged:
            if dev.refuse_opens > 0:
                dev.refuse_opens -= 1
                return
            dev.plugged = True
        self.opened = True
        self.props = {cv2.CAP_PROP_FRAME_WIDTH: 640.0, cv2.CAP_PROP_FRAME_HEIGHT: 480.0, cv2.CAP_PROP_FPS: 30.0,
                      cv2.CAP_PROP_FOURCC: float(cv2.VideoWriter_fourcc(*"YUYV")),
                      cv2.CAP_PROP_AUTO_EXPOSURE: 3.0, cv2.CAP_PROP_EXPOSURE: 166.0, cv2.CAP_PROP_GAIN: 32.0,
                      cv2.CAP_PROP_AUTO_WB: 1.0, cv2.CAP_PROP_WB_TEMPERATURE: 4600.0}
        self.sets: list[tuple] = []
        self.wanted = dict(self.props)
        self.mode = dev.modes[0]
        self.stamp_ms = 0.0  # the dequeued buffer's timestamp (0: nothing captured yet)
        self.captured = 0  # frames captured since the open
        self.dequeued = 0  # ... and handed to the host
        self.queued: list[float] = []  # capture times of the frames waiting in the driver's buffers
        self.last_capture = self.clock.now if self.clock is not None else 0.0  # (the open, before any capture)
        self.latency = cycle(dev.latency_s)

    def isOpened(self):
        return self.opened

    def set(self, prop, value):
        if not self.opened:
            return False
        self.sets.append((prop, float(value), prop not in self.device.refuse))
        if prop in self.device.refuse:
            return False
        self.wanted[prop] = float(value)
        w, h = self.wanted[cv2.CAP_PROP_FRAME_WIDTH], self.wanted[cv2.CAP_PROP_FRAME_HEIGHT]
        fps = self.wanted[cv2.CAP_PROP_FPS]
        fourcc = _text(self.wanted[cv2.CAP_PROP_FOURCC])
        # the driver picks the supported mode closest to the request
        self.mode = min(self.device.modes, key=lambda m: (abs(m[0] * m[1] - w * h), abs(m[2] - fps), m[3] != fourcc))
        self.props.update({cv2.CAP_PROP_FRAME_WIDTH: float(self.mode[0]), cv2.CAP_PROP_FRAME_HEIGHT: float(self.mode[1]),
                           cv2.CAP_PROP_FPS: self.mode[2], cv2.CAP_PROP_FOURCC: float(cv2.VideoWriter_fourcc(*self.mode[3]))})
        if prop in (cv2.CAP_PROP_AUTO_EXPOSURE, cv2.CAP_PROP_EXPOSURE, cv2.CAP_PROP_GAIN, cv2.CAP_PROP_AUTO_WB,
                    cv2.CAP_PROP_WB_TEMPERATURE):
            self.props[prop] = float(value)
        return True

    def get(self, prop):
        if not self.opened:
            return 0.0
        if prop == cv2.CAP_PROP_POS_MSEC:
            return self.stamp_ms
        return self.props.get(prop, 0.0)

    def grab(self):
        dev = self.device
        if not self.opened or not dev.plugged:
            return False
        if dev.gone_after is not None and dev.frames >= dev.gone_after:
            dev.plugged, dev.refuse_opens = False, 10**9
            return False
        if dev.frames_until_death is not None and dev.frames >= dev.frames_until_death:
            dev.plugged = False
            dev.frames_until_death = None
            return False
        if self.clock is not None:
            self._dequeue()
        dev.frames += 1
        return True

    def _capture(self) -> float:
        """The driver captures the next frame (times summed frame by frame, as the clock would run)."""
        self.captured += 1
        self.last_capture += 1.0 / self.mode[2]
        return self.last_capture

    def _dequeue(self) -> None:
        """The oldest queued frame, waiting for the next capture when none is; the clock moves to when
        the host has it, the buffer's timestamp is kept for ``get(CAP_PROP_POS_MSEC)``."""
        clock, dev = self.clock, self.device
        while self.last_capture + 1.0 / self.mode[2] <= clock.now:  # what the driver captured meanwhile
            t = self._capture()
            if len(self.queued) < dev.buffers:
                self.queued.append(t)
            else:
                dev.lost += 1
        if not self.queued:
            self.queued.append(self._capture())
        t = self.queued.pop(0)
        clock.now = max(clock.now, t + next(self.latency))
        self.dequeued += 1
        self.stamp_ms = self._stamp_ms(t)

    def _stamp_ms(self, t: float) -> float:
        dev = self.device
        if dev.timestamps == "none":
            return 0.0
        if dev.stamps_stall_after is not None and self.dequeued > dev.stamps_stall_after:
            return self.stamp_ms
        t += dev.stamp_offset_s + (REALTIME_EPOCH_S if dev.timestamps == "realtime" else 0.0)
        return t * 1000.0  # (a real driver's timeval would round this to the microsecond)

    def retrieve(self):
        w, h = self.mode[0], self.mode[1]
        if self.device.image is not None:
            if self.device.image.shape[:2] != (h, w):
                raise RuntimeError(f"fake image is {self.device.image.shape[1]}x{self.device.image.shape[0]}, "
                                   f"the mode {w}x{h}")
            return True, self.device.image.copy()
        image = np.zeros((h, w, 3), np.uint8)
        image[0, 0, 0] = self.device.frames % 256
        return True, image

    def read(self):
        return self.retrieve() if self.grab() else (False, None)

    def release(self):
        self.opened = False


def _text(value: float) -> str:
    code = int(value)
    return "".join(chr((code >> (8 * i)) & 0xFF) for i in range(4))


def install(monkeypatch, devices: dict[int, Device]) -> Clock:
    """Replace cv2.VideoCapture and the source's clock for one test."""
    import hardware.opencv

    clock = Clock()
    FakeVideoCapture.devices, FakeVideoCapture.clock, FakeVideoCapture.instances = devices, clock, []
    monkeypatch.setattr(cv2, "VideoCapture", FakeVideoCapture)
    monkeypatch.setattr(hardware.opencv, "monotonic", clock.monotonic)
    return clock
