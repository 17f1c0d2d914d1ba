"""The light of each frame against the empty board, for the classical detector's difference stage.

Two things a fixed difference threshold gets wrong:

* *The light at each place.* A piece differs from the board by a share of the light falling there, so in a
  dim room (or a lamp's dark corner) a dark piece differs by less than the threshold tuned for the nominal
  light; the sensor's noise does not shrink with the light. The threshold per coarse pixel is therefore
  the nominal ``cap`` (what the fixed threshold was) times the light there: the empty board's brightness
  (its brightest channel) against the board's nominal brightness (``for_board``: the profile's board
  colour, which says what the board's own shade is, a light beech or dark earth); never above the cap,
  and at least ``noise_k`` times the frame's own noise level (the median difference over the board, which
  is mostly empty) plus a grey level, so noise never makes specks.
* *A codec's errors at the board's edges.* A webcam's H.264 or MJPEG stream smears and rings where the
  picture has sharp edges (a pocket's rim, a marker, a line), by a different amount on every frame, while a
  flat board comes through almost whole: at 2 Mbit/s the difference there was 2-4x the flat board's (90th
  percentile 17-21 grey levels against a threshold of 16-19, so one edge pixel in five lit and a pocket's rim
  fitted as a pawn). Where the empty board has a strong gradient the threshold is therefore also at least
  ``noise_k`` times the noise measured on such edges alone; on a clean camera that noise is the flat
  board's, and nothing changes.
* *Exposure and white balance that drift.* A camera's auto exposure or white balance scales every channel
  of the whole picture; against a fixed empty board the whole surface becomes one blob. ``gain`` is the
  ratio, per channel, of the frame to the empty board over the places where nothing was found on the last
  frame (the mean of the middle half of the ratios: what a piece or a shadow still covers there is a
  minority), and the detector compares the frame with the empty board in this light (``ClassicalDetector.
  _normalise_light``). A gain within 2 % of 1 is left alone (a renderer's or camera's flicker).

``LitFrame`` is the frame in the empty board's light, made only where and when a stage reads it: a frame
whose pieces all kept their fit is never divided whole (at 1280x720 that division cost more than the rest
of the detector on a still board). Each pixel is ``cv2.multiply(frame, 1 / gain)`` exactly, through a
256-entry table per channel that ``cv2.multiply`` itself made.
"""
from __future__ import annotations

import cv2
import numpy as np

__all__ = ["LightNorm", "LitFrame", "scale_table", "brightest"]

_GROW = np.ones((3, 3), np.uint8)


