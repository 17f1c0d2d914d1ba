"""Webcam-grade compression of the filmed frames: what reaches vision after the camera's encoder.

``RenderSettings.compression``:

* ``"none"``: the sensor image as it is;
* ``"jpeg"``: every frame encoded and decoded on its own with OpenCV's JPEG at ``jpeg_quality`` (an MJPEG
  webcam);
* ``"h264"``: the frames go through one H.264 stream (PyAV, libx264, YUV 4:2:0, no B-frames, zero latency,
  a key frame every ``keyframe_s``) at ``bitrate_mbps`` for a stream of ``codec_fps`` frames a second, with a
  webcam's rate control (VBV buffer of half a second), and are decoded again. A frame then depends on the
  frames the same renderer encoded before it, as in a real stream: the same sequence of frames gives the
  same pictures (one encoder thread, deterministic).
"""
from __future__ import annotations

from fractions import Fraction

import cv2
import numpy as np

__all__ = ["Codec", "COMPRESSIONS"]

COMPRESSIONS = ("none", "jpeg", "h264")


class Codec:
    """``Codec(settings, (w, h))``; ``codec(bgr) -> bgr`` after encoding and decoding; ``bytes`` so far."""

    def __init__(self, settings, size: tuple[int, int]):
        self.kind = settings.compression
        self.settings = settings
        self.size = (int(size[0]), int(size[1]))
        self.bytes = 0
        self.frames = 0
        self._enc = self._dec = None

    def __call__(self, img: np.ndarray) -> np.ndarray:
        if self.kind == "none":
            return img
        self.frames += 1
        if self.kind == "jpeg":
            ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, int(self.settings.jpeg_quality)])
            if not ok:
                raise RuntimeError("JPEG encoding failed")
            self.bytes += int(buf.size)
            return cv2.imdecode(buf, cv2.IMREAD_COLOR)
        return self._h264(img)

    def _open(self) -> None:
        import av

        st = self.settings
        w, h = self.size
        if w % 2 or h % 2:
            raise ValueError(f"h264 compression needs an even frame size, got {w}x{h}")
        rate = Fraction(st.codec_fps).limit_denominator(1001)
        enc = av.CodecContext.create("libx264", "w")
        enc.width, enc.height, enc.pix_fmt = w, h, "yuv420p"
        enc.framerate, enc.time_base = rate, 1 / rate
        kbit = max(int(round(st.bitrate_mbps * 1000)), 50)
        enc.bit_rate = kbit * 1000
        enc.gop_size = max(int(round(st.keyframe_s * st.codec_fps)), 1)
        enc.options = {"preset": "veryfast", "tune": "zerolatency", "threads": "1",
                       "x264-params": f"vbv-maxrate={kbit}:vbv-bufsize={kbit // 2}:bframes=0"}
        enc.open()
        dec = av.CodecContext.create("h264", "r")
        dec.options = {"threads": "1"}
        self._enc, self._dec, self._av = enc, dec, av

    def _h264(self, img: np.ndarray) -> np.ndarray:
        if self._enc is None:
            self._open()
        frame = self._av.VideoFrame.from_ndarray(np.ascontiguousarray(img), format="bgr24").reformat(format="yuv420p")
        frame.pts = self.frames - 1
        out = None
        for packet in self._enc.encode(frame):
            self.bytes += packet.size
            for got in self._dec.decode(packet):
                out = got
        if out is None:  # the encoder held the frame back (it should not with zero latency)
            raise RuntimeError("h264 compression: the encoder returned no picture for a frame")
        return out.to_ndarray(format="bgr24")
