"""Sub-pixel piece centres from the rim, for all candidate pieces of a frame at once.

For each seed, rays are cast in the board plane (``PlaneMap.to_board_mm`` coordinates) from the seed outwards
and sampled in the camera image and in the empty-board image with one ``cv2.remap`` for every ray of every
piece (a local affine map per piece, from the calibration, turns ray millimetres into image pixels; over a
piece's few centimetres its error is far below a hundredth of a pixel). Per sample a *shadow-blind*
foreground strength is computed: the chromaticity change against the empty board, plus any brightening or a
darkening deeper than a cast shadow. A shadow only scales the board's colour, so it hardly registers; a
piece's side wall (its own colour, darker) does.

Each ray gives the first place where the strength falls below half the piece's own level (measured on its
top face), interpolated between samples. The outline the camera sees is the union of the top face (at the
piece's height, so larger and pushed away from the camera's nadir) and the bottom disc (the side wall);
:class:`RimFitter` fits exactly that shape by robust Gauss-Newton over (base centre x, y, edge bias), so the
centre it returns is the piece's base on the board, not where its top face appears.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from .parallax import Parallax

__all__ = ["RimSeed", "RimFit", "RimFitter", "foreground_strength"]


@dataclass(frozen=True)
class RimSeed:
    """Where to look (seen-plane mm, roughly the middle of the blob) and what shape to expect."""

    seen_mm: tuple[float, float]
    radius_mm: float  # the piece's true radius
    top_z_mm: float  # height of the outline the camera sees (disc top face, marble centre)
    has_wall: bool = True  # a disc shows its side wall below the top face; a marble does not


@dataclass(frozen=True)
class RimFit:
    centre_mm: tuple[float, float]  # base centre on the board
    seen_mm: tuple[float, float]  # centre of the outline the camera sees (top face), seen plane
    bias_mm: float  # outline found this much outside the nominal radius (blur, threshold)
    rms_mm: float  # robust residual of the rim points
    rays: float  # share of rays that gave a rim point
    colour: np.ndarray  # top face: median chromaticity (B, G, R shares) and median log brightness vs the board
    level: float  # median foreground strength on the top face
    raised: bool = False  # the outline was found at the edge threshold raised over a noisy board (``fit``)


def foreground_strength(frame: np.ndarray, empty: np.ndarray) -> np.ndarray:
    """Per-pixel foreground strength (..., 3 float32 BGR in, ... out): the chromaticity change against the
    empty board (blind to shadows and to a piece's own shading, so a side wall counts as much as the top
    face), plus a brightening or a darkening far beyond what light or a cast shadow does (grey pieces).

    Computed on contiguous channel planes, in place: the same float32 operations in the same order as
    ``chroma = |frame * (s_e / s_f) - empty|.sum(-1) / s_e`` etc., so the same values, but without numpy's
    slow reduction over a 3-long last axis (it ran ten times slower on a hand's box)."""
    shape = frame.shape[:-1]
    if frame.size == 0:
        return np.zeros(shape, np.float32)
    dtype = np.result_type(frame, empty, np.float32)
    f0, f1, f2 = cv2.split(np.ascontiguousarray(frame, dtype).reshape(-1, shape[-1], 3))
    e0, e1, e2 = cv2.split(np.ascontiguousarray(empty, dtype).reshape(-1, shape[-1], 3))
    s_f = f0 + f1
    s_f += f2
    s_f += 3.0
    s_e = e0 + e1
    s_e += e2
    s_e += 3.0
    k = s_e / s_f
    for f, e in ((f0, e0), (f1, e1), (f2, e2)):
        f *= k
        f -= e
        np.abs(f, out=f)
    chroma = f0
    chroma += f1
    chroma += f2
    chroma /= s_e
    gain = s_f
    gain /= s_e
    bright = gain - 1.6
    np.maximum(bright, 0.0, out=bright)
    bright *= 0.5
    dark = 0.3 - gain
    np.maximum(dark, 0.0, out=dark)
    chroma += bright
    chroma += dark
    return chroma.reshape(shape)


def _remap_window(image, mx: np.ndarray, my: np.ndarray) -> np.ndarray:
    """``cv2.remap(image, mx, my)`` (bilinear, border replicated) reading only the window of ``image`` the
    maps cover, two pixels around. The same samples: a whole pixel taken off a float32 map coordinate
    leaves its fraction, as remap quantises it, unchanged, and the window reaches the image's own edge
    wherever a sample lies beyond it (the replicated border is the image's)."""
    if isinstance(image, np.ndarray):
        return cv2.remap(image, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    h, w = image.shape[:2]
    lo_x, hi_x, lo_y, hi_y = float(mx.min()), float(mx.max()), float(my.min()), float(my.max())
    xa = ya = 0
    xb, yb = w, h
    if all(math.isfinite(v) for v in (lo_x, hi_x, lo_y, hi_y)):
        xa, ya = min(max(int(math.floor(lo_x)) - 2, 0), w - 1), min(max(int(math.floor(lo_y)) - 2, 0), h - 1)
        xb, yb = max(min(int(math.ceil(hi_x)) + 3, w), xa + 1), max(min(int(math.ceil(hi_y)) + 3, h), ya + 1)
    window = image[ya:yb, xa:xb]
    if xa or ya:
        mx, my = mx - np.float32(xa), my - np.float32(ya)
    return cv2.remap(window, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


class RimFitter:
    """Settings in ``__init__``; ``fit(image, empty, seeds) -> list[RimFit | None]``."""

    def __init__(self, plane, parallax: Parallax | None = None, n_rays: int = 28, n_samples: int = 26,
                 inner: float = 0.45, outer: float = 1.7, ring: tuple[float, float] = (0.5, 0.8),
                 scale_mm: float = 0.35, iterations: int = 5):
        self.plane = plane
        self.parallax = parallax or Parallax.from_plane(plane)
        ang = (np.arange(n_rays) + 0.5) * (2 * math.pi / n_rays)
        self.dirs = np.stack([np.cos(ang), np.sin(ang)], 1)  # (K, 2) board-plane unit vectors
        self.rho = np.linspace(inner, outer, n_samples)  # in units of the seen top radius
        self.ring = (self.rho >= ring[0]) & (self.rho <= ring[1])
        self.outer = self.rho >= outer - 0.2  # beyond any rim the fit accepts (1.55 top radii): the board
        self.scale_mm, self.iterations = scale_mm, iterations

    # ------------------------------------------------------------------ sampling
    def _affine(self, seen: np.ndarray, d_mm: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Image pixel of each seed (P,2) and the local Jacobian d px / d mm (P,2,2) by central differences."""
        p = len(seen)
        off = np.array([[0, 0], [1, 0], [-1, 0], [0, 1], [0, -1]], float)
        pts = (seen[:, None, :] + off[None] * d_mm[:, None, None]).reshape(-1, 2)
        px = self.plane.to_image_px(pts).reshape(p, 5, 2)
        jac = np.stack([(px[:, 1] - px[:, 2]), (px[:, 3] - px[:, 4])], 2) / (2 * d_mm[:, None, None])
        return px[:, 0], jac

    def sample(self, image: np.ndarray, empty: np.ndarray, seen: np.ndarray, r_seen: np.ndarray):
        """Frame and empty-board colours along every ray: (P, K, M, 3) float32 each, and ray radii (P, M) mm.
        ``image`` may be anything sliced as an array is (``vision.light_norm.LitFrame``): only the window
        the rays cover is read from it."""
        p = len(seen)
        o_px, jac = self._affine(seen, r_seen)
        radii = r_seen[:, None] * self.rho[None, :]  # (P, M)
        # image pixel offset per mm along each ray: J @ dir, (P, K) for x and y
        ax = jac[:, 0, 0, None] * self.dirs[None, :, 0] + jac[:, 0, 1, None] * self.dirs[None, :, 1]
        ay = jac[:, 1, 0, None] * self.dirs[None, :, 0] + jac[:, 1, 1, None] * self.dirs[None, :, 1]
        rr = radii[:, None, :].astype(np.float32)
        k, m = self.dirs.shape[0], len(self.rho)
        mx = (o_px[:, 0, None, None].astype(np.float32) + ax[..., None].astype(np.float32) * rr).reshape(p * k, m)
        my = (o_px[:, 1, None, None].astype(np.float32) + ay[..., None].astype(np.float32) * rr).reshape(p * k, m)
        f = _remap_window(image, mx, my)
        e = cv2.remap(empty, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        return f.reshape(p, k, m, 3).astype(np.float32), e.reshape(p, k, m, 3).astype(np.float32), radii

    # ------------------------------------------------------------------ the fit
    def fit(self, image: np.ndarray, empty: np.ndarray, seeds: list[RimSeed]) -> list[RimFit | None]:
        if not seeds:
            return []
        par = self.parallax
        p = len(seeds)
        seen = np.array([s.seen_mm for s in seeds], float)
        r = np.array([s.radius_mm for s in seeds], float)
        kt = np.array([par.scale(s.top_z_mm) for s in seeds])
        wall = np.array([s.has_wall for s in seeds], bool)
        r_top = r * kt
        f, e, radii = self.sample(image, empty, seen, r_top)
        strength = foreground_strength(f, e)  # (P, K, M)
        ring = strength[:, :, self.ring].reshape(p, -1)
        level = _median_rows(ring)
        fr, er = f[:, :, self.ring], e[:, :, self.ring]
        s_f = fr[..., 0] + fr[..., 1] + fr[..., 2] + 3.0
        chroma = _median_rows((fr / s_f[..., None]).reshape(p, -1, 3))
        bright = _median_rows(np.log(s_f / (er[..., 0] + er[..., 1] + er[..., 2] + 3.0)).reshape(p, -1))
        colour = np.concatenate([chroma, bright[:, None]], 1)
        # the edge at half the top face's level; and that raised by what the board beyond the rim shows above a
        # fifth of that level (the lower quarter of the rays' outer ends, a neighbour on some of them): a piece of
        # nearly the board's colour under noise or a codec's smear has a level not far above the board's, and
        # half of it alone lit the board all round (bench/strata.py, everything: a cream pawn on a pale green
        # board, level 0.024), while a faint bat under 2 Mbit/s lost rays to the raised one (compressed-2mbit:
        # 0.6 -> 0.45 of them, never found). Each piece keeps the threshold that finds more of its outline.
        half = 0.5 * level
        ok, rho = self._edges(strength, half, radii, r_top, level)
        better = np.zeros(p, bool)
        short = np.flatnonzero(ok.sum(axis=1) < ok.shape[1])  # (every ray found its edge: nothing to gain)
        if len(short):
            outer = strength[short][:, :, self.outer].reshape(len(short), -1)
            q = outer.shape[1] // 4
            board = np.partition(outer, q, axis=1)[:, q]
            lv = level[short]
            raised = half[short] + 0.5 * np.clip(board - 0.2 * lv, 0.0, 0.8 * lv)
            up = raised > half[short]
            again = short[up]
            ok_r, rho_r = self._edges(strength[again], raised[up], radii[again], r_top[again], level[again])
            gain = ok_r.sum(axis=1) > ok[again].sum(axis=1)
            better[again[gain]] = True
            ok[again[gain]], rho[again[gain]] = ok_r[gain], rho_r[gain]
        n_ok = ok.sum(axis=1)
        if not (n_ok >= 6).any():  # no outline anywhere (a shadow's blob): nothing to fit
            return [None] * p
        pts = seen[:, None, :] + self.dirs[None] * rho[..., None]  # (P, K, 2) seen-plane mm
        centre, seen_c, bias, rms = self._solve(pts, ok, seen, r, kt, wall)
        usable = np.isfinite(centre).all(axis=1) & (n_ok >= 6)
        share = n_ok / ok.shape[1]
        out: list[RimFit | None] = []
        for j in range(p):
            if not usable[j]:
                out.append(None)
                continue
            out.append(RimFit((float(centre[j, 0]), float(centre[j, 1])), (float(seen_c[j, 0]), float(seen_c[j, 1])),
                              float(bias[j]), float(rms[j]), float(share[j]), colour[j], float(level[j]), bool(better[j])))
        return out

    @staticmethod
    def _edges(strength, thr, radii, r_top, level):
        """Per ray the first fall from piece to board at threshold ``thr`` (P,), sub-sample: whether it gives a
        plausible rim point (P, K) and its radius from the seed (P, K) mm."""
        p = len(thr)
        fg = strength >= thr[:, None, None]
        falls = fg[:, :, :-1] & ~fg[:, :, 1:]
        has = falls.any(axis=2)
        i = np.argmax(falls, axis=2)  # first fall from piece to board along each ray
        flat = strength.reshape(-1, strength.shape[2])
        rows = np.arange(flat.shape[0])
        s0 = flat[rows, i.ravel()].reshape(i.shape)
        s1 = flat[rows, i.ravel() + 1].reshape(i.shape)
        frac = np.clip((s0 - thr[:, None]) / np.maximum(s0 - s1, 1e-6), 0.0, 1.0)
        step = radii[:, 1] - radii[:, 0]
        rho = radii[np.arange(p)[:, None], i] + frac * step[:, None]  # (P, K) mm from the seed
        # plausible outline radii: the top face's, give or take how far the seed may be off and the wall
        ok = has & (rho > 0.55 * r_top[:, None]) & (rho < 1.55 * r_top[:, None]) & (level[:, None] > 0.02)
        return ok, rho

    def _solve(self, pts, ok, seen, r, kt, wall):
        """Robust Gauss-Newton for every piece at once: unknowns base x, y and the edge bias.

        Written for few numpy calls per iteration (a frame's fits are one to a few pieces, so the cost is
        per call, not per element): what does not change between iterations is computed once."""
        par = self.parallax
        n = np.asarray(par.centre_mm[:2])
        kt1 = kt[:, None]
        base = n + (seen - n) / kt1
        bias = np.zeros(len(r))
        w_ok = ok.astype(float)
        sig = self.scale_mm
        r_top = (r * kt)[:, None]
        r_base = r[:, None]
        wall1 = wall[:, None]
        ridge = 1e-6 * np.eye(3)
        lo, hi = -0.3 * r[:, None], 0.3 * r[:, None]
        # Jacobian columns (d/dx, d/dy, d/dbias) = (gx, gy, -1): the last column never changes
        jac = np.empty(ok.shape + (3,))
        jac[..., 2] = -1.0
        gxy = jac[..., :2]
        w = res = None
        for it in range(self.iterations):
            ct = n + (base - n) * kt1  # top face, seen
            dt = pts - ct[:, None, :]
            lt = np.hypot(dt[..., 0], dt[..., 1])
            et = lt - r_top - bias[:, None]
            db = pts - base[:, None, :]
            lb = np.hypot(db[..., 0], db[..., 1])
            eb = lb - r_base - bias[:, None]
            use_b = wall1 & (eb < et)
            res = np.where(use_b, eb, et)
            # gradient: -(unit vector to the point), times the top face's scale where the top face is nearer
            # (x * -k equals -x * k to the bit, so the rays are picked first and scaled once)
            unit = np.where(use_b[..., None], db, dt) / np.maximum(np.where(use_b, lb, lt), 1e-9)[..., None]
            np.multiply(unit, np.where(use_b, -1.0, -kt1)[..., None], out=gxy)
            s = sig if it else 3.0 * sig
            w = w_ok / (1.0 + (res / s) ** 2)
            # normal equations of the weighted least squares, one batched product for all pieces
            wjt = (jac * w[..., None]).transpose(0, 2, 1)
            a = np.matmul(wjt, jac) + ridge
            b = np.matmul(wjt, res[..., None])
            step = np.linalg.solve(a, -b)[..., 0]
            step = np.minimum(np.maximum(step, lo), hi)
            base = base + step[:, :2]
            bias = bias + step[:, 2]
        if w is None:
            rms = np.full(len(r), np.nan)
        else:  # the robust residual at the last iteration's linearisation point
            rms = np.sqrt((w * res ** 2).sum(1) / np.maximum(w.sum(1), 1e-9))
        seen_c = n + (base - n) * kt1
        return base, seen_c, bias, rms


def _median_rows(a: np.ndarray) -> np.ndarray:
    """``np.median(a, axis=1)`` (same values: the same order statistics, averaged the same way) without
    its generic overhead, which outweighed the work on a frame's few pieces. No NaN can occur here."""
    m = a.shape[1]
    h = m // 2
    if m % 2:
        return np.partition(a, h, axis=1)[:, h]
    part = np.partition(a, (h - 1, h), axis=1)
    return (part[:, h - 1] + part[:, h]) / 2
