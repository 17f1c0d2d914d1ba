"""Labelled training and evaluation frames for the learned detector, drawn by the simulator's renderer.

Why random scenes and not game clips: a detector needs variety (touching pieces, pieces at the cushions,
fast pieces smeared by the exposure, a hand or the cue over pieces, every lighting and texture) far more
than it needs game logic, and a random layout costs one render instead of a physics episode. Every
look parameter comes from ``RenderSettings.randomised(seed)`` (domain randomisation); one renderer (a few
seconds of set-up) draws several layouts.

Boxes come from the camera model, not from the picture: each piece's top and bottom outline (and, when it
moves, its positions across the exposure) projected through the lens. A piece's *visible* share is the
part of its top face that no occluder (hand with its forearm, cue) covers, tested in the image with
the occluders' projected outlines; pieces under ``MIN_VISIBLE`` are left unlabelled and are not counted
as missed by the evaluation either.

Class names match ``vision.detect_learned.DEFAULT_CLASSES``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

import cv2
import numpy as np

__all__ = ["CLASSES", "MIN_VISIBLE", "Box", "LabelledFrame", "random_scene", "make_renderer", "render_labelled",
           "tiles", "yolo_lines"]

CLASSES = ("pawn_a", "pawn_b", "bat", "marble_a", "marble_b", "hand", "cue")
MIN_VISIBLE = 0.35  # share of a piece's top face that must show for it to be labelled
PIECE_CLASSES = CLASSES[:5]


@dataclass(frozen=True)
class Box:
    """One labelled object in image pixels; ``visible`` is the uncovered share of a piece (1 for occluders)."""

    cls: str
    xyxy: tuple[float, float, float, float]
    visible: float = 1.0
    piece: str | None = None

    @property
    def centre_px(self) -> tuple[float, float]:
        return (self.xyxy[0] + self.xyxy[2]) / 2.0, (self.xyxy[1] + self.xyxy[3]) / 2.0


@dataclass(frozen=True)
class LabelledFrame:
    image: np.ndarray
    boxes: tuple[Box, ...]
    game: str
    seed: int
    index: int
    occluded: bool  # a hand or the cue is in the picture


def _class_of(kind: str, owner: str | None) -> str:
    return "bat" if kind == "bat" else f"{kind}_{owner.lower()}"


# ---------------------------------------------------------------------------------------------- scenes
def _place(rng: np.random.Generator, placed: list, r: float, bounds: tuple[float, float, float, float],
           touch: float, keep_out: Callable[[float, float], bool]) -> tuple[float, float] | None:
    x0, y0, x1, y1 = bounds
    for _ in range(60):
        if placed and rng.random() < touch:  # touching (or nearly) another piece: the hard case for blobs
            qx, qy, qr = placed[int(rng.integers(len(placed)))]
            a = rng.uniform(0, 2 * math.pi)
            d = qr + r + rng.uniform(0.0, 1.5)
            x, y = qx + d * math.cos(a), qy + d * math.sin(a)
        else:
            x, y = rng.uniform(x0 + r, x1 - r), rng.uniform(y0 + r, y1 - r)
        if not (x0 + r <= x <= x1 - r and y0 + r <= y <= y1 - r) or keep_out(x, y):
            continue
        if all(math.hypot(x - qx, y - qy) >= qr + r for qx, qy, qr in placed):
            return x, y
    return None


MOVING_SHARE = 0.12  # share of pawns and marbles moving (smeared by the exposure); the bat moves in 40 %


def random_scene(game: str, profile, rng: np.random.Generator, index: int = 0, t_s: float = 0.0,
                 moving_share: float = MOVING_SHARE):
    """A random layout (``SimFrame``) and its ``states_at(t)`` (moving pieces go straight at constant speed).
    ``moving_share`` other than the default draws other layouts from the same rng (training data only: the
    evaluation frames keep the default)."""
    from sim.frames import Occluder, PieceState, SimFrame

    spec = profile.spec
    g = spec.geometry
    pieces: list[tuple[str, str, str | None, float]] = []  # id, kind, owner, radius
    if spec.pockets_mm:  # a board: pawns and the bat, kept off the pockets
        h = spec.half_mm
        bounds = (-h, -h, h, h)
        pr = spec.piece_radii_mm["pawn"]
        for owner in "AB":
            for i in range(int(rng.integers(0, 9))):
                pieces.append((f"{owner}{i + 1}", "pawn", owner, pr))
        if rng.random() < 0.9:
            pieces.append(("bat", "bat", None, spec.piece_radii_mm["bat"]))
        pocket_r = spec.pocket_radius_mm
        keep_out = lambda x, y: math.hypot(abs(x) - h, abs(y) - h) < pocket_r  # noqa: E731
        touch = 0.35
    else:  # the field in view: marbles of several sizes, kept off the pit
        hx, hy = spec.bounds_mm
        bounds = (-hx + 10, -hy + 10, hx - 10, hy - 10)
        mr = spec.piece_radii_mm["marble"]
        for owner in "AB":
            for i in range(int(rng.integers(0, int(g.marbles_per_player) + 1))):
                r = rng.uniform(g.marble_min_mm, g.marble_max_mm) / 2 if rng.random() < 0.3 else mr
                pieces.append((f"{owner}{i + 1}", "marble", owner, r))
        pit = spec.pit_radius_mm
        keep_out = lambda x, y: math.hypot(x, y) < pit  # noqa: E731
        touch = 0.25
    placed: list[tuple[float, float, float]] = []
    states = []
    near_pit = spec.has_pit and rng.random() < 0.5  # marbles gathered round the pit
    for pid, kind, owner, r in pieces:
        b = bounds
        if near_pit and rng.random() < 0.7:
            b = (-250.0, -200.0, 250.0, 200.0)
        xy = _place(rng, placed, r, b, touch, keep_out)
        if xy is None:
            continue
        placed.append((xy[0], xy[1], r))
        moving = rng.random() < (max(0.4, moving_share) if kind == "bat" else moving_share)
        speed = rng.uniform(200.0, 4000.0) if moving else 0.0
        a = rng.uniform(0, 2 * math.pi)
        states.append((pid, kind, owner, r, xy, (speed * math.cos(a), speed * math.sin(a)), rng.uniform(0, 2 * math.pi)))
    occluders = []
    targets = [(s[4][0], s[4][1]) for s in states] or [(0.0, 0.0)]
    cue = "cue" in spec.occluders
    if rng.random() < (0.4 if cue else 0.5):  # a hand (a little rarer where the cue covers pieces too)
        tx, ty = targets[int(rng.integers(len(targets)))]
        a = rng.uniform(0, 2 * math.pi)
        d = rng.uniform(0, 70)
        occluders.append(Occluder("hand", tx + d * math.cos(a), ty + d * math.sin(a), rng.uniform(0, 2 * math.pi),
                                  rng.uniform(20.0, 60.0), 0.0, 0.0, 45.0 * rng.uniform(0.85, 1.15)))
    if cue and rng.random() < 0.45:
        tx, ty = targets[int(rng.integers(len(targets)))]
        a = rng.uniform(0, 2 * math.pi)
        back = rng.uniform(20, 150)
        occluders.append(Occluder("cue", tx - back * math.cos(a), ty - back * math.sin(a), a, rng.uniform(5.0, 25.0),
                                  1300.0, 12.0))
    occluders = tuple(occluders)

    def states_at(t: float, idx: int = index) -> SimFrame:
        dt = t - t_s
        out = tuple(PieceState(pid, kind, owner, xy[0] + v[0] * dt, xy[1] + v[1] * dt, 0.0, ang, r, True)
                    for pid, kind, owner, r, xy, v, ang in states)
        return SimFrame(idx, t, out, occluders)

    return states_at(t_s), states_at


# ---------------------------------------------------------------------------------------------- labels
def _occluder_polys_px(renderer, camera, occluders) -> list[np.ndarray]:
    """Image polygons (float32, N x 2) of everything that hides pieces: cue, hand, forearm."""
    from sim.render_occluders import ARM_LENGTH_R, HAND_RADIUS_MM, HAND_Z_MM

    polys = []
    for o in occluders:
        polys.append(camera.project(renderer.occluders.outline_mm(o)).astype(np.float32))
        if o.kind == "hand":
            r = o.radius_mm or HAND_RADIUS_MM
            z = o.z_mm if o.z_mm > 0 else HAND_Z_MM
            u = np.array([math.cos(o.direction_rad), math.sin(o.direction_rad)])
            n = np.array([-u[1], u[0]])
            c = np.array([o.x_mm, o.y_mm])
            arm = [c - u * 0.5 * r + n * 0.8 * r, c - u * ARM_LENGTH_R * r + n * 0.8 * r,
                   c - u * ARM_LENGTH_R * r - n * 0.8 * r, c - u * 0.5 * r - n * 0.8 * r]
            pts = np.column_stack([np.array(arm), np.full(4, z)])
            polys.append(camera.project(pts).astype(np.float32))
    return [cv2.convexHull(p.reshape(-1, 1, 2)) for p in polys]


_DISC = np.array([(0.0, 0.0)] + [(f * math.cos(a), f * math.sin(a)) for f in (0.45, 0.8)
                                   for a in np.linspace(0, 2 * math.pi, 12, endpoint=False)])
_RING = np.array([(math.cos(a), math.sin(a)) for a in np.linspace(0, 2 * math.pi, 24, endpoint=False)])


def label_frame(renderer, camera, profile, frame, states_at=None, exposure_s: float = 0.0) -> list[Box]:
    """Boxes (image px, clipped) of every visible piece and occluder in ``frame``."""
    from sim.render_geometry import piece_height_mm

    w, h = camera.width, camera.height
    polys = _occluder_polys_px(renderer, camera, frame.occluders)
    times = [frame.t_s] if states_at is None or exposure_s <= 0 else \
        [frame.t_s - exposure_s / 2, frame.t_s, frame.t_s + exposure_s / 2]
    at = {t: ({p.id: p for p in states_at(t).pieces} if t != frame.t_s else {p.id: p for p in frame.pieces}) for t in times}
    out = []
    for p in frame.pieces:
        if not p.visible or p.z_mm < -0.5:
            continue
        height = piece_height_mm(profile, p.kind)
        zs = (p.z_mm + height / 2.0 - p.radius_mm * 0.95, p.z_mm + height / 2.0 + p.radius_mm * 0.95, p.z_mm + height / 2) \
            if p.kind == "marble" else (p.z_mm, p.z_mm + height)
        pts = []
        for t in times:
            q = at[t].get(p.id, p)
            for z in zs:
                rr = p.radius_mm * (math.sqrt(max(0.0, 1 - ((z - (p.z_mm + height / 2)) / p.radius_mm) ** 2))
                                    if p.kind == "marble" else 1.0)
                pts.append(np.column_stack([q.x_mm + rr * _RING[:, 0], q.y_mm + rr * _RING[:, 1], np.full(len(_RING), z)]))
        px = camera.project(np.concatenate(pts))
        x0, y0 = px.min(0)
        x1, y1 = px.max(0)
        cx0, cy0, cx1, cy1 = max(x0, 0.0), max(y0, 0.0), min(x1, w), min(y1, h)
        if cx1 - cx0 <= 1 or cy1 - cy0 <= 1 or (cx1 - cx0) * (cy1 - cy0) < 0.5 * (x1 - x0) * (y1 - y0):
            continue
        top = p.z_mm + (height / 2 if p.kind == "marble" else height)
        face = camera.project(np.column_stack([p.x_mm + p.radius_mm * _DISC[:, 0], p.y_mm + p.radius_mm * _DISC[:, 1],
                                               np.full(len(_DISC), top)]))
        hidden = np.zeros(len(face), bool)
        for poly in polys:
            hidden |= np.array([cv2.pointPolygonTest(poly, (float(u), float(v)), False) >= 0 for u, v in face])
        out.append(Box(_class_of(p.kind, p.owner), (cx0, cy0, cx1, cy1), float(1.0 - hidden.mean()), p.id))
    for o in frame.occluders:
        px = camera.project(renderer.occluders.outline_mm(o))
        x0, y0 = np.maximum(px.min(0), 0.0)
        x1, y1 = np.minimum(px.max(0), [w, h])
        if x1 - x0 > 4 and y1 - y0 > 4:
            out.append(Box(o.kind, (float(x0), float(y0), float(x1), float(y1)), 1.0, None))
    return out


def make_renderer(game: str, seed: int, size: tuple[int, int] = (1280, 720), settings=None):
    """(profile, camera, renderer) for one domain-randomised look (``RenderSettings.randomised(seed)``)."""
    from calibration.profile import default_profile
    from sim.render import Renderer
    from sim.render_settings import RenderSettings, make_camera

    profile = default_profile(game)
    st = settings if settings is not None else RenderSettings.randomised(seed)
    camera = make_camera(profile, size[0], size[1], st)
    return profile, camera, Renderer(camera, profile, st)


def render_labelled(game: str, seed: int, n_frames: int, size: tuple[int, int] = (1280, 720),
                    settings=None, made=None, moving_share: float = MOVING_SHARE) -> Iterator[LabelledFrame]:
    """``n_frames`` random layouts drawn by one domain-randomised renderer (``make_renderer``; pass
    ``made`` to reuse one)."""
    profile, camera, renderer = made if made is not None else make_renderer(game, seed, size, settings)
    st = renderer.settings
    rng = np.random.default_rng([seed, 0x7A1])
    for i in range(n_frames):
        t = i * 1.0  # layouts one second apart: nothing carries over between them
        frame, states_at = random_scene(game, profile, rng, i, t, moving_share)
        blur = st.blur_samples > 1 or st.rolling_shutter_s > 0
        image = renderer.render(frame, states_at if blur else None)
        boxes = label_frame(renderer, camera, profile, frame, states_at if blur else None,
                            st.exposure_s if blur else 0.0)
        yield LabelledFrame(image, tuple(boxes), game, seed, i, bool(frame.occluders))


# ---------------------------------------------------------------------------------------------- export
def tiles(lf: LabelledFrame, tile_px: int, count: int, rng: np.random.Generator) -> list[tuple[np.ndarray, list[Box]]]:
    """``count`` square crops at full resolution (pieces keep their ~15-25 px): most centred near a labelled
    object, the rest anywhere. A box cut by the crop keeps the part inside if at least half of it is."""
    h, w = lf.image.shape[:2]
    t = min(tile_px, w, h)
    centres = [b.centre_px for b in lf.boxes if b.cls in PIECE_CLASSES or rng.random() < 0.3]
    out = []
    for k in range(count):
        if centres and k < count - 1:
            cx, cy = centres[int(rng.integers(len(centres)))]
            x0 = int(np.clip(cx - t / 2 + rng.uniform(-0.4, 0.4) * t, 0, w - t))
            y0 = int(np.clip(cy - t / 2 + rng.uniform(-0.4, 0.4) * t, 0, h - t))
        else:
            x0, y0 = int(rng.integers(0, w - t + 1)), int(rng.integers(0, h - t + 1))
        crop = lf.image[y0:y0 + t, x0:x0 + t]
        boxes = []
        for b in lf.boxes:
            a0, b0 = max(b.xyxy[0] - x0, 0), max(b.xyxy[1] - y0, 0)
            a1, b1 = min(b.xyxy[2] - x0, t), min(b.xyxy[3] - y0, t)
            if a1 - a0 <= 1 or b1 - b0 <= 1:
                continue
            full = (b.xyxy[2] - b.xyxy[0]) * (b.xyxy[3] - b.xyxy[1])
            if (a1 - a0) * (b1 - b0) < 0.5 * full and b.cls in PIECE_CLASSES:
                continue
            boxes.append(Box(b.cls, (a0, b0, a1, b1), b.visible, b.piece))
        out.append((crop, boxes))
    return out


def yolo_lines(boxes: Sequence[Box], width: int, height: int, min_visible: float = MIN_VISIBLE) -> list[str]:
    """YOLO label lines (class cx cy w h, normalised) for the boxes worth learning."""
    lines = []
    for b in boxes:
        if b.visible < min_visible:
            continue
        x0, y0, x1, y1 = b.xyxy
        lines.append(f"{CLASSES.index(b.cls)} {(x0 + x1) / 2 / width:.6f} {(y0 + y1) / 2 / height:.6f} "
                     f"{(x1 - x0) / width:.6f} {(y1 - y0) / height:.6f}")
    return lines
