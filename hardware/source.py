"""One small interface for every frame source, and the two that read recorded material.

A source is opened, hands out frames one by one (``captured_frame()`` holds the camera buffer
only inside the ``with`` block, like picamera2's ``captured_request()``), and is closed. File and
folder sources take time from the frame index and the frame rate, never from the wall clock, so
replaying a clip gives the same times on every machine.
"""
from __future__ import annotations

import contextlib
import os
import re
from abc import ABC, abstractmethod
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ClassVar, Iterator

import numpy as np

from .frame import Frame, SourceError, TruncatedVideo

__all__ = ["FrameSource", "Captured", "VideoFileSource", "ImageFolderSource", "IMAGE_SUFFIXES"]

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff")


@dataclass
class Captured:
    """What a concrete source returns for one frame; ``release`` gives the buffer back to the driver.

    ``owned`` says whether ``image`` is ours (a copy) or a view into a driver buffer that must be
    copied before the buffer is released.
    """

    image: np.ndarray
    t_s: float
    metadata: dict[str, Any] = field(default_factory=dict)
    release: Callable[[], None] | None = None
    owned: bool = True


class FrameSource(ABC):
    """Base of all frame sources. Subclasses implement ``_open``, ``_capture`` and ``_close``.

    ``live`` sources (cameras, streams) raise :class:`SourceLost` when frames stop; recorded
    sources return ``None`` at the end. ``info`` holds what the device actually gave (read back
    after configuring), for the operator and the journal.
    """

    live: ClassVar[bool] = False

    def __init__(self, name: str):
        self.name = name
        self.info: dict[str, Any] = {}
        self._is_open = False
        self._next_index = 0
        self._fps = 0.0
        self._size = (0, 0)

    # ----- life cycle ----------------------------------------------------------------------------
    def open(self) -> "FrameSource":
        if not self._is_open:
            self._next_index = 0
            self._open()
            self._is_open = True
        return self

    def close(self) -> None:
        if self._is_open:
            self._is_open = False
            self._close()

    def __enter__(self) -> "FrameSource":
        return self.open()

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def is_open(self) -> bool:
        return self._is_open

    # ----- frames --------------------------------------------------------------------------------
    @contextlib.contextmanager
    def captured_frame(self) -> Iterator[Frame | None]:
        """The next frame, valid inside the block; ``None`` when a recorded source has ended."""
        if not self._is_open:
            raise SourceError(f"{self.name}: the source is not open")
        cap = self._capture()
        if cap is None:
            yield None
            return
        try:
            frame = Frame(cap.image, self._next_index, cap.t_s, self.name, cap.metadata)
            self._next_index += 1
            yield frame
        finally:
            if cap.release is not None:
                cap.release()

    def read(self) -> Frame | None:
        """The next frame as a value that outlives the driver buffer (copied when it must be)."""
        if not self._is_open:
            raise SourceError(f"{self.name}: the source is not open")
        cap = self._capture()
        if cap is None:
            return None
        try:
            image = cap.image if cap.owned else np.array(cap.image, copy=True)
            frame = Frame(image, self._next_index, cap.t_s, self.name, cap.metadata)
            self._next_index += 1
            return frame
        finally:
            if cap.release is not None:
                cap.release()

    def __iter__(self) -> Iterator[Frame]:
        while True:
            frame = self.read()
            if frame is None:
                return
            yield frame

    # ----- what the source is --------------------------------------------------------------------
    @property
    def fps(self) -> float:
        """Nominal frames per second (as the device reports it once open)."""
        return self._fps

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) of the frames in pixels (as the device delivers them once open)."""
        return self._size

    def describe(self) -> str:
        w, h = self.size
        extra = "".join(f", {k}={v}" for k, v in self.info.items() if k not in ("width", "height", "fps"))
        return f"{self.name}: {w}x{h} @ {self.fps:.2f} fps{extra}"

    @abstractmethod
    def _open(self) -> None: ...

    @abstractmethod
    def _capture(self) -> Captured | None: ...

    @abstractmethod
    def _close(self) -> None: ...


def decode_threads() -> int:
    """FFmpeg's decoding threads for a video file: every core this process may use but one, which is left to
    the judging thread (vision and the rules), the replay's slowest stage. FFmpeg's own choice takes them
    all, and on a machine of two cores its threads took turns with the judging thread's (bench/speed.py:
    the replay's CPU 4.71 s against 4.45 s with one decoding thread, the judging thread's 2.81 s against 2.75 s)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, cores - 1)


