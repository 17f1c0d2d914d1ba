"""Webcams and network streams through OpenCV's ``VideoCapture``.

A webcam is asked for a resolution, a frame rate and MJPG (USB 2 cannot carry raw 720p at 60 fps),
then asked back what it actually gives: drivers silently fall back to what they support, and a
judge that believes 60 fps on a 30 fps camera gets every timing wrong.

A webcam's frames carry the driver's own capture time where it gives a usable one: OpenCV's V4L2
backend reads ``v4l2_buffer.timestamp`` of the buffer each ``grab()`` dequeues and returns it, in
milliseconds, from ``get(CAP_PROP_POS_MSEC)`` (0 before the first capture, and when the driver sets
none). UVC drivers stamp on ``CLOCK_MONOTONIC``, the clock of ``time.monotonic()``, when the frame's
first data arrives, so the stamps do not carry the delay and the jitter between the USB transfer and Python's
``grab()``. A stamp is used only while it is plausible (positive, later than the previous one, not
ahead of the host's monotonic clock and not more than ``BUFFER_CLOCK_MAX_AGE_S`` behind it); a driver
that gives none, or stamps on another clock (the wall clock, a copied or bogus value), is stamped
with the host's monotonic clock at grab time instead, and ``info["clock"]`` says which is used.
A network stream has no capture times OpenCV could give: its frames are stamped on arrival.
"""
from __future__ import annotations

import re
from time import monotonic  # the clock webcam and stream frames are stamped with
from typing import Any

from .frame import SourceError, SourceLost
from .source import Captured, FrameSource

__all__ = ["UsbCameraSource", "StreamSource", "BufferClock", "fourcc_text", "BUFFER_CLOCK_MAX_AGE_S"]

#: a buffer timestamp further behind the host's monotonic clock than this is taken to be on another
#: clock (a frame queued in the driver is at most a few buffers, well under a second, old; the margin
#: covers a judge that stalled with the queue full)
BUFFER_CLOCK_MAX_AGE_S = 5.0
#: how far a buffer timestamp may be ahead of the host's clock read after ``grab()`` (rounding only:
#: on the same clock a frame cannot have been captured after it was dequeued)
BUFFER_CLOCK_MAX_AHEAD_S = 0.001


def fourcc_text(value: float) -> str:
    """The four characters of a CAP_PROP_FOURCC value ('' when the driver gives none)."""
    code = int(value)
    text = "".join(chr((code >> (8 * i)) & 0xFF) for i in range(4))
    return text if text.isprintable() and code else ""


