"""What the first frames of a video show before anyone has told vision anything: a proposed start.

A video begun mid-set (or mid-game) does not show the opening layout, and a camera cannot know the state
it joined. From a few frames at rest (no hand or cue in view, the pieces still) the classical detector
finds the discs on the board, its colour classes (the calibration's or the profile's piece colours) say
whose each one is, and the bat, whatever its colour, is the disc of the bat's size lying anywhere on the
board. Each disc must be seen in most of those frames, always with the same owner: a disc that changes
owner between frames, or is seen only now and then, is listed as unsure, never given to a player. A disc of
a piece's size and shape whose colour matches no class (the detector's ``unidentified``) is listed, with its
size, as unidentified: it is on the board but in no one's hands until the referee says whose it is.

Ids are given in one stable order: per player from the near side of the board to the far one, then left
to right (A1 is A's piece nearest -y). The result is a frozen value; what the camera cannot see (whose
turn, a debt, the pit's count) is the judge's to ask (``judge.start_state``).

    proposal = propose(images, plane, profile, background, appearance=calibration.piece_appearance())
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Iterable

import numpy as np

from rules.game import PLAYERS

from .board import Surface
from .types import VisionError

__all__ = ["BoardProposal", "propose", "REST_FRAMES"]

#: frames at rest looked at: enough to see each disc more than once, short enough to be before the first shot
REST_FRAMES = 5
#: frames with a hand or cue in view skipped at most before giving up (a video starting under the hand)
MAX_SKIPPED = 90
#: a disc moving farther than this between the frames looked at: the board is not at rest yet
STILL_MM = 3.0

Point = tuple[float, float]


#: the kind a disc of no colour class is followed as (never a kind of ``vision.types.KINDS``)
UNIDENTIFIED = "unidentified"


@dataclass(frozen=True)
class BoardProposal:
    """The pieces seen at rest: ``pieces`` (id, place in board mm), ``unsure`` (discs no player could be
    given), ``bat`` (where it lies, None when it is not down) with its top face's colour (0..255 RGB),
    ``frames`` (the frame indices looked at), ``skipped`` (frames passed over: a hand or cue in view) and
    ``unidentified`` (place in board mm, radius mm) of each piece-shaped disc whose colour is no class's."""

    game: str
    pieces: tuple[tuple[str, Point], ...]
    unsure: tuple[Point, ...] = ()
    bat: Point | None = None
    bat_colour_rgb: tuple[int, int, int] | None = None
    frames: tuple[int, ...] = ()
    skipped: int = 0
    unidentified: tuple[tuple[Point, float], ...] = ()

    @property
    def layout(self) -> dict[str, Point]:
        return dict(self.pieces)

    def of(self, player: str) -> list[str]:
        """The ids of ``player``'s pieces seen, in id order."""
        return [p for p, _ in self.pieces if p[0] == player]


class _Disc:
    """One disc followed over the frames: every sighting's place, kind and owner."""

    def __init__(self, kind: str, owner: str | None, at: Point, radius_mm: float):
        self.kinds, self.owners, self.places, self.radii = [kind], [owner], [at], [radius_mm]

    def add(self, kind: str, owner: str | None, at: Point, radius_mm: float) -> None:
        self.kinds.append(kind)
        self.owners.append(owner)
        self.places.append(at)
        self.radii.append(radius_mm)

    @property
    def radius_mm(self) -> float:
        return round(float(np.median(self.radii)), 1)

    @property
    def at(self) -> Point:
        xy = np.median(np.asarray(self.places), axis=0)
        return (round(float(xy[0]), 2), round(float(xy[1]), 2))

    def moved_mm(self) -> float:
        return max(math.dist(p, self.places[0]) for p in self.places)


def propose(images: Iterable, plane, profile, background: list, appearance=None, detector=None) -> BoardProposal:
    """The proposal from the first rest frames of ``images`` (BGR arrays, or frames with ``.image`` and
    ``.index``). ``detector``: a classical detector already taught the empty board (default: one made here
    from ``background``); it should be this proposal's own, since it learns the bat's colour as it goes."""
    spec = profile.spec
    det = detector if detector is not None else _detector(plane, profile, background, appearance)
    if spec.striker is not None:  # the bat may lie anywhere after a stroke, not only in a striking zone
        hx, hy = spec.bounds_mm
        det.bat_search.surface = replace(det.bat_search.surface, zones=((-hx, hx, -hy, hy),))
    surface = Surface.from_profile(profile)
    discs: list[_Disc] = []
    used: list[int] = []
    skipped = 0
    for n, item in enumerate(images):
        image, index = (item.image, item.index) if hasattr(item, "image") else (item, n)
        dets = _field_only(det.detect(image, index, index / 30.0), surface)
        if any(d.is_occluder for d in dets):
            if used:
                break  # a hand or the cue came in: the rest is over
            skipped += 1
            if skipped > MAX_SKIPPED:
                break
            continue
        strange = [_Sighting(UNIDENTIFIED, None, u.centre_mm, u.radius_mm) for u in getattr(det, "unidentified", ())]
        _follow(discs, [d for d in dets if not d.is_occluder] + strange, spec)
        used.append(index)
        if len(used) >= REST_FRAMES or any(d.moved_mm() > STILL_MM for d in discs):
            break
    if not used:
        raise VisionError(f"no frame at rest among the first {skipped} (a hand or the cue is always in view): "
                          "nothing to propose")
    return _assign(spec, profile.game, discs, len(used), tuple(used), skipped, det, image, plane)


