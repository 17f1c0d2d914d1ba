"""Webcams and network streams through OpenCV's ``VideoCapture``.

A webcam is asked for a resolution, a frame rate and MJPG (USB 2 cannot carry raw 720p at 60 fps),
then asked back what it actually gives: drivers silently fall back to what they support, and a
judge that believes 60 fps on a 30 fps camera gets every timing wrong.
"""
from __future__ import annotations

import re
from time import monotonic  # the clock webcam and stream frames are stamped with
from typing import Any

from .frame import SourceError, SourceLost
from .source import Captured, FrameSource

__all__ = ["UsbCameraSource", "StreamSource", "fourcc_text"]


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

    def _capture(self) -> Captured | None:
        return _grab(self._cap, self.name, "the webcam stopped delivering frames")

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
            "stream" if 0 < reported < 1000 else "default")}

    def _capture(self) -> Captured | None:
        return _grab(self._cap, self.name, "the stream stopped delivering frames")

    def _close(self) -> None:
        if self._cap is not None:
            self._cap.release()
            self._cap = None


def _grab(cap, name: str, message: str) -> Captured:
    """Grab, stamp with the monotonic clock at once, then decode."""
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
    return Captured(image, t_s, {"clock": "host_monotonic"})


def _mode_text(mode: dict[str, Any]) -> str:
    text = f"{mode['width']}x{mode['height']} at {mode['fps']:g} fps"
    return f"{text} {mode['fourcc']}" if mode.get("fourcc") else text


def redact_url(url: str) -> str:
    """The URL without its password, for logs and the journal."""
    return re.sub(r"(://[^:/@]+):[^@/]*@", r"\1:***@", url)
