"""Equipment sizes from the set-up pictures, each said as a line: what was measured, and what to fix.

A piece is measured (``calibration.equipment.measure_disc``) on the difference in colour between the set-up
picture and the empty board: the board's texture cancels, and so does a piece's shadow, which darkens the
board without changing its colour (measured on the brightness, a shadow reads as part of the piece). Only
pieces standing clear of the others are measured; touching pawns would read as one. The pit is measured on
the empty board, ray by ray from outside in: on the lamp's side the lit wall reads inside the rim, so the
upper quartile of the rays' radii is taken, which lies on the shaded side where the rim shows sharply.
"""
from __future__ import annotations

import numpy as np

__all__ = ["check_equipment", "colour_difference", "measure_pit_mm"]

#: how far a pawn or bat may measure from the profile's size before the set-up says so
PIECE_TOLERANCE_MM = 1.0


def colour_difference(pieces: np.ndarray, empty: np.ndarray) -> np.ndarray:
    """Grey picture (uint8): how much each pixel's colour (its chromaticity, not its brightness) changed, plus
    how much brighter it got; 0 where the board is bare or only shaded."""
    a, b = pieces.astype(np.float32), empty.astype(np.float32)
    ca, cb = a / (a.sum(axis=2, keepdims=True) + 1.0), b / (b.sum(axis=2, keepdims=True) + 1.0)
    chroma = np.linalg.norm(ca - cb, axis=2) * 800.0
    brighter = np.clip(a.mean(axis=2) - b.mean(axis=2), 0.0, None) * 2.0
    return np.clip(np.maximum(chroma, brighter), 0, 255).astype(np.uint8)


def measure_pit_mm(empty: np.ndarray, plane, profile, rays: int = 90, px_per_mm: float = 8.0) -> float:
    """The pit's diameter on the empty-board picture (see the module's note)."""
    import cv2

    from calibration.plane import Rectifier

    r_mm = 90.0  # the largest pit the rules allow (120 mm across) with 30 mm of board round it
    rect = Rectifier(plane, px_per_mm, (-r_mm, -r_mm, r_mm, r_mm))
    patch = rect(empty)
    grey = cv2.GaussianBlur(cv2.cvtColor(patch, cv2.COLOR_BGR2GRAY).astype(np.float32), (0, 0), px_per_mm * 0.7)
    h, w = grey.shape
    radii_px = np.arange(r_mm * px_per_mm * 0.98, 0, -1.0)
    found = []
    for angle in np.linspace(0, 2 * np.pi, rays, endpoint=False):
        xs = ((w - 1) / 2 + radii_px * np.cos(angle)).astype(np.float32)[None]
        ys = ((h - 1) / 2 + radii_px * np.sin(angle)).astype(np.float32)[None]
        ray = cv2.remap(grey, xs, ys, cv2.INTER_LINEAR)[0]
        board, floor = float(np.median(ray[: len(ray) // 5])), float(np.percentile(ray, 5))
        inside = np.nonzero(ray < board - 0.5 * (board - floor))[0]
        if len(inside) and board - floor > 20:
            found.append(radii_px[inside[0]] / px_per_mm)
    if len(found) < rays // 2:
        raise ValueError("no pit edge found round the field's centre")
    return 2.0 * float(np.percentile(found, 75))


def check_equipment(calibration, pieces: np.ndarray, empty: np.ndarray, layout: dict) -> tuple[list[str], list[str]]:
    """(lines measured and in order, lines saying what to fix) for the pieces at ``layout`` and the pit."""
    from calibration.equipment import check_marble, check_pit, measure_disc
    from calibration.errors import EquipmentError

    profile, plane = calibration.profile, calibration.plane
    ok, fix = [], []
    diff = colour_difference(pieces, empty)
    centres = {k: np.asarray(v, float) for k, v in layout.items()}
    for piece, at in sorted(centres.items()):
        kind = profile.spec.kind_of(piece)[0]
        nominal = float(profile[f"{kind}_diameter_mm"])
        search = max(15.0, 1.5 * nominal)
        nearest = min((float(np.linalg.norm(at - c)) for k, c in centres.items() if k != piece), default=1e9)
        if nearest < search + nominal:
            continue  # touching or close pieces would read as one
        try:
            disc = measure_disc(diff, plane, at, search_radius_mm=search)
            if kind == "marble":
                check_marble(disc, profile)
        except EquipmentError as exc:
            said = str(exc).removeprefix("marble ") if str(exc).startswith("marble at") else f": {exc}"
            fix.append(f"fix: {kind} {piece} {said}" + (": use marbles the rules allow" if "allowed" in said else ""))
            continue
        if kind != "marble" and abs(disc.diameter_mm - nominal) > PIECE_TOLERANCE_MM:
            fix.append(f"fix: {kind} {piece} measures {disc.diameter_mm:.1f} mm but the profile says {nominal:g} mm: "
                       f"check the {kind}, or give a profile with your set's size ({kind}_diameter_mm)")
            continue
        ok.append(f"{kind} {piece} {disc.diameter_mm:.1f} mm")
    if profile.spec.has_pit:
        try:
            diameter = measure_pit_mm(empty, plane, profile)
        except ValueError as exc:
            fix.append(f"fix: pit: {exc}: check the camera sees the pit and the light falls on it")
        else:
            from calibration.equipment import DiscMeasurement

            try:
                check_pit(DiscMeasurement((0.0, 0.0), diameter, None), profile)
                ok.append(f"pit {diameter:.0f} mm")
            except EquipmentError as exc:
                fix.append(f"fix: {exc}")
    return ok, fix