class UsbCameraSource(FrameSource):
    """A USB (UVC) webcam on V4L2. ``device`` is the number N of ``/dev/videoN``.

    ``exposure`` (driver units, V4L2: 100 µs steps) and ``wb_temperature_k`` lock exposure and
    white balance when given; otherwise the camera's automatics stay on and ``info`` says so.
    """

    live = True

    def __init__(self, device: int = 0, size: tuple[int, int] = (1280, 720), fps: float = 60.0,
                 fourcc: str = "MJPG", exposure: float | None = None, wb_temperature_k: int | None = None):
        super().__init__(f"usb:{device}")
        self.device = int(device)
        self.requested = {"width": int(size[0]), "height": int(size[1]), "fps": float(fps), "fourcc": fourcc}
        self.exposure = exposure
        self.wb_temperature_k = wb_temperature_k
        self.warnings: list[str] = []
        self._cap = None
        self._fps = float(fps)
        self._size = (int(size[0]), int(size[1]))
        self._clock: BufferClock | None = None

    def _open(self) -> None:
        import cv2

        cap = cv2.VideoCapture(self.device, cv2.CAP_V4L2)
        if not cap.isOpened():
            cap.release()
            raise SourceError(f"{self.name}: cannot open the webcam /dev/video{self.device} "
                              f"(not connected, no permission, or in use by another program)")
        req = self.requested
        # V4L2 wants the pixel format before the size, and the size before the frame rate.
        cap.set(cv2.CAP_PROP_FOURCC, cv2.VideoWriter_fourcc(*req["fourcc"]))
        cap.set(cv2.CAP_PROP_FRAME_WIDTH, req["width"])
        cap.set(cv2.CAP_PROP_FRAME_HEIGHT, req["height"])
        cap.set(cv2.CAP_PROP_FPS, req["fps"])
        if self.exposure is not None:
            cap.set(cv2.CAP_PROP_AUTO_EXPOSURE, 1)  # V4L2: 1 = manual exposure
            cap.set(cv2.CAP_PROP_EXPOSURE, float(self.exposure))
        if self.wb_temperature_k is not None:
            cap.set(cv2.CAP_PROP_AUTO_WB, 0)
            cap.set(cv2.CAP_PROP_WB_TEMPERATURE, float(self.wb_temperature_k))
        ok, first = cap.read()  # the first frame tells the real size, whatever the properties say
        if not ok or first is None:
            cap.release()
            raise SourceError(f"{self.name}: the webcam opened but delivers no frames")
        self._cap = cap
        # the first frame's buffer timestamp decides the clock the frames are stamped with
        self._clock = BufferClock()
        self._clock.stamp(cap.get(cv2.CAP_PROP_POS_MSEC), monotonic())
        actual = {
            "width": int(first.shape[1]), "height": int(first.shape[0]),
            "fps": float(cap.get(cv2.CAP_PROP_FPS)), "fourcc": fourcc_text(cap.get(cv2.CAP_PROP_FOURCC)),
        }
        self._size = (actual["width"], actual["height"])
        self._fps = actual["fps"] if actual["fps"] > 0 else req["fps"]
        self.info = {"requested": _mode_text(req), "actual": _mode_text(actual)}
        if self.exposure is not None:
            self.info["exposure"] = float(cap.get(cv2.CAP_PROP_EXPOSURE))
        else:
            self.info["exposure"] = "auto"
        self.warnings = []
        if (actual["width"], actual["height"]) != (req["width"], req["height"]) or abs(self._fps - req["fps"]) > 0.5:
            self.warnings.append(f"{self.name} gives {_mode_text(actual)}, not the requested {_mode_text(req)}")
        if actual["fourcc"] and actual["fourcc"] != req["fourcc"]:
            self.warnings.append(f"{self.name} sends {actual['fourcc']} instead of {req['fourcc']}")
        self._note_clock()

    def _capture(self) -> Captured | None:
        import cv2

        image, host_s = _grab(self._cap, self.name, "the webcam stopped delivering frames")
        clock = self._clock
        was = clock.name
        t_s = clock.stamp(self._cap.get(cv2.CAP_PROP_POS_MSEC), host_s)
        if clock.name != was:  # the driver's stamps went wrong mid-stream: the host's clock from here on
            self._note_clock()
        return Captured(image, t_s, {"clock": clock.name})

    def get_control(self, prop: int) -> float:
        """The value the driver reports for an OpenCV ``CAP_PROP_*`` control of the open webcam (OpenCV
        gives 0 or -1 for a control the driver lacks: the caller decides what a value means)."""
        return float(self._open_capture().get(prop))

    def set_control(self, prop: int, value: float) -> bool:
        """Ask the driver to set an OpenCV ``CAP_PROP_*`` control; False when it refuses (as OpenCV says)."""
        return bool(self._open_capture().set(prop, float(value)))

    def _open_capture(self):
        if self._cap is None:
            raise SourceError(f"{self.name}: the webcam is not open")
        return self._cap

    def _note_clock(self) -> None:
        clock = self._clock
        self.info["clock"] = clock.name
        if clock.fallback:
            self.info["clock_fallback"] = clock.fallback
            warning = f"{self.name} frames are stamped on arrival by the host's clock, not by the driver: {clock.fallback}"
            if warning not in self.warnings:
                self.warnings.append(warning)

    def _close(self) -> None:
        if self._cap is not None:
            self._cap.release()
            self._cap = None


