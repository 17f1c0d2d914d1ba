"""YOLO-format training data from simulated clips: ``images/<split>/*.png``, ``labels/<split>/*.txt`` (one
``class cx cy w h`` line per object, normalised to the image) and ``data.yaml``.

Boxes come from projecting each object's 3-D outline with the ground-truth camera (a disc's top and bottom
rims, a marble's equator, the hand up to the wrist, the cue), clipped to the image. Pieces that are not
visible, mostly outside the picture, or whose centre is under a hand or the cue get no box.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable

import cv2
import numpy as np

from calibration.atomic import write_text_atomic

from .render import Renderer, interpolating_states
from .render_geometry import piece_height_mm
from .render_occluders import OccluderPainter
from .render_settings import RenderSettings
from .video import write_png

__all__ = ["CLASSES", "class_id", "yolo_boxes", "labelled_pieces", "export_yolo"]

# the learned detector's class names, in its order (judge.training.data.CLASSES): a dataset exported here
# trains a model that vision.detect_learned reads without renaming
CLASSES = ("pawn_a", "pawn_b", "bat", "marble_a", "marble_b", "hand", "cue")
MIN_VISIBLE = 0.5  # fraction of a box that must lie inside the image


def class_id(kind: str, owner: str | None = None) -> int:
    """Class index of a piece kind/owner ('pawn','A' -> pawn_a) or an occluder kind ('hand', 'cue')."""
    name = kind if kind in ("bat", "hand", "cue") else f"{kind}_{str(owner).lower()}"
    try:
        return CLASSES.index(name)
    except ValueError:
        raise ValueError(f"no YOLO class for kind={kind!r} owner={owner!r}") from None


def _piece_outline(profile, piece, n: int = 24) -> np.ndarray:
    a = np.linspace(0, 2 * np.pi, n, endpoint=False)
    r = float(piece.radius_mm)
    ring = np.stack([piece.x_mm + r * np.cos(a), piece.y_mm + r * np.sin(a)], 1)
    h = piece_height_mm(profile, piece.kind)
    zs = (piece.z_mm + h / 2.0,) if piece.kind == "marble" else (piece.z_mm, piece.z_mm + h)
    return np.concatenate([np.column_stack([ring, np.full(n, z)]) for z in zs])


def _box(camera, pts_mm: np.ndarray):
    px = camera.project(pts_mm)
    lo, hi = px.min(0), px.max(0)
    w, h = camera.width, camera.height
    clo = np.maximum(lo, [-0.5, -0.5])
    chi = np.minimum(hi, [w - 0.5, h - 0.5])
    full = float(np.prod(np.maximum(hi - lo, 1e-9)))
    inside = float(np.prod(np.maximum(chi - clo, 0.0)))
    if inside < MIN_VISIBLE * full:
        return None
    return clo, chi, px


def yolo_boxes(frame, camera, profile, occluders: OccluderPainter | None = None) -> list[tuple[int, float, float, float, float]]:
    """(class, cx, cy, w, h) normalised boxes for ``frame`` as the camera sees it."""
    w, h = camera.width, camera.height
    out = []
    covers = []
    if occluders is not None:
        for o in frame.occluders:
            got = _box(camera, occluders.outline_mm(o))
            if got is None:
                continue
            lo, hi, px = got
            covers.append(cv2.convexHull(px.astype(np.float32)))
            out.append((class_id(o.kind), lo, hi))
    boxes = []
    for p in frame.pieces:
        if not p.visible:
            continue
        got = _box(camera, _piece_outline(profile, p))
        if got is None:
            continue
        lo, hi, px = got
        centre = tuple(float(v) for v in px.mean(0))
        if any(cv2.pointPolygonTest(hull, centre, False) >= 0 for hull in covers):
            continue  # hidden under a hand or the cue
        boxes.append((class_id(p.kind, p.owner), lo, hi))
    boxes.extend(out)
    return [(c, float((lo[0] + hi[0] + 1) / 2 / w), float((lo[1] + hi[1] + 1) / 2 / h),
             float((hi[0] - lo[0]) / w), float((hi[1] - lo[1]) / h)) for c, lo, hi in boxes]


def labelled_pieces(frame, camera, profile, occluders: OccluderPainter | None = None) -> dict[str, bool]:
    """For every piece of ``frame``: would :func:`yolo_boxes` give it a box (visible, mostly inside the
    picture, centre not under a hand or the cue)? Same rule, with one projection for the whole frame, so
    the ground truth can say per frame which pieces a detector is expected to find."""
    covers = []
    if occluders is not None:
        for o in frame.occluders:
            got = _box(camera, occluders.outline_mm(o))
            if got is not None:
                covers.append(cv2.convexHull(got[2].astype(np.float32)))
    shown = [p for p in frame.pieces if p.visible]
    out = {p.id: False for p in frame.pieces}
    if not shown:
        return out
    # the outlines of _piece_outline for all pieces at once: two rims (a marble's equator twice)
    n = 24
    a = np.linspace(0, 2 * np.pi, n, endpoint=False)
    heights = {k: piece_height_mm(profile, k) for k in {p.kind for p in shown}}
    x, y, r = (np.array([getattr(p, f) for p in shown], float)[:, None] for f in ("x_mm", "y_mm", "radius_mm"))
    z = np.array([[p.z_mm + heights[p.kind] / 2.0] * 2 if p.kind == "marble" else [p.z_mm, p.z_mm + heights[p.kind]]
                  for p in shown], float)
    ring = np.stack([x + r * np.cos(a), y + r * np.sin(a)], -1)  # (P, n, 2)
    pts = np.concatenate([np.concatenate([ring, np.repeat(z[:, k, None, None], n, 1)], -1) for k in (0, 1)], 1)
    px = camera.project(pts.reshape(-1, 3)).reshape(len(shown), 2 * n, 2)
    lo, hi = px.min(1), px.max(1)
    w, h = camera.width, camera.height
    clo, chi = np.maximum(lo, [-0.5, -0.5]), np.minimum(hi, [w - 0.5, h - 0.5])
    inside = np.prod(np.maximum(chi - clo, 0.0), 1) >= MIN_VISIBLE * np.prod(np.maximum(hi - lo, 1e-9), 1)
    for i, p in enumerate(shown):
        if not inside[i]:
            continue
        centre = tuple(float(v) for v in (px[i, :n] if p.kind == "marble" else px[i]).mean(0))
        out[p.id] = not any(cv2.pointPolygonTest(hull, centre, False) >= 0 for hull in covers)
    return out


def export_yolo(frames: Iterable, camera, profile, settings: RenderSettings, out_dir: str | Path, *,
                split: str = "train", prefix: str = "clip", every: int = 1,
                states_at: Callable[[float], object] | None = None,
                on_image: Callable[[object, np.ndarray], None] | None = None,
                dataset_path: str | Path | None = None, renderer: Renderer | None = None) -> int:
    """Render every ``every``-th frame into a YOLO dataset at ``out_dir`` (created or extended; use a
    different ``prefix`` per clip). Returns the number of images written. ``data.yaml`` lists the classes
    in :data:`CLASSES` order. ``on_image(frame, image)`` sees every rendered frame (e.g. to write the video
    in the same pass); ``dataset_path`` is the folder ``data.yaml`` names (default ``out_dir``; give the
    final place when ``out_dir`` is a staging folder that will be renamed); ``renderer`` one to reuse (same
    camera, profile and settings), else a new one."""
    if every < 1:
        raise ValueError(f"every must be >= 1, got {every}")
    if split not in ("train", "val", "test"):
        raise ValueError(f"split must be train, val or test, got {split!r}")
    out = Path(out_dir)
    images, labels = out / "images" / split, out / "labels" / split
    images.mkdir(parents=True, exist_ok=True)
    labels.mkdir(parents=True, exist_ok=True)
    frames = list(frames)
    if states_at is None and (settings.blur_samples > 1 or settings.rolling_shutter_s > 0) and len(frames) > 1:
        states_at = interpolating_states(frames)
    renderer = renderer or Renderer(camera, profile, settings)
    n = 0
    for f in frames:
        img = renderer.render(f, states_at)  # every frame, so the renderer's caches stay warm
        if on_image is not None:
            on_image(f, img)
        if f.index % every:
            continue
        stem = f"{prefix}_{f.index:06d}"
        rows = yolo_boxes(f, camera, profile, renderer.occluders if settings.occluders else None)
        write_png(images / f"{stem}.png", img)
        write_text_atomic(labels / f"{stem}.txt", "".join(f"{c} {x:.6f} {y:.6f} {bw:.6f} {bh:.6f}\n" for c, x, y, bw, bh in rows))
        n += 1
    names = "\n".join(f"  {i}: {name}" for i, name in enumerate(CLASSES))
    write_text_atomic(out / "data.yaml", f"path: {Path(dataset_path or out).resolve()}\ntrain: images/train\nval: images/val\nnames:\n{names}\n")
    return n
