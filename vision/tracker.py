"""Tracking with identity: detections in board mm -> named pieces, frame after frame.

norfair-style: a small core with a pluggable ``distance`` and ``motion`` model; new tracks need
``hit_min`` consecutive detections to be believed and a track needs ``miss_max`` missed frames (in the
open, not under a hand or the cue) to end, a resting piece ``rest_miss_s`` (only a hand moves it). Two
discs cannot overlap, so a detection on top of a piece already accounted for never starts a new track.
Identities come from the known layout at the start of a shot (``A3`` stays ``A3``), so the tracker never
invents names for pieces it was told about.

Matching is a global assignment (Hungarian) on distance to the predicted position, restricted to the
same kind and owner. Pieces of the same kind and owner can still trade places in a head-on collision
(the struck piece leaves from where the striker would have been): every pair of such assignments is
also scored by whether the straight paths between frames would carry one disc through the other, and the
physically possible pairing wins. Speed can blur a piece's colour into the other player's: the struck bat
(``_striker_blurred``) and a pawn or marble struck head-on (``vision.struck_blurred``) keep their names across
classes where shape and continuity say who they are.

Who a newcomer is (spare ids, marbles outside the view, expected placements) is ``vision.naming``; how a
track ended (pocket, off, pit, pickup, lost) is ``vision.departure``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np

from rules.game import game_class

from .board import Surface
from .departure import OFF_MIN_SPEED_MM_S, hand_reaches_pit, nearest_on_steps, resting_patience, under_hand_to_pit, why_gone
from .naming import Roster, hopped_pit, piece_kind
from .struck_blurred import struck_blurred, unclaimed
from .naming import came_from_line as _came_from_line  # noqa: F401 (its old home: tests import it from here)
from .types import Detection, Detections, Track, TrackState

__all__ = ["Tracker", "ConstantVelocity", "euclidean", "piece_kind"]

_BIG = 1e9


def _assignment(cost: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The minimum-cost assignment of ``cost``'s rows to its columns, as ``linear_sum_assignment`` gives it.

    Most frames need no solver: where every row (every column, if there are more rows) has its own cheapest
    partner, no two the same, that pairing costs the sum of the rows' minima, which no assignment can beat,
    so it is the optimum. Only a frame where two tracks want one detection goes to scipy's solver, imported
    then (importing ``scipy.optimize`` costs a replay 0.3 s)."""
    n, m = cost.shape
    wide = n <= m
    best = cost.argmin(axis=1 if wide else 0)
    feasible = cost.min(axis=1 if wide else 0) < _BIG
    chosen = best[feasible]
    if len(np.unique(chosen)) == len(chosen):
        mine = np.flatnonzero(feasible)
        return (mine, chosen) if wide else (chosen[np.argsort(chosen)], mine[np.argsort(chosen)])
    from scipy.optimize import linear_sum_assignment

    return linear_sum_assignment(cost)


class ConstantVelocity:
    """Alpha-beta filter on a constant-velocity model, reset on a manoeuvre.

    Collisions change velocity within one frame; when the innovation exceeds ``reset_mm`` the velocity
    is re-read from the last two positions instead of being blended, so the next prediction is not a
    frame late.
    """

    def __init__(self, alpha: float = 1.0, beta: float = 0.5, reset_mm: float = 4.0, min_dt_s: float = 1e-3):
        """``min_dt_s``: a step shorter than this (a repeated frame, a time stamped twice) moves the
        position only: a velocity read over it would be noise divided by almost nothing."""
        self.alpha, self.beta, self.reset_mm, self.min_dt_s = alpha, beta, reset_mm, min_dt_s

    def predict(self, pos: np.ndarray, vel: np.ndarray, dt_s: float) -> np.ndarray:
        return pos + vel * dt_s

    def update(self, pos: np.ndarray, vel: np.ndarray, z: np.ndarray, dt_s: float) -> tuple[np.ndarray, np.ndarray]:
        if dt_s < self.min_dt_s:
            return z.copy(), vel
        pred = self.predict(pos, vel, dt_s)
        innov = z - pred
        if float(np.hypot(*innov)) > self.reset_mm:
            return z.copy(), (z - pos) / dt_s
        return pred + self.alpha * innov, vel + self.beta * innov / dt_s


def euclidean(predicted_mm: np.ndarray, det: Detection) -> float:
    return math.dist(predicted_mm, det.centre_mm)


@dataclass
class _Live:
    """Mutable per-track bookkeeping inside the tracker (never handed out)."""

    piece: str
    kind: str
    owner: str | None
    radius_mm: float
    pos: np.ndarray
    vel: np.ndarray
    t_obs_s: float
    frame_obs: int
    misses: int = 0
    hidden_s: float = 0.0
    hidden_by: str | None = None
    hand_at_pit: bool = False  # while hidden, the hand over it reached the pit's rim
    open_since_s: float | None = None  # first missed in the open (no occluder over it) since last seen
    stirred_s: float | None = None  # unseen at rest: since when something could have moved it (Tracker._stir)
    own: tuple[np.ndarray, float] | None = None  # where and when last seen as its own class (Tracker._seen_as_itself)
    states: list[TrackState] = field(default_factory=list)
    left: str | None = None
    left_t_s: float | None = None
    left_where: str | None = None
    left_frame: int | None = None

    @property
    def cls(self):
        return (self.kind, self.owner)

    def track(self) -> Track:
        return Track(self.piece, self.kind, self.owner, self.radius_mm, tuple(self.states), self.left, self.left_t_s,
                     self.left_where, self.left_frame, self.hidden_by if self.left else None)