class StreamSource(FrameSource):
    """An RTSP or HTTP(S) video stream through OpenCV's FFmpeg backend (timeouts bounded)."""

    live = True

    def __init__(self, url: str, fps: float | None = None, timeout_s: float = 5.0):
        super().__init__(redact_url(url))
        self.url = url
        self._fps_given = fps
        self._fps = float(fps) if fps else 0.0
        self._size = (0, 0)
        self.timeout_s = timeout_s
        self._cap = None

    def _open(self) -> None:
        import cv2

        ms = int(self.timeout_s * 1000)
        params = [cv2.CAP_PROP_OPEN_TIMEOUT_MSEC, ms, cv2.CAP_PROP_READ_TIMEOUT_MSEC, ms]
        cap = cv2.VideoCapture(self.url, cv2.CAP_FFMPEG, params)
        if not cap.isOpened():
            cap.release()
            raise SourceError(f"{self.name}: cannot open the stream (address wrong, server down or not a video)")
        ok, first = cap.read()
        if not ok or first is None:
            cap.release()
            raise SourceError(f"{self.name}: the stream opened but delivers no frames")
        self._cap = cap
        self._size = (int(first.shape[1]), int(first.shape[0]))
        reported = float(cap.get(cv2.CAP_PROP_FPS) or 0.0)
        if not self._fps_given:
            self._fps = reported if 0 < reported < 1000 else 25.0
        self.info = {"reported_fps": round(reported, 3), "fps_from": "option" if self._fps_given else (
            "stream" if 0 < reported < 1000 else "default"), "clock": "host_monotonic"}

    def _capture(self) -> Captured | None:
        image, t_s = _grab(self._cap, self.name, "the stream stopped delivering frames")
        return Captured(image, t_s, {"clock": "host_monotonic"})

    def _close(self) -> None:
        if self._cap is not None:
            self._cap.release()
            self._cap = None


class BufferClock:
    """Which clock a webcam's frames are stamped with: the driver's buffer timestamps (``v4l2_buffer``)
    while they are plausible, else the host's monotonic clock at grab time (``host_monotonic``).

    The first frame decides. A driver that gives no timestamps (0) or stamps far from the host's
    monotonic clock (the wall clock, another epoch) is host-stamped from the start; one whose stamps
    stop increasing or leave the host's clock later is host-stamped from that frame on, for good
    (going back to the driver's stamps would step time back by the transfer delay). ``fallback``
    says why the buffer timestamps are not used.
    """

    def __init__(self, max_age_s: float = BUFFER_CLOCK_MAX_AGE_S, max_ahead_s: float = BUFFER_CLOCK_MAX_AHEAD_S):
        self.max_age_s = max_age_s
        self.max_ahead_s = max_ahead_s
        self.name = "v4l2_buffer"
        self.fallback = ""
        self.stamped = 0  # frames stamped with their buffer timestamp
        self._last: float | None = None

    def stamp(self, buffer_ms: float, host_s: float) -> float:
        """The capture time of the frame just grabbed: its buffer timestamp (``buffer_ms``, as
        ``CAP_PROP_POS_MSEC`` gives it) or ``host_s``, the host's monotonic clock right after ``grab()``."""
        if self.name == "host_monotonic":
            return host_s
        t_s = float(buffer_ms) / 1000.0
        problem = self._implausible(t_s, host_s)
        if problem is None:
            self._last = t_s
            self.stamped += 1
            return t_s
        self.name = "host_monotonic"
        self.fallback = problem if not self.stamped else f"{problem}, after {self.stamped} frame(s) stamped by the driver"
        return host_s

    def _implausible(self, t_s: float, host_s: float) -> str | None:
        if not t_s > 0.0:  # 0 (none given), negative, or NaN
            return "the driver gives no buffer timestamps"
        if t_s > host_s + self.max_ahead_s or t_s < host_s - self.max_age_s:
            return (f"the buffer timestamps are not on the monotonic clock ({t_s:.3f} s against "
                    f"{host_s:.3f} s)")
        if self._last is not None and t_s <= self._last:
            return f"the buffer timestamps stopped increasing ({t_s:.6f} s after {self._last:.6f} s)"
        return None


def _grab(cap, name: str, message: str) -> tuple[Any, float]:
    """Grab, read the host's monotonic clock at once, then decode. The image and that time."""
    if cap is None:
        raise SourceLost(f"{name}: {message}")
    try:
        ok = cap.grab()
        t_s = monotonic()
        image = cap.retrieve()[1] if ok else None
    except Exception as exc:  # noqa: BLE001 - a driver error means the device is gone
        raise SourceLost(f"{name}: {message} ({type(exc).__name__}: {exc})") from None
    if image is None:
        raise SourceLost(f"{name}: {message}")
    return image, t_s


def _mode_text(mode: dict[str, Any]) -> str:
    text = f"{mode['width']}x{mode['height']} at {mode['fps']:g} fps"
    return f"{text} {mode['fourcc']}" if mode.get("fourcc") else text


def redact_url(url: str) -> str:
    """The URL without its password, for logs and the journal."""
    return re.sub(r"(://[^:/@]+):[^@/]*@", r"\1:***@", url)
