"""The replay report and the judged video, written all or nothing.

Report (``shotjudge.replay-report/1``, JSON): the video and calibration it came from, the starting
layout, ``rulings`` (every ruling in the documented schema, docs/schemas/ruling.schema.json, in shot
order), and ``shots``: per shot its number, game, frame span, shot record, ruling (or the reason the
engine could not judge it), review flag and ``evidence``: the key instants (time, 1-sigma, the frames
around it, where on the board, the pieces' fitted positions at that instant) with a crop of the frame
nearest each, saved beside the report as ``<report>_files/shotNNN_<instant>.png``. ``truncated`` is
null for a video read to its end; for one that broke off (cut short or damaged) it is
``{last_frame, last_t_s, frames_expected, shot_in_progress, reason}``: the report then holds the shots
completed before the break, and a shot in progress there was not judged. ``match``: the match score at the
end (``rules.match.match_score``: per game the result, games won; Cvrnkaná: marbles and clause 8 points).

The report, its folder of crops and the overlay video are first written under temporary names and renamed
into place only once all of them are complete (``calibration.atomic``): a full disk leaves the older ones.
"""
from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import tempfile
from pathlib import Path
from typing import Callable

import numpy as np

from calibration.atomic import DIR_MODE, named_error, staged_files

from .errors import UserError
from .evidence import KeyInstant, key_instants
from .i18n import _
from .replay import ReplayResult, ReplayShot, judged_frames
from .replay_draw import Board, call_lines

__all__ = ["SCHEMA", "shot_frames", "build_report", "write_outputs", "CROP_HALF_MM", "CROP_PX"]

SCHEMA = "shotjudge.replay-report/1"
CROP_HALF_MM = 60.0
CROP_PX = 240
PAD_S = 0.1  # frames shown before the shot starts and after it ends
CONTACT_SHOW_S = 0.6


def shot_frames(shot: ReplayShot, fps: float, frames: int) -> tuple[int, int]:
    """First and last frame index of the shot (with ``PAD_S`` either side), within the video."""
    pad = int(round(PAD_S * fps))
    first = max(0, int(math.floor(float(shot.record["t0"]) * fps + 1e-9)) - pad)
    last = min(frames - 1, int(math.ceil(float(shot.record["t1"]) * fps - 1e-9)) + pad)
    return first, max(first, last)


def instants(result: ReplayResult) -> dict[int, list[KeyInstant]]:
    profile = result.calibration.profile
    return {s.no: key_instants(s.record, profile, s.motions, result.log, s.ruling) for s in result.shots}


def build_report(result: ReplayResult, keys: dict[int, list[KeyInstant]], files_dir: str | None, *, lang: str,
                 calibration_path: str, start_from: str) -> dict:
    shots = []
    for s in result.shots:
        first, last = shot_frames(s, result.fps, result.frames)
        evidence = []
        for k in keys[s.no]:
            item = k.to_dict(result.fps)
            item["frame"] = _nearest(k, result.fps, result.frames)
            if files_dir is not None:
                item["image"] = f"{files_dir}/{crop_name(s.no, k)}"
            evidence.append(item)
        shots.append({"no": s.no, "game_no": s.game_no, "frames": [first, last],
                      "t0_s": s.record["t0"], "t1_s": s.record["t1"], "review": s.review,
                      "ruling": s.ruling, "error": s.error, "record": s.record, "evidence": evidence})
    return {
        "schema": SCHEMA, "video": result.video, "game": result.game, "fps": result.fps,
        "size": list(result.size), "frames": result.frames, "duration_s": round(result.duration_s, 3),
        "calibration": calibration_path, "lang": lang, "truncated": result.cut,
        "start": {"from": start_from, "layout": {k: [round(v[0], 2), round(v[1], 2)] for k, v in sorted(result.layout.items())}},
        "rulings": [s.ruling for s in result.shots if s.ruling is not None],
        "shots": shots, "review": [s.no for s in result.shots if s.review], "notes": list(result.notes),
        "match": result.match,
    }


def crop_name(shot_no: int, k: KeyInstant) -> str:
    return f"shot{shot_no:03d}_{k.name}.png"


def _nearest(k: KeyInstant, fps: float, frames: int) -> int:
    return int(min(max(round(k.t_s * fps), 0), max(frames - 1, 0)))


