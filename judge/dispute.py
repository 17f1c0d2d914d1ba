"""The dispute view of one shot: slowed down, the reconstructed instants marked, zooms, and the call.

Each source frame of the shot (``report.shot_frames``) becomes ``slow`` output frames: the frame itself,
then cross-fades towards the next one (the last frame is held), so the output has exactly
``(last - first + 1) * slow`` frames at the source frame rate. On every output frame the pieces are
drawn where vision's fitted trajectories put them at that sub-frame instant; when the instant of an
event (contact, cushion, pocket, pit...) is passed, a banner names it with its time, its 1-sigma and
its place between two frames, and the pieces involved are drawn at that instant. Two zooms stay on
screen: the first contact, and (Novuss) the bat's hole at rest with the zone line drawn where the
calibration puts it (does the line show through the hole?). The call and its rule clause are written
in the ruling's language with a real font (``judge.textdraw``).
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import cv2
import numpy as np

from .errors import UserError
from .evidence import KeyInstant, key_instants, positions_at, radius_of
from .replay import ReplayResult, ReplayShot, judged_frames
from .replay_draw import Board, call_lines, read_frames
from .report import shot_frames
from .textdraw import draw_lines

__all__ = ["render_dispute", "dispute_frame_count"]

RED, YELLOW, WHITE, GREEN = (60, 60, 255), (0, 220, 255), (255, 255, 255), (80, 220, 80)


def dispute_frame_count(shot: ReplayShot, fps: float, frames: int, slow: int) -> int:
    first, last = shot_frames(shot, fps, frames)
    return (last - first + 1) * slow


def render_dispute(result: ReplayResult, shot_no: int, slow: int, out_path: str | Path,
                   progress: Callable[[int, int], None] | None = None) -> int:
    """Write the dispute view of shot ``shot_no`` (1-based, through the whole video) to ``out_path``;
    returns the number of frames written."""
    from hardware import open_source
    from sim.video import VideoWriter

    if slow < 1 or slow > 64:
        raise UserError(f"--slow must be between 1 and 64, got {slow}")
    shot = next((s for s in result.shots if s.no == shot_no), None)
    if shot is None:
        raise UserError(f"--shot {shot_no}: the video has {len(result.shots)} judged shot(s)")
    out_path = Path(out_path)
    if not out_path.parent.is_dir():
        raise UserError(f"--dispute {out_path}: folder {out_path.parent} does not exist")
    board = Board(result.calibration)
    keys = key_instants(shot.record, result.calibration.profile, shot.motions, result.log, shot.ruling)
    first, last = shot_frames(shot, result.fps, result.frames)
    w, h = result.size
    insets = _insets(result, shot, keys, board, w, h)
    lines = call_lines(shot.ruling, shot.no, shot.error, shot.game_no)
    timed = sorted((k for k in keys if k.kind != "rest"), key=lambda k: k.t_s)
    total = (last - first + 1) * slow
    written = 0
    with VideoWriter(out_path, result.fps, (w, h)) as video, open_source(result.video) as source:
        prev = None
        for frame in judged_frames(source, result.frames):  # never past a break in the video
            if frame.index < first:
                continue
            if frame.index > last + 1:
                break
            if prev is not None:
                written += _emit(video, result, shot, board, prev, frame.image, slow, timed, insets, lines)
                if progress is not None:
                    progress(written, total)
            if frame.index > last:
                prev = None
                break
            prev = (frame.index, frame.image)
        if prev is not None:  # the shot runs to the last frame of the video: hold it
            written += _emit(video, result, shot, board, prev, prev[1], slow, timed, insets, lines)
    return written


def _emit(video, result, shot, board, prev, nxt_image, slow, timed, insets, lines) -> int:
    index, image = prev
    fps = result.fps
    for k in range(slow):
        f = k / slow
        base = image if k == 0 else cv2.addWeighted(image, 1.0 - f, nxt_image, f, 0.0)
        t = (index + f) / fps
        video.write(_compose(base, t, index, f, slow, result, shot, board, timed, insets, lines))
    return slow


def _compose(base, t, index, f, slow, result, shot, board, timed, insets, lines) -> np.ndarray:
    profile = result.calibration.profile
    out = np.array(base, copy=True)
    pos = positions_at(shot.motions, result.log, t)
    for piece, xy in pos.items():
        c = board.px([xy])[0]
        r = radius_of(profile, piece) * board.px_per_mm(xy)
        cv2.circle(out, (int(round(c[0])), int(round(c[1]))), max(2, int(round(r))), WHITE, 1, cv2.LINE_AA)
    passed = [k for k in timed if k.t_s <= t]
    for k in passed[-3:]:
        for piece, xy in k.positions_mm.items():
            c = board.px([xy])[0]
            r = radius_of(profile, piece) * board.px_per_mm(xy)
            cv2.circle(out, (int(round(c[0])), int(round(c[1]))), max(2, int(round(r))), RED if k is passed[-1] else YELLOW,
                       2, cv2.LINE_AA)
        c = board.px([k.at_mm])[0]
        cv2.drawMarker(out, (int(round(c[0])), int(round(c[1]))), RED, cv2.MARKER_CROSS, 14, 2, cv2.LINE_AA)
    for img, (x, y) in insets:
        out[y:y + img.shape[0], x:x + img.shape[1]] = img
    w, h = result.size
    size = max(13, h // 40)
    head = [(f"slow motion 1/{slow} · t = {t:.4f} s · frame {index}" + (f" + {f:.2f}" if f else ""), WHITE)]
    for k in passed[-3:]:
        before, after, frac = k.frames(result.fps)
        what = "–".join(k.pieces)
        head.append((f"{k.kind.upper()} {what}  t = {k.t_s:.5f} s ± {k.t_err_s * 1000:.2f} ms  (frame {before} + {frac:.2f})"
                     + (f"  {k.note}" if k.note else ""), (120, 120, 255) if k is passed[-1] else (150, 230, 255)))
    out = draw_lines(out, head, (8, 8), size, max_width=int(w * 0.68))
    return draw_lines(out, lines, (8, h - int(size * 1.3) * len(lines) - 24), size, bold_first=True, max_width=w - 16)


def _insets(result: ReplayResult, shot: ReplayShot, keys: list[KeyInstant], board: Board, width: int, height: int):
    """The zoom boxes (image, top-left) on the right: first contact, and the bat's hole (Novuss) or the
    first pocket/pit entry."""
    from .report import _nearest

    first = next((k for k in keys if k.name == "first_contact"), None)
    second = next((k for k in keys if k.name == "bat_hole"), None) or next(
        (k for k in keys if k.kind in ("pit", "pocket", "touch", "external")), None)
    chosen = [k for k in (first, second) if k is not None]
    frames = read_frames(result.video, [_nearest(k, result.fps, result.frames) for k in chosen])
    side = max(64, min(int(width * 0.27), (height - 24) // 2 - 4))
    out = []
    y = 8
    for k in chosen:
        img = frames.get(_nearest(k, result.fps, result.frames))
        if img is None:
            continue
        half_mm = 45.0 if k.kind != "rest" else 30.0
        crop, (x0, y0, scale) = board.crop(img, k.at_mm, half_mm, side)
        player = (shot.ruling or {}).get("player") or shot.record.get("player") or "A"
        crop = _mark_inset(crop, k, board, profile_of(result), player, x0, y0, scale)
        crop = cv2.copyMakeBorder(crop, 2, 2, 2, 2, cv2.BORDER_CONSTANT, value=WHITE)
        out.append((crop, (width - crop.shape[1] - 8, y)))
        y += crop.shape[0] + 8
    return out


def profile_of(result: ReplayResult):
    return result.calibration.profile


def _mark_inset(crop, k: KeyInstant, board: Board, profile, player: str, x0, y0, scale):
    to_crop = lambda mm: (board.px([mm])[0] - (x0, y0)) * scale  # noqa: E731
    if k.kind == "rest":
        g = profile.geometry
        c = to_crop(k.at_mm)
        hole_px = g["bat_hole_mm"] / 2 * board.px_per_mm(k.at_mm) * scale
        cv2.circle(crop, (int(round(c[0])), int(round(c[1]))), max(2, int(round(hole_px))), GREEN, 1, cv2.LINE_AA)
        half_w = g["line_width_mm"] / 2
        for (ax, ay), (bx, by) in _zone_lines(profile, player):  # both edges of each line band, over the image
            nx, ny = (0.0, half_w) if ay == by else (half_w, 0.0)
            for sgn in (-1, 1):
                pa = to_crop((ax + sgn * nx, ay + sgn * ny))
                pb = to_crop((bx + sgn * nx, by + sgn * ny))
                cv2.line(crop, tuple(int(round(v)) for v in pa), tuple(int(round(v)) for v in pb), YELLOW, 1, cv2.LINE_AA)
        label = f"bat hole: {k.note}"
    else:
        for piece, xy in k.positions_mm.items():
            c = to_crop(xy)
            r = radius_of(profile, piece) * board.px_per_mm(xy) * scale
            cv2.circle(crop, (int(round(c[0])), int(round(c[1]))), max(2, int(round(r))), RED, 1, cv2.LINE_AA)
        label = f"{k.name.replace('_', ' ')} {'-'.join(k.pieces)} t={k.t_s:.5f}s"
    return draw_lines(crop, [(label, WHITE)], (0, crop.shape[0] - max(12, crop.shape[0] // 14) - 22),
                      max(11, crop.shape[0] // 16), max_width=crop.shape[1])


def _zone_lines(profile, player: str):
    """The centre lines of the player's zone (three sides: the cushion side has none), in board mm."""
    g = profile.geometry
    h, d, hw = g["surface_mm"] / 2, g["zone_depth_mm"], g["zone_half_width_mm"]
    y_in = -h + d if player == "A" else h - d
    y_cush = -h if player == "A" else h
    return [((-hw, y_in), (hw, y_in)), ((-hw, y_cush), (-hw, y_in)), ((hw, y_cush), (hw, y_in))]
