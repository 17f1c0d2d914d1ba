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


def foreground_strength(frame: np.ndarray, empty: np.ndarray) -> np.ndarray:
    """Per-pixel foreground strength (..., 3 float32 BGR in, ... out): the chromaticity change against the
    empty board (blind to shadows and to a piece's own shading, so a side wall counts as much as the top
    face), plus a brightening or a darkening far beyond what light or a cast shadow does (grey pieces)."""
    s_f = frame.sum(-1) + 3.0
    s_e = empty.sum(-1) + 3.0
    chroma = np.abs(frame * (s_e / s_f)[..., None] - empty).sum(-1) / s_e
    gain = s_f / s_e
    return chroma + 0.5 * np.maximum(gain - 1.6, 0.0) + np.maximum(0.3 - gain, 0.0)


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
        """Frame and empty-board colours along every ray: (P, K, M, 3) float32 each, and ray radii (P, M) mm."""
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
        f = cv2.remap(image, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        e = cv2.remap(empty, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        return f.reshape(p, k, m, 3).astype(np.float32), e.reshape(p, k, m, 3).astype(np.float32), radii

    # ------------------------------------------------------------------ the fit
    def fit(self, image: np.ndarray, empty: np.ndarray, seeds: list[RimSeed]) -> list[RimFit | None]:
        if not seeds:
            return []
        par = self.parallax
        seen = np.array([s.seen_mm for s in seeds], float)
        r = np.array([s.radius_mm for s in seeds], float)
        kt = np.array([par.scale(s.top_z_mm) for s in seeds])
        wall = np.array([s.has_wall for s in seeds], bool)
        r_top = r * kt
        f, e, radii = self.sample(image, empty, seen, r_top)
        strength = foreground_strength(f, e)  # (P, K, M)
        ring = strength[:, :, self.ring].reshape(len(seeds), -1)
        level = np.median(ring, axis=1)
        fr, er = f[:, :, self.ring], e[:, :, self.ring]
        s_f = fr.sum(-1) + 3.0
        chroma = np.median((fr / s_f[..., None]).reshape(len(seeds), -1, 3), axis=1)
        bright = np.median(np.log(s_f / (er.sum(-1) + 3.0)).reshape(len(seeds), -1), axis=1)
        colour = np.concatenate([chroma, bright[:, None]], 1)
        thr = 0.5 * level
        fg = strength >= thr[:, None, None]
        falls = fg[:, :, :-1] & ~fg[:, :, 1:]
        has = falls.any(axis=2)
        i = np.argmax(falls, axis=2)  # first fall from piece to board along each ray
        s0 = np.take_along_axis(strength, i[..., None], 2)[..., 0]
        s1 = np.take_along_axis(strength, (i + 1)[..., None], 2)[..., 0]
        frac = np.clip((s0 - thr[:, None]) / np.maximum(s0 - s1, 1e-6), 0.0, 1.0)
        step = radii[:, 1] - radii[:, 0]
        rho = np.take_along_axis(radii, i, 1) + frac * step[:, None]  # (P, K) mm from the seed
        # plausible outline radii: the top face's, give or take how far the seed may be off and the wall
        ok = has & (rho > 0.55 * r_top[:, None]) & (rho < 1.55 * r_top[:, None]) & (level[:, None] > 0.02)
        pts = seen[:, None, :] + self.dirs[None] * rho[..., None]  # (P, K, 2) seen-plane mm
        centre, seen_c, bias, rms = self._solve(pts, ok, seen, r, kt, wall)
        out: list[RimFit | None] = []
        for j in range(len(seeds)):
            share = float(ok[j].mean())
            if not np.isfinite(centre[j]).all() or ok[j].sum() < 6:
                out.append(None)
                continue
            out.append(RimFit((float(centre[j, 0]), float(centre[j, 1])), (float(seen_c[j, 0]), float(seen_c[j, 1])),
                              float(bias[j]), float(rms[j]), share, colour[j], float(level[j])))
        return out

    def _solve(self, pts, ok, seen, r, kt, wall):
        """Robust Gauss-Newton for every piece at once: unknowns base x, y and the edge bias."""
        par = self.parallax
        n = np.asarray(par.centre_mm[:2])
        base = n + (seen - n) / kt[:, None]
        bias = np.zeros(len(r))
        w_ok = ok.astype(float)
        sig = self.scale_mm
        rms = np.full(len(r), np.nan)
        for it in range(self.iterations):
            ct = n + (base - n) * kt[:, None]  # top face, seen
            dt = pts - ct[:, None, :]
            lt = np.hypot(dt[..., 0], dt[..., 1])
            et = lt - (r * kt)[:, None] - bias[:, None]
            db = pts - base[:, None, :]
            lb = np.hypot(db[..., 0], db[..., 1])
            eb = lb - r[:, None] - bias[:, None]
            use_b = wall[:, None] & (eb < et)
            res = np.where(use_b, eb, et)
            ut = dt / np.maximum(lt, 1e-9)[..., None]
            ub = db / np.maximum(lb, 1e-9)[..., None]
            gxy = np.where(use_b[..., None], -ub, -ut * kt[:, None, None])
            s = sig if it else 3.0 * sig
            w = w_ok / (1.0 + (res / s) ** 2)
            # Normal equations of the weighted least squares, one batched product for all pieces:
            # Jacobian columns (d/dx, d/dy, d/dbias) = (gx, gy, -1).
            jac = np.concatenate([gxy, -np.ones(res.shape + (1,))], axis=2)
            wj = jac * w[..., None]
            a = np.matmul(wj.transpose(0, 2, 1), jac) + 1e-6 * np.eye(3)
            b = np.matmul(wj.transpose(0, 2, 1), res[..., None])
            step = np.linalg.solve(a, -b)[..., 0]
            step = np.clip(step, -0.3 * r[:, None], 0.3 * r[:, None])
            base = base + step[:, :2]
            bias = bias + step[:, 2]
            rms = np.sqrt((w * res ** 2).sum(1) / np.maximum(w.sum(1), 1e-9))
        seen_c = n + (base - n) * kt[:, None]
        return base, seen_c, bias, rms
