"""Seeds for the pieces of one blob of the classical detector's coarse difference mask that holds several.

Touching pieces, or pieces under a hand, make one blob: ``peak_seeds`` finds each piece as a peak of the
distance to the board in the full-resolution foreground of the blob's box, and ``on_blob`` keeps the seeds
that lie on the blob itself (the box is padded, so it can show a neighbouring blob's piece). ``label_type``
picks 16-bit blob labels where they cannot overflow: OpenCV labels and measures blobs three times faster so.
"""
from __future__ import annotations

import math

import cv2
import numpy as np

from .rim import foreground_strength

__all__ = ["peak_seeds", "on_blob", "label_type", "grown_specks"]


def peak_seeds(image: np.ndarray, background: np.ndarray, box, scale: int, origin: tuple[int, int], r_px: float,
               widest_px: float = math.inf) -> np.ndarray:
    """Seeds (coarse px) for the pieces of the blob in ``box`` (coarse px; the coarse grid is ``scale``
    image pixels from ``origin``): peaks of the distance to the board in the full-resolution foreground
    (shadows excluded, holes closed); touching discs are separate peaks. ``r_px``: the smallest piece's
    radius in image pixels; a peak wider than ``widest_px`` is not a piece (a palm)."""
    x, y, w, h = box
    q = scale
    x0, y0 = origin
    pad = 2
    xa, ya = x0 + max(x - pad, 0) * q, y0 + max(y - pad, 0) * q
    xb, yb = min(x0 + (x + w + pad) * q, image.shape[1]), min(y0 + (y + h + pad) * q, image.shape[0])
    f = foreground_strength(image[ya:yb, xa:xb].astype(np.float32), background[ya:yb, xa:xb].astype(np.float32))
    f = cv2.blur(f, (3, 3))
    strong = f[f > 0.08]
    if strong.size == 0:
        return np.zeros((0, 2), np.float32)
    fg = (f > max(0.5 * float(_median(strong)), 0.08)).astype(np.uint8)
    hole = int(2 * math.ceil(0.35 * r_px) + 1)
    fg = cv2.morphologyEx(fg, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (hole, hole)))
    dist = cv2.distanceTransform(fg, cv2.DIST_L2, 5)
    k = int(2 * math.ceil(0.6 * r_px) + 1)
    peaks = ((dist >= cv2.dilate(dist, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))) - 1e-3)
             & (dist > 0.6 * r_px) & (dist < widest_px)).astype(np.uint8)
    n, labels = cv2.connectedComponents(peaks, connectivity=8, ltype=label_type(peaks.shape))
    if n < 2:
        return np.zeros((0, 2), np.float32)
    full = _centroids(labels, peaks, n)[1:] + (xa, ya)
    return (((full + 0.5 - (x0, y0)) / q) - 0.5).astype(np.float32)


def label_type(shape) -> int:
    """The label type for ``cv2.connectedComponents*`` on an image of ``shape``: 16-bit when the labels cannot
    overflow it (8-connected blobs lie at least 2 px apart). Same labels and statistics as 32-bit, and
    OpenCV computes them about three times faster."""
    h, w = shape[:2]
    return cv2.CV_16U if ((w + 1) // 2) * ((h + 1) // 2) < 2 ** 16 else cv2.CV_32S


def on_blob(labels: np.ndarray, i: int, centres: np.ndarray, reach: int = 1) -> np.ndarray:
    """The seeds (coarse px) that lie on blob ``i`` (within ``reach`` coarse pixels): ``peak_seeds`` looks at
    a padded box, so a peak there can be a neighbouring blob's piece, which that blob seeds itself."""
    if len(centres) == 0:
        return centres
    h, w = labels.shape
    keep = []
    for c in centres:
        u, v = int(round(float(c[0]))), int(round(float(c[1])))
        patch = labels[max(v - reach, 0):min(v + reach + 1, h), max(u - reach, 0):min(u + reach + 1, w)]
        keep.append(bool((patch == i).any()))
    return centres[np.asarray(keep, bool)]


def grown_specks(labels: np.ndarray, areas: np.ndarray, speck_cpx: float, low: np.ndarray,
                 min_cpx: float, max_cpx: float, label: int) -> np.ndarray | None:
    """Specks grown by hysteresis: the pixels of ``low`` (a mask at a lower difference threshold) joined to
    a blob of ``labels`` smaller than ``speck_cpx`` (``areas``: each label's, the background's first), where
    the grown region holds no larger blob and is between ``min_cpx`` and ``max_cpx``; None where there is none.
    A piece of the ground's own colour, smeared by its roll and a codec, differs from the empty ground by
    more than the threshold only in a few scattered pixels (specks, skipped as noise) but by half of it over
    its whole disc; noise differs by that much in scattered pixels only (#16: bench/strata.py, *everything*,
    Cvrnkana pit-entry: a marble rolling in from out of view was never seen)."""
    speck = areas < speck_cpx
    speck[0] = False
    if not speck.any():
        return None
    big = ~speck
    big[0] = False
    n, grown, stats, _ = cv2.connectedComponentsWithStats(low, connectivity=8, ltype=label)
    held = np.bincount(grown[big[labels]], minlength=n)
    seeded = np.bincount(grown[speck[labels]], minlength=n)
    size = stats[:, cv2.CC_STAT_AREA]
    keep = (seeded > 0) & (held == 0) & (size >= min_cpx) & (size <= max_cpx)
    keep[0] = False
    if not keep.any():
        return None
    return keep[grown]


def _median(a: np.ndarray):
    """``np.median`` of a 1-D array (the same value) without its generic overhead."""
    h = a.size // 2
    if a.size % 2:
        return np.partition(a, h)[h]
    part = np.partition(a, (h - 1, h))
    return (part[h - 1] + part[h]) / 2


def _centroids(labels: np.ndarray, mask: np.ndarray, n: int) -> np.ndarray:
    """Centroid of each label (n, 2), as ``cv2.connectedComponentsWithStats`` gives it (integer sums over
    the pixels, divided once), from the few set pixels only: its statistics visit every pixel."""
    pts = cv2.findNonZero(mask).reshape(-1, 2)
    lab = labels[pts[:, 1], pts[:, 0]]
    area = np.bincount(lab, minlength=n).astype(float)
    area[0] = 1.0  # the background: no pixel listed, not used
    return np.stack([np.bincount(lab, pts[:, 0], n), np.bincount(lab, pts[:, 1], n)], 1) / area[:, None]
