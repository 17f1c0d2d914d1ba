"""Turn the operator's ``--source`` text into a frame source, or a one-line reason why not.

``picam`` / ``picam:N`` (Raspberry Pi camera), ``usb:N`` (webcam /dev/videoN), ``rtsp://...`` /
``http(s)://...`` (stream), a video file, or a folder of images. Live sources come wrapped in a
:class:`ReconnectingSource` so an unplugged camera is reopened instead of ending the match.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable

from .frame import SourceError
from .opencv import StreamSource, UsbCameraSource
from .picam import PicameraSource
from .reconnect import ReconnectingSource
from .source import FrameSource, ImageFolderSource, VideoFileSource

__all__ = ["open_source", "SOURCE_HELP"]

SOURCE_HELP = "picam, picam:N, usb:N, rtsp://..., http(s)://..., a video file or a folder of images"
STREAM_SCHEMES = ("rtsp", "rtsps", "http", "https")


def open_source(spec: str, *, fps: float | None = None, size: tuple[int, int] | None = None,
                reconnect: bool = True, max_reconnects: int = 5,
                on_event: Callable[[str, str], None] | None = None, **camera: Any) -> FrameSource:
    """A frame source for ``spec`` (not opened yet: use it in a ``with`` block).

    ``camera`` passes device settings through (``exposure_us``, ``colour_gains``, ``sensor_mode``
    for the Pi camera; ``exposure``, ``wb_temperature_k``, ``fourcc`` for a webcam).
    """
    text = (spec or "").strip()
    if not text:
        raise SourceError(f"source: empty (expected {SOURCE_HELP})")
    factory = _factory(text, fps, size, camera)
    if isinstance(factory, FrameSource):
        if camera:
            raise SourceError(f"source {text!r}: camera settings ({', '.join(camera)}) do not apply to a recording")
        return factory
    if not reconnect:
        return factory()
    return ReconnectingSource(factory, max_attempts=max_reconnects, on_event=on_event)


PICAM_SETTINGS = {"exposure_us", "analogue_gain", "colour_gains", "sensor_mode", "awb_settle_frames", "frame_timeout_s"}
USB_SETTINGS = {"exposure", "wb_temperature_k", "fourcc"}


def _check_settings(text: str, camera: dict, allowed: set[str]) -> None:
    wrong = sorted(set(camera) - allowed)
    if wrong:
        raise SourceError(f"source {text!r}: setting(s) {', '.join(wrong)} do not apply to this kind of source")


def _factory(text: str, fps, size, camera) -> FrameSource | Callable[[], FrameSource]:
    live: dict[str, Any] = {}
    if fps:
        live["fps"] = float(fps)
    if size:
        live["size"] = (int(size[0]), int(size[1]))
    m = re.fullmatch(r"picam(?::(\d+))?", text)
    if m:
        num = int(m.group(1) or 0)
        _check_settings(text, camera, PICAM_SETTINGS)
        return lambda: PicameraSource(camera_num=num, **live, **camera)
    m = re.fullmatch(r"usb:(.*)", text)
    if m:
        if not m.group(1).isdigit():
            raise SourceError(f"source {text!r}: usb needs a device number, e.g. usb:0 for /dev/video0")
        num = int(m.group(1))
        _check_settings(text, camera, USB_SETTINGS)
        return lambda: UsbCameraSource(device=num, **live, **camera)
    m = re.match(r"([A-Za-z][A-Za-z0-9+.-]*)://", text)
    if m:
        if m.group(1).lower() not in STREAM_SCHEMES:
            raise SourceError(f"source {text!r}: unknown stream type {m.group(1)!r} (expected {SOURCE_HELP})")
        _check_settings(text, camera, set())
        return lambda: StreamSource(text, fps=fps)
    path = Path(text)
    if path.is_dir():
        return ImageFolderSource(path, fps=fps)
    if path.is_file():
        return VideoFileSource(path, fps=fps)
    if path.exists():  # a named pipe, a socket, a device node: nothing a frame source reads
        raise SourceError(f"source {text!r}: is not a video file or a folder of images (a named pipe or a device); "
                          f"record to a file, or serve it as a stream (http://, rtsp://)")
    raise SourceError(f"source {text!r}: no such file or folder, and not a camera (expected {SOURCE_HELP})")
