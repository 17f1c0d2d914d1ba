"""Writing rendered frames: MP4 through PyAV (H.264, else MPEG-4 Part 2, else OpenCV's writer) and PNG.

Files are written under a temporary name in the target folder and renamed when complete, so a crash never
leaves a half-written video that looks finished.
"""
from __future__ import annotations

import os
from fractions import Fraction
from pathlib import Path

import cv2
import numpy as np

__all__ = ["VideoWriter", "write_png", "read_video_frames"]


class VideoWriter:
    """``with VideoWriter(path, fps, (w, h)) as v: v.write(bgr)``; ``v.codec`` says which encoder was used."""

    def __init__(self, path: str | Path, fps: float, size: tuple[int, int], crf: int = 18):
        if fps <= 0:
            raise ValueError(f"fps must be positive, got {fps}")
        self.path = Path(path)
        self.fps = Fraction(fps).limit_denominator(1001)
        self.size = (int(size[0]), int(size[1]))
        self.crf = crf
        self.codec = None
        self.frames = 0
        self._tmp = self.path.with_name(f".{self.path.stem}.part{os.getpid()}{self.path.suffix or '.mp4'}")
        self._container = self._stream = self._cv = None

    def __enter__(self) -> "VideoWriter":
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._open()
        return self

    def _open(self) -> None:
        import av

        w, h = self.size
        for codec, options in (("libx264", {"crf": str(self.crf), "preset": "veryfast"}), ("h264", {}),
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
        try:
            if self._cv is not None:
                self._cv.release()
            elif self._container is not None:
                if exc_type is None:
                    for packet in self._stream.encode():
                        self._container.mux(packet)
                self._container.close()
        finally:
            if exc_type is None:
                os.replace(self._tmp, self.path)
            elif self._tmp.exists():
                self._tmp.unlink()


def write_png(path: str | Path, bgr: np.ndarray) -> None:
    """Write a PNG atomically (temporary name, then rename)."""
    path = Path(path)
    ok, buf = cv2.imencode(".png", bgr)
    if not ok:
        raise RuntimeError(f"could not encode {path}")
    tmp = path.with_name(f".{path.name}.part{os.getpid()}")
    tmp.write_bytes(buf.tobytes())
    os.replace(tmp, path)


def read_video_frames(path: str | Path) -> list[np.ndarray]:
    """Decode every frame of a video (BGR) with PyAV: for tests and tools."""
    import av

    with av.open(str(path)) as container:
        return [f.to_ndarray(format="bgr24") for f in container.decode(video=0)]