@dataclass
class _Tentative:
    det: Detection
    hits: int = 1
    first: Detection | None = None  # the first sighting: with ``det`` it gives the way the piece came
    earlier: tuple[Detection, ...] = ()  # the sightings before ``det``: they start its track once named


class Tracker:
    """Names the detections of each frame; keeps every piece's history and how it left.

    ``start(layout)`` sets the known pieces (ids from the previous state); ``update(detections)`` returns
    the same frame's detections with ``piece`` filled in (unnamed ones dropped) and extends the histories.
    """

    def __init__(self, surface: Surface, distance: Callable[[np.ndarray, Detection], float] = euclidean,
                 motion: ConstantVelocity | None = None, hit_min: int = 3, miss_max: int = 3,
                 hidden_max_s: float = 10.0, max_speed_mm_s: float = 9000.0, gate_margin_mm: float = 25.0,
                 occluder_margin_mm: float = 10.0, penetration_weight: float = 10.0, off_view_reach_mm: float = 400.0,
                 rest_miss_s: float = 0.5, rest_speed_mm_s: float = 50.0, still_mm_s: float = 15.0,
                 knock_mm_s: float = 500.0, doubt_mm: float = 2.5, doubt_kinds: tuple[str, ...] = ("pawn",),
                 overlap_mm: float = 6.0):
        """``rest_miss_s``: how long a piece at rest (slower than ``rest_speed_mm_s``) may go unseen in the
        open before it is given up: nothing but a hand moves a resting piece, so a few missed frames are the
        detector's, not the piece leaving (``miss_max`` frames still end a moving piece's track). A piece
        slower than ``still_mm_s`` that vanishes was taken, not pocketed; a marble that vanishes within
        two radii plus ``knock_mm_s`` x one frame of the pit's rim was knocked in.

        ``doubt_mm``: a resting piece of ``doubt_kinds`` seen more than this far from where it lay while a
        hand or the cue reaches over it (this frame or the last: the occluder's outline flickers) is not
        believed: a half-covered disc fits off-centre, and that phantom step would read as the piece being
        struck. It is kept where it lay, as if hidden, until it is seen clear of the occluder. The bat is
        left out (the cue moves it), and so are marbles (the flicking hand moves them). ``overlap_mm``: a resting
        piece seen off its place and this deep in a resting neighbour seen at its own is not believed
        (``_into_neighbour``)."""
        self.surface = surface
        self.distance = distance
        self.motion = motion or ConstantVelocity()
        self.hit_min, self.miss_max, self.hidden_max_s = hit_min, miss_max, hidden_max_s
        self.rest_miss_s, self.rest_speed_mm_s = rest_miss_s, rest_speed_mm_s
        self.still_mm_s, self.knock_mm_s = still_mm_s, knock_mm_s
        self.max_speed_mm_s, self.gate_margin_mm = max_speed_mm_s, gate_margin_mm
        self.occluder_margin_mm, self.penetration_weight = occluder_margin_mm, penetration_weight
        self.off_view_reach_mm = off_view_reach_mm
        self.doubt_mm, self.doubt_kinds, self.overlap_mm = doubt_mm, tuple(doubt_kinds), float(overlap_mm)
        self._last_occluders: tuple[Detection, ...] = ()
        self._game = game_class(surface.game)
        self._live: dict[str, _Live] = {}
        self._gone: dict[str, _Live] = {}
        self._roster = Roster(self._game)  # spare ids, expected placements, marbles out of view (vision.naming)
        self.just_left: list[Track] = []  # the tracks that ended in the last update
        self._tentative: list[_Tentative] = []
        self._t_s: float | None = None
        self._dt_s = 1.0 / 60.0

    # -- set-up ---------------------------------------------------------------------------------
    def start(self, layout: Mapping[str, Sequence[float]], frame: int, t_s: float, spares: Iterable[str] = ()) -> None:
        """Forget everything; the pieces in ``layout`` (id -> centre mm) are where the last state left them.
        ``spares`` are ids that may appear later (a marble rolling into view, a pawn put back by hand)."""
        self._live, self._gone, self._tentative, self._roster.expected = {}, {}, [], {}
        for piece, xy in layout.items():
            self._add(piece, np.asarray(xy, float), frame, t_s)
        self._roster.spares = [p for p in spares if p not in self._live]
        self._t_s = t_s

    def _add(self, piece: str, xy: np.ndarray, frame: int, t_s: float, observed: bool = True,
             row_after_s: float = 0.0) -> _Live:
        kind, owner = piece_kind(self._game, piece)
        live = _Live(piece, kind, owner, self.surface.radius(kind), xy.astype(float), np.zeros(2), t_s, frame)
        live.own = (live.pos, t_s)
        live.states.append(TrackState(piece, frame, t_s, (float(xy[0]), float(xy[1])), (0.0, 0.0), observed,
                                      row_after_s=row_after_s))
        self._live[piece] = live
        return live

    def off_view(self, positions: Mapping[str, Sequence[float]], spares: Iterable[str] | None = None,
                 behind: Iterable[str] | None = None) -> None:
        """Pieces the game state has on the surface but outside the camera's view (Cvrnkaná): one that
        rolls into view is named as the nearest of these of its owner before any other spare id.
        ``spares`` (in order of preference) replaces the ids that may still appear, e.g. the marbles
        behind the start lines, so a marble already in the pit is never given to a newcomer; ``behind``:
        those of them still behind the lines (default: all), which a marble rolling in from the lines'
        side takes first (rule 2)."""
        r = self._roster
        r.off_view = {p: (float(xy[0]), float(xy[1])) for p, xy in positions.items() if p not in self._live}
        r.sent_back = set(behind or ())
        if spares is not None:
            r.spares = [p for p in spares if p not in self._live]
            r.behind = set(r.spares) if behind is None else {p for p in behind if p in r.spares}

    def expect(self, placements: Mapping[str, Sequence[float]]) -> None:
        """Pieces a hand is about to put down where the rules say (a ruling's returns and penalty pawns):
        a piece that then appears near one of these spots gets that id, whether it was on the surface
        elsewhere, had left it, or was never seen. Without this a replaced piece would get any spare id."""
        for piece, xy in placements.items():
            piece_kind(self._game, piece)
            self._roster.expected[piece] = (float(xy[0]), float(xy[1]))

    def trim_history(self, keep_from_s: float) -> None:
        """Drop history older than ``keep_from_s`` (keeping at least the latest state of each piece). While
        a Cvrnkaná marble is out of sight, everyone's history is kept from as long before its last sighting:
        the shot it may turn out to be part of (flicked under the hand) starts there, with every piece's place."""
        now = self._t_s if self._t_s is not None else keep_from_s
        unseen = [l.t_obs_s for l in self._live.values() if self.surface.pit_radius_mm and l.t_obs_s < now]
        keep = min([keep_from_s] + [t - (now - keep_from_s) for t in unseen])
        for live in self._live.values():
            k = 0
            while k < len(live.states) - 1 and live.states[k].t_s < keep:
                k += 1
            if k:
                live.states = live.states[k:]

    def end_shot(self, keep_from_s: float) -> None:
        """A shot was read: forget the pieces that left (their ids may come back) and old history."""
        for piece in self._gone:
            if piece not in self._roster.spares:
                self._roster.spares.append(piece)
        self._gone = {}
        self.trim_history(keep_from_s)

    # -- results ----------------------------------------------------------------------------------
    @property
    def tracks(self) -> dict[str, Track]:
        """Every piece seen since ``start``/``reset_history``, including those that left."""
        out = {p: l.track() for p, l in self._gone.items()}
        out.update({p: l.track() for p, l in self._live.items()})
        return out

    def moving(self) -> bool:
        """Whether any piece on the surface was moving (faster than ``rest_speed_mm_s``) when last seen."""
        return any(float(np.hypot(*l.vel)) > self.rest_speed_mm_s for l in self._live.values())

    def missing(self) -> list[str]:
        """Pieces missed in the open in the last frames and not yet given up."""
        return [p for p, l in self._live.items() if l.misses > 0]

    def rolling_unseen(self) -> list[str]:
        """Pieces under an occluder now (the hand that follows a flick) that were rolling when last seen."""
        return [p for p, l in self._live.items()
                if l.hidden_by is not None and l.misses == 0 and float(np.hypot(*l.vel)) > self.rest_speed_mm_s]

    def conclude(self) -> list[str]:
        """The stream ended: every moving piece missed in the open is given up now (where it went is
        judged from its last sightings, as after ``miss_max`` frames), so the last shot's record does not
        keep a piece that was dropping into a pocket as it stopped; one at rest stays where it lay.
        Returns the pieces given up."""
        out = []
        t_s = self._t_s if self._t_s is not None else 0.0
        for l in [l for l in self._live.values() if l.misses > 0 and not self._resting_patience(l, t_s)]:
            self._give_up(l)
            out.append(l.piece)
        return out

    def positions(self) -> dict[str, tuple[float, float]]:
        return {p: (float(l.pos[0]), float(l.pos[1])) for p, l in self._live.items()}

    # -- the one method ------------------------------------------------------------------------
    def update(self, dets: Detections) -> Detections:
        t = dets.t_s
        self.just_left = []
        if self._t_s is not None and t > self._t_s:
            self._dt_s = t - self._t_s
        placed = self._placed(dets) if self._roster.expected else []
        lives = list(self._live.values())
        pieces = [d for d in dets.pieces() if all(d is not q for q, _ in placed)]
        preds = [self.motion.predict(l.pos, l.vel, t - l.t_obs_s) for l in lives]
        before = [l.pos for l in lives]  # (replaced, never changed in place, by an observation)
        cost = np.full((len(lives), len(pieces)), _BIG)
        gates = [0.0] * len(lives)
        beyond = [self.surface.walls and self.surface.outside_side(d.centre_mm) is not None for d in pieces]
        prev_t = self._t_s if self._t_s is not None else t
        for i, (l, p) in enumerate(zip(lives, preds)):
            # beyond a cushion line a piece is only one flying off: a piece last seen at rest is not there (#16:
            # on the independent renderer a pawn missed at rest by its cushion took a fit on the striker's hand,
            # 700 mm off beyond the other cushion, and was called off the board)
            still = float(np.hypot(*l.vel)) <= self.rest_speed_mm_s
            since = l.t_obs_s
            if still:  # it can have moved only since something came near it (Tracker._stir), or in this last step
                since = max(l.t_obs_s, l.stirred_s if l.stirred_s is not None else prev_t)
            gate = gates[i] = self._reach_mm(t - since)
            for j, d in enumerate(pieces):
                if d.cls == l.cls and not (still and beyond[j]):
                    dist = self.distance(p, d)
                    if dist <= gate:
                        cost[i, j] = dist
        pairs: dict[int, int] = {}
        if lives and pieces:
            rows, cols = _assignment(cost)
            pairs = {int(r): int(c) for r, c in zip(rows, cols) if cost[r, c] < _BIG}
            pairs = self._repair_swaps(lives, preds, pieces, cost, pairs)
            pairs.update(self._striker_blurred(lives, preds, pieces, pairs, gates, dets))
            pairs = struck_blurred(lives, preds, pieces, pairs, gates, self._game.piece_kind, self.rest_speed_mm_s,
                                   lambda l: self._reach_mm(t - l.t_obs_s),
                                   lambda xy, r: self._occluder_near(xy, r, dets) == "hand", self.distance)
        named = [d.named(p) for d, p in placed]
        # resting pieces seen off their place (``doubt_mm``): a half-covered disc, or a fit on a neighbour's edge
        strays = {i for i, j in pairs.items() if self._at_rest(lives[i]) and
                  math.dist(lives[i].pos, pieces[j].centre_mm) > self.doubt_mm}
        steady = {i: (lives[i].pos, lives[i].radius_mm) for i in pairs
                  if i not in strays and self._at_rest(lives[i])} if strays else {}
        for i, l in enumerate(lives):
            if i in strays and self._doubtful(l, pieces[pairs[i]], dets):
                self._coast(l, l.pos, dets, self._occluder_near(l.pos, l.radius_mm, dets) or "hand")
            elif i in pairs:
                d = pieces[pairs[i]]
                own = d.cls == l.cls
                if not own:  # (``_striker_blurred``, ``vision.struck_blurred``)
                    d = replace(d, kind=l.kind, owner=l.owner, radius_mm=l.radius_mm)
                if i in strays and self._into_neighbour(i, l, d, steady):
                    d = replace(d, centre_mm=(float(l.pos[0]), float(l.pos[1])))
                d = self._off_cushion(l, d)
                self._observe(l, d, dets, own)
                named.append(d.named(l.piece))
            else:
                self._miss(l, preds[i], dets)
        self._stir([l for i, l in enumerate(lives) if i not in pairs], lives, before, preds, prev_t)
        used = set(pairs.values())
        taken = list(named) + [_Spot(l.pos, l.radius_mm) for i, l in enumerate(lives) if i not in pairs]
        unmatched = [d for j, d in enumerate(pieces) if j not in used and not _overlaps(d, taken)]
        named.extend(self._tentatives(unmatched, dets))
        self._t_s = t
        self._last_occluders = tuple(dets.occluders())
        return Detections(dets.frame, t, tuple(named) + tuple(dets.occluders()))

    # -- internals -----------------------------------------------------------------------------
    def _observe(self, l: _Live, d: Detection, dets: Detections, own: bool = True) -> None:
        """``own``: ``d`` was seen as the piece's own class (not a disc of another taken for the striker)."""
        z = np.asarray(d.centre_mm, float)
        t = _seen_at(d, dets.t_s)  # its row's time (``vision.rows``): after its last sighting, whatever the rows
        if d.row_after_s and t <= l.t_obs_s:
            t = l.t_obs_s + 1e-4
        l.pos, l.vel = self.motion.update(l.pos, l.vel, z, t - l.t_obs_s)
        l.pos = z  # the record keeps what was measured; fitting happens in events
        l.t_obs_s, l.frame_obs, l.misses, l.hidden_s, l.hidden_by = t, dets.frame, 0, 0.0, None
        l.hand_at_pit, l.open_since_s, l.stirred_s = False, None, None
        l.states.append(TrackState(l.piece, dets.frame, t, (float(z[0]), float(z[1])),
                                   (float(l.vel[0]), float(l.vel[1])), True, row_after_s=t - dets.t_s))
        if own:
            l.own = (l.pos, t)

    def _stir(self, unseen: list[_Live], lives: list[_Live], before: list[np.ndarray], preds: list[np.ndarray],
              prev_t: float) -> None:
        """Mark the resting pieces unseen this frame that something could have moved since the last frame: a
        hand or the cue over them, or another piece whose step from the last frame to this one (as seen, or as
        predicted) came within touching distance plus ``gate_margin_mm``. Nothing else moves a piece at rest,
        so until then one unseen at rest is looked for only a frame's travel from where it lay (#16: on the
        independent renderer at 30 frames/s a pawn against a cushion, missed at rest for 0.17 s, took a fit
        973 mm away, where another lost pawn lay, and was called off the board before any shot)."""
        for l in unseen:
            if l.stirred_s is not None or float(np.hypot(*l.vel)) > self.rest_speed_mm_s:
                continue
            if l.hidden_by is not None:
                l.stirred_s = prev_t
                continue
            for m, a, pred in zip(lives, before, preds):
                b = m.pos if m.t_obs_s > prev_t else pred
                if m is l or float(np.hypot(*(b - a))) <= 5.0:
                    continue
                if nearest_on_steps(np.stack((a, b)), l.pos) <= l.radius_mm + m.radius_mm + self.gate_margin_mm:
                    l.stirred_s = prev_t
                    break

    def _off_cushion(self, l: _Live, d: Detection) -> Detection:
        """A piece at rest lies on the surface, so its centre is at least its radius inside each cushion: a fit of
        a piece past that line (away from a pocket's mouth) is put back on it unless it moves fast enough to leave
        the board over the cushion (``OFF_MIN_SPEED_MM_S``): only such a piece crosses the line (#16: on the
        independent renderer pawns resting against a cushion at 484 mm were fitted anywhere up to 495 mm, jumping
        from frame to frame: each jump read as a launch no contact explained, and right calls were flagged; a
        first jump of 2 mm made the piece "moving" at 110 mm/s, and the next fit, 8 mm past the line, was kept)."""
        s = self.surface
        x, y = d.centre_mm
        lim_x, lim_y = s.half_x_mm - l.radius_mm, s.half_y_mm - l.radius_mm
        if not s.walls or (-lim_x <= x <= lim_x and -lim_y <= y <= lim_y):
            return d  # (every frame, for every piece: the cheap test first)
        if float(np.hypot(*l.vel)) >= OFF_MIN_SPEED_MM_S or s.pocket_at(d.centre_mm, l.radius_mm):
            return d
        return replace(d, centre_mm=(min(max(x, -lim_x), lim_x), min(max(y, -lim_y), lim_y)))

    def _at_rest(self, l: _Live) -> bool:
        return float(np.hypot(*l.vel)) <= self.rest_speed_mm_s

    def _doubtful(self, l: _Live, d: Detection, dets: Detections) -> bool:
        """A resting piece seen off its place (a stray, ``update``) while an occluder reaches over it (see
        ``doubt_mm``)."""
        if l.kind not in self.doubt_kinds:
            return False
        return self._occluder_near(l.pos, l.radius_mm, dets) is not None or \
            self._occluder_near(d.centre_mm, l.radius_mm, dets) is not None

    def _into_neighbour(self, i: int, l: _Live, d: Detection, steady: dict[int, tuple]) -> bool:
        """A resting piece seen off its place (a stray), sunk more than ``overlap_mm`` into a resting neighbour
        seen at its own place (``steady``: index -> (place, radius)): two discs cannot overlap, and the neighbour
        would have moved had this one been pushed into it. The fit strayed onto the neighbour's edge (#16: on the
        independent renderer a pawn of the opening row, touching the next, was fitted 12 mm into it for five
        frames; the step out and back read as a shot). It is seen where it lay: it is there (its outline is),
        only its fit is not to be believed."""
        return any(j != i and math.dist(d.centre_mm, at) < r + l.radius_mm - self.overlap_mm
                   for j, (at, r) in steady.items())

    def _striker_blurred(self, lives, preds, pieces, pairs: dict[int, int], gates, dets: Detections) -> dict[int, int]:
        """The striker unmatched this frame, no hand over it (the cue, following through, may be), and a disc of
        another class that no track of its own class can take, within the striker's reach: the striker, its
        colour blurred by its speed towards a player's (#16: under blue and green pawns the struck bat was
        classed B's pawn on every frame of its slide; the stroke went unseen and the shot was refused, 'the bat
        must be on the board'). Shape and continuity first: a disc where only the bat can have got to is the
        bat. A bat at rest is struck away from the cushion behind it: a disc between it and that cushion (or past
        it) is the cue's tip, never the bat; it tells that the bat may move from now on (``stirred_s``), where
        the cue itself was not seen (#16: on the independent renderer a pale tip 17 mm past the line where the
        bat touches the south cushion, then two fits of it 8 and 23 mm behind the bat's place, were taken for
        the bat as it was struck; the bat 'went back and came off the cushion' unseen and the stroke was asked
        about as a ricochet, 'rebound_unseen')."""
        s = self._game.striker
        used = set(pairs.values())
        out: dict[int, int] = {}
        for i, l in enumerate(lives):
            if l.kind != s or i in pairs:
                continue
            mine = self._seen_as_itself(l, pieces, used, dets.t_s)
            if mine is not None:
                out[i] = mine
                used.add(mine)
                continue
            if self._occluder_near(preds[i], l.radius_mm, dets) == "hand":
                continue
            near = [j for j, d in enumerate(pieces) if j not in used and d.cls != l.cls
                    and self.distance(preds[i], d) <= gates[i]]
            behind = self._behind(l) if near and self._at_rest(l) else None
            tips = {j for j in near if behind(pieces[j].centre_mm)} if behind is not None else set()
            if tips and l.stirred_s is None:
                l.stirred_s = self._t_s  # the cue's tip at it
            free = [j for j in near if j not in tips
                    and unclaimed(pieces[j], lives, preds, gates, pairs, self.distance)]
            if free:
                out[i] = min(free, key=lambda j: self.distance(preds[i], pieces[j]))
                used.add(out[i])
        return out

    def _behind(self, l: _Live):
        """For a piece at rest: whether a place lies more than ``doubt_mm`` nearer the cushion nearest to it
        than it does (between it and that cushion, or past it); None on a field without cushions."""
        s = self.surface
        if not s.walls:
            return None
        x, y = float(l.pos[0]), float(l.pos[1])
        axis, sign = min(((0, 1.0), (0, -1.0), (1, 1.0), (1, -1.0)),
                         key=lambda a: (s.half_x_mm if a[0] == 0 else s.half_y_mm) - a[1] * (x, y)[a[0]])
        at = (x, y)[axis] * sign
        return lambda xy: xy[axis] * sign > at + self.doubt_mm

    def _seen_as_itself(self, l: _Live, pieces, used, t_s: float) -> int | None:
        """After a disc of another class was taken for the striker: the nearest detection of its own class, taken by
        no track, within its reach of where it was last seen as itself. Its own class first (#16: on the independent
        renderer, one of ten looks of opponent-off-direct at 60 fps, the cue's pale tip, fitted as A's pawn behind the
        bat as it was struck, was taken for the blurred bat: a step backwards, a prediction running south, and the
        bat seen as itself on its way north, outside that prediction's gate, was left unnamed while the track kept
        taking the tip; the bat was called off the south cushion and the stroke refused, 'the bat must be on the board')."""
        if l.own is None or l.own[1] >= l.t_obs_s:
            return None  # its last sighting was as itself: the gates of ``update`` stand
        reach = self._reach_mm(t_s - l.own[1])
        near = [(far, j) for j, d in enumerate(pieces) if j not in used and d.cls == l.cls
                and (far := math.dist(l.own[0], d.centre_mm)) <= reach]
        return min(near)[1] if near else None

    def _reach_mm(self, dt_s: float) -> float:
        """How far a piece can have got in ``dt_s`` (at most ``max_speed_mm_s``), with the gate's margin."""
        return self.gate_margin_mm + self.max_speed_mm_s * max(dt_s, 0.0)

    def _occluder_near(self, xy, radius_mm: float, dets: Detections) -> str | None:
        margin = radius_mm + self.occluder_margin_mm
        return dets.occluded(xy, margin) or Detections(dets.frame, dets.t_s, self._last_occluders).occluded(xy, margin)

    def _coast(self, l: _Live, pred: np.ndarray, dets: Detections, hidden: str) -> None:
        """Hidden: a resting piece stays, a moving one carries on along its line."""
        l.hidden_s += dets.t_s - (self._t_s if self._t_s is not None else dets.t_s)
        l.hidden_by = hidden
        pit_mm = self.surface.pit_radius_mm
        if hidden == "hand" and l.kind == "marble" and pit_mm:
            l.hand_at_pit = l.hand_at_pit or hand_reaches_pit(l, dets, pit_mm, self.occluder_margin_mm)
        l.states.append(TrackState(l.piece, dets.frame, dets.t_s, (float(pred[0]), float(pred[1])),
                                   (float(l.vel[0]), float(l.vel[1])), False, hidden))
        if l.hidden_s > self.hidden_max_s:
            self._leave(l, "lost", None)

    def _miss(self, l: _Live, pred: np.ndarray, dets: Detections) -> None:
        hidden = dets.occluded(pred, l.radius_mm + self.occluder_margin_mm) or \
            dets.occluded(l.pos, l.radius_mm + self.occluder_margin_mm)
        if hidden:
            self._coast(l, pred, dets, hidden)
            return
        l.misses += 1
        if l.open_since_s is None:
            l.open_since_s = dets.t_s
        l.states.append(TrackState(l.piece, dets.frame, dets.t_s, (float(pred[0]), float(pred[1])),
                                   (float(l.vel[0]), float(l.vel[1])), False))
        if l.misses >= self.miss_max and not self._resting_patience(l, dets.t_s):
            self._give_up(l)

    # -- how a track ends (vision.departure) --------------------------------------------------------
    def _to_pit(self, l: _Live) -> bool:
        return under_hand_to_pit(l, self._roster.expected, self._roster.sent_back)

    def _resting_patience(self, l: _Live, t_s: float) -> bool:
        """Whether a piece missed in the open is still given time (``departure.resting_patience``)."""
        return resting_patience(l, t_s, self.surface, self.rest_miss_s, self.rest_speed_mm_s, self._to_pit(l))

    def _give_up(self, l: _Live) -> None:
        """A piece vanished in the open: it left where ``departure.why_gone`` says."""
        self._leave(l, *why_gone(l, self.surface, self.miss_max, self.still_mm_s, self.knock_mm_s * self._dt_s,
                                 self._dt_s, self._to_pit(l)))

    def _leave(self, l: _Live, why: str, where: str | None) -> None:
        # drop the coasted states after the last sighting: they were guesses
        while l.states and not l.states[-1].observed and l.states[-1].frame > l.frame_obs:
            l.states.pop()
        l.left, l.left_t_s, l.left_where, l.left_frame = why, l.t_obs_s, where, l.frame_obs
        self._gone[l.piece] = l
        del self._live[l.piece]
        self.just_left.append(l.track())
        if why in ("pickup", "lost") and l.piece not in self._roster.spares:
            self._roster.spares.insert(0, l.piece)  # a hand took it: it comes back under its own id

    def _repair_swaps(self, lives, preds, pieces, cost, pairs: dict[int, int]) -> dict[int, int]:
        """2-opt over same-class pairs: prefer assignments whose straight paths keep discs apart."""
        def pair_cost(i, j, di, dj):
            if cost[i, di] >= _BIG or cost[j, dj] >= _BIG:
                return _BIG
            pen = _penetration(lives[i].pos, pieces[di].centre_mm, lives[j].pos, pieces[dj].centre_mm,
                               lives[i].radius_mm + lives[j].radius_mm)
            return cost[i, di] + cost[j, dj] + self.penetration_weight * pen

        keys = sorted(pairs)
        changed = True
        rounds = 0
        while changed and rounds < 4:
            changed, rounds = False, rounds + 1
            for a in range(len(keys)):
                for b in range(a + 1, len(keys)):
                    i, j = keys[a], keys[b]
                    if lives[i].cls != lives[j].cls:
                        continue
                    di, dj = pairs[i], pairs[j]
                    reach = lives[i].radius_mm + lives[j].radius_mm
                    if math.dist(lives[i].pos, lives[j].pos) > reach + cost[i, di] + cost[j, dj] + 1.0:
                        continue
                    now, swapped = pair_cost(i, j, di, dj), pair_cost(i, j, dj, di)
                    if swapped < now - 1e-9:
                        pairs[i], pairs[j] = dj, di
                        changed = True
        return pairs

    def _tentatives(self, unmatched: list[Detection], dets: Detections) -> list[Detection]:
        """Unexplained detections become tracks after ``hit_min`` frames in a row, with a spare id."""
        survivors, named = [], []
        for d in unmatched:
            best = None
            for tent in self._tentative:
                if tent.det.cls == d.cls and math.dist(tent.det.centre_mm, d.centre_mm) <= self.gate_margin_mm + \
                        self.max_speed_mm_s * max(d.t_s - tent.det.t_s, 1e-3):
                    if best is None or math.dist(tent.det.centre_mm, d.centre_mm) < math.dist(best.det.centre_mm, d.centre_mm):
                        best = tent
            if best is not None:
                self._tentative.remove(best)
                tent = _Tentative(d, best.hits + 1, best.first or best.det, best.earlier + (best.det,))
            else:
                tent = _Tentative(d, 1, d)
            if tent.hits >= self.hit_min:
                piece = hopped_pit(self._gone, d, tent.first, self._game, self.gate_margin_mm)
                if piece is not None:  # it rolled over the pit: the same marble, not one into it
                    self._revive(piece, d, dets, tent.earlier)
                    named.append(d.named(piece))
                    continue
                piece = self._roster.expected_for(d, self.gate_margin_mm)
                if piece is not None:
                    self._put_down(piece, d, dets)
                    named.append(d.named(piece))
                    continue
                back = self._bounced(tent.first) if self._on_surface(d) else None
                if back is None and self._bat_put_down(d, tent):
                    back, d = self._game.striker, replace(d, kind=self._game.striker, owner=None,
                                                          radius_mm=self.surface.radius(self._game.striker))
                piece = back or (self._spare_for(d, tent.first) if self._on_surface(d) and self._whole_once(tent) else None)
                if piece is not None and piece in self._gone and (back or self._gone[piece].left == "lost"):
                    # it vanished in the open during this shot (or was called over a cushion it came back off) and is
                    # back under its own name: one piece, one track (a fresh one would drop what it did before, its
                    # contacts with it)
                    self._revive(piece, d, dets, tent.earlier)
                    named.append(d.named(piece))
                    continue
                if piece is not None:
                    self._gone.pop(piece, None)
                    live = self._add(piece, np.asarray(d.centre_mm, float), d.frame, _seen_at(d, dets.t_s),
                                     row_after_s=d.row_after_s)
                    # the frames that earned it its name are its first sightings (a marble coming into view
                    # fast may meet another in them)
                    live.states[:0] = [TrackState(piece, e.frame, _seen_at(e), e.centre_mm, row_after_s=e.row_after_s)
                                       for e in tent.earlier]
                    named.append(d.named(piece))
                    continue
            survivors.append(tent)
        self._tentative = survivors
        return named

    #: on a board with cushions, the fit score (``Detection.score``) one of a newcomer's sightings needs
    newcomer_score = 0.8
    #: a piece called over a cushion and seen on the surface again this soon came back off the cushion
    bounce_back_s = 1.0

    def _bounced(self, first: Detection) -> str | None:
        """The piece a newcomer first seen at ``first`` is, back off a cushion it was called over (``departure.
        why_gone``: unseen against the cushion at speed) within ``bounce_back_s``, of its class and within its
        speed's reach of where it was last seen (on the independent renderer the bat, missed for three frames
        where it rebounded off the far cushion, was called off the board; back on its way it started a fresh
        track, and the shot's record lost the stroke: refused). Likewise a piece lost from sight in the open while
        it moved (#16: on the independent renderer a struck pale pawn was missed for most of its slide and called
        lost; its sightings at rest, with too faint an outline for a newcomer, stayed nameless until after the
        shot, and the referee was asked about a pawn lying in plain view)."""
        if not self.surface.walls:
            return None
        near = []
        for p, l in self._gone.items():
            if l.cls != first.cls or l.left_t_s is None:
                continue
            if l.left != "off" and not (l.left == "lost" and not self._at_rest(l)):
                continue
            dt = first.t_s - l.t_obs_s
            far = math.dist(l.pos, first.centre_mm)
            if 0.0 < dt <= self.bounce_back_s and far <= float(np.hypot(*l.vel)) * dt + self.gate_margin_mm:
                near.append((far, p))
        return min(near)[1] if near else None

    #: a newcomer that moved less than this since first seen lies where it was put down
    put_down_mm = 2.0

    def _bat_put_down(self, d: Detection, tent: _Tentative) -> bool:
        """A newcomer of a player's colour lying still and whole in a striking zone, while no bat is tracked: the
        bat, of a player's colour (a pawn put back by hand is expected where the rules put it, and named so
        before this) (#16, the harsher simulator's *everything*: a bat the colour of A's pawns and fitted a pawn's
        size was a pawn to the detector, never the bat; three strokes were refused, 'the bat must be on the
        board'). Shape and place first: nothing else of that colour can be there."""
        s = self._game.striker
        return (s is not None and s not in self._live and d.kind == self._game.piece_kind and self._on_surface(d)
                and self._whole_once(tent) and math.dist(tent.first.centre_mm, d.centre_mm) <= self.put_down_mm
                and self.surface.in_zone(d.centre_mm, self.surface.radius(s)))

    def _whole_once(self, tent: _Tentative) -> bool:
        """On a board with cushions a piece comes back by hand and lies still: a newcomer is named once one of
        its sightings shows a whole outline (bench/strata.py, everything: the cue's wooden tip behind the bat,
        a pawn's size and colour with 0.6-0.7 of an outline, the rest of it the stick, took a spare pawn's name
        at the stroke and was called off the board). A marble rolling into the view, smeared, needs none."""
        return not self.surface.walls or max(e.score for e in (*tent.earlier, tent.det)) >= self.newcomer_score

    def _on_surface(self, d: Detection) -> bool:
        """A newcomer starts on the playing surface: beyond a cushion line there is no surface to lie on
        (#16: on the independent renderer a fit on the cue over the frame, a pawn's size and colour for four
        frames, took a spare pawn's name off the board and the shot was refused). A game without cushions
        (the field's edge is only the camera's view) takes one from anywhere."""
        return not self.surface.walls or self.surface.outside_side(d.centre_mm) is None

    def _placed(self, dets: Detections) -> list[tuple[Detection, str]]:
        """Pieces put down where a ruling said, recognised on sight: a detection on an expected spot
        (within a radius) that no other live piece stands on is that piece, before any track that a
        hand hid nearby could claim it with a jump."""
        out = []
        for d in dets.pieces():
            piece = self._roster.expected_for(d, self.gate_margin_mm, d.radius_mm)
            if piece is None:
                continue
            if any(q != piece and l.hidden_by is None and math.dist(l.pos, d.centre_mm) <= d.radius_mm
                   for q, l in self._live.items()):
                continue  # a piece already lies there (the spot was taken): it keeps its own name
            self._put_down(piece, d, dets)
            out.append((d, piece))
        return out

    def _put_down(self, piece: str, d: Detection, dets: Detections) -> None:
        """``piece`` reappeared where the rules put it: continue its track (from wherever it was)."""
        del self._roster.expected[piece]
        self._revive(piece, d, dets)

    def _revive(self, piece: str, d: Detection, dets: Detections, earlier: Sequence[Detection] = ()) -> None:
        """Continue ``piece``'s track (live or ended) from ``d``, after the sightings ``earlier``."""
        xy = np.asarray(d.centre_mm, float)
        old = self._live.pop(piece, None) or self._gone.pop(piece, None)
        self._roster.take(piece)
        if old is None:
            live = self._add(piece, xy, d.frame, _seen_at(d, dets.t_s), row_after_s=d.row_after_s)
        else:
            live = old
            live.left = live.left_t_s = live.left_where = live.left_frame = None
            live.pos, live.vel, live.misses, live.hidden_s, live.hidden_by = xy, np.zeros(2), 0, 0.0, None
            live.states += [TrackState(piece, e.frame, _seen_at(e), e.centre_mm, row_after_s=e.row_after_s)
                            for e in earlier]
            live.states.append(TrackState(piece, d.frame, _seen_at(d, dets.t_s), (float(xy[0]), float(xy[1])),
                                          row_after_s=d.row_after_s))
            self._live[piece] = live
        live.t_obs_s, live.frame_obs = _seen_at(d, dets.t_s), d.frame
        if d.cls == live.cls:
            live.own = (live.pos, live.t_obs_s)

    def _spare_for(self, d: Detection, first: Detection | None = None) -> str | None:
        return self._roster.spare_id(d, first, self._live, self.off_view_reach_mm)


