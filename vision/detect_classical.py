"""Classical detector: empty-board difference on a coarse image, then a sub-pixel rim fit per piece.

    det = ClassicalDetector(plane, profile, appearance)  # plane: calibration.plane.PlaneMap; appearance:
                                                        # calibration.appearance (default: the profile's)
    det.learn_background(empty_images)              # frames of the empty board (median)
    det.expect(layout)                              # optional: measure colours of a known layout next frame
    dets = det.detect(image, frame, t_s)            # -> vision.types.Detections (board mm)

Per frame (1280x720; a few ms on one core, see ``bench/vision_speed.py``):

1. *Candidates*: the board's part of the image is shrunk ``scale`` times (one ``cv2.resize``), compared with
   the empty board shrunk the same way, in this frame's light (a drifting exposure or white balance, a
   per-channel gain measured where nothing is, :mod:`vision.light_norm`), thresholded relative to the light
   at each place and above the frame's noise; connected blobs with their statistics.
2. *Blobs*: a blob far larger than ``max_discs`` pieces is an occluder (hand or cue). Any other blob is
   seeded with as many pieces as its area holds (k-means on its pixels when more than one: touching pieces).
3. *Rim fit* (:mod:`vision.rim`): every seed's outline is sampled along rays in one remap and fitted with
   the exact outline a piece of known radius and height casts in this camera, robustly (a touching
   neighbour's rim is an outlier), giving the base centre in board mm (parallax of the height removed).
4. *Classes* (:mod:`vision.colour_model`): the top face's chromaticity and brightness against the board,
   nearest of the class prototypes (own/opponent pawns, bat, each player's marbles). They start from the
   piece colours of the calibration or profile (white-balanced by the board seen here), are measured on a
   known layout when given one (whatever colour stands where the layout puts a class is that class's), and
   follow each class's confident, sharp detections online. The bat's colour is never assumed: until it has
   been seen, a sharp disc of the bat's size in a striking zone is the bat (:mod:`vision.bat_search`), and
   its colour is measured once it lies there still; likewise the marbles of the player to move, while their
   colour has not been seen on this camera (:mod:`vision.marble_search`). A marble down in the pit is not reported. A fit whose
   colour matches no prototype, or whose outline is not a circle of the piece's size, is not a piece; one
   that is a sharp disc of a piece's size with a colour unlike the board's is listed in ``unidentified``
   (not in the detections: no class, no owner) so that whoever proposes a start can say so. What of a blob no disc
   explains may be a piece smeared along its motion during the exposure (the bat at strike speed): measured
   as a streak (:mod:`vision.streak`), reported at its middle (mid-exposure) with ``score`` ``STREAK_SCORE``;
   what is left is an occluder.
5. *Still blobs keep their fit*: a blob whose box and pixels are unchanged (within the noise) since it was
   last fitted returns its previous pieces, restamped; only what moved is measured again. A fit is kept
   for at most ``refit_frames``, and a blob fitted with no piece in it is not kept at all, so one missed
   fit of a still piece (a marble just come to rest) does not hide it for as long as it lies there.
6. *Empty board kept fresh*: a band of image rows per frame is blended towards the frame (in the empty
   board's light) where nothing was found, so slow local light changes do not turn into blobs.

``unidentified`` holds the last frame's discs of a piece's shape that no colour class claims, as
``Unidentified`` (board mm centre and measured radius). ``timings`` holds the last frame's seconds per stage (``bench/vision_speed.py`` prints them); the accuracy
per frame against simulator truth is ``bench/vision_detect.py``. The interface used by the pipeline and
``bench/accuracy.py --detector classical`` is only ``ClassicalDetector(plane, profile)``, ``learn_background``,
``learn_colours`` (or ``expect``) and ``detect``.

Pixels become millimetres only through the calibration's ``PlaneMap`` (``to_board_mm``/``to_image_px``).
Detections carry ``centre_px`` (image pixel of the seen top face) and ``score`` (fit quality, 0..1; a streak's
is ``STREAK_SCORE``, 0.7, whatever its fit: its centre is less certain than a sharp disc's).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Mapping

import cv2
import numpy as np

from rules.game import owner

from .bat_search import BatSearch
from .blobs import grown_specks, label_type, on_blob, peak_seeds
from .colour_model import ColourModel, distance
from .hold import MotionHold, RestHold
from .marble_search import MarbleSearch
from .light_norm import LightNorm, LitFrame, brightest, scale_table
from .board import Surface
from .parallax import Parallax, seen_height_mm
from .rim import RimFitter, RimSeed
from .streak import StreakFinder
from .types import Detection, Detections, VisionError

__all__ = ["ClassicalDetector", "Prepared", "Unidentified"]

_DILATE_5 = np.ones((5, 5), np.uint8)
STREAK_SCORE = 0.7  # the score of a piece measured as a motion streak (vision.streak), not fitted as a disc
RIM_LEFTOVER_DISCS = 8.0  # a leftover reaching into the pit smaller than this many discs is marbles at the rim


@dataclass(frozen=True, eq=False)
class Prepared:
    """``ClassicalDetector.prepare``'s work on one frame: the board's part of it shrunk (``coarse``), with
    the rectangle and scale it was shrunk with (a detector of another geometry makes its own)."""

    roi: tuple[int, int, int, int]
    scale: int
    coarse: np.ndarray


@dataclass(frozen=True)
class Unidentified:
    """A sharp disc of a piece's size whose colour matches no class: ``centre_mm`` (on the board, parallax of
    the piece's height removed, as a detection's) and ``radius_mm`` (its outline's, as fitted)."""

    centre_mm: tuple[float, float]
    radius_mm: float


class ClassicalDetector:
    """Settings in ``__init__``; ``detect(image, frame, t_s) -> Detections``."""

    def __init__(self, plane, profile, appearance=None, scale: int = 4, diff_threshold: float = 22.0,
                 max_discs: float = 12.0, margin_mm: float = 25.0, colour_tolerance: float = 0.09,
                 min_rays: float = 0.55, max_rms_mm: float = 1.6, refresh_rows: int = 24, refresh_rate: float = 0.05,
                 still_threshold: int = 10, adapt_rate: float = 0.1, adapt_after: int = 3, refit_frames: int = 30,
                 crowded_min_rays: float = 0.8):
        self.plane, self.profile = plane, profile
        self.appearance = appearance if appearance is not None else getattr(profile, "appearance", None)
        self.colours = ColourModel(colour_tolerance, adapt_rate, adapt_after)
        self.game = profile.game
        self.spec = profile.spec
        self.surface = Surface.from_profile(profile)
        self.parallax = Parallax.from_plane(plane)
        self.rim = RimFitter(plane, self.parallax)
        self.scale, self.diff_threshold, self.max_discs = int(scale), float(diff_threshold), float(max_discs)
        # the board's own shade under the nominal light: the profile's colour (a calibration's measured one was
        # taken under this room's light, which the threshold is to follow)
        nominal = getattr(profile, "appearance", None) or self.appearance
        board = nominal["board_rgb"] if isinstance(nominal, Mapping) else getattr(nominal, "board_rgb", None)
        self.light = LightNorm.for_board(self.diff_threshold, board)
        self.min_rays, self.max_rms_mm = min_rays, max_rms_mm
        # a piece told apart from the hand or cue it touches must show most of its outline: a sleeve's or
        # a finger's edge can look like part of a dark disc (bench/strata.py, dark-pawns-black, hand-nudge:
        # such fits had at most 0.75 of their rays, pieces touching a hand at least 0.82)
        self.crowded_min_rays = float(crowded_min_rays)
        self._crowded: set[int] = set()  # this frame's occluder-sized blobs
        self.refresh_rows, self.refresh_rate = int(refresh_rows), float(refresh_rate)
        self.kinds = tuple(self.surface.radius_mm)
        self.top_z = {k: seen_height_mm(profile, k) for k in self.kinds}
        self.default_kind = self.spec.piece_kind
        self.bat_search = BatSearch(self.spec, self.surface)
        self.marble_search = MarbleSearch(self.spec)
        self.hold = RestHold(self.surface.radius)  # a piece at rest keeps its class while its outline is there
        self.motion = MotionHold(self.surface.radius, launched=(self.spec.striker,) if self.spec.striker else ())  # ... and a moving one along its path
        self.streaks = StreakFinder(plane, self.parallax, self.surface.radius_mm, self.top_z,
                                    {k: k != "marble" for k in self.kinds})
        self._roi(margin_mm)
        self.background: np.ndarray | None = None
        self._bg_coarse: np.ndarray | None = None
        self._bg_acc: np.ndarray | None = None
        self._quiet: np.ndarray | None = None  # coarse pixels where nothing was found on the last frame
        self._band = 0
        self.board_bgr: np.ndarray | None = None
        self._board_colour: np.ndarray | None = None
        self._expected: dict[str, tuple[float, float]] | None = None
        self._expect_frames = 0  # ``_expect_again``: frames left to measure the layout's classes on
        self._shaded: list = []  # this frame's classes of the ground's own shade (``ColourModel.ground_shaded``)
        self._layout_pawns: list[tuple[float, float]] = []  # where the last layout told put pawns
        self._placing: list[tuple[float, float]] = []  # where the rules have pawns put down now (``placing``)
        self.timings: dict[str, float] = {}
        self.unidentified: tuple[Unidentified, ...] = ()  # the last frame's discs no colour class claims
        self._strange: list[tuple[Unidentified, int]] = []  # ... while a frame is measured, with their blob
        self.still_threshold, self.refit_frames = int(still_threshold), int(refit_frames)
        self._cache: dict[tuple, tuple] = {}
        self._places_at: tuple[tuple, np.ndarray] | None = None  # ``_places_px``: the places and their image px
        self._priors: list[tuple[float, float, float]] = []  # ``_prior_seeds``: image px where pieces lay still, when
        self._last_px: list[tuple[float, float]] = []  # image px of the last frame's pieces
        self._diameter_mm = 2.0 * min(self.surface.radius_mm.values())
        self._disc_mm2 = math.pi * (min(self.surface.radius_mm.values()) + 2.5) ** 2
        self._disc_cpx = math.pi * (min(self.surface.radius_mm.values()) + 2.5) ** 2 / self._mm2_per_cpx
        self._pawn_px = min(self.surface.radius_mm.values()) * self.scale / math.sqrt(self._mm2_per_cpx)  # image px

    # ------------------------------------------------------------------ geometry set-up
    def _roi(self, margin_mm: float) -> None:
        """The image rectangle (a multiple of ``scale``) that sees the playing surface, the coarse mask of the
        pixels over it, and the board area one coarse pixel covers there."""
        s, cushion = self.surface, self.spec.cushion_width_mm
        hx, hy = s.half_x_mm + cushion + margin_mm, s.half_y_mm + cushion + margin_mm
        w, h = self.plane.image_size
        e = np.linspace(-1, 1, 41)
        edge = np.concatenate([np.stack([e * hx, np.full_like(e, -hy)], 1), np.stack([e * hx, np.full_like(e, hy)], 1),
                               np.stack([np.full_like(e, -hx), e * hy], 1), np.stack([np.full_like(e, hx), e * hy], 1)])
        px = self.plane.to_image_px(edge)
        q = self.scale
        x0 = max(int(math.floor(px[:, 0].min() / q)) * q, 0)
        y0 = max(int(math.floor(px[:, 1].min() / q)) * q, 0)
        x1 = min(int(math.ceil(px[:, 0].max() / q)) * q, (w // q) * q)
        y1 = min(int(math.ceil(px[:, 1].max() / q)) * q, (h // q) * q)
        if x1 <= x0 or y1 <= y0:
            raise VisionError("classical detector: the playing surface is not in the camera's view")
        self.roi = (x0, y0, x1, y1)
        cw, ch = (x1 - x0) // q, (y1 - y0) // q
        u, v = np.meshgrid(np.arange(cw), np.arange(ch))
        centres = np.column_stack([x0 + (u.ravel() + 0.5) * q - 0.5, y0 + (v.ravel() + 0.5) * q - 0.5])
        mm = self.plane.to_board_mm(centres)
        inside = (np.abs(mm[:, 0]) <= hx) & (np.abs(mm[:, 1]) <= hy) & ~self._on_markers(mm)
        self._mask = inside.reshape(ch, cw).astype(np.uint8) * 255
        self._label_type = label_type(self._mask.shape)
        # the watched region's own edge (its coarse pixels next to one outside it, or at the image's border):
        # a hand or the cue reaches in over it
        inner = cv2.erode(self._mask, np.ones((3, 3), np.uint8), borderType=cv2.BORDER_CONSTANT, borderValue=0)
        self._edge = cv2.bitwise_and(self._mask, cv2.bitwise_not(inner)) > 0
        mid = self.plane.to_board_mm([[0.5 * (x0 + x1), 0.5 * (y0 + y1)]])[0]
        self._mm2_per_cpx = float((self.plane.mm_per_px([mid])[0] * q) ** 2)
        # 1-sigma error of a centre per axis: about a third of a pixel (bench/vision_detect.py, sharp pieces).
        # Errors of one piece at rest repeat from frame to frame (pixel grid, texture; a still blob keeps its
        # fit), so its scatter understates them: the event solver is to be told this figure.
        self.position_sigma_mm = float(0.35 * self.plane.mm_per_px([mid])[0])
        # board area each coarse pixel covers (the lens and the tilt change it across the view)
        grid = mm.reshape(ch, cw, 2)
        gx = np.gradient(grid, axis=1)
        gy = np.gradient(grid, axis=0)
        self._cpx_mm2 = np.abs(gx[..., 0] * gy[..., 1] - gx[..., 1] * gy[..., 0]).astype(np.float32)

    def _shrink(self, image: np.ndarray) -> np.ndarray:
        x0, y0, x1, y1 = self.roi
        q = self.scale
        return cv2.resize(image[y0:y1, x0:x1], ((x1 - x0) // q, (y1 - y0) // q), interpolation=cv2.INTER_LINEAR)

    def prepare(self, image: np.ndarray) -> "Prepared | None":
        """The frame's board shrunk (``_shrink``, step 1): it needs nothing but the image and the fixed
        geometry, so another thread may make it (the live loop's capture thread, while the frame is fresh in
        its core's cache) and ``detect(..., prepared=)`` uses it. None for an image ``detect`` refuses."""
        w, h = self.plane.image_size
        if not isinstance(image, np.ndarray) or image.shape != (h, w, 3) or image.dtype != np.uint8:
            return None
        return Prepared(self.roi, self.scale, self._shrink(image))

    def _check(self, image: np.ndarray) -> None:
        w, h = self.plane.image_size
        if image is None or image.ndim != 3 or image.shape[2] != 3 or image.shape[1] != w or image.shape[0] != h:
            got = "nothing" if image is None else "x".join(str(v) for v in image.shape)
            raise VisionError(f"classical detector: frame is {got}, the calibration is for {w}x{h} BGR")

    # ------------------------------------------------------------------ learning
    def learn_background(self, empty_images) -> None:
        """The empty board: per-pixel median of frames with nothing on it (a passing hand does not stay)."""
        images = list(empty_images)
        if not images:
            raise VisionError("classical detector: no empty-board images to learn from")
        for img in images:
            self._check(img)
        bg = images[0].copy() if len(images) == 1 else np.median(np.stack(images), axis=0).astype(np.uint8)
        self.background = bg
        self._bg_acc = bg.astype(np.float32)
        self._bg_coarse = self._shrink(bg)
        self._quiet = None
        self.board_bgr = np.median(self._bg_coarse[self._mask > 0].reshape(-1, 3).astype(np.float32), axis=0)
        # the empty board as a colour (shares, log brightness 0): what a faint fit of the board's own texture
        # measures
        self._board_colour = np.r_[self.board_bgr / (float(self.board_bgr.sum()) + 3.0), 0.0]
        self._from_appearance()

    # the colour model's state, as the detector's own (benches and tests read and set these)
    prototypes = property(lambda self: self.colours.prototypes)
    tolerance = property(lambda self: self.colours.tolerance)
    colour_source = property(lambda self: self.colours.colour_source)
    anchors = property(lambda self: self.colours.anchors)
    colour_tolerance = property(lambda self: self.colours.colour_tolerance)

    def _classify(self, colours: np.ndarray, confident: list | None = None):
        return self.colours.classify(colours, confident, self._board_colour)

    def _adapt(self, samples: dict) -> None:
        self.colours.adapt(samples)

    def _from_appearance(self) -> None:
        self.colours.from_appearance(self.appearance, self.spec.kinds, self.board_bgr, self.spec.striker)

    def expect(self, layout: Mapping[str, tuple[float, float]]) -> None:
        """The pieces on the surface now (from the game state): their colours are learnt on the next frame
        (a class no piece of which showed its outline there, on the next few: ``_expect_again``)."""
        self._expected = dict(layout)
        self._expect_frames = self.expect_frames
        self._layout_pawns = [xy for p, xy in layout.items() if p != self.spec.striker]
        self._placing = []

    def _expect_again(self, layout: Mapping[str, tuple[float, float]]) -> None:
        """The layout's pieces of the classes still known only by the profile's colour, measured again on the
        next frame, for ``expect_frames`` frames in all: one frame's noise or a codec's smear can break the
        outline of the one piece of a class on view (#16, bench/strata.py, everything, Cvrnkana pit-skip at
        60 frames/s: the one marble of A's on view, of the ground's own shade, showed 0.46 of its outline on
        the first frame and 0.55 or more on some of the next; A kept the profile's blue and the marble was
        never seen). Filmed at another phase the same marble showed under 0.55 on all of 60 frames: a class
        whose pieces never show their outline is still not measured."""
        self._expect_frames -= 1
        rest = {p: xy for p, xy in layout.items()
                if (p == self.spec.striker or owner(p))
                and self.colours.colour_source.get(self.spec.kind_of(p), "appearance") == "appearance"}
        if rest and self._expect_frames > 0:
            self._expected = rest

    def placing(self, placements: Mapping[str, tuple[float, float]]) -> None:
        """Where the rules have a hand put pawns down now (a ruling's returns, a penalty pawn on its spot by a
        cushion, II.1): a disc put down there is that pawn, never the unknown bat (``_off_layout``)."""
        self._placing = [(float(x), float(y)) for p, (x, y) in placements.items() if p != self.spec.striker]

    def turn(self, player: str | None) -> None:
        """Who is to move (the game state's): a marble of no known colour put in play is theirs
        (:mod:`vision.marble_search`)."""
        self.marble_search.turn(player)

    def learn_colours(self, image: np.ndarray, layout: Mapping[str, tuple[float, float]]) -> None:
        """Colour prototypes of each class (own/opponent pawns, bat, marbles), measured on the top face of
        every piece of a known layout whose outline is there (``ColourModel.learn``: the colour seen where
        the layout puts a class is that class's, whatever it is); a later call adds classes it sees (e.g.
        the bat once it is placed) and replaces those it measures again."""
        if self.background is None:
            raise VisionError("classical detector: learn the empty board before the colours")
        self._check(image)
        # a player's piece or the striker, on the field: a marble the layout has in the pit is seen down there
        # in its shadow, and its colour is no colour the class has on the field
        ids = [p for p in layout if (p == self.spec.striker or owner(p))
               and not self._sunk(layout[p], self.surface.radius(self.spec.kind_of(p)[0]))]
        if not ids:
            raise VisionError("classical detector: the layout names no piece of this game")
        seeds = []
        for p in ids:
            kind, _ = self.spec.kind_of(p)
            seen = self.parallax.seen([layout[p]], self.top_z[kind])[0]
            seeds.append(RimSeed((float(seen[0]), float(seen[1])), self.surface.radius(kind), self.top_z[kind],
                                 kind != "marble"))
        fits = self.rim.fit(image, self.background, seeds)
        samples: dict[tuple[str, str | None], list[np.ndarray]] = {}
        for p, seed, fit in zip(ids, seeds, fits):
            # shape, not colour, says a piece stands there: an outline of its size where the layout has it
            if fit is not None and fit.rays >= self.min_rays and fit.rms_mm <= self.max_rms_mm \
                    and math.dist(fit.seen_mm, seed.seen_mm) <= 0.5 * seed.radius_mm:
                samples.setdefault(self.spec.kind_of(p), []).append(fit.colour)
        samples = self.colours.learn(samples)
        if not samples:
            raise VisionError("classical detector: none of the layout's pieces is visible where the layout says")
        self._samples = samples

    def measure_appearance(self, image: np.ndarray, layout: Mapping[str, tuple[float, float]]) -> dict:
        """Piece colours measured on a frame of a known layout, in the calibration file's ``appearance``
        form (``calibration.appearance``): per class seen the median top-face colour and its spread, and
        the board colour they were seen against. The detector uses them from now on."""
        self.learn_colours(image, layout)
        return self.colours.appearance(self._samples, self.board_bgr)

    def _on_markers(self, mm: np.ndarray) -> np.ndarray:
        """Board points (N, 2) on or beside a calibration marker: its square grown by the largest piece's
        radius and 8 mm. A marker's black-and-white edges are the sharpest in view; a webcam codec's ringing
        there changes from frame to frame, and at 2 Mbit/s it was fitted as marbles about every marker in
        view (Cvrnkana's lie on the ground). No piece is looked for there: one that stops on a marker is
        lost from sight, and the tracker says so, rather than a marker becoming a piece."""
        markers = getattr(self.profile, "markers", None) or {}
        centres = list((markers.get("centres_mm") or {}).values())
        out = np.zeros(len(mm), bool)
        if not centres:
            return out
        half = 0.5 * float(markers.get("size_mm") or 0.0) + max(self.surface.radius_mm.values()) + 8.0
        for cx, cy in centres:
            out |= (np.abs(mm[:, 0] - cx) <= half) & (np.abs(mm[:, 1] - cy) <= half)
        return out

    # ------------------------------------------------------------------ the one method
    def detect(self, image: np.ndarray, frame: int = 0, t_s: float = 0.0,  # noqa: C901 - split in #16
               prepared: "Prepared | None" = None) -> Detections:
        """``prepared``: ``prepare(image)``, made ahead (else made here)."""
        if self.background is None:
            raise VisionError("classical detector: no empty-board image yet (call learn_background first)")
        self._check(image)
        clock = time.perf_counter
        t0 = clock()
        self._strange = []
        ours = prepared is not None and prepared.roi == self.roi and prepared.scale == self.scale
        coarse = prepared.coarse if ours else self._shrink(image)
        lit, empty = self._normalise_light(image, coarse)  # the frame in the empty board's light, where read
        if self._expected is not None:  # the pieces stand where the game state says: measure their colours
            layout, self._expected = self._expected, None
            if self._expect_frames == self.expect_frames:
                self._priors += [(x, y, t_s) for x, y in self._layout_px(layout)]
            try:
                self.learn_colours(lit.image, layout)
            except VisionError:
                if not self.prototypes:
                    raise
            self._expect_again(layout)
        if not self.prototypes:
            raise VisionError("classical detector: no piece colours (the profile has no appearance section; "
                              "call learn_colours or expect(layout))")
        strength = brightest(cv2.absdiff(coarse, empty))
        thr = self.light.threshold(strength, empty, self._mask)
        mask = cv2.bitwise_and(cv2.compare(strength, thr, cv2.CMP_GT), self._mask)
        t1 = clock()
        n, labels, stats, cents = cv2.connectedComponentsWithStats(mask, connectivity=8, ltype=self._label_type)
        disc = self._disc_cpx
        self._shaded = self.colours.ground_shaded(self._board_colour) if self.grow_low > 0 else []
        if self._shaded:  # a class of the ground's own shade: its pieces differ from the ground by little
            low = cv2.max(cv2.multiply(thr, self.grow_low), math.ceil(self.light.floor))
            grown = grown_specks(labels, stats[:, cv2.CC_STAT_AREA], 0.3 * disc,
                                 cv2.bitwise_and(cv2.compare(strength, low, cv2.CMP_GT), self._mask),
                                 self.grow_discs[0] * disc, self.grow_discs[1] * disc, self._label_type)
            if grown is not None:
                mask[grown] = 255
                n, labels, stats, cents = cv2.connectedComponentsWithStats(mask, connectivity=8, ltype=self._label_type)
        self._quiet = cv2.bitwise_and(self._mask, cv2.bitwise_not(cv2.dilate(mask, _DILATE_5)))
        items: list[Detection] = []
        seeds_px, owners = [], []  # seeds in full image pixels, and the blob each came from
        blobs: dict[int, tuple] = {}
        cache: dict[tuple, tuple] = {}
        self._crowded = crowded = set()
        q = self.scale
        x0, y0 = self.roi[:2]
        rows = stats.tolist()
        for i in (np.flatnonzero(stats[1:, cv2.CC_STAT_AREA] >= 0.3 * disc) + 1).tolist() + self._faint(stats, cents):
            x, y, w, h, area = rows[i]
            if w == 1 or h == 1:  # a line one coarse pixel wide (a codec's ringing along a pocket's edge) holds
                continue  # no piece: the smallest is three or more across
            key = (x, y, w, h)
            if area > self.max_discs * disc:  # a hand or the cue, maybe with pieces touching it: look for them
                centres = on_blob(labels, i, self._split(lit, key, self._mm2_per_cpx, widest=1.35))
                if len(centres) == 0:
                    occ = self._occluder(labels[y:y + h, x:x + w] == i, x, y, frame, t_s)
                    if not self._in_pit(occ):
                        items.append(occ)
                    continue
                blobs[i] = (x, y, w, h, area, len(centres) + 1)
                crowded.add(i)
                for c in centres:
                    seeds_px.append((x0 + (c[0] + 0.5) * q - 0.5, y0 + (c[1] + 0.5) * q - 0.5))
                    owners.append(i)
                continue
            old = self._cached(key, coarse, frame)
            if old is not None:
                cache[old[2]] = old
                items.extend(_restamp(d, frame, t_s) for d in old[1])
                self._strange += [(u, -1) for u in old[4]]
                continue
            cx, cy = cents[i]
            local = self._cpx_mm2[min(int(cy), self._cpx_mm2.shape[0] - 1), min(int(cx), self._cpx_mm2.shape[1] - 1)]
            k = max(1, int(round(area * local / self._disc_mm2)))
            if area > 1.5 * disc or k > 1:
                centres = on_blob(labels, i, self._split(lit, (x, y, w, h), local))
                k = max(k, len(centres))
            else:
                centres = cents[i:i + 1]
            blobs[i] = (x, y, w, h, area, k)
            for c in centres:
                seeds_px.append((x0 + (c[0] + 0.5) * q - 0.5, y0 + (c[1] + 0.5) * q - 0.5))
                owners.append(i)
        self._prior_seeds(labels, blobs, seeds_px, owners)
        t2 = clock()
        pieces = self._pieces(lit, seeds_px, owners, frame, t_s)
        for _ in range(2):  # what a blob still does not explain may be pieces the first seeds missed
            more_px, more_owners = self._reseed(labels, blobs, pieces)
            if not more_px:
                break
            extra = self._pieces(lit, more_px, more_owners, frame, t_s)
            pieces += [(d, b) for d, b in extra if all(math.dist(d.centre_mm, k.centre_mm) > 1.6 * d.radius_mm
                                                       for k, _ in pieces)]
        pieces = self._owned(pieces, blobs)
        t3 = clock()
        streaks = self._streaks(lit, labels, blobs, pieces, frame, t_s)
        pieces += [(d, i) for d, i, _ in streaks]
        t3s = clock()
        left = self._leftovers(labels, blobs, pieces, frame, t_s, {i: o for _, i, o in streaks})
        for i, (x, y, w, h, _, _) in blobs.items():
            found = [d for d, blob in pieces if blob == i] + left.get(i, [])
            # a fit that slid from this blob's seed onto a piece beside it is reported now, but is not this
            # blob's to keep: cached, it would outlive that piece's leaving (a pawn knocked out of a row)
            own = [d for d in found if self._within(d, (x, y, w, h))]
            if own:  # a blob fitted with nothing in it is measured again next frame, not kept empty
                strange = tuple(u for u, blob in self._strange if blob == i)
                cache[(x, y, w, h)] = (coarse[y:y + h, x:x + w].copy(), own, (x, y, w, h), frame, strange)
            items.extend(found)
        self._cache = cache
        items = _one_per_piece(items)
        self._remember(items, t_s)
        self.hold.update([(d.kind, d.owner, d.centre_mm, d.score >= self.hold_score) for d in items
                          if d.kind in self.kinds], t_s)
        self.motion.update([((d.kind, d.owner), d.centre_mm) for d in items if d.kind in self.kinds], t_s)
        self.unidentified = _unclaimed(self._strange, items)
        if self._bat_unknown():
            self._settle(self.bat_search, (self.spec.striker, None), items, frame, t_s)
        wanted = self.marble_search.wanted(self.colours.colour_source)
        if wanted is not None:
            self._settle(self.marble_search, wanted, items, frame, t_s)
        t4 = clock()
        self._refresh(lit, mask, self.hold.places())
        t5 = clock()
        self.timings = {"shrink+difference": t1 - t0, "blobs": t2 - t1, "rim fit": t3 - t2, "streaks": t3s - t3,
                        "occluders+assembly": t4 - t3s, "background upkeep": t5 - t4}
        return Detections(frame, t_s, tuple(items))

    def _layout_px(self, layout: Mapping[str, tuple[float, float]]) -> list[tuple[float, float]]:
        """Image pixels where the top faces of a layout's pieces on the surface (not down in the pit) show."""
        out = []
        for p, xy in layout.items():
            kind = self.spec.kind_of(p)[0]
            if kind in self.top_z and not self._sunk(xy, self.surface.radius(kind)):
                seen = self.parallax.seen([xy], self.top_z[kind])
                out.append(tuple(float(v) for v in self.plane.to_image_px(seen)[0]))
        return out

    def _prior_seeds(self, labels: np.ndarray, blobs: dict, seeds_px: list, owners: list) -> None:
        """Seeds where the last frames found pieces lying still (and where a layout just told puts them), in the
        blobs of touching pieces measured now, in place of the blob's own seeds within 1.25 radii of them.

        A row of touching pawns is one blob; dim light, noise and a codec blur the seams between them, and the
        peaks of the blob's distance map fall between pawns or merge into a few (bench/strata.py, everything,
        opening: 6 of a row of 8 found, several 5-13 mm off, the rest flickering out and back under other
        names). A rim fit started on each pawn finds it (all 17 pieces of such a frame within 2 mm), while one
        started between two pawns can fit better than it and win (a peak midway between two touching pawns lies
        a radius from each: its fit slid 11 mm onto A4 and opened a shot at the clip's start, compressed-2mbit
        at 30 frames/s). A seed where the piece has gone fits nothing, or the piece that is there; a piece come
        to touch one (centres two radii apart) keeps its own seed. Not in a blob of one piece, whose own seed is
        its middle (a pale pawn against a cushion, fitted 4 mm toward it and seeded there, slid 15 mm into
        it); nor in one of a hand's size, where a piece under the hand is left to the tracker (seeded under the
        hand placing the bat, B3 beside it was fitted in the hand's colours and taken for picked up: the
        opening of low-ambient, three-lamps and dark-pawns-black, flagged unseen)."""
        if not self._priors:
            return
        pts = np.asarray(self._priors, float)[:, :2]
        q = self.scale
        x0, y0 = self.roi[:2]
        cu = np.round((pts[:, 0] - x0 + 0.5) / q - 0.5).astype(int)
        cv = np.round((pts[:, 1] - y0 + 0.5) / q - 0.5).astype(int)
        h, w = labels.shape
        reach = self._pawn_px
        prior: list[tuple[float, float, int]] = []
        for (px, py), u, v in zip(pts.tolist(), cu.tolist(), cv.tolist()):
            i = int(labels[v, u]) if 0 <= u < w and 0 <= v < h else 0
            if i in blobs and blobs[i][5] > 1 and i not in self._crowded \
                    and all(math.hypot(px - a, py - b) > 0.5 * reach for a, b, _ in prior):
                prior.append((px, py, i))
        if not prior:
            return
        keep = [j for j, ((a, b), i) in enumerate(zip(seeds_px, owners))
                if all(k != i or math.hypot(px - a, py - b) > 1.25 * reach for px, py, k in prior)]
        seeds_px[:] = [seeds_px[j] for j in keep] + [(px, py) for px, py, _ in prior]
        owners[:] = [owners[j] for j in keep] + [i for _, _, i in prior]

    def _remember(self, items: list[Detection], t_s: float) -> None:
        """Where this frame found pieces lying still (within half a pawn's radius of a piece the frame before),
        for ``_prior_seeds``: each replaces what was remembered near it; a place where nothing was found again
        for ``prior_keep_s`` is forgotten. Not a piece in motion: a fit on a hand's or the cue's edge seeded
        where the last one lay would follow the hand from frame to frame (bench/strata.py, everything,
        bat-pocketed: the bat so followed beyond the cushion at the stroke, its real flight lost)."""
        now = [(float(d.centre_px[0]), float(d.centre_px[1])) for d in items
               if d.kind in self.kinds and d.centre_px is not None]
        near = 0.5 * self._pawn_px
        still = [(x, y, t_s) for x, y in now if any(math.hypot(x - a, y - b) <= near for a, b in self._last_px)]
        old = [p for p in self._priors if 0.0 <= t_s - p[2] <= self.prior_keep_s
               and all(math.hypot(p[0] - x, p[1] - y) > near for x, y, _ in still)]
        self._priors, self._last_px = old + still, now

    def _shown(self, centre_mm, r: float, near: float = 0.3) -> float:
        """The share of a disc's outline that can show as an edge against the board: where the disc lies against
        a cushion, the rim within ``near`` radii of the cushion's face meets the cushion's own edge and shadow,
        and its rays find no fall from piece to board there (bench/strata.py, everything: a pawn against the
        west cushion gave 0.50-0.54 of its rays, under the 0.55 asked of a disc, and was missed on half its
        frames; on the independent renderer the pawns against the side cushions too)."""
        if not self.surface.walls:
            return 1.0
        lost = 0.0
        x, y = float(centre_mm[0]), float(centre_mm[1])
        for gap in (self.surface.half_x_mm - abs(x), self.surface.half_y_mm - abs(y)):
            c = (gap - near * r) / r
            if c < 1.0:
                lost += math.acos(max(c, -1.0)) / math.pi
        return max(1.0 - lost, 0.5)

    def _faint(self, stats: np.ndarray, cents: np.ndarray) -> list[int]:
        """Blobs too small to hold a piece anywhere else (specks, skipped at once) that lie on a place where a
        piece was lately found at rest: a piece of the board's own shade (a cream pawn on a pale board) differs
        from the empty board at its outline only, a broken ring of a few coarse pixels that some frames fall
        under the speck limit (#16: on the independent renderer a pawn at rest was lost from sight so, and the
        bat's touch on it with it). Its seed goes to the rim fit, which finds the outline or nothing, and the
        rest hold names it; where the piece has left there is no blob."""
        places = self.hold.places()
        if not places:
            return []
        area = stats[1:, cv2.CC_STAT_AREA]
        small = np.flatnonzero((area >= self.faint_min_cpx) & (area < 0.3 * self._disc_cpx)) + 1
        if not len(small):
            return []
        x0, y0 = self.roi[:2]
        q = self.scale
        at = (self._places_px(places) - (x0 - 0.5, y0 - 0.5)) / q - 0.5
        near = np.array([self.surface.radius(kind) for _, kind in places]) / math.sqrt(self._mm2_per_cpx)
        d = np.hypot(*(cents[small][:, None, :] - at[None, :, :]).transpose(2, 0, 1))
        return small[(d <= near[None, :]).any(axis=1)].tolist()

    def _places_px(self, places: list) -> np.ndarray:
        """Image pixels of the places pieces hold (``RestHold.places``), kept while the places are the same: at
        rest they are from frame to frame, and ``_faint`` and ``_refresh`` ask for them on every frame."""
        key = tuple(at for at, _ in places)
        if self._places_at is None or self._places_at[0] != key:
            self._places_at = (key, self.plane.to_image_px(np.array(key, float)))
        return self._places_at[1]

    def _normalise_light(self, image: np.ndarray, coarse: np.ndarray) -> tuple[LitFrame, np.ndarray]:
        """(the frame divided by its per-channel gain against the empty board, made where it is read, the coarse empty board in
        this frame's light) (:class:`vision.light_norm.LightNorm`): a drifting exposure or white balance is
        taken out before anything is compared with the empty board. The coarse difference compares the
        frame as it is with the empty board times the gain, saturating as the camera does (a brightened
        board clips at 255, which no division undoes); the fits see the frame in the empty board's light."""
        gain = self.light.gain(coarse, self._bg_coarse, self._quiet, self._mask)
        if gain is None:
            return LitFrame(image, None), self._bg_coarse
        return LitFrame(image, gain), cv2.LUT(self._bg_coarse, scale_table(gain))  # cv2.multiply's pixels

    def _split(self, image: np.ndarray, box, mm2_per_cpx: float, widest: float = math.inf) -> np.ndarray:
        """Seeds (coarse px) for the pieces of a blob that holds several (:func:`vision.blobs.peak_seeds`);
        ``widest`` (in piece radii) drops peaks too wide for a piece (a palm)."""
        radii = self.surface.radius_mm.values()
        r_px = min(radii) * self.scale / math.sqrt(mm2_per_cpx)
        return peak_seeds(image, self.background, box, self.scale, self.roi[:2], r_px,
                          widest * r_px * max(radii) / min(radii))

    def _owned(self, pieces: list[tuple[Detection, int]], blobs: dict) -> list[tuple[Detection, int]]:
        """Each piece given to the blob it lies in: a fit from one blob's seed can slide onto a piece of a
        neighbouring blob (a hand's edge beside a pawn) and win there over that blob's own fit. Left with
        the wrong blob, the neighbour would be cached as holding nothing, and the piece would vanish for as
        long as that blob stays still."""
        out = []
        for det, blob in pieces:
            if blob in blobs and not self._within(det, blobs[blob][:4]):
                home = [i for i, b in blobs.items() if i != blob and self._within(det, b[:4], margin=0.0)]
                if home:
                    blob = min(home, key=lambda i: blobs[i][4])  # the smallest blob around it: the piece's own
            out.append((det, blob))
        return out

    def _within(self, det: Detection, box, margin: float = 1.0) -> bool:
        """Whether a detection's seen centre lies inside a blob's box (coarse px, give or take ``margin``)."""
        if det.centre_px is None:
            return True
        x, y, w, h = box
        q = self.scale
        u = (det.centre_px[0] - self.roi[0] + 0.5) / q - 0.5
        v = (det.centre_px[1] - self.roi[1] + 0.5) / q - 0.5
        return x - margin <= u <= x + w - 1 + margin and y - margin <= v <= y + h - 1 + margin

    def _cached(self, box, coarse: np.ndarray, frame: int):
        """The last fit of this blob if nothing in it moved since it was measured: a cached blob whose box is
        within a pixel of this one (a soft shadow's edge flickers across the threshold) and whose pixels are
        all within the noise of what they were then, fitted less than ``refit_frames`` ago (a fit that
        missed a piece of a still blob is not kept for as long as the blob lies still)."""
        x, y, w, h = box
        searching = self._bat_unknown()
        for (cx, cy, cw, ch), entry in self._cache.items():
            weak = searching and any(d.score < self.hold_score and self._off_layout(d.centre_mm) for d in entry[1])
            if not 0 <= frame - entry[3] < (self.weak_refit_frames if weak else self.refit_frames):
                continue
            if abs(cx - x) <= 1 and abs(cy - y) <= 1 and abs(cx + cw - x - w) <= 1 and abs(cy + ch - y - h) <= 1:
                then = entry[0]
                if int(cv2.absdiff(coarse[cy:cy + ch, cx:cx + cw], then).max()) <= self.still_threshold:
                    return entry
        return None

    # ------------------------------------------------------------------ pieces
    def _seed(self, seen, kind: str) -> RimSeed:
        return RimSeed((float(seen[0]), float(seen[1])), self.surface.radius(kind), self.top_z[kind], kind != "marble")

    def _pieces(self, image, seeds_px, owners, frame, t_s) -> list[tuple[Detection, int]]:  # noqa: C901 - split in #16
        if not seeds_px:
            return []
        seen = self.plane.to_board_mm(np.asarray(seeds_px, float))
        fits = self.rim.fit(image, self.background, [self._seed(s, self.default_kind) for s in seen])
        good = [j for j, f in enumerate(fits) if f is not None]
        classes: list = [None] * len(fits)
        sure: list = [False] * len(fits)
        if good:
            flags: list = []
            for j, cls in zip(good, self._classify(np.stack([fits[j].colour for j in good]), flags)):
                classes[j] = cls
            for j, flag in zip(good, flags):
                sure[j] = flag
        # a whole, sharp outline only: where a piece has just left, a faint ring of it stays in the difference
        # from the empty board for a moment, and given the class it would be a piece at rest there
        self.hold.claim([f.centre_mm if f is not None and f.rays >= self.strange_min_rays
                         and f.rms_mm <= 0.5 * self.max_rms_mm else None for f in fits],
                        classes, [self.default_kind] * len(fits))
        self.motion.claim([f.centre_mm if f is not None and f.rays >= self.strange_min_rays
                           and f.rms_mm <= 0.75 * self.max_rms_mm else None for f in fits],
                          classes, [f.colour if f is not None else None for f in fits], [self.default_kind] * len(fits),
                          self.colours.distances, t_s)
        # fit again from the first fit's centre where the seed was far off (the colour ring was then partly
        # off the piece) or the piece is of another kind than assumed (a bat: its own radius and height)
        r0 = self.surface.radius(self.default_kind)
        redo = [j for j in good if (classes[j] is not None and classes[j][0] != self.default_kind)
                or math.dist(fits[j].seen_mm, seen[j]) > 0.15 * r0]
        if redo:
            kinds = [classes[j][0] if classes[j] is not None else self.default_kind for j in redo]
            again = self.rim.fit(image, self.background, [self._seed(fits[j].seen_mm, kd) for j, kd in zip(redo, kinds)])
            ok = [(j, f) for j, f in zip(redo, again) if f is not None]
            if ok:
                flags = []
                for (j, f), cls in zip(ok, self._classify(np.stack([f.colour for _, f in ok]), flags)):
                    fits[j], classes[j] = f, cls or classes[j]  # blur mixes the board into the colour
                for (j, _), flag in zip(ok, flags):
                    sure[j] = flag
        if self._bat_unknown():
            self._unknown_bats(image, fits, classes, sure, frame)
        wanted = self.marble_search.wanted(self.colours.colour_source)
        if wanted is not None:
            self._unknown_marbles(fits, classes, sure, wanted, frame)
        self._ground_coloured(fits, classes)
        accepted = []
        for j, (fit, cls) in enumerate(zip(fits, classes)):
            if fit is not None and cls is None:
                self._note_strange(fit, owners[j])
            if fit is None or cls is None:
                continue
            r = self.surface.radius(cls[0])
            if self._sunk(fit.centre_mm, r):
                continue
            min_rays = self.crowded_min_rays if owners[j] in self._crowded else self.min_rays
            if fit.rays < min_rays:  # (the cushion's share is at most 1: worked out only for a fit short of rays)
                min_rays *= self._shown(fit.centre_mm, r)
            if fit.rays < min_rays or not -0.25 * r < fit.bias_mm < 0.9 * r:
                continue
            # a sharp disc; or one smeared by its motion during the exposure, whose outline is a stadium: a disc
            # fitted to it sits at its middle (the piece at mid-exposure) but with a larger radius and residual
            if fit.rms_mm > max(self.max_rms_mm, 0.3 * r * (fit.bias_mm / r) ** 0.5 if fit.bias_mm > 0 else 0.0):
                continue
            accepted.append(j)
        if not accepted:
            return []
        learn: dict = {}
        for j in accepted:
            fit, r = fits[j], self.surface.radius(classes[j][0])
            if sure[j] and fit.rays >= 0.7 and fit.rms_mm <= 0.5 * self.max_rms_mm and abs(fit.bias_mm) <= 0.15 * r:
                learn.setdefault(classes[j], []).append(fit.colour)
        self._adapt(learn)
        px = self.plane.to_image_px(np.array([fits[j].seen_mm for j in accepted]))
        found: list[tuple[Detection, int, float]] = []
        for j, (u, v) in zip(accepted, px):
            fit, (kind, owner) = fits[j], classes[j]
            score = float(max(0.05, min(1.0, fit.rays * (1.0 - fit.rms_mm / (2 * self.max_rms_mm)))))
            det = Detection(kind, fit.centre_mm, self.surface.radius(kind), owner, score, (float(u), float(v)), frame, t_s)
            found.append((det, owners[j], fit.rms_mm))
        # two seeds on one piece: keep the better fit
        found.sort(key=lambda f: f[2])
        kept: list[tuple[Detection, int]] = []
        for det, blob, _ in found:
            if all(math.dist(det.centre_mm, k.centre_mm) > 1.2 * min(det.radius_mm, k.radius_mm) for k, _ in kept):
                kept.append((det, blob))
        return kept

    def _ground_coloured(self, fits, classes) -> None:
        """A marble of the ground's own shade (a clay marble on soil, ``ColourModel.ground_shaded``) is
        nearer the ground's colour than its class's, which ``classify`` takes for the ground's texture
        outlined as a faint disc: a whole, sharp outline of a marble's size says it is a piece, and its
        colour, within that class's tolerance, whose (#16, bench/strata.py, everything, Cvrnkana pit-entry:
        the marble rolled into the pit in full view for 0.4 s, its outlines whole, 0.02-0.04 from the
        ground's colour and 0.12-0.2 tolerances from its class's, and was never seen). Only well inside the
        class's tolerance (``ColourModel.by_outline``): the noise of a dark corner beside a marker, under a
        hand's shadow, fitted whole discs 0.67-0.72 tolerances from it, and one took the name of the marble
        about to roll in. And only a top face that differs from the ground beside it by little (its level,
        ``ground_level``): a piece of the ground's shade does (0.025-0.05 measured on the marble), while those
        discs of the dark corner differed by 0.14-0.17. Marbles only: a pale pawn on a pale board is found by
        the outline its wall casts."""
        if self.default_kind != "marble" or not self._shaded:
            return
        r = self.surface.radius("marble")
        for j, f in enumerate(fits):
            if f is None or classes[j] is not None or f.rays < self.whole_rays or f.rms_mm > 0.5 * self.max_rms_mm \
                    or abs(f.bias_mm) > 0.25 * r or f.level > self.ground_level or self._sunk(f.centre_mm, r):
                continue
            classes[j] = self.colours.by_outline(f.colour, self._shaded)

    def _note_strange(self, fit, blob: int) -> None:
        """A fit no colour class claims is kept aside when it is a sharp disc of the seed's size (the default
        kind's) with a colour unlike the board's (the board's texture can fit a faint disc of its own colour)."""
        r = self.surface.radius(self.default_kind)
        if not self._is_strange(fit) or fit.rms_mm > self.max_rms_mm or abs(fit.bias_mm) > 0.25 * r \
                or self._sunk(fit.centre_mm, r):
            return
        centre = (round(float(fit.centre_mm[0]), 2), round(float(fit.centre_mm[1]), 2))
        self._strange.append((Unidentified(centre, round(r + float(fit.bias_mm), 2)), blob))

    def _is_strange(self, fit) -> bool:
        """Found all round, with a colour unlike the empty board's: a disc that is there, of no class. Not
        at the edge threshold raised over a noisy board (``RimFit.raised``), where a codec's blocks outline
        faint discs of the board's own colour (see ``BatSearch._clear``)."""
        return fit.rays >= self.strange_min_rays and not fit.raised and self._unlike_board(fit)

    def _unlike_board(self, fit) -> bool:
        """A colour farther than ``strange_from_board`` from the empty board's: not the board's texture."""
        return self._board_colour is None or float(distance(fit.colour, self._board_colour)) > self.strange_from_board

    def _bat_unknown(self) -> bool:
        return self.bat_search.active and (self.spec.striker, None) not in self.prototypes

    #: a disc of no pawn class's colour is taken for the bat down to a pawn's size only with its outline
    #: found all round and a colour unlike the board's (the board's own texture, a zone line's crossing, can
    #: fit a faint disc: the demo's mid-set layout had one at rays 0.71, the board's colour to 0.01); a wooden
    #: bat on a wooden board lies 0.14-0.17 from it (bench/strata.py, everything: opponent-first), so 0.1
    strange_min_rays, strange_from_board = 0.9, 0.1
    #: the fit score (rays x residual) of a detection that may start a place a piece holds (``RestHold``): a
    #: whole outline; the board's texture outlined as a faint disc scores 0.5-0.7
    hold_score = 0.8
    #: while the bat is unknown, a cached blob with a fit short of a whole outline (score under ``hold_score``)
    #: where the layout told has no pawn is fitted again this soon: the bat is put down by a hand, and a weak
    #: fit made as the hand left is not its only sighting for ``refit_frames`` (#16, everything, bat-off: the
    #: bat's first fit, 0.7 and of B's colour, was served for 30 frames, the bat named two frames before the
    #: stroke, and the stroke missed). Not once the bat is known, nor on the layout's pawns: refitting the
    #: faint pawns of a dim room that often moved calls that hang on a millimetre (a bat by its zone's line,
    #: the opening's first contact) at 30 frames/s
    weak_refit_frames = 5
    #: how long a place where a piece was found seeds the rim fit where nothing is found there (``_prior_seeds``)
    prior_keep_s = 1.0
    #: the smallest blob (coarse pixels) on a place a piece holds that is fitted (``_faint``): 3, as the
    #: narrowest piece is three across
    faint_min_cpx = 3
    #: the frames a layout told (``expect``) is measured on, while a class of it shows no outline there
    expect_frames = 15
    #: while a class is of the ground's own shade (``ColourModel.ground_shaded``), a speck of the difference
    #: grows over the pixels above this share of the threshold (``vision.blobs.grown_specks``; 0: never) to a
    #: blob of a piece where it grows to between these many discs
    grow_low = 0.5
    grow_discs = (0.6, 3.0)
    #: a ground-coloured marble's fit (``_ground_coloured``): a whole outline (this share of its rays), and a top
    #: face that differs from the ground beside it by at most this level (median foreground strength)
    whole_rays = 0.8
    ground_level = 0.1

    def _unknown_bats(self, image, fits, classes, sure, frame: int) -> None:
        """Until the bat's colour is known (:mod:`vision.bat_search`): a sharp disc of the bat's size in a
        striking zone is the bat, whatever its colour; its colour is learnt once it lies still."""
        strange = [f is not None and (self._is_strange(f) if classes[j] is None else self._newcomer(f, classes[j]))
                   and self._off_layout(f.centre_mm) for j, f in enumerate(fits)]
        # of the board's own colour, whatever its size: the board's texture or a pawn's shadow outlined as a disc
        # (bench/strata.py, everything, opening: while the empty board was still being refreshed toward the
        # camera's picture, a disc beside the end of a row, 0.07 from the board's colour, was taken for the bat
        # on the clip's second frame; its colour learnt, the real bat was never found and the stroke refused)
        cand = [j for j, f in enumerate(fits) if (classes[j] is None or classes[j][0] == self.default_kind)
                and self.bat_search.could_be(f, self.max_rms_mm, strange[j]) and self._unlike_board(f)]
        if not cand:
            return
        kind = self.spec.striker
        again = self.rim.fit(image, self.background, [self._seed(fits[j].seen_mm, kind) for j in cand])
        bats = [(j, f) for j, f in zip(cand, again) if self.bat_search.is_bat(f, self.max_rms_mm, strange[j])]
        if bats:  # there is one bat: of two such discs (a spare pawn of another set), the one of the bat's size
            j, f = min(bats, key=lambda b: abs(b[1].bias_mm))
            fits[j], classes[j], sure[j] = f, (kind, None), False
            self.bat_search.seen(f.centre_mm, f.colour, frame)

    def _off_layout(self, centre_mm) -> bool:
        """Farther than a pawn's radius from every pawn of the layout told, and than its diameter from every
        spot the rules have a pawn put down on (``placing``; a hand puts it down near, not on, the spot): a
        piece put down since that no rule placed."""
        r_pawn = self.surface.radius(self.default_kind)
        return all(math.dist(centre_mm, xy) > r_pawn for xy in self._layout_pawns) \
            and all(math.dist(centre_mm, xy) > 2.0 * r_pawn for xy in self._placing)

    def _newcomer(self, fit, cls) -> bool:
        """A sharp disc of a pawn's colour, found all round, where the layout told has no pawn (the caller
        checks the place): with the layout known, a piece put down there is the bat, whatever its colour. A bat
        of one player's colour with a rounded edge is a pawn by colour and size alike (#16, *everything*,
        opponent-off-direct: fitted with a pawn's radius 0.06 mm wide, 0.5 of A's tolerance from A's colour;
        taken for a ninth pawn of A's, the stroke refused)."""
        return bool(self._layout_pawns) and cls[0] == self.default_kind and fit.rays >= self.strange_min_rays \
            and not fit.raised

    def _unknown_marbles(self, fits, classes, sure, wanted, frame: int) -> None:
        """Until the colour of the mover's marbles is known (:mod:`vision.marble_search`): a disc of a marble's
        size found all round, of a colour unlike the ground's and within no class's tolerance, on the field
        (not sunk in the pit), is the mover's marble; a sharp one is measured for its colour."""
        r = self.surface.radius(wanted[0])
        for j, f in enumerate(fits):
            if f is None or classes[j] is not None or not self._is_strange(f) or f.rms_mm > self.max_rms_mm \
                    or not -0.25 * r < f.bias_mm < 0.9 * r or self._sunk(f.centre_mm, r) \
                    or min(self.colours.distances(f.colour).values(), default=np.inf) <= 1.0:
                continue
            classes[j], sure[j] = wanted, False
            if abs(f.bias_mm) <= 0.25 * r and f.rms_mm <= 0.5 * self.max_rms_mm:
                self.marble_search.seen(f.centre_mm, f.colour, frame)

    def _settle(self, search, cls, items, frame: int, t_s: float) -> None:
        """A piece of ``cls`` found by its shape (``search``: the bat's or the marbles'): its colour learnt once it
        lies still with no hand over part of its top face (the cue aiming at its edge covers none of it)."""
        hands = Detections(frame, t_s, tuple(d for d in items if d.kind == "hand"))
        over = self.surface.radius(cls[0])
        colour = search.settled([d for d in items if (d.kind, d.owner) == cls], frame,
                                lambda at: hands.occluded(at, over) is not None)
        if colour is not None:
            self.colours.put_down(cls, colour)

    def _sunk(self, centre_mm, radius_mm: float) -> bool:
        """A marble over the pit by more than half its radius has fallen in: it is no longer on the field
        (the camera still sees it down there), so it is not reported. (Novuss pockets: a pawn in a pocket
        drops out of sight below the board, and the tracker reads the pocket from its last track.) Nor is a
        disc beyond both cushion lines of a pocketed corner: no piece lies there, but a pocket's dark rim is
        a circle that a codec's ringing (a webcam's H.264 at 2 Mbit/s) turns into a blob with a disc's
        outline; a pawn leaving over a corner is left to the pocket-or-off review of ``vision.shot``."""
        s = self.surface
        x, y = centre_mm
        if s.pockets and abs(x) > s.half_x_mm + 0.5 * radius_mm and abs(y) > s.half_y_mm + 0.5 * radius_mm:
            return True
        return s.in_pit(centre_mm, -0.5 * radius_mm)

    def _unexplained(self, labels, i, box, dets, pad_mm: float = 6.0, streak_px: np.ndarray | None = None) -> np.ndarray:
        """The blob's pixels farther from every piece found in it than its radius and shadow (and, for a
        piece seen as a motion streak, outside the streak's outline ``streak_px``, image px)."""
        x, y, w, h = box
        blob = labels[y:y + h, x:x + w] == i
        if dets:
            q = self.scale
            x0, y0 = self.roi[:2]
            keep = np.zeros(blob.shape, np.uint8)
            for d in dets:
                c = d.centre_px
                rad = (d.radius_mm + pad_mm) / math.sqrt(self._mm2_per_cpx)
                cv2.circle(keep, (int(round((c[0] - x0 + 0.5) / q - 0.5 - x)), int(round((c[1] - y0 + 0.5) / q - 0.5 - y))),
                           int(math.ceil(rad)), 1, -1)
            if streak_px is not None:
                poly = np.round((streak_px - (x0, y0) + 0.5) / q - 0.5 - (x, y)).astype(np.int32)
                cv2.fillPoly(keep, [poly], 1)
                cv2.polylines(keep, [poly], True, 1, 2 * int(math.ceil(pad_mm / math.sqrt(self._mm2_per_cpx))))
            blob = blob & (keep == 0)
        return blob

    def _streaks(self, lit, labels, blobs, pieces, frame, t_s) -> list[tuple[Detection, int, np.ndarray]]:
        """Pieces smeared by their motion (:mod:`vision.streak`) in what the disc fits of a blob left
        unexplained: (detection, blob, streak outline in image px). Only a blob short of pieces whose
        unexplained part has, coarsely, a streak's size and shape is measured, so sharp pieces and large
        occluders cost nothing."""
        by_blob: dict[int, list[Detection]] = {}
        for det, blob in pieces:
            by_blob.setdefault(blob, []).append(det)
        cell_mm = math.sqrt(self._mm2_per_cpx)
        out = []
        for i, (x, y, w, h, _, k) in blobs.items():
            dets = by_blob.get(i, [])
            if len(dets) >= k:
                continue
            rest = self._unexplained(labels, i, (x, y, w, h), dets)
            pts = cv2.findNonZero(rest.astype(np.uint8))
            if pts is None:
                continue
            (u, v), (a, b), _ = cv2.minAreaRect(pts)
            sides_mm = ((min(a, b) + 1) * cell_mm, (max(a, b) + 1) * cell_mm)
            if not self.streaks.could_be(len(pts) * self._mm2_per_cpx, *sides_mm, cell_mm):
                continue
            mid = (self.roi[0] + (x + u + 0.5) * self.scale - 0.5, self.roi[1] + (y + v + 0.5) * self.scale - 0.5)
            if self._sunk(self.plane.to_board_mm([mid])[0], self.surface.radius(self.default_kind)):
                continue  # what lies in the pit is not reported: not measured either
            got = self.streaks.find(lit, self.background, rest, (x, y, w, h), self.scale, self.roi[:2],
                                    self.prototypes)
            if got is None or self._sunk(got.centre_mm, self.surface.radius(got.kind)):
                continue
            det = Detection(got.kind, got.centre_mm, self.surface.radius(got.kind), got.owner, STREAK_SCORE,
                            got.centre_px, frame, t_s)
            out.append((det, i, got.outline_px))
        return out

    def _reseed(self, labels, blobs, pieces):
        """New seeds where a piece-sized part of a blob is left unexplained by the pieces found in it."""
        by_blob: dict[int, list[Detection]] = {}
        for det, blob in pieces:
            by_blob.setdefault(blob, []).append(det)
        q = self.scale
        x0, y0 = self.roi[:2]
        seeds, owners = [], []
        for i, (x, y, w, h, area, k) in blobs.items():
            dets = by_blob.get(i, [])
            if len(dets) >= k or area > 4 * k * self._disc_cpx:
                continue
            rest = self._unexplained(labels, i, (x, y, w, h), dets, 2.0).astype(np.uint8)
            n, lab, st, ce = cv2.connectedComponentsWithStats(rest, connectivity=8, ltype=label_type(rest.shape))
            for j in range(1, n):
                if 0.4 * self._disc_cpx <= st[j, 4] <= 2.5 * self._disc_cpx:
                    for cx, cy in _part_centres(lab, j, st[j, 4] / self._disc_cpx):
                        seeds.append((x0 + (cx + x + 0.5) * q - 0.5, y0 + (cy + y + 0.5) * q - 0.5))
                        owners.append(i)
        return seeds, owners

    def _leftovers(self, labels, blobs, pieces, frame, t_s, streaks: dict | None = None) -> dict[int, list[Detection]]:
        """Occluders: what of a blob the pieces found in it (and the motion streak ``streaks[blob]``, an
        outline in image px) do not explain (a hand or the cue over the board, possibly touching pieces)."""
        out: dict[int, list[Detection]] = {}
        by_blob: dict[int, list[Detection]] = {}
        for det, blob in pieces:
            by_blob.setdefault(blob, []).append(det)
        for i, (x, y, w, h, area, k) in blobs.items():
            dets = by_blob.get(i, [])
            if len(dets) >= k:
                continue
            blob = self._unexplained(labels, i, (x, y, w, h), dets, streak_px=(streaks or {}).get(i))
            left_cpx = float(blob.sum())
            if left_cpx >= 1.5 * self._disc_cpx and self._reaches_in(blob, x, y):
                occ = self._occluder(blob, x, y, frame, t_s)
                out[i] = [] if self._in_pit(occ) or self._at_the_rim(left_cpx, occ) else [occ]
        return out

    def _reaches_in(self, blob: np.ndarray, x: int, y: int) -> bool:
        """On a board with cushions, what is left of a blob is a hand or the cue only if it reaches the
        watched region's edge: both come in from beyond the cushions, the arm or the stick with them. A
        leftover wholly inside is a piece the fits missed (on the independent renderer the bat at 2.6 m/s,
        smeared beyond the streak measure, was taken for a hand three times on its way to a pocket, and its
        track ended "taken by a hand": the pocketing was never called)."""
        if not self.surface.walls:
            return True
        h, w = blob.shape
        return bool((blob & self._edge[y:y + h, x:x + w]).any())

    def _in_pit(self, occ: Detection) -> bool:
        """A blob wholly inside the pit is the marbles or the pit's own wall down there (out of play; a hand
        reaching in would cross the rim): reported as a hand, it hid the rim from the marbles rolling in. The
        outline is the hull of coarse pixels, so it may overreach the rim by one of them (a tilted camera sees
        the wall up to the rim itself)."""
        if self.surface.pit_radius_mm <= 0:
            return False
        slack_mm = math.sqrt(self._mm2_per_cpx)
        return all(self.surface.in_pit(xy, slack_mm) for xy in occ.outline_mm)

    def _at_the_rim(self, area_cpx: float, occ: Detection) -> bool:
        """A leftover of a few marbles' size reaching into the pit is marbles going in over the rim, not a
        hand: hand-nudge at 30 frames/s, A1 half down the pit with the pit's wall beside it, its fit lost, made
        a blob of 4 discs straddling the rim; taken for a hand that came from nowhere, A1 "went under the hand"
        and a pit entry the camera saw was flagged. A hand that reaches the pit shows its palm (over 20 discs
        on the simulators' hands) and the rest of it beyond the rim."""
        if self.surface.pit_radius_mm <= 0 or area_cpx >= RIM_LEFTOVER_DISCS * self._disc_cpx:
            return False
        return any(self.surface.in_pit(xy, 0.0) for xy in occ.outline_mm)

    def _occluder(self, blob: np.ndarray, x: int, y: int, frame: int, t_s: float) -> Detection:
        cnts, _ = cv2.findContours(blob.astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        pts = (np.vstack([c.reshape(-1, 2) for c in cnts]) + (x, y)).astype(np.float32)
        q = self.scale
        x0, y0 = self.roi[:2]
        hull_px = (cv2.convexHull(pts).reshape(-1, 2) + 0.5) * q - 0.5 + (x0, y0)
        outline = self.plane.to_board_mm(hull_px)
        (_, _), (rw, rh), _ = cv2.minAreaRect(outline.astype(np.float32))
        # long and thin is the cue; Cvrnkaná has none (an arm reaching in is long too)
        kind = "cue" if "cue" in self.spec.occluders and max(rw, rh) > 4.0 * max(min(rw, rh), 1.0) else "hand"
        centre = outline.mean(axis=0)
        radius = float(np.max(np.hypot(*(outline - centre).T)))
        return Detection(kind, (float(centre[0]), float(centre[1])), radius, None, 1.0, None, frame, t_s,
                         outline_mm=tuple((float(a), float(b)) for a, b in outline))

    # ------------------------------------------------------------------ empty board upkeep
    def _refresh(self, lit: LitFrame, mask: np.ndarray, pieces: list | None = None) -> None:
        """Blend one band of rows of the empty board towards this frame where nothing was seen (``lit``: the
        frame in the empty board's light; not where the frame as taken is saturated, nor within two radii
        of where a piece was found lately, ``pieces`` (board mm, kind): a faint piece whose edge falls under
        the threshold would otherwise be blended in, fainter each frame, until it is gone)."""
        if self.refresh_rate <= 0:
            return
        x0, y0, x1, y1 = self.roi
        q = self.scale
        rows = max(q, (self.refresh_rows // q) * q)
        band = self._band
        self._band = (band + rows) % max(y1 - y0, rows)
        a, b = y0 + band, min(y0 + band + rows, y1)
        busy = cv2.dilate(mask[band // q:(b - y0) // q], _DILATE_5)
        if busy.size == 0:
            return
        quiet = cv2.resize(cv2.bitwise_not(busy), (x1 - x0, b - a), interpolation=cv2.INTER_NEAREST)
        if lit.corrected:
            quiet = cv2.bitwise_and(quiet, cv2.inRange(lit.raw[a:b, x0:x1], (0, 0, 0), (249, 249, 249)))
        if pieces:
            px = self._places_px(pieces)
            px_per_mm = q / math.sqrt(self._mm2_per_cpx)
            r = 2.0 * np.array([self.surface.radius(kind) for _, kind in pieces]) * px_per_mm
            for j in np.flatnonzero((a - r <= px[:, 1]) & (px[:, 1] <= b + r)).tolist():  # those reaching this band
                u, v = px[j]
                cv2.circle(quiet, (int(round(u - x0)), int(round(v - a))), int(math.ceil(r[j])), 0, -1)
        acc = self._bg_acc[a:b, x0:x1]
        cv2.accumulateWeighted(lit[a:b, x0:x1], acc, self.refresh_rate, mask=quiet)
        rounded = acc + 0.5  # np.clip(acc + 0.5, 0, 255).astype(np.uint8), without its temporary arrays
        np.clip(rounded, 0, 255, out=rounded)
        np.copyto(self.background[a:b, x0:x1], rounded, casting="unsafe")
        cw = (x1 - x0) // q
        self._bg_coarse[band // q:(b - y0) // q] = cv2.resize(self.background[a:b, x0:x1], (cw, (b - a) // q),
                                                            interpolation=cv2.INTER_LINEAR)


def _part_centres(lab: np.ndarray, j: int, discs: float) -> list[tuple[float, float]]:
    """Seeds for an unexplained part of a blob ``discs`` pieces in area: its centroid, or, where it is
    big enough for two touching pieces (two pawns of a row pressed against the bat), the centres of two
    k-means clusters of its pixels; one seed between two pawns fits neither."""
    ys, xs = np.nonzero(lab == j)
    pts = np.stack([xs, ys], axis=1).astype(np.float32)
    if discs < 1.5 or len(pts) < 4:
        return [(float(pts[:, 0].mean()), float(pts[:, 1].mean()))]
    crit = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 20, 0.1)
    cv2.setRNGSeed(0)
    _, _, centres = cv2.kmeans(pts, 2, None, crit, 3, cv2.KMEANS_PP_CENTERS)
    return [(float(c[0]), float(c[1])) for c in centres]


def _one_per_piece(items: list[Detection]) -> list[Detection]:
    """Two pieces cannot overlap: of detections closer than 1.2 radii (a blob's kept fit and a fresh
    fit from a neighbouring blob of the same piece), keep the better-scored one."""
    pieces = sorted((d for d in items if not d.is_occluder), key=lambda d: -d.score)
    kept: list[Detection] = []
    for d in pieces:
        if all(math.dist(d.centre_mm, k.centre_mm) > 1.2 * min(d.radius_mm, k.radius_mm) for k in kept):
            kept.append(d)
    if len(kept) == len(pieces):
        return items
    keep = {id(d) for d in kept}
    return [d for d in items if d.is_occluder or id(d) in keep]


def _unclaimed(strange: list[tuple[Unidentified, int]], items: list[Detection]) -> tuple[Unidentified, ...]:
    """The discs no class claimed that are not a piece reported after all (another seed's fit on the same
    piece did get a class), each once."""
    out: list[Unidentified] = []
    pieces = [d for d in items if not d.is_occluder]
    for u, _ in strange:
        if all(math.dist(u.centre_mm, d.centre_mm) > 1.2 * min(u.radius_mm, d.radius_mm) for d in pieces) \
                and all(math.dist(u.centre_mm, k.centre_mm) > 1.2 * u.radius_mm for k in out):
            out.append(u)
    return tuple(out)


def _restamp(det: Detection, frame: int, t_s: float) -> Detection:
    # the constructor with the same fields: what dataclasses.replace does, at half its cost (every still
    # piece is restamped every frame)
    return Detection(**{**det.__dict__, "frame": frame, "t_s": t_s})
