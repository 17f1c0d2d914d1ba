"""Clips for disputes: the last seconds of frames, and one MP4 per shot with its record and ruling.

A ring buffer holds recent frames (they are immutable, so holding them costs no copies). When a
shot is judged its frames are written on a background thread to ``gameGG/shotNNN.mp4`` with
``shotNNN.json`` beside it, each through a temporary file and a rename, so a referee never finds
half a clip under a real name.
"""
from __future__ import annotations

import contextlib
import json
import threading
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from fractions import Fraction
from pathlib import Path
from typing import Any, Mapping, Sequence

from calibration.atomic import Staged, named_error, staged_files, write_text_atomic
from hardware.frame import Frame

__all__ = ["FrameRing", "ShotRecorder", "clip_paths", "write_clip"]

#: H.264 when this FFmpeg has an encoder for it, MPEG-4 part 2 otherwise (every build has it)
CODECS = ("libx264", "libopenh264", "mpeg4")


class FrameRing:
    """The frames of the last ``seconds`` (by frame time), at most ``max_frames``."""

    def __init__(self, seconds: float, max_frames: int = 4000):
        self.seconds = float(seconds)
        self._frames: deque[Frame] = deque(maxlen=max_frames)
        self._lock = threading.Lock()

    def append(self, frame: Frame) -> None:
        with self._lock:
            self._frames.append(frame)
            while self._frames and self._frames[0].t_s < frame.t_s - self.seconds - 1e-9:
                self._frames.popleft()

    def between(self, t0_s: float, t1_s: float) -> list[Frame]:
        with self._lock:
            return [f for f in self._frames if t0_s <= f.t_s <= t1_s]

    def __len__(self) -> int:
        return len(self._frames)


def clip_paths(root: str | Path, game_no: int, shot_no: int | None, t0_s: float = 0.0) -> tuple[Path, Path]:
    """Where a shot's clip and its JSON go; a refused shot (``shot_no`` None) is named by its start time."""
    folder = Path(root) / f"game{game_no:02d}"
    name = f"shot{shot_no:03d}" if shot_no is not None else f"refused-{max(t0_s, 0.0):010.3f}s"
    return folder / f"{name}.mp4", folder / f"{name}.json"


def write_clip(path: str | Path, frames: Sequence[Frame], fps: float, stage: Staged | None = None) -> str:
    """Encode ``frames`` to an MP4 at ``path`` atomically (or into ``stage``'s group); returns the codec used.

    Presentation times follow the frames' own timestamps (a gap stays a gap in the clip).
    """
    import av

    if not frames:
        raise ValueError(f"{path}: no frames to write")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    w, h = frames[0].size
    w2, h2 = w - w % 2, h - h % 2  # 4:2:0 needs even sizes
    rate = Fraction(fps).limit_denominator(1001)
    with contextlib.nullcontext(stage) if stage is not None else staged_files() as stage:
        tmp = str(stage.temp(path))
        last_error: Exception | None = None
        for codec in CODECS:
            try:
                _encode(tmp, frames, codec, rate, w2, h2)
                break
            except OSError as exc:  # a full disk, not a missing encoder: said with the clip's name
                raise named_error(exc, tmp, path) from None
            except (av.error.FFmpegError, ValueError) as exc:  # encoder missing in this build
                last_error = exc
        else:
            raise RuntimeError(f"{path}: no video encoder available ({last_error})")
    return codec


def _encode(tmp: str, frames: Sequence[Frame], codec: str, rate: Fraction, w: int, h: int) -> None:
    import av

    with av.open(tmp, "w", format="mp4") as out:
        stream = out.add_stream(codec, rate=rate)
        stream.width, stream.height, stream.pix_fmt = w, h, "yuv420p"
        stream.time_base = 1 / rate
        if codec == "libx264":
            stream.options = {"preset": "veryfast", "crf": "20"}
        t0, last_pts = frames[0].t_s, -1
        for frame in frames:
            pts = max(last_pts + 1, round((frame.t_s - t0) * rate))
            vf = av.VideoFrame.from_ndarray(frame.image[:h, :w], format="bgr24")
            vf.pts, last_pts = pts, pts
            for packet in stream.encode(vf):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)


def write_json_atomic(path: Path, data: Mapping[str, Any], stage: Staged | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if stage is None:
        write_text_atomic(path, text)
    else:
        stage.file(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))


class ShotRecorder:
    """Saves each judged shot as ``root/gameGG/shotNNN.mp4`` + ``.json``, off the judging thread.

    The clip runs from ``pre_s`` before the shot's start to the newest frame when it is saved.
    """

    def __init__(self, root: str | Path, fps: float, seconds: float = 20.0, pre_s: float = 1.0):
        self.root = Path(root)
        self.fps = float(fps)
        self.pre_s = pre_s
        self.ring = FrameRing(seconds)
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="recorder")
        self.errors: list[str] = []

    def add(self, frame: Frame) -> None:
        self.ring.append(frame)

    def save(self, game_no: int, shot_no: int | None, record: Mapping[str, Any], ruling: Mapping[str, Any],
             t0_s: float, now_s: float) -> Future:
        """Save a shot's clip (``shot_no`` None: a refused shot, the evidence for the referee's review)."""
        frames = self.ring.between(t0_s - self.pre_s, now_s)
        note = None
        if not frames:  # the shot's start is not in the buffer (too long, or times off): keep what there is
            frames = self.ring.between(now_s - self.ring.seconds, now_s)
            note = f"shot start t0={t0_s:.3f} s is not in the buffer; the last {self.ring.seconds:g} s are saved"
        return self._pool.submit(self._write, game_no, shot_no, dict(record), dict(ruling), frames, note, t0_s)

    def _write(self, game_no, shot_no, record, ruling, frames: list[Frame], note=None, t0_s=0.0) -> Path | None:
        clip, meta = clip_paths(self.root, game_no, shot_no, t0_s)
        info: dict[str, Any] = {"game_no": game_no, "shot_no": shot_no, "record": record, "ruling": ruling}
        if note:
            info["note"] = note
        try:
            with staged_files() as stage:  # the clip and its JSON: both or neither
                if frames:
                    info["clip"] = {"file": clip.name, "codec": write_clip(clip, frames, self.fps, stage),
                                    "first_frame": frames[0].index, "last_frame": frames[-1].index,
                                    "t0_s": frames[0].t_s, "t1_s": frames[-1].t_s, "frames": len(frames)}
                else:
                    info["clip"] = None
                write_json_atomic(meta, info, stage)
            return clip if frames else None
        except Exception as exc:  # noqa: BLE001 - a failed clip is reported, the match goes on
            self.errors.append(f"{clip}: {type(exc).__name__}: {exc}")
            return None

    def close(self) -> None:
        self._pool.shutdown(wait=True)

    def __enter__(self) -> "ShotRecorder":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