def _detector(plane, profile, background: list, appearance):
    from .detect_classical import ClassicalDetector

    if not background:
        raise VisionError("proposing the start from the board needs a picture of the empty board (--background)")
    det = ClassicalDetector(plane, profile, appearance=appearance)
    det.learn_background(list(background))
    return det


def _field_only(dets, surface) -> list:
    """What the pit holds is not on the field: a marble down in it, and the blob its marbles make there (the
    pipeline's ``_field_only``: a hand reaches in from outside the pit, the pit's own blob stays within it)."""
    if not getattr(surface, "pit_radius_mm", 0):
        return list(dets)

    def inside(d) -> bool:
        if not surface.in_pit(d.centre_mm, -1.0):
            return False
        if not d.is_occluder:
            return True
        if d.outline_mm:
            return all(surface.in_pit(q) for q in d.outline_mm)
        return d.radius_mm <= surface.pit_radius_mm

    return [d for d in dets if not inside(d)]


@dataclass(frozen=True)
class _Sighting:
    """A disc the detector saw but gave no class (its ``unidentified``), followed like a detection."""

    kind: str
    owner: None
    centre_mm: Point
    radius_mm: float


def _follow(discs: list[_Disc], dets, spec) -> None:
    """Each detection joins the disc it lies on (within half a piece's radius), or starts a new one."""
    for d in dets:
        near = min(discs, key=lambda c: math.dist(c.places[-1], d.centre_mm), default=None)
        if near is not None and math.dist(near.places[-1], d.centre_mm) <= 0.5 * d.radius_mm:
            near.add(d.kind, d.owner, d.centre_mm, d.radius_mm)
        else:
            discs.append(_Disc(d.kind, d.owner, d.centre_mm, d.radius_mm))


def _assign(spec, game: str, discs: list[_Disc], frames: int, used: tuple[int, ...], skipped: int, det, image,
            plane) -> BoardProposal:
    """Ids per player in the stable order; a disc seen in fewer than half the frames, or with two owners,
    or more of a player's than the game has, is unsure; one that no colour class ever claimed is unidentified."""
    per_player: dict[str, list[Point]] = {p: [] for p in PLAYERS}
    unsure: list[Point] = []
    unidentified: list[tuple[Point, float]] = []
    bat = None
    for disc in discs:
        if 2 * len(disc.places) < frames + 1 and frames > 1:
            unsure.append(disc.at)
            continue
        kinds, owners = set(disc.kinds), set(disc.owners)
        if kinds == {UNIDENTIFIED}:
            unidentified.append((disc.at, disc.radius_mm))
        elif kinds == {spec.striker}:
            if bat is None:
                bat = disc.at
            else:
                unsure.append(disc.at)
        elif len(kinds) == 1 and len(owners) == 1 and None not in owners:
            per_player[disc.owners[0]].append(disc.at)
        else:
            unsure.append(disc.at)
    limit = _per_player(spec)
    pieces: list[tuple[str, Point]] = []
    for player, places in per_player.items():
        places.sort(key=lambda xy: (round(xy[1]), xy[0]))  # near side first, then left to right
        unsure += places[limit:]
        pieces += [(f"{player}{i}", xy) for i, xy in enumerate(places[:limit], 1)]
    colour = _colour_rgb(image, plane, bat, spec.piece_radii_mm[spec.striker]) if bat is not None else None
    return BoardProposal(game, tuple(pieces), tuple(sorted(unsure)), bat, colour, used, skipped,
                         tuple(sorted(unidentified)))


def _per_player(spec) -> int:
    """How many pieces a player can have on the surface: Novuss 8 pawns, Cvrnkaná up to its id range."""
    return 8 if spec.striker is not None else int(getattr(spec, "max_per_player", 0) or 20)


def _colour_rgb(image, plane, at: Point, radius_mm: float) -> tuple[int, int, int]:
    """The median colour of the bat's top face: the image inside a third of its radius around its centre."""
    u, v = plane.to_image_px(np.array([at], float))[0]
    r_px = max(1.0, radius_mm / 3.0 / float(plane.mm_per_px([at])[0]))
    h, w = image.shape[:2]
    x0, x1 = max(int(u - r_px), 0), min(int(u + r_px) + 1, w)
    y0, y1 = max(int(v - r_px), 0), min(int(v + r_px) + 1, h)
    yy, xx = np.mgrid[y0:y1, x0:x1]
    inside = (xx - u) ** 2 + (yy - v) ** 2 <= r_px ** 2
    if not inside.any():
        raise VisionError(f"the bat at {at} mm is outside the picture")
    b, g, r = np.median(image[y0:y1, x0:x1][inside].reshape(-1, 3), axis=0)
    return (int(r), int(g), int(b))