class LightNorm:
    """``gain(coarse, empty_coarse, quiet)`` then ``threshold(strength, empty_coarse, inside)`` per frame."""

    def __init__(self, cap: float = 22.0, fraction: float = 0.11, noise_k: float = 3.0, noise_add: float = 2.0,
                 noise_rate: float = 0.2, min_gain_change: float = 0.02, step: int = 3, edge_gradient: float = 100.0,
                 edge_cap: float = 1.0):
        self.cap, self.fraction = float(cap), float(fraction)
        self.noise_k, self.noise_add, self.noise_rate = float(noise_k), float(noise_add), float(noise_rate)
        self.min_gain_change, self.step = float(min_gain_change), int(step)
        # an edge: a Sobel gradient of the empty board's grey over ``edge_gradient``; its threshold at most
        # ``edge_cap`` times the cap (a piece over an edge still differs by more); ``edge_gradient`` 0: no edge floor
        self.edge_gradient, self.edge_cap = float(edge_gradient), float(edge_cap)
        self.noise: float | None = None  # median difference of the board (grey levels), followed over frames
        self.edge_noise: float | None = None  # the same on the empty board's edges alone
        self.floor = 0.0  # the last frame's noise floor of the threshold (grey levels)
        self.last_gain = np.ones(3)
        self._levels: tuple[float | None, np.ndarray] = (None, np.zeros(0, np.float32))
        self._inside: np.ndarray | None = None  # the board mask the gain's grid below was made for
        self._inner_grid: tuple[np.ndarray, int] = (np.zeros((0, 0), bool), 0)

    @classmethod
    def for_board(cls, cap: float, nominal_board) -> "LightNorm":
        """The threshold at the cap where the board is as bright as ``nominal_board`` (its colour under the
        nominal light, any channel order), below it in proportion; the default share without one."""
        if nominal_board is None or max(nominal_board) <= 0:
            return cls(cap=cap)
        return cls(cap=cap, fraction=float(cap) / float(max(nominal_board)))

    def gain(self, coarse: np.ndarray, empty: np.ndarray, quiet: np.ndarray | None, inside: np.ndarray) -> np.ndarray | None:
        """Per-channel (B, G, R) gain of this frame against the empty board over the ``quiet`` coarse pixels
        (where nothing was seen on the last frame; the whole board ``inside`` when that is under a third
        of it: a frame that was all one blob must not keep the gain from being measured); None when it
        is within ``min_gain_change`` of 1 (nothing to correct)."""
        s = self.step
        inner, n_inner = self._inner(inside)
        sub = inner if quiet is None else quiet[::s, ::s] > 0
        if sub.sum() < n_inner / 3:
            sub = inner
        # per channel, not over a 3-long last axis (numpy's reduction there is many times slower); compared
        # as the uint8 they are, made float32 only where a ratio is taken
        f = [c[sub] for c in cv2.split(np.ascontiguousarray(coarse[::s, ::s]))]
        e = [c[sub] for c in cv2.split(np.ascontiguousarray(empty[::s, ::s]))]
        # ratios of dark or clipped pixels are noise
        lit = (np.minimum(np.minimum(e[0], e[1]), e[2]) >= 8) & (np.maximum(np.maximum(f[0], f[1]), f[2]) < 250)
        if lit.sum() < 50:
            return None
        g = np.array([_mid_mean(fc[lit].astype(np.float32) / ec[lit].astype(np.float32)) for fc, ec in zip(f, e)],
                     np.float32)
        self.last_gain = g
        if np.abs(g - 1.0).max() < self.min_gain_change:
            return None
        return g

    def _inner(self, inside: np.ndarray) -> tuple[np.ndarray, int]:
        """The board's pixels on the gain's sampling grid, and how many: worked out once per board mask."""
        if self._inside is not inside:
            s = self.step
            inner = inside[::s, ::s] > 0
            self._inside, self._inner_grid = inside, (inner, int(inner.sum()))
        return self._inner_grid

    def threshold(self, strength: np.ndarray, empty: np.ndarray, inside: np.ndarray) -> np.ndarray:
        """Difference threshold per coarse pixel (uint8, as ``strength``): a share of the empty board's light
        there, between the noise floor and the nominal cap."""
        hist = cv2.calcHist([strength], [0], inside, [256], [0, 256]).ravel()
        total = hist.sum()
        if total > 0:
            median = float(np.searchsorted(np.cumsum(hist), 0.5 * total))
            self.noise = self._follow(self.noise, median)
        floor = min(self.noise_k * (self.noise or 0.0) + self.noise_add, self.cap)
        self.floor = floor
        # one table over the 256 grey levels of the board's brightest channel, applied with cv2.LUT
        if self._levels[0] != self.fraction:  # the share of each grey level, made once per fraction
            self._levels = (self.fraction, np.arange(256, dtype=np.float32) * np.float32(self.fraction))
        table = np.clip(self._levels[1], floor, self.cap).astype(np.uint8)
        out = cv2.LUT(brightest(empty), table)
        edges, near = self._edge_map(empty, inside) if self.edge_gradient > 0 else (None, None)
        if edges is not None:
            self.edge_noise = self._follow(self.edge_noise, float(np.median(strength[edges])))
            edge_floor = min(self.noise_k * self.edge_noise + self.noise_add, self.edge_cap * self.cap)
            if edge_floor > floor:
                np.maximum(out, np.uint8(edge_floor), out=out, where=near)
        return out

    def _follow(self, level: float | None, median: float) -> float:
        """A noise level followed over frames (the first frame's median, then ``noise_rate`` of each change)."""
        return median if level is None else level + self.noise_rate * (median - level)

    def _edge_map(self, empty: np.ndarray, inside: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None]:
        """(the empty board's edge pixels on the board, the same grown by one pixel) or (None, None) when
        there are too few to measure. Made on every frame (70 us on the coarse board): the empty board is
        refreshed and its light corrected as the match goes."""
        grey = cv2.cvtColor(empty, cv2.COLOR_BGR2GRAY).astype(np.float32)
        grad = cv2.magnitude(cv2.Sobel(grey, cv2.CV_32F, 1, 0), cv2.Sobel(grey, cv2.CV_32F, 0, 1))
        edges = (grad >= self.edge_gradient) & (inside > 0)
        if int(edges.sum()) < 50:
            return None, None
        return edges, cv2.dilate(edges.astype(np.uint8), _GROW) > 0


def brightest(image: np.ndarray) -> np.ndarray:
    """Per pixel the brightest of the B, G, R channels (uint8): ``cv2.max`` of the split channels' values,
    taken on the channels in place (half the time of splitting them first)."""
    return np.maximum(np.maximum(image[..., 0], image[..., 1]), image[..., 2])


def _mid_mean(ratios: np.ndarray) -> float:
    """The mean of the middle half of the values: as robust as the median to the places a piece or a
    shadow still covers, and not stepped like the median of ratios of whole grey levels."""
    n = len(ratios)
    lo, hi = n // 4, n - n // 4
    part = np.partition(ratios, (lo, hi - 1))
    return float(part[lo:hi].mean())


def scale_table(factors) -> np.ndarray:
    """The 256 x 1 x 3 ``cv2.LUT`` table of ``cv2.multiply(image, (*factors, 0))`` for a uint8 BGR image:
    each grey level of each channel as the multiply gives it (elementwise: the same value wherever the
    pixel is), applied at a fraction of the multiply's cost."""
    return cv2.multiply(LitFrame._VALUES, tuple(float(f) for f in factors) + (0.0,)).reshape(256, 1, 3)


class LitFrame:
    """A frame (uint8 BGR) divided by a per-channel ``gain`` (None: as it is), computed on first use.
    ``image``: the whole frame so; ``lit[y0:y1, x0:x1]`` (and ``shape``, as an array's): a window of it,
    without the whole frame, so the stages that read a box (``vision.blobs.peak_seeds``, ``vision.streak``,
    ``vision.rim``) take it as they take an array."""

    _VALUES = np.repeat(np.arange(256, dtype=np.uint8)[None, :, None], 3, axis=2)  # 1 x 256 x 3

    def __init__(self, raw: np.ndarray, gain: np.ndarray | None):
        self.raw = raw
        self.corrected = gain is not None
        self._image = None if self.corrected else raw
        self._table = None
        if self.corrected:
            self._table = scale_table(tuple(float(1.0 / g) for g in gain))

    @property
    def image(self) -> np.ndarray:
        if self._image is None:
            self._image = cv2.LUT(self.raw, self._table)
        return self._image

    @property
    def shape(self) -> tuple[int, ...]:
        return self.raw.shape

    def __getitem__(self, window) -> np.ndarray:
        if self._image is not None:
            return self._image[window]
        return cv2.LUT(self.raw[window], self._table)