def write_outputs(result: ReplayResult, *, report: str | None, overlay: str | None, lang: str, calibration_path: str,
                  start_from: str, progress: Callable[[int, int], None] | None = None, video_as: str | None = None) -> dict:
    """One more pass over the video: evidence crops for the report, the overlay video; then the report.
    Everything is written under temporary names and renamed into place only once all of it is complete.
    ``video_as``: the video's name in the report, where it is read from elsewhere. Returns the report
    document (also when ``report`` is None)."""
    keys = instants(result)
    report_path = Path(report) if report else None
    files_dir = tmp_dir = None
    for option, path in (("--report", report_path), ("--overlay", Path(overlay) if overlay else None)):
        if path is not None and not path.parent.is_dir():
            raise UserError(_("{option} {path}: folder {folder} does not exist").format(
                option=option, path=path, folder=path.parent))
    if report_path is not None:
        files_dir = f"{report_path.stem}_files"
        tmp_dir = Path(tempfile.mkdtemp(prefix=f".{files_dir}.", dir=report_path.parent))
    try:
        with staged_files() as stage:
            if tmp_dir is not None or overlay:
                _frames_pass(result, keys, tmp_dir, overlay, stage, progress)
            doc = build_report(result, keys, files_dir, lang=lang, calibration_path=calibration_path, start_from=start_from)
            if video_as is not None:
                doc["video"] = video_as
            if report_path is not None:
                text = json.dumps(doc, ensure_ascii=False, indent=1) + "\n"
                stage.file(report_path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))
                tmp_dir = _swap_in(tmp_dir, report_path.parent / files_dir)  # the crops now, the files on leaving
        return doc
    except OSError as exc:
        if tmp_dir is not None and report_path is not None:
            raise named_error(exc, tmp_dir, report_path.parent / files_dir) from None
        raise
    finally:
        if tmp_dir is not None:
            shutil.rmtree(tmp_dir, ignore_errors=True)


def _frames_pass(result: ReplayResult, keys: dict[int, list[KeyInstant]], crops: Path | None, overlay: str | None,
                 stage, progress: Callable[[int, int], None] | None) -> None:
    """Through the judged frames once: the evidence crops into the folder ``crops``, the overlay video into
    ``stage``."""
    from hardware import open_source
    from sim.video import VideoWriter, write_png

    board = Board(result.calibration)
    wanted: dict[int, list[tuple[int, KeyInstant]]] = {}
    for s in result.shots:
        for k in keys[s.no]:
            wanted.setdefault(_nearest(k, result.fps, result.frames), []).append((s.no, k))
    with contextlib.ExitStack() as stack:
        writer = stack.enter_context(VideoWriter(overlay, result.fps, result.size, stage=stage)) if overlay else None
        plan = _OverlayPlan(result, keys, board) if overlay else None
        source = stack.enter_context(open_source(result.video))
        for frame in judged_frames(source, result.frames):
            for no, k in wanted.get(frame.index, []) if crops is not None else []:
                crop, _ = board.crop(frame.image, k.at_mm, CROP_HALF_MM, CROP_PX)
                write_png(crops / crop_name(no, k), crop)
            if writer is not None:
                writer.write(plan.draw(frame.image, frame.index))
            if progress is not None:
                progress(frame.index + 1, result.frames)


def _swap_in(tmp_dir: Path, files_dir: Path) -> Path | None:
    """Move the finished crops' folder into place; the old one (if any) is moved aside and returned, for
    removal once the report is in place too."""
    old = None
    if files_dir.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{files_dir.name}.old.", dir=files_dir.parent))
        os.replace(files_dir, old / files_dir.name)
    os.chmod(tmp_dir, DIR_MODE)  # mkdtemp's folder is private; the crops' folder is an ordinary one
    os.replace(tmp_dir, files_dir)
    return old


class _OverlayPlan:
    """Per frame: tracked pieces with short trails, contacts of the last ``CONTACT_SHOW_S``, the last call."""

    def __init__(self, result: ReplayResult, keys: dict[int, list[KeyInstant]], board: Board, trail_frames: int = 20):
        self.result, self.board, self.trail_frames = result, board, trail_frames
        self.contacts = sorted((k for ks in keys.values() for k in ks if k.kind == "contact"), key=lambda k: k.t_s)
        self.calls = sorted(((int(math.ceil(float(s.record["t1"]) * result.fps - 1e-9)), s) for s in result.shots),
                            key=lambda x: x[0])  # a call is known once its shot has ended

    def draw(self, image: np.ndarray, index: int) -> np.ndarray:
        from .textdraw import draw_lines

        t = index / self.result.fps
        pos = self.result.log.at_frame(index)
        trails = {p: self.result.log.trail(p, index, self.trail_frames) for p in pos}
        recent = [k for k in self.contacts if t - CONTACT_SHOW_S <= k.t_s <= t]
        out = self.board.draw(image, self.board.model(pos, trails, recent))
        done = [s for end, s in self.calls if end <= index]
        if done:
            h = out.shape[0]
            size = max(14, h // 36)
            lines = call_lines(done[-1].ruling, done[-1].no, done[-1].error, done[-1].game_no)
            out = draw_lines(out, lines, (8, h - int(size * 1.3) * len(lines) - 24), size, bold_first=True,
                             max_width=out.shape[1] - 16)
        return out
