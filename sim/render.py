"""The synthetic overhead camera: simulator frames in, camera images (BGR uint8) out.

One frame = paint pieces and occluders on a top-down canvas over the pre-rendered background, warp the
canvas to the image with one precomputed ``cv2.remap`` (lens distortion, tilt), then apply the lighting
map (lamps, ambient light: ``sim.render_light``), the flicker gain, the white-balance / exposure drift,
sensor noise and last the camera's compression (``sim.render_codec``). Speed comes from doing per frame
only what changed:

* pieces at rest live in a cached *static layer*; only moving pieces and occluders are repainted, in
  small canvas regions that are recomposed from the background in the canonical order (shadows, bodies by
  height, occluder shadows, occluders), so a frame looks the same whichever pieces happen to be cached;
* motion blur averages ``blur_samples`` sub-frame states across ``exposure_s`` (centred on the frame's
  ``t_s``) inside those regions only; rolling shutter renders image row bands at their own readout times.

Determinism: output depends only on (camera, profile, settings, the frame and its sub-frame states); with
H.264 compression also on the frames the renderer filmed before (one stream, as a camera's).
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Callable, Iterable, Sequence

import cv2
import numpy as np

from .render_codec import Codec
from .render_geometry import CanvasGeometry
from .render_light import drift_gain, gain_map
from .render_occluders import OccluderPainter
from .render_pieces import PiecePainter
from .render_scene import background
from .render_settings import RenderSettings

__all__ = ["Renderer", "render_clip", "interpolating_states"]

Rect = tuple[int, int, int, int]
NOISE_PAD = 16


def _overlap(a: Rect, b: Rect) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _union(a: Rect, b: Rect) -> Rect:
    return min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3])


def _merge(rects: list[Rect]) -> list[Rect]:
    rects = list(rects)
    merged = True
    while merged:
        merged = False
        out: list[Rect] = []
        for r in rects:
            for i, o in enumerate(out):
                if _overlap(r, o):
                    out[i] = _union(r, o)
                    merged = True
                    break
            else:
                out.append(r)
        rects = out
    return rects


class Renderer:
    """Settings in ``__init__``, one method: ``render(frame, states_at=None) -> image``."""

    def __init__(self, camera, profile, settings: RenderSettings = RenderSettings()):
        self.camera, self.profile, self.settings = camera, profile, settings
        self.geom = CanvasGeometry.for_camera(camera, settings.oversample)
        self.background = background(self.geom, profile, settings)
        self._map1, self._map2, board = self.geom.remap_maps(camera)
        self.pieces = PiecePainter(self.geom, profile, settings)
        self.occluders = OccluderPainter(self.geom, settings)
        self._gain = None if settings.plain else gain_map(settings, camera, board, profile)
        self._codec = Codec(settings, (camera.width, camera.height))
        self._noise = self._noise_banks() if settings.noise_sigma > 0 and not settings.plain else None
        self._layer: dict[str, object] = {}  # id -> state painted in the static layer
        self._layer_box: dict[str, Rect] = {}
        self._rest: dict[str, tuple[object, int]] = {}
        self._static = self.background.copy()
        self._work = self.background.copy()
        self._dirty: list[Rect] = []  # canvas regions of _work that differ from _static
        self._static_img = self._remap_full(self._static)
        self._img = self._static_img.copy()
        self._img_dirty: list[Rect] = []  # image regions of _img that differ from _static_img

    @property
    def readout_s(self) -> float:
        """The rolling shutter's top-to-bottom readout (0: global shutter), as the camera's spec would say."""
        return self.settings.rolling_shutter_s

    # ------------------------------------------------------------------ per clip
    def _noise_banks(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """Two banks of seeded Gaussian noise, split into positive and negative parts for saturating uint8
        adds; each frame reads them at a random offset."""
        st, cam = self.settings, self.camera
        rng = np.random.default_rng([st.seed, 3])
        banks = []
        for _ in range(2):
            n = rng.normal(0.0, st.noise_sigma, (cam.height + NOISE_PAD, cam.width + NOISE_PAD, 3)).astype(np.float32)
            banks.append((np.clip(n + 0.5, 0, 255).astype(np.uint8), np.clip(-n + 0.5, 0, 255).astype(np.uint8)))
        return banks

    # ------------------------------------------------------------------ per frame
    def band_times(self, t_s: float) -> list[list[float]]:
        """Sub-frame instants per image row band: bands read out across ``rolling_shutter_s`` (the middle
        row at ``t_s``), each exposed ``exposure_s`` around its readout with ``blur_samples`` samples."""
        st = self.settings
        k = st.rolling_bands if st.rolling_shutter_s > 0 else 1
        n = st.blur_samples
        out = []
        for b in range(k):
            tb = t_s + (st.rolling_shutter_s * ((b + 0.5) / k - 0.5) if k > 1 else 0.0)
            out.append([tb + (st.exposure_s * ((i + 0.5) / n - 0.5) if n > 1 else 0.0) for i in range(n)])
        return out

    def render(self, frame, states_at: Callable[[float], object] | None = None) -> np.ndarray:
        """The camera image of ``frame`` (a ``sim.frames.SimFrame``). ``states_at(t_s) -> SimFrame`` supplies
        sub-frame states for motion blur and rolling shutter; without it the frame is rendered sharp."""
        times = self.band_times(frame.t_s)
        if states_at is None or (len(times) == 1 and len(times[0]) == 1):
            samples = [[frame] * len(tb) for tb in times]
        else:
            samples = [[states_at(t) for t in tb] for tb in times]
        self._update_layer(frame, samples)
        dynamic = self._dynamic_ids(frame, samples)
        rects = self._regions(dynamic, samples)
        for x0, y0, x1, y1 in self._dirty:
            self._work[y0:y1, x0:x1] = self._static[y0:y1, x0:x1]
        for x0, y0, x1, y1 in self._img_dirty:
            self._img[y0:y1, x0:x1] = self._static_img[y0:y1, x0:x1]
        seen = [self._image_rect(c) for c in rects]
        img_rects = _merge([r for r in seen if r is not None])
        self._dirty, self._img_dirty = rects, img_rects
        h = self.camera.height
        k = len(samples)
        for b, band in enumerate(samples):
            r0, r1 = (b * h) // k, ((b + 1) * h) // k
            for rect, im in zip(rects, seen):
                if im is not None and im[1] < r1 and im[3] > r0:  # rows of this band can see the region
                    x0, y0, x1, y1 = rect
                    self._work[y0:y1, x0:x1] = self._composite(rect, band, dynamic)
            for x0, y0, x1, y1 in img_rects:  # only the pixels that can see a changed canvas region
                y0, y1 = max(y0, r0), min(y1, r1)
                if y1 > y0:
                    cv2.remap(self._work, self._map1[y0:y1, x0:x1], self._map2[y0:y1, x0:x1], cv2.INTER_LINEAR,
                              dst=self._img[y0:y1, x0:x1], borderMode=cv2.BORDER_REPLICATE)
        return self._sensor(self._img, frame)

    def _remap_full(self, canvas: np.ndarray) -> np.ndarray:
        return cv2.remap(canvas, self._map1, self._map2, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)

    def _image_rect(self, rect: Rect) -> Rect | None:
        """Image pixels whose bilinear samples can fall inside the canvas region ``rect``."""
        x0, y0, x1, y1 = rect
        geom = self.geom
        e = np.linspace(0.0, 1.0, 9)
        cu = np.concatenate([x0 - 2 + e * (x1 - x0 + 4), np.full(9, x1 + 2.0), x0 - 2 + e * (x1 - x0 + 4), np.full(9, x0 - 2.0)])
        cv = np.concatenate([np.full(9, y0 - 2.0), y0 - 2 + e * (y1 - y0 + 4), np.full(9, y1 + 2.0), y0 - 2 + e * (y1 - y0 + 4)])
        board = np.stack([geom.x0_mm + cu / geom.ppm, geom.y1_mm - cv / geom.ppm], 1)
        px = self.camera.project(board)
        w, h = self.camera.width, self.camera.height
        a0, b0 = max(int(np.floor(px[:, 0].min())) - 2, 0), max(int(np.floor(px[:, 1].min())) - 2, 0)
        a1, b1 = min(int(np.ceil(px[:, 0].max())) + 3, w), min(int(np.ceil(px[:, 1].max())) + 3, h)
        return (a0, b0, a1, b1) if a1 > a0 and b1 > b0 else None

    def _sensor(self, img: np.ndarray, frame) -> np.ndarray:
        """Light, the camera's drift, sensor noise, then the encoder (``sim.render_light``, ``render_codec``)."""
        st = self.settings
        if self._gain is None and self._noise is None:
            return self._codec(img.copy())
        rng = np.random.default_rng([st.seed, 11, int(frame.index)])
        if self._gain is not None:
            e = st.exposure_s
            x = math.pi * st.flicker_hz * e
            smear = abs(math.sin(x) / x) if x > 1e-9 else 1.0  # flicker averaged over the exposure
            g = 1.0 + st.flicker * smear * math.sin(2 * math.pi * st.flicker_hz * frame.t_s) + st.flicker_jitter * float(rng.normal())
            img = cv2.multiply(img, self._gain, scale=g / 128.0)
            drift = drift_gain(st, frame.t_s)
            if drift is not None:
                img = cv2.multiply(img, (*drift, 0.0))
        if self._noise is not None:
            pos, neg = self._noise[int(rng.integers(len(self._noise)))]
            dy, dx = (int(v) for v in rng.integers(0, NOISE_PAD, 2))
            h, w = img.shape[:2]
            img = cv2.subtract(cv2.add(img, pos[dy:dy + h, dx:dx + w]), neg[dy:dy + h, dx:dx + w])
        return self._codec(img)

    # ------------------------------------------------------------------ static layer
    def _update_layer(self, frame, samples) -> None:
        """Move pieces that stayed put for two frames into the cached static layer, and take out any that
        moved or vanished; repaint the layer when its content changed."""
        unique = {id(f): f for band in samples for f in band if f is not frame}
        by_id = [{q.id: q for q in f.pieces} for f in unique.values()]
        changed = False
        present = set()
        for p in frame.pieces:
            present.add(p.id)
            stable = all(m.get(p.id) == p for m in by_id)
            if not stable or not p.visible:
                self._rest.pop(p.id, None)
                if p.id in self._layer:
                    del self._layer[p.id]
                    changed = True
                continue
            if self._layer.get(p.id) == p:
                continue
            if p.id in self._layer:
                del self._layer[p.id]
                changed = True
            prev, count = self._rest.get(p.id, (None, 0))
            count = count + 1 if prev == p else 1
            self._rest[p.id] = (p, count)
            if count >= 2:
                self._layer[p.id] = p
                changed = True
        for pid in [pid for pid in self._layer if pid not in present]:
            del self._layer[pid]
            changed = True
        if changed:
            self._layer_box = {pid: self.pieces.bbox(p) for pid, p in self._layer.items()}
            self._static = self.background.copy()
            self._draw_pieces(self._static, 0, 0, list(self._layer.values()))
            self._work = self._static.copy()
            self._dirty = []
            self._static_img = self._remap_full(self._static)
            self._img = self._static_img.copy()
            self._img_dirty = []

    def _dynamic_ids(self, frame, samples) -> list[str]:
        ids = []
        for p in frame.pieces:
            if p.id not in self._layer:
                ids.append(p.id)
        for band in samples:  # pieces that only appear in a sub-frame sample
            for f in band:
                for p in f.pieces:
                    if p.id not in self._layer and p.id not in ids:
                        ids.append(p.id)
        return ids

    def _regions(self, dynamic: Sequence[str], samples) -> list[Rect]:
        rects: list[Rect] = []
        wanted = set(dynamic)
        for band in samples:
            for f in band:
                for p in f.pieces:
                    if p.id in wanted and p.visible:
                        rects.append(self.pieces.bbox(p))
                if self.settings.occluders:
                    rects.extend(self.occluders.bbox(o) for o in f.occluders)
        w, h = self.geom.width, self.geom.height
        out = []
        for x0, y0, x1, y1 in _merge(rects):
            x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
            if x1 > x0 and y1 > y0:
                out.append((x0, y0, x1, y1))
        return _merge(out)

    def _draw_pieces(self, target: np.ndarray, ox: int, oy: int, pieces) -> None:
        pieces = sorted((p for p in pieces if p.visible), key=self.pieces.z_order)
        for p in pieces:
            self.pieces.draw_shadow(target, ox, oy, p)
        for p in pieces:
            self.pieces.draw_body(target, ox, oy, p)

    def _composite(self, rect: Rect, band, dynamic: Sequence[str]) -> np.ndarray:
        """The canvas inside ``rect`` for one row band: background + everything touching it, averaged over
        the band's sub-frame samples."""
        x0, y0, x1, y1 = rect
        still = [p for pid, p in self._layer.items() if _overlap(self._layer_box[pid], rect)]
        wanted = set(dynamic)
        acc = None
        for f in band:
            buf = self.background[y0:y1, x0:x1].copy()
            moving = [p for p in f.pieces if p.id in wanted and p.visible]
            self._draw_pieces(buf, x0, y0, still + moving)
            if self.settings.occluders and f.occluders:
                occs = sorted(f.occluders, key=lambda o: o.kind != "hand")  # cue over hand
                for o in occs:
                    self.occluders.draw_shadow(buf, x0, y0, o)
                for o in occs:
                    self.occluders.draw_body(buf, x0, y0, o)
            if len(band) == 1:
                return buf
            if acc is None:
                acc = buf.astype(np.float32)
            else:
                acc += buf
        return np.clip(acc * (1.0 / len(band)) + 0.5, 0, 255).astype(np.uint8)


