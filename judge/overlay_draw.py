"""What the spectators' video shows on top of the camera image: tracks, zones, contacts.

The model is in image pixels (vision already knows where things are in the image); drawing
never touches the frame itself (frames are shared and read-only) and returns a new image.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["TrackMark", "ContactMark", "ZoneMark", "OverlayModel", "draw_overlay"]

# BGR colours: player A warm, player B cool, the bat white, contacts red, zones yellow
COLOURS = {"A": (0, 140, 255), "B": (255, 170, 0), None: (255, 255, 255)}
CONTACT = (40, 40, 255)
ZONE = (0, 220, 220)


@dataclass(frozen=True)
class TrackMark:
    piece: str
    x_px: float
    y_px: float
    radius_px: float = 12.0
    trail_px: tuple[tuple[float, float], ...] = ()


@dataclass(frozen=True)
class ContactMark:
    x_px: float
    y_px: float
    label: str = ""


@dataclass(frozen=True)
class ZoneMark:
    name: str
    polygon_px: tuple[tuple[float, float], ...]


@dataclass(frozen=True)
class OverlayModel:
    tracks: tuple[TrackMark, ...] = ()
    contacts: tuple[ContactMark, ...] = ()
    zones: tuple[ZoneMark, ...] = ()
    caption: str = ""


def _owner(piece: str):
    return piece[0] if piece[:1] in ("A", "B") else None


def draw_overlay(image: np.ndarray, model: OverlayModel | None) -> np.ndarray:
    """A copy of ``image`` with the model drawn on it (the input is never modified)."""
    import cv2

    out = np.array(image, copy=True)
    if model is None:
        return out
    scale = max(1.0, out.shape[1] / 1280.0)
    thick = max(1, int(round(2 * scale)))
    for zone in model.zones:
        pts = np.round(np.asarray(zone.polygon_px, np.float64)).astype(np.int32).reshape(-1, 1, 2)
        cv2.polylines(out, [pts], True, ZONE, thick, cv2.LINE_AA)
        x, y = pts[:, 0, 0].min(), pts[:, 0, 1].min()
        cv2.putText(out, zone.name, (int(x) + 4, int(y) + int(16 * scale)), cv2.FONT_HERSHEY_SIMPLEX,
                    0.5 * scale, ZONE, thick, cv2.LINE_AA)
    for track in model.tracks:
        colour = COLOURS[_owner(track.piece)]
        if len(track.trail_px) > 1:
            trail = np.round(np.asarray(track.trail_px, np.float64)).astype(np.int32).reshape(-1, 1, 2)
            cv2.polylines(out, [trail], False, colour, thick, cv2.LINE_AA)
        centre = (int(round(track.x_px)), int(round(track.y_px)))
        cv2.circle(out, centre, int(round(track.radius_px)), colour, thick, cv2.LINE_AA)
        cv2.putText(out, track.piece, (centre[0] + int(track.radius_px) + 2, centre[1] - 2),
                    cv2.FONT_HERSHEY_SIMPLEX, 0.45 * scale, colour, thick, cv2.LINE_AA)
    for contact in model.contacts:
        c = (int(round(contact.x_px)), int(round(contact.y_px)))
        r = int(round(8 * scale))
        cv2.line(out, (c[0] - r, c[1] - r), (c[0] + r, c[1] + r), CONTACT, thick + 1, cv2.LINE_AA)
        cv2.line(out, (c[0] - r, c[1] + r), (c[0] + r, c[1] - r), CONTACT, thick + 1, cv2.LINE_AA)
        if contact.label:
            cv2.putText(out, contact.label, (c[0] + r + 2, c[1] + r), cv2.FONT_HERSHEY_SIMPLEX, 0.45 * scale,
                        CONTACT, thick, cv2.LINE_AA)
    if model.caption:
        cv2.putText(out, model.caption, (int(10 * scale), out.shape[0] - int(12 * scale)), cv2.FONT_HERSHEY_SIMPLEX,
                    0.7 * scale, (255, 255, 255), thick + 1, cv2.LINE_AA)
    return out