@dataclass(frozen=True)
class _Spot:
    """Where a live piece is taken to be this frame though no detection was given to it."""

    centre_mm: tuple[float, float]
    radius_mm: float


def _overlaps(d: Detection, taken, share: float = 0.5) -> bool:
    """Two discs cannot overlap: a detection whose centre lies within ``share`` of the sum of radii of a
    piece already accounted for is a second view of that piece (a duplicate fit), never a new piece."""
    return any(math.dist(d.centre_mm, t.centre_mm) < share * (d.radius_mm + t.radius_mm) for t in taken)


def _penetration(p0, p1, q0, q1, reach: float) -> float:
    """How far two discs moving straight from p0->p1 and q0->q1 over the same interval come inside ``reach``
    of each other (0 when they stay apart or started overlapping already)."""
    d0 = np.asarray(q0, float) - np.asarray(p0, float)
    dd = (np.asarray(q1, float) - np.asarray(q0, float)) - (np.asarray(p1, float) - np.asarray(p0, float))
    a = float(dd @ dd)
    s = 0.0 if a < 1e-12 else min(max(-float(d0 @ dd) / a, 0.0), 1.0)
    closest = float(np.hypot(*(d0 + s * dd)))
    start = float(np.hypot(*d0))
    limit = min(reach, start) * 0.9
    return max(0.0, limit - closest)


def _seen_at(d: Detection, t_s: float | None = None) -> float:
    """When ``d`` was seen: its frame's time (``t_s``, else its own stamp) plus its row's delay (``vision.rows``)."""
    return (d.t_s if t_s is None else t_s) + d.row_after_s
