"""Drawing a judged video: zones, tracks with trails, contact marks and the last call, in image pixels.

Board millimetres become pixels only through the calibration's ``PlaneMap`` (``to_image_px``); the
drawing itself is ``judge.overlay_draw`` (the spectators' overlay) plus Pillow text for the calls.
"""
from __future__ import annotations

import math
from typing import Iterable, Mapping, Sequence

import numpy as np

from rules.game import PLAYERS

from .evidence import KeyInstant, radius_of
from .i18n import N_, _
from .overlay_draw import ContactMark, OverlayModel, TrackMark, ZoneMark, draw_overlay
from .textdraw import to_ascii

__all__ = ["Board", "call_lines", "read_frames"]

#: the stroke and first-contact words a caption shows, for the catalogue (translated where drawn)
WORDS = (N_("direct"), N_("ricochet"), N_("own"), N_("opponent"), N_("both"), N_("none"))
MAX_CROP_HALF_PX = 1000  # an evidence crop's half side at most, whatever the scale says


def _circle(cx: float, cy: float, r: float, n: int = 48) -> np.ndarray:
    a = np.linspace(0, 2 * math.pi, n, endpoint=False)
    return np.column_stack([cx + r * np.cos(a), cy + r * np.sin(a)])


class Board:
    """What is drawn where for one calibration: zones in pixels (once), pieces and contacts per frame."""

    def __init__(self, calibration):
        self.cal = calibration
        self.plane, self.profile = calibration.plane, calibration.profile
        self.zones = tuple(self._zones())

    def px(self, mm) -> np.ndarray:
        return np.asarray(self.plane.to_image_px(np.asarray(mm, float).reshape(-1, 2)), float)

    def px_per_mm(self, at_mm: Sequence[float]) -> float:
        a = self.px([at_mm, (at_mm[0] + 10.0, at_mm[1])])
        return float(np.hypot(*(a[1] - a[0]))) / 10.0

    def _zones(self) -> Iterable[ZoneMark]:
        spec = self.profile.spec
        poly = lambda pts: tuple((float(x), float(y)) for x, y in self.px(pts))  # noqa: E731
        if spec.pockets_mm:  # a board: the striking zones, the centre circle and the cushion lines
            h = spec.half_mm
            for name in PLAYERS:
                x0, x1, y0, y1 = spec.zone_rect(name)
                edge = [(x, y0) for x in np.linspace(x0, x1, 12)] + [(x, y1) for x in np.linspace(x1, x0, 12)]
                yield ZoneMark(to_ascii(_("zone {player}").format(player=name)), poly(edge))  # OpenCV's font: ASCII
            yield ZoneMark("", poly(_circle(0.0, 0.0, spec.geometry.circle_radius_mm)))
            yield ZoneMark("", poly([(-h, -h), (h, -h), (h, h), (-h, h)]))
        if spec.has_pit:
            yield ZoneMark(to_ascii(_("pit")), poly(_circle(0.0, 0.0, spec.pit_radius_mm)))

    def model(self, positions: Mapping[str, tuple[float, float]], trails: Mapping[str, list] | None = None,
              contacts: Sequence[KeyInstant] = (), caption: str = "") -> OverlayModel:
        tracks = []
        for piece, xy in sorted(positions.items()):
            c = self.px([xy])[0]
            r = radius_of(self.profile, piece) * self.px_per_mm(xy)
            trail = tuple((float(x), float(y)) for x, y in self.px(trails[piece])) if trails and len(trails.get(piece, ())) > 1 else ()
            tracks.append(TrackMark(piece, float(c[0]), float(c[1]), float(r), trail))
        marks = []
        for k in contacts:
            c = self.px([k.at_mm])[0]
            marks.append(ContactMark(float(c[0]), float(c[1]), "-".join(k.pieces)))
        return OverlayModel(tuple(tracks), tuple(marks), self.zones, "")

    def draw(self, image: np.ndarray, model: OverlayModel) -> np.ndarray:
        return draw_overlay(image, model)

    def crop(self, image: np.ndarray, at_mm: Sequence[float], half_mm: float, out_px: int) -> tuple[np.ndarray, tuple]:
        """A square crop of ``image`` around ``at_mm`` (``half_mm`` each way), scaled to ``out_px``; also
        returns (x0, y0, scale) to map image pixels into the crop."""
        import cv2

        c = self.px([at_mm])[0]
        ppm = self.px_per_mm(at_mm)
        ppm = ppm if math.isfinite(ppm) and ppm > 0 else 1.0
        half_px = max(8, min(int(round(half_mm * ppm)), MAX_CROP_HALF_PX))
        side = 2 * half_px
        crop = np.zeros((side, side) + image.shape[2:], image.dtype)  # what lies beyond the image stays black
        if not np.all(np.isfinite(c)):  # a place the camera cannot map (behind it): nothing to show
            return cv2.resize(crop, (out_px, out_px)), (0, 0, out_px / side)
        x0, y0 = int(round(c[0])) - half_px, int(round(c[1])) - half_px
        h, w = image.shape[:2]
        ix0, iy0, ix1, iy1 = max(x0, 0), max(y0, 0), min(x0 + side, w), min(y0 + side, h)
        if ix1 > ix0 and iy1 > iy0:  # the part of the square inside the image (none: the place is off it)
            crop[iy0 - y0:iy1 - y0, ix0 - x0:ix1 - x0] = image[iy0:iy1, ix0:ix1]
        return cv2.resize(crop, (out_px, out_px), interpolation=cv2.INTER_CUBIC), (x0, y0, out_px / side)


def call_lines(ruling: Mapping | None, shot_no: int, error: str | None = None,
               game_no: int | None = None) -> list[tuple[str, tuple[int, int, int]]]:
    """The call as text lines (the calls already in the ruling's language), reviews in red. One shot number
    only, the game's (``ruling['shot']``); ``shot_no`` (the video's count) names a shot that was not judged."""
    white, cyan, red = (255, 255, 255), (255, 230, 120), (80, 80, 255)
    game = _("game {game_no} · ").format(game_no=game_no) if game_no is not None else ""
    if ruling is None:
        return [(game + _("shot {shot_no} of the video: not judged - referee please decide").format(shot_no=shot_no), red),
                ((error or "")[:160], red)]
    head = game + _("shot {shot} · player {player}").format(shot=ruling["shot"], player=ruling["player"])
    if ruling.get("stroke"):
        head += _(" · {stroke}, first contact: {first_contact}").format(stroke=_(ruling["stroke"]),
                                                                         first_contact=_(str(ruling.get("first_contact"))))
    lines = [(head, white)]
    for call in ruling.get("calls", []):
        lines.append((f"{call['clause']}  {call['text']}" + ("  [" + _("REVIEW") + "]" if call.get("review") else ""),
                      red if call.get("review") else cyan))
    if ruling.get("review"):
        lines.append((_("the evidence does not decide this call: referee review"), red))
    return lines


def read_frames(video: str, wanted: Iterable[int]) -> dict[int, np.ndarray]:
    """Decode ``video`` from the start just far enough to return the frames with the ``wanted`` indices."""
    from hardware import open_source

    want = sorted(set(int(i) for i in wanted if i >= 0))
    out: dict[int, np.ndarray] = {}
    if not want:
        return out
    with open_source(str(video)) as source:
        for frame in source:
            if frame.index in want:
                out[frame.index] = frame.image
            if frame.index >= want[-1]:
                break
    return out