def interpolating_states(frames: Sequence) -> Callable[[float], object]:
    """``states_at`` for a plain list of frames: pieces move linearly between neighbouring frames (used for
    motion blur when the physics clip is not at hand); occluders are taken from the nearest frame."""
    from .frames import PieceState, SimFrame

    times = np.array([f.t_s for f in frames], float)

    def states_at(t_s: float):
        i = int(np.clip(np.searchsorted(times, t_s, side="right") - 1, 0, len(frames) - 1))
        j = min(i + 1, len(frames) - 1)
        a, b = frames[i], frames[j]
        span = times[j] - times[i]
        f = 0.0 if span <= 0 else float(np.clip((t_s - times[i]) / span, 0.0, 1.0))
        nearest = a if f < 0.5 else b
        if f == 0.0:
            return SimFrame(a.index, float(t_s), a.pieces, a.occluders)
        later = {p.id: p for p in b.pieces}
        out = []
        for p in a.pieces:
            q = later.get(p.id)
            if q is None or not (p.visible and q.visible):
                out.append(p)
                continue
            out.append(PieceState(p.id, p.kind, p.owner, p.x_mm + f * (q.x_mm - p.x_mm), p.y_mm + f * (q.y_mm - p.y_mm),
                                  p.z_mm + f * (q.z_mm - p.z_mm), p.angle_rad + f * (q.angle_rad - p.angle_rad),
                                  p.radius_mm, True))
        return SimFrame(a.index, float(t_s), tuple(out), nearest.occluders)

    return states_at


