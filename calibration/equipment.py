"""Equipment checks from the calibrated image: marble, pawn and bat diameters (and their holes), the pit.

A piece is measured on a small top-down patch (8 px/mm) cut around where it lies. Its area is counted with
sub-pixel weights - every pixel counts by how far its grey level lies between the background and the
piece - so the diameter is right to a fraction of a camera pixel. Sizes are of the piece's outline on the
plane: a 14 mm marble seen from 1.5 m reads ~0.1 mm large (parallax), below what matters here.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import cv2
import numpy as np

from .errors import EquipmentError
from .plane import PlaneMap, Rectifier
from .profile import Profile, profile_from_dict

__all__ = ["DiscMeasurement", "measure_disc", "check_marble", "check_pit", "updated_profile"]


@dataclass(frozen=True)
class DiscMeasurement:
    centre_mm: tuple[float, float]
    diameter_mm: float
    hole_mm: float | None  # diameter of a central hole (pawn, bat), None if there is none


def _soft_area(weight: np.ndarray, mask: np.ndarray, band_px: int) -> float:
    k = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * band_px + 1, 2 * band_px + 1))
    core = cv2.erode(mask, k)
    band = (cv2.dilate(mask, k) > 0) & (core == 0)
    return float(np.count_nonzero(core) + weight[band].sum())


def measure_disc(image: np.ndarray, plane: PlaneMap, near_mm, search_radius_mm: float = 30.0,
                 px_per_mm: float = 8.0, min_hole_mm: float = 2.0) -> DiscMeasurement:
    """Diameter (and hole) of the disc-shaped thing nearest ``near_mm`` within ``search_radius_mm``.
    The ring of the search patch must show bare background."""
    x, y = (float(v) for v in np.asarray(near_mm, float).ravel()[:2])
    r = float(search_radius_mm)
    rect = Rectifier(plane, px_per_mm, (x - r, y - r, x + r, y + r))
    patch = rect(image)
    gray = (patch if patch.ndim == 2 else cv2.cvtColor(patch, cv2.COLOR_BGR2GRAY)).astype(np.float32)
    h, w = gray.shape
    yy, xx = np.mgrid[0:h, 0:w]
    rr = np.hypot(xx - (w - 1) / 2, yy - (h - 1) / 2)
    ring = rr > 0.9 * min(w, h) / 2
    bg = float(np.median(gray[ring]))
    diff = np.abs(gray - bg)
    noise = float(np.median(np.abs(gray[ring] - bg))) * 1.4826
    peak = float(np.percentile(diff[rr < 0.9 * min(w, h) / 2], 99))
    if peak < max(20.0, 6 * noise):
        raise EquipmentError(f"no piece found within {r:.0f} mm of ({x:.0f}, {y:.0f}) mm")
    mask = (diff > peak / 2).astype(np.uint8)
    n, labels, stats, cents = cv2.connectedComponentsWithStats(mask)
    if n < 2:
        raise EquipmentError(f"no piece found within {r:.0f} mm of ({x:.0f}, {y:.0f}) mm")
    centre_px = np.array([(w - 1) / 2, (h - 1) / 2])
    big = [i for i in range(1, n) if stats[i, cv2.CC_STAT_AREA] >= 0.25 * stats[1:, cv2.CC_STAT_AREA].max()]
    best = min(big, key=lambda i: np.linalg.norm(cents[i] - centre_px))
    blob = (labels == best).astype(np.uint8)
    bx, by, bw, bh = stats[best, :4]
    if bx == 0 or by == 0 or bx + bw >= w or by + bh >= h:
        raise EquipmentError(f"the piece near ({x:.0f}, {y:.0f}) mm is cut by the search patch: widen search_radius_mm")
    contours, _ = cv2.findContours(blob, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    filled = np.zeros_like(blob)
    cv2.drawContours(filled, contours, -1, 1, -1)
    inside = filled.astype(bool)
    level = float(np.median(diff[blob.astype(bool)]))
    weight = np.clip(diff / max(level, 1e-6), 0.0, 1.0)
    band = max(1, int(round(px_per_mm * 0.5)))
    outer_area = _soft_area(weight, filled, band)
    hole_px = (inside & ~blob.astype(bool)).astype(np.uint8)
    hole_mm = None
    if np.count_nonzero(hole_px):
        hole_area = _soft_area(1.0 - weight, hole_px, band)
        d_hole = 2 * np.sqrt(hole_area / np.pi) / px_per_mm
        if d_hole >= min_hole_mm:
            hole_mm = float(d_hole)
    m = cv2.moments(filled, binaryImage=True)
    c_mm = rect.to_board_mm([[m["m10"] / m["m00"], m["m01"] / m["m00"]]])[0]
    return DiscMeasurement((float(c_mm[0]), float(c_mm[1])), float(2 * np.sqrt(outer_area / np.pi) / px_per_mm), hole_mm)


def check_marble(measurement: DiscMeasurement, profile: Profile) -> DiscMeasurement:
    """Refuse a marble outside the profile's ``marble_min_mm``..``marble_max_mm`` (rules: 10.0-16.5 mm)."""
    lo, hi = profile["marble_min_mm"], profile["marble_max_mm"]
    if not lo <= measurement.diameter_mm <= hi:
        raise EquipmentError(f"marble at ({measurement.centre_mm[0]:.0f}, {measurement.centre_mm[1]:.0f}) mm measures "
                             f"{measurement.diameter_mm:.1f} mm: allowed {lo:.1f}-{hi:.1f} mm")
    return measurement


def check_pit(measurement: DiscMeasurement, profile: Profile, tolerance_mm: float = 3.0) -> DiscMeasurement:
    """Refuse a pit outside the 50-120 mm the rules allow or not matching the profile within ``tolerance_mm``."""
    d = measurement.diameter_mm
    if not 50.0 <= d <= 120.0:
        raise EquipmentError(f"the pit measures {d:.0f} mm across: the rules allow 50-120 mm")
    if abs(d - profile["pit_diameter_mm"]) > tolerance_mm:
        raise EquipmentError(f"the pit measures {d:.0f} mm but the profile says {profile['pit_diameter_mm']:.0f} mm: "
                             f"update the profile (updated_profile) or check the pit")
    return measurement


def updated_profile(profile: Profile, tolerance_mm: float = 0.5, **measured_mm: float) -> tuple[Profile, list[str]]:
    """The profile with measured sizes (``pawn_diameter_mm=31.6, pawn_hole_mm=8.1, bat_diameter_mm=...``)
    that differ from it by more than ``tolerance_mm``, validated, plus one line per change for the user."""
    data = profile.to_dict()
    changes = []
    for key, value in measured_mm.items():
        if key not in data["geometry"]:
            raise EquipmentError(f"profile {profile.name!r} has no geometry.{key}")
        old = float(data["geometry"][key])
        if abs(float(value) - old) > tolerance_mm:
            new = round(float(value), 1)
            data["geometry"][key] = new
            changes.append(f"{key}: {old:g} -> {new:g} mm (measured)")
    if not changes:
        return profile, []
    data["name"] = profile.name if profile.name.endswith("-measured") else f"{profile.name}-measured"
    return profile_from_dict(json.loads(json.dumps(data)), data["name"]), changes
