"""Writing rendered frames: MP4 through PyAV (H.264, else MPEG-4 Part 2, else OpenCV's writer) and PNG.

Files are written under a temporary name in the target folder and renamed when complete
(``calibration.atomic``), so a crash or a full disk never leaves a half-written video that looks finished.
"""
from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import cv2
import numpy as np

from calibration.atomic import Staged, named_error, write_atomic

__all__ = ["VideoWriter", "write_png", "read_video_frames"]


class VideoWriter:
    """``with VideoWriter(path, fps, (w, h)) as v: v.write(bgr)``; ``v.codec`` says which encoder was used.
    With ``stage`` the finished video waits for that group's commit (a report and its video, both or neither)."""

    def __init__(self, path: str | Path, fps: float, size: tuple[int, int], crf: int = 18, stage: Staged | None = None):
        if fps <= 0:
            raise ValueError(f"fps must be positive, got {fps}")
        self.path = Path(path)
        self.fps = Fraction(fps).limit_denominator(1001)
        self.size = (int(size[0]), int(size[1]))
        self.crf = crf
        self.codec = None
        self.frames = 0
        self._own = stage is None
        self._stage = Staged() if stage is None else stage
        self._tmp = Path()
        self._container = self._stream = self._cv = None

    def __enter__(self) -> "VideoWriter":
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._tmp = self._stage.temp(self.path)
        try:
            self._open()
        except BaseException:
            self._tmp.unlink(missing_ok=True)
            raise
        return self

    def _open(self) -> None:
        import av

        w, h = self.size
        for codec, options in (("libx264", {"crf": str(self.crf), "preset": "veryfast", "x264-params": "mbtree=0"}), ("h264", {}),
                               ("mpeg4", {"qscale": "3"})):
            if codec not in av.codecs_available:
                continue
            try:
                container = av.open(str(self._tmp), mode="w", format="mp4")
                stream = container.add_stream(codec, rate=self.fps)
                stream.width, stream.height = w + (w % 2), h + (h % 2)
                stream.pix_fmt = "yuv420p"
                stream.options = options
                stream.codec_context.open()  # fail here, not on the first frame, if the encoder is missing
            except Exception:  # an encoder listed but not usable: try the next one
                try:
                    container.close()
                except Exception:
                    pass
                continue
            self._container, self._stream, self.codec = container, stream, codec
            return
        fourcc = cv2.VideoWriter_fourcc(*"mp4v")
        self._cv = cv2.VideoWriter(str(self._tmp), fourcc, float(self.fps), (w, h))
        if not self._cv.isOpened():
            raise RuntimeError(f"no video encoder available to write {self.path}")
        self.codec = "cv2-mp4v"

    def write(self, bgr: np.ndarray) -> None:
        try:
            self._write(bgr)
        except OSError as exc:
            raise named_error(exc, self._tmp, self.path) from None

    def _write(self, bgr: np.ndarray) -> None:
        if bgr.shape[:2] != (self.size[1], self.size[0]):
            raise ValueError(f"frame is {bgr.shape[1]}x{bgr.shape[0]}, the video is {self.size[0]}x{self.size[1]}")
        if self._cv is not None:
            self._cv.write(bgr)
        else:
            import av

            w, h = self.size
            if w % 2 or h % 2:  # yuv420p needs even sizes: repeat the last row/column
                bgr = cv2.copyMakeBorder(bgr, 0, h % 2, 0, w % 2, cv2.BORDER_REPLICATE)
            frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(bgr), format="bgr24")
            frame.pts = self.frames
            for packet in self._stream.encode(frame):
                self._container.mux(packet)
        self.frames += 1

    def __exit__(self, exc_type, exc, tb) -> None:
        """The video is kept only when every frame and the close went through (a full disk at the last
        flush too leaves nothing behind)."""
        try:
            self._close(flush=exc_type is None)
        except BaseException as error:
            self._tmp.unlink(missing_ok=True)
            if isinstance(error, OSError):
                raise named_error(error, self._tmp, self.path) from None
            raise
        if exc_type is not None:
            self._tmp.unlink(missing_ok=True)
        elif self._own:
            self._stage.commit()

    def _close(self, flush: bool) -> None:
        if self._cv is not None:
            self._cv.release()
        elif self._container is not None:
            try:
                if flush:
                    for packet in self._stream.encode():
                        self._container.mux(packet)
            finally:
                self._container.close()


def write_png(path: str | Path, bgr: np.ndarray, stage: Staged | None = None) -> Path:
    """Write a PNG atomically (temporary name, then rename), or into ``stage``'s group."""
    ok, buf = cv2.imencode(".png", bgr)
    if not ok:
        raise RuntimeError(f"could not encode {path}")
    data = buf.tobytes()

    def write(tmp: str) -> None:
        Path(tmp).write_bytes(data)

    return stage.file(path, write) if stage is not None else write_atomic(path, write)


def read_video_frames(path: str | Path) -> list[np.ndarray]:
    """Decode every frame of a video (BGR) with PyAV: for tests and tools."""
    import av

    with av.open(str(path)) as container:
        return [f.to_ndarray(format="bgr24") for f in container.decode(video=0)]