class VideoFileSource(FrameSource):
    """A recorded video through PyAV. ``fps`` overrides a missing or wrong container frame rate.

    Packets are demuxed and decoded one by one so that a file that breaks off is caught where it
    does, whatever its container: the demuxer marks a last packet cut in two as corrupt (the only
    sign a fragmented MP4 or a Matroska file gives, having no frame count), the decoder refuses
    damaged data, and a count short of the header's is a cut too. The frames before it are handed
    out; then :class:`TruncatedVideo` says how many there were. Nothing past the break is decoded.
    """

    def __init__(self, path: str | Path, fps: float | None = None):
        super().__init__(str(path))
        self.path = Path(path)
        self._fps_override = fps
        self._fps = 0.0
        self._size = (0, 0)
        self._container = None
        self._stream = None
        self._packets = None
        self._decoded: deque = deque()
        self._broken: str | None = None  # what stopped the decoding early, once it has
        self._ended = self._clean_seen = False
        self.frames_expected: int | None = None

    def _open(self) -> None:
        import av

        if not self.path.is_file():
            raise SourceError(f"{self.path}: no such video file")
        try:
            self._container = av.open(str(self.path))
        except (av.error.FFmpegError, OSError, UnicodeDecodeError) as exc:
            raise SourceError(f"{self.path}: cannot read this file as a video (truncated, damaged or not a video: "
                              f"{_short(exc)})") from None
        if not self._container.streams.video:
            self._container.close()
            raise SourceError(f"{self.path}: the file has no video stream")
        stream = self._container.streams.video[0]
        stream.thread_type = "AUTO"
        stream.thread_count = decode_threads()
        rate = self._fps_override or stream.average_rate or stream.guessed_rate
        if not rate or float(rate) <= 0:
            self._container.close()
            raise SourceError(f"{self.path}: the video does not say its frame rate; give it with --fps")
        self._fps = float(rate)
        self._size = (stream.codec_context.width, stream.codec_context.height)
        self.frames_expected = stream.frames or None
        self.info = {"codec": stream.codec_context.name, "frames": self.frames_expected}
        self._stream = stream
        from av.video.reformatter import VideoReformatter
        self._to_bgr = VideoReformatter()  # one for the whole file: PyAV makes a new one per frame otherwise
        self._packets = self._container.demux(stream)
        self._decoded.clear()
        self._broken, self._ended, self._clean_seen = None, False, False

    def _capture(self) -> Captured | None:
        while not self._decoded and not self._ended:
            self._decode_next_packet()
        if not self._decoded:
            self._check_complete()
            return None
        vf = self._decoded.popleft()
        image = self._to_bgr.reformat(vf, format="bgr24").to_ndarray()  # the same pixels as to_ndarray(format=)
        meta = {"pts_s": float(vf.time)} if vf.time is not None else {}
        return Captured(image, self._next_index / self._fps, meta)

    def _decode_next_packet(self) -> None:
        import av

        try:
            packet = next(self._packets)
            if packet.is_corrupt:  # the demuxer's sign of a packet cut in two: the file ends inside it
                self._stop("the last packet is cut short", flush=True)
                return
            frames = packet.decode()  # the final empty packet flushes the decoder
        except StopIteration:
            self._ended = True
            return
        except av.error.FFmpegError as exc:
            self._stop(f"data the decoder refuses: {getattr(exc, 'strerror', None) or _short(exc)}", flush=False)
            return
        for i, vf in enumerate(frames):
            # the decoder patched over damaged data: not a picture to judge from. (Before the first clean
            # picture it is a clip that starts without its keyframe, handed out as PyAV gives it.)
            if vf.is_corrupt and self._clean_seen:
                self._decoded.extend(frames[:i])
                self._stop("damaged picture data", flush=False)
                return
            self._clean_seen = self._clean_seen or not vf.is_corrupt
        self._decoded.extend(frames)

    def _stop(self, why: str, flush: bool) -> None:
        """Decoding ends here. After a cut the frames the decoder still holds are complete and are kept;
        after damage they are not trusted (the decoder may have built them on the damaged data)."""
        import av

        self._broken, self._ended = why, True
        if flush:
            try:
                self._decoded.extend(f for f in self._stream.codec_context.decode(None) if not f.is_corrupt)
            except av.error.FFmpegError:
                pass

    def _check_complete(self) -> None:
        read = self._next_index
        expected = self.frames_expected
        if self._broken is None and (expected is None or read >= expected):
            return
        of = f" of {expected}" if expected else ""
        detail = self._broken or "fewer frames than its header announces"
        raise TruncatedVideo(f"{self.path}: the video ends early after {read}{of} frames "
                             f"(file truncated or damaged: {detail})", read, expected, detail)

    def _close(self) -> None:
        if self._container is not None:
            self._container.close()
            self._container = None
            self._stream = self._packets = None
            self._decoded.clear()


class ImageFolderSource(FrameSource):
    """A folder of numbered images (``frame0001.png`` ...), read in natural order at ``fps``."""

    DEFAULT_FPS: ClassVar[float] = 30.0

    def __init__(self, folder: str | Path, fps: float | None = None):
        super().__init__(str(folder))
        self.folder = Path(folder)
        self._fps = float(fps) if fps else self.DEFAULT_FPS
        self.info = {"fps_given": bool(fps)}
        self._files: list[Path] = []
        self._size = (0, 0)

    def _open(self) -> None:
        import cv2

        if not self.folder.is_dir():
            raise SourceError(f"{self.folder}: no such folder")
        files = [p for p in self.folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES and p.is_file()]
        if not files:
            raise SourceError(f"{self.folder}: no images in the folder (looked for {', '.join(IMAGE_SUFFIXES)})")
        self._files = sorted(files, key=_natural_key)
        first = cv2.imread(str(self._files[0]), cv2.IMREAD_COLOR)
        if first is None:
            raise SourceError(f"{self._files[0]}: cannot read this image")
        self._size = (first.shape[1], first.shape[0])
        self.info.update({"images": len(self._files)})

    def _capture(self) -> Captured | None:
        import cv2

        i = self._next_index
        if i >= len(self._files):
            return None
        path = self._files[i]
        image = cv2.imread(str(path), cv2.IMREAD_COLOR)
        if image is None:
            raise SourceError(f"{path}: cannot read this image (image {i + 1} of {len(self._files)})")
        if (image.shape[1], image.shape[0]) != self._size:
            raise SourceError(f"{path}: image is {image.shape[1]}x{image.shape[0]}, the folder's first image is "
                              f"{self._size[0]}x{self._size[1]}")
        return Captured(image, i / self._fps, {"file": path.name})

    def _close(self) -> None:
        self._files = []


def _natural_key(path: Path) -> list:
    return [int(t) if t.isdigit() else t.lower() for t in re.split(r"(\d+)", path.name)]


def _short(exc: BaseException | None) -> str:
    text = str(exc).splitlines()[0] if exc is not None and str(exc) else type(exc).__name__
    return text[:160]