def render_clip(frames: Iterable, camera, profile, settings: RenderSettings, out_path: str | Path, *,
                fps: float | None = None, states_at: Callable[[float], object] | None = None,
                png_dir: str | Path | None = None) -> int:
    """Render ``frames`` (``SimFrame``s) to an MP4 at ``out_path`` (and optionally every frame as PNG into
    ``png_dir``); returns the number of frames. ``states_at`` (e.g. ``Clip.states_at``) gives sub-frame
    states for motion blur; without it neighbouring frames are interpolated. ``fps`` defaults to the
    frames' own spacing."""
    from .video import VideoWriter, write_png

    frames = list(frames)
    if not frames:
        raise ValueError("render_clip: no frames to render")
    if fps is None:
        fps = 1.0 / (frames[1].t_s - frames[0].t_s) if len(frames) > 1 and frames[1].t_s > frames[0].t_s else 30.0
    if states_at is None and (settings.blur_samples > 1 or settings.rolling_shutter_s > 0):
        states_at = interpolating_states(frames)
    renderer = Renderer(camera, profile, settings)
    png = Path(png_dir) if png_dir is not None else None
    if png is not None:
        png.mkdir(parents=True, exist_ok=True)
    with VideoWriter(out_path, fps, (camera.width, camera.height)) as video:
        for f in frames:
            img = renderer.render(f, states_at)
            video.write(img)
            if png is not None:
                write_png(png / f"frame_{f.index:06d}.png", img)
    return len(frames)
