"""Shot segmentation: idle -> the striker starts moving -> everything has stopped -> one shot.

Novuss: a shot starts when the bat moves away from its resting place with no hand on it (a hand placing
the bat, or putting a pawn back, is not a shot); a pawn that sets off on its own, no hand near, starts one
too (the stroke was not seen: the video began during it, or the bat was not recognised), which the shot's
record flags for the referee. Cvrnkaná: any marble that moves starts a flick, hand or
not (rule 7d: any touch of a marble counts), and so does a marble appearing from outside the view (an
opening flick from the start line). A shot ends once no piece has moved more than ``still_mm`` for
``still_s`` and no hand or cue is over a piece.
"""
from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from typing import Mapping

from rules.game import game_class

from .board import Surface
from .types import Detections

__all__ = ["ShotSegmenter", "ShotWindow"]


@dataclass(frozen=True)
class ShotWindow:
    """One shot's span: from the last idle frame before motion to the frame everything was still again."""

    t0_s: float
    t1_s: float
    frame0: int
    frame1: int
    before: Mapping[str, tuple[float, float]]  # resting positions at the start (mean of the idle frames)
    after: Mapping[str, tuple[float, float]]  # resting positions at the end
    starter: str  # the piece whose motion started the shot
    timed_out: bool = False
    #: spans with frames missing (lost, or a stalled stream): consecutive frame times of the shot more than
    #: ``ShotSegmenter.gap_frames`` typical intervals apart; what happened inside one was not seen
    gaps: tuple[tuple[float, float], ...] = ()
    #: the frames that showed a hand, from ``still_s`` before the shot to its end (their occluders only): where
    #: a hand was when a piece set off tells a touch from a contact the camera missed
    hands: tuple[Detections, ...] = ()

    def hand_near(self, xy, t_s: float, margin_mm: float, before_s: float, after_s: float) -> bool:
        """Whether a hand was seen within ``margin_mm`` of ``xy`` from ``before_s`` before ``t_s`` to ``after_s``
        after it."""
        return any(t_s - before_s <= h.t_s <= t_s + after_s and h.occluded(xy, margin_mm) == "hand"
                   for h in self.hands)


class ShotSegmenter:
    """Feed it every tracked frame (named detections); it returns a ShotWindow when a shot has ended."""

    #: a piece set off with no stroke seen does not start a shot while its fit lies this far over another piece
    #: (seen in the same frame, or unseen at its resting place) (#16, compressed-2mbit: at the opening a pawn's
    #: fit in the row by the cushion slid 13 mm onto its neighbour; the shot so opened swallowed the real stroke,
    #: and was refused: the bat was not yet down)
    overlap_mm = 4.0
    #: a piece that went from one rest to another this close with no sighting between did not move: its fit
    #: did (``_refits_only``); a struck piece is seen on its way at any frame rate
    jump_mm = 12.0

    def __init__(self, game: str, move_mm: float = 4.0, still_mm: float = 1.5, still_s: float = 0.3,
                 hand_margin_mm: float = 30.0, max_shot_s: float = 30.0, rest_frames: int = 8,
                 surface: Surface | None = None, entry_frames: int = 4, edge_mm: float = 40.0, gap_frames: float = 2.5,
                 launch_mm: float = 12.0):
        self.game = game
        self.spec = game_class(game)  # the game's flags (class-level: no geometry needed)
        self.surface = surface
        self.entry_frames, self.edge_mm = entry_frames, edge_mm
        self.move_mm, self.still_mm, self.still_s = move_mm, still_mm, still_s
        self.hand_margin_mm, self.max_shot_s, self.rest_frames = hand_margin_mm, max_shot_s, rest_frames
        self.gap_frames = gap_frames
        #: where the game has a striker, a piece other than it that travels this far on its own (no stroke seen,
        #: no hand near) starts a shot all the same
        self.launch_mm = launch_mm
        self._clock: deque = deque(maxlen=8192)  # the times of the frames seen lately (every state)
        self._hands: deque = deque()  # the frames with a hand lately (idle: ``still_s``; during a shot: all of it)
        self.state = "idle"
        self._rest: dict[str, tuple[float, float]] = {}
        self._recent: dict[str, deque] = {}
        self._hist: deque = deque()
        self._start: tuple[float, int, dict, str] | None = None
        self._last_frame: tuple[float, int] | None = None
        self._settled: set[str] = set()  # pieces seen resting since they appeared: only they can start a shot
        self._fresh: dict[str, tuple[float, tuple[float, float]]] = {}  # first sighting of a new piece
        self._seen_last: set[str] = set()  # the pieces seen in the previous frame
        self._placing: set[str] = set()  # pieces a hand is about to put down where the rules say
        self._path: dict[str, list] = {}  # each piece's sightings since the shot began
        self._covered = False  # a hand or the cue in view since ``still_s`` before the shot began
        self._unconfirmed: set[str] = set()  # pieces at the game state's places, not seen here since (``_confirm``)

    def seed(self, positions: Mapping[str, tuple[float, float]]) -> None:
        """Resting positions known from the game state (before the first frame)."""
        self._rest = {p: (float(x), float(y)) for p, (x, y) in positions.items()}
        self._settled = set(self._rest)
        self._unconfirmed = set(self._rest)

    def expect(self, pieces) -> None:
        """Pieces the rules have a hand put down (a ruling's returns): seen again away from their rest,
        they were placed, not moved in play."""
        self._placing |= set(pieces)

    def update(self, dets: Detections, hold: bool = False) -> ShotWindow | None:
        """``hold``: a piece out of sight may still be rolling (the tracker says so): the shot goes on."""
        seen = {d.piece: d for d in dets.pieces() if d.piece}
        now = (dets.t_s, dets.frame)
        self._clock.append(dets.t_s)
        occluders = dets.occluders()
        self._hist.append((dets.t_s, {p: d.centre_mm for p, d in seen.items()}, dets if occluders else None))
        self._note_hands(dets, occluders)
        # keep the newest frame at or before the window's start: the window then spans at least
        # ``still_s`` whatever the frame times (jittered, dropped, drifting), not only at index/fps
        cut = dets.t_s - max(self.still_s, 0.05) + 1e-9
        while len(self._hist) > 1 and self._hist[1][0] <= cut:
            self._hist.popleft()
        for p, d in seen.items():
            self._recent.setdefault(p, deque(maxlen=self.rest_frames)).append(d.centre_mm)
        out = None
        if self.state == "idle":
            if self._unconfirmed:
                self._confirm(seen, dets)
            self._reappeared(seen)
            for p, q in self._recent.items():
                if p in seen and len(q) >= self.rest_frames // 2 and _spread(q) <= self.still_mm:
                    self._settled.add(p)
            starter = self._starter(seen, dets, new=self._entered(seen))
            if starter is not None:
                t_prev, f_prev = self._last_frame or now
                self._start = (t_prev, f_prev, dict(self._rest), starter)
                self.state = "moving"
                self._path = {p: list(self._recent.get(p, ())) for p in seen}  # from the frames before it, too
                self._covered = any(occ is not None for _, _, occ in self._hist)
            else:
                for p, q in self._recent.items():
                    if p in seen and q and (len(q) >= 2 or p not in self._rest):
                        self._rest[p] = _mean(q)
        elif self.state == "moving":
            t0 = self._start[0]
            for p, d in seen.items():
                self._path.setdefault(p, []).append(d.centre_mm)
            self._covered = self._covered or bool(occluders)
            still = self._still(seen, dets) and not hold
            if still or dets.t_s - t0 > self.max_shot_s:
                t_s0, f0, before, starter = self._start
                after = self._resting(seen) if still else {p: d.centre_mm for p, d in seen.items()}
                # a piece that left (pocket, pit, out of view) keeps no history: if it comes back (a
                # ruling returns it) its old sightings would read as a move from there
                self._recent = {p: deque([xy], maxlen=self.rest_frames) for p, xy in after.items()}
                self._settled = set(after) if still else set()
                self._fresh.clear()
                out = ShotWindow(t_s0, dets.t_s, f0, dets.frame, before, after, starter, timed_out=not still,
                                 gaps=self.gaps(t_s0, dets.t_s), hands=tuple(self._hands))
                if still and self._refits_only(out):
                    out = None
                self._rest = dict(after)
                self.state = "idle"
        self._last_frame = now
        self._seen_last = set(seen)
        return out

    def _refits_only(self, w: ShotWindow) -> bool:
        """Whether nothing moved in ``w`` but fits: every piece seen before is seen after, each either where it
        rested or within ``jump_mm`` of it, and never seen between the two (no sighting ``still_mm`` off both),
        with no hand or cue in view and frames missing for less than ``still_s`` in all. A piece at rest
        cannot get somewhere in one frame and stop dead there; a fit can, refitted (#16, *everything* at 30 fps: a bat's cached fit 7 mm off its
        outline was refitted after a second, and the 8 mm jump opened a shot the game never had). A stream that
        stops one frame after such a jump (``flush``) shows no more: one sighting off its rest is no shot's
        evidence either."""
        if sum(b - a for a, b in w.gaps) >= self.still_s or self._covered or set(w.before) != set(w.after):
            return False
        for p, rest in w.before.items():
            path = self._path.get(p, [])
            end = path[-1] if path else w.after[p]
            if math.dist(rest, end) > self.jump_mm:
                return False
            if any(min(math.dist(rest, xy), math.dist(end, xy)) > self.still_mm for xy in path):
                return False
        return True

    def _confirm(self, seen, dets: Detections) -> None:
        """A piece at the place the game state gives (``seed``), first seen here within ``jump_mm`` of it
        with no hand near it since, rests where it is seen: the state's place and the camera's fit of a faint
        piece differ by the fit's error, and nothing can have moved a piece no hand came near before any
        shot. Left at the state's place, the first sighting of a piece missed at first read as a move, and a
        Cvrnkaná marble moved is a flick (#16, bench/strata.py, everything: a marble of the ground's shade at
        rest, first seen on the second frame 4.5 mm from the state's place, opened a shot at 0.00 s)."""
        for p in list(self._unconfirmed):
            rest = self._rest.get(p)
            if rest is None or dets.occluded(rest, self.hand_margin_mm) == "hand":
                self._unconfirmed.discard(p)  # a hand came near: a first sighting elsewhere may be a move
            elif p in seen:
                self._unconfirmed.discard(p)
                xy = seen[p].centre_mm
                if math.dist(rest, xy) <= self.jump_mm:
                    self._rest[p] = xy
                    self._recent[p] = deque([xy], maxlen=self.rest_frames)

    def _reappeared(self, seen) -> None:
        """A piece seen again after it was out of sight (under a hand, carried off, lost by the tracker)
        at a place away from its rest was put there (the bat laid down for the next stroke, a pawn put
        back after a ruling), or is already on its way: either way its old rest and history say nothing
        about it now. Its rest starts again from here, so the frames that follow tell whether it moves;
        left as it was, the rest would slide from the old place to the new one over the following frames
        and read as a stroke once the hand had gone. Not so a Cvrnkaná marble (unless a ruling had a hand
        put it there): one seen away from its rest moved under the hand, and any touch is a flick (7d)."""
        for p, d in seen.items():
            if p in self._seen_last:
                continue
            if p not in self._rest:  # new on the surface (or back): its history starts here
                self._recent[p] = deque([d.centre_mm], maxlen=self.rest_frames)
                continue
            if math.dist(self._rest[p], d.centre_mm) > self.move_mm:
                if self.spec.unexplained_launch == "touch" and p not in self._placing:
                    continue  # moved while out of sight, flicked or nudged under the hand: a shot (7d)
                self._placing.discard(p)
                self._rest[p] = d.centre_mm
                self._recent[p] = deque([d.centre_mm], maxlen=self.rest_frames)

    def open(self, starter: str, t_s: float, frame: int) -> None:
        """A shot began at ``t_s`` with ``starter`` though nothing was seen moving (Cvrnkaná: a marble
        flicked into the pit under the hand that hid it); it ends as any other, once all is still."""
        if self.state == "idle":
            self._start = (t_s, frame, dict(self._rest), starter)
            self.state = "moving"

    def off_rest(self, piece: str, xy, share: float = 0.5) -> bool:
        """Whether ``xy`` lies off ``piece``'s resting place by more than ``share`` of ``move_mm`` (and at least
        ``still_mm``): the piece had begun to move."""
        rest = self._rest.get(piece)
        return rest is not None and math.dist(rest, xy) > max(share * self.move_mm, self.still_mm)

    def flush(self, t_s: float | None = None) -> ShotWindow | None:
        """End a shot in progress now (the stream stopped)."""
        if self.state != "moving" or self._last_frame is None:
            return None
        t_s0, f0, before, starter = self._start
        t1, f1 = self._last_frame
        after = {p: _mean(q) for p, q in self._recent.items() if q}
        self.state = "idle"
        w = ShotWindow(t_s0, t1 if t_s is None else t_s, f0, f1, before, after, starter, timed_out=True,
                       gaps=self.gaps(t_s0, t1), hands=tuple(self._hands))
        return None if self._refits_only(w) else w

    def _note_hands(self, dets: Detections, occluders) -> None:
        """Keep the frame's hands (see ``ShotWindow.hands``): while idle only the last ``still_s``, during a
        shot everything since ``still_s`` before it began."""
        hands = tuple(d for d in occluders if d.kind == "hand")
        if hands:
            self._hands.append(Detections(dets.frame, dets.t_s, hands))
        since = (self._start[0] if self.state == "moving" and self._start else dets.t_s) - self.still_s
        while self._hands and self._hands[0].t_s < since - 1e-9:
            self._hands.popleft()

    def gaps(self, t0_s: float, t1_s: float) -> tuple[tuple[float, float], ...]:
        """The spans between ``t0_s`` and ``t1_s`` where frames are missing (see ``ShotWindow.gaps``): two
        frames seen one after the other more than ``gap_frames`` typical intervals (the median lately) apart."""
        ts = list(self._clock)
        steps = sorted(b - a for a, b in zip(ts, ts[1:]) if b > a)
        if not steps:
            return ()
        typical = steps[len(steps) // 2]
        return tuple((a, b) for a, b in zip(ts, ts[1:])
                     if b - a > self.gap_frames * typical and b >= t0_s - 1e-9 and a <= t1_s + 1e-9)

    def _hand_near(self, points) -> bool:
        """A hand over any of ``points`` in the recent frames: whatever moved there was moved by hand."""
        return any(occ is not None and any(occ.occluded(xy, self.hand_margin_mm) == "hand" for xy in points)
                   for _, _, occ in self._hist)

    def _entered(self, seen) -> list[str]:
        """Pieces that rolled into the camera's view from outside it (Cvrnkaná: an opening flick from
        the start line). A piece that appears inside the view (put down by a hand, lifted out of the
        pit) is not one: its first two sightings, run back over the frames the tracker needed to name
        it, must reach the edge of the view."""
        out = []
        now = self._hist[-1][0]
        for p, d in seen.items():
            if p in self._rest and p not in self._fresh:
                continue
            if p not in self._fresh:
                self._fresh[p] = (now, d.centre_mm)
                continue
            t1, xy1 = self._fresh[p]
            if d.centre_mm == xy1:  # the very same sighting again (a stream repeating its picture): no motion seen yet
                continue
            del self._fresh[p]
            if self.surface is None or now <= t1:
                out.append(p)
                continue
            v = ((d.centre_mm[0] - xy1[0]) / (now - t1), (d.centre_mm[1] - xy1[1]) / (now - t1))
            back = self.entry_frames * (now - t1)
            start = (xy1[0] - v[0] * back, xy1[1] - v[1] * back)
            if self.surface.outside_side(start, -self.edge_mm) is not None:
                out.append(p)
        return out

    def _starter(self, seen, dets: Detections, new: list[str]) -> str | None:
        moved = []
        for p, d in seen.items():
            rest = self._rest.get(p)
            if rest is None or p not in self._settled:
                continue
            shift = math.dist(rest, d.centre_mm)
            if shift > self.move_mm:
                moved.append((shift, p, d))
        for shift, p, d in sorted(moved, reverse=True):
            if self.spec.striker is None:  # no striker: any piece that moves starts the shot
                return p
            if p == self.spec.striker and not self._hand_near((d.centre_mm, self._rest[p])):
                return p
        if not self.spec.sees_whole_field and new:  # rolled in from outside the view
            return sorted(new)[0]
        if self.spec.striker is not None:
            by_hand = {p for _, p, d in moved if self._hand_near((d.centre_mm, self._rest[p]))}
            for _, p, d in moved:  # a piece moved by hand: its new place is its rest
                if p in by_hand:
                    self._recent[p].clear()
                    self._recent[p].append(d.centre_mm)
                    self._rest[p] = d.centre_mm
            # a piece set off with no stroke seen and no hand near (the video began during the stroke, or the
            # striker was not recognised): a shot all the same, which the record flags (``stroke_unseen``)
            for _, p, d in sorted(moved, key=lambda m: (-m[0], m[1])):
                if p != self.spec.striker and p not in by_hand and _travelling(self._recent[p], self.launch_mm) \
                        and not _overlapping(d, [e.centre_mm for q, e in seen.items() if q != p]
                                             + [xy for q, xy in self._rest.items() if q not in seen], self.overlap_mm):
                    return p
        return None

    def _still(self, seen, dets: Detections) -> bool:
        """Every piece in view stayed within ``still_mm`` of where it is now for the last ``still_s``
        (a piece under a hand is not in view: a player reaching for the bat does not hold the shot open).

        Every frame of the window counts, not only its first: a piece that bounced off a cushion and
        came back to the same spot within the window is still moving. A piece seen for less than half
        the window, away from where it was last seen (out from under the hand that followed it), is not
        known to be still yet."""
        if not self._hist or self._hist[-1][0] - self._hist[0][0] < self.still_s - 1e-6:
            return False
        for p, d in seen.items():
            xy = d.centre_mm
            if any(p in pos and math.dist(pos[p], xy) > self.still_mm for _, pos, _ in self._hist) and \
                    not self._strays_only([pos[p] for _, pos, _ in self._hist if p in pos]):
                return False
            times = [t for t, pos, _ in self._hist if p in pos]
            back = self._recent.get(p, ())
            if times[-1] - times[0] < 0.5 * self.still_s and len(back) >= 2 and math.dist(back[-2], xy) > self.still_mm:
                return False  # just back in sight somewhere else (from under a hand): not yet known still
        # a piece that was moving when it went out of sight (under the hand that follows a flick) may
        # still be moving: the shot stays open until its last sightings have left the window
        for p in {p for _, pos, _ in self._hist for p in pos} - set(seen):
            pts = [pos[p] for _, pos, _ in self._hist if p in pos]
            if len(pts) >= 2 and math.dist(pts[0], pts[-1]) > self.still_mm:
                return False
        return True

    #: of a resting piece's sightings in the still window, at most this share may stray from the rest (``_strays_only``)
    stray_share = 0.25

    def _strays_only(self, pts) -> bool:
        """A piece at rest whose fit strays for a frame or two and comes back: at most ``stray_share`` of its
        sightings lie beyond ``still_mm`` of their median, none beyond ``move_mm`` (what starts a shot), neither the
        window's first nor its last (a piece settling into its place strays at the start), and the window's two
        halves rest at the same place (a piece creeping on moves its median) (#16: on the
        independent renderer a pawn resting against a cushion was fitted 2-4 mm inside it on one frame in
        ten; the shot never ended, a pawn put back by hand on the centre spot was seen during it and took a
        spare name, and the record was refused, 'B2 appears but was not on the board')."""
        if len(pts) < 4 or math.dist(pts[0], pts[-1]) > 2.0 * self.still_mm:
            return False  # (the first and the last within still_mm of one median: the cheap test first)
        med = _median(pts)
        far = [math.dist(q, med) for q in pts]
        if max(far) > self.move_mm or sum(f > self.still_mm for f in far) > self.stray_share * len(pts) or \
                far[0] > self.still_mm or far[-1] > self.still_mm:  # (a stray comes back; a piece settling does not)
            return False
        half = len(pts) // 2
        return math.dist(_median(pts[:half]), _median(pts[half:])) <= self.still_mm

    def _resting(self, seen) -> dict[str, tuple[float, float]]:
        """Resting places at the end of a shot: the mean over the still window (all within ``still_mm``)."""
        out = {}
        for p in seen:
            pts = [pos[p] for _, pos, _ in self._hist if p in pos]
            out[p] = _mean(pts)
        return out


def _travelling(q, min_mm: float, step_mm: float = 1.0, cos_min: float = 0.8) -> bool:
    """Whether the last three sightings in ``q`` are a piece on its way: two steps of at least ``step_mm`` the
    same way, together over ``min_mm``. A resting fit that jumps (a refit against a cushion, two names
    swapped) makes one step and then none; a piece that was struck makes both."""
    if len(q) < 3:
        return False
    (x0, y0), (x1, y1), (x2, y2) = q[-3], q[-2], q[-1]
    a, b = (x1 - x0, y1 - y0), (x2 - x1, y2 - y1)
    la, lb = math.hypot(*a), math.hypot(*b)
    if la < step_mm or lb < step_mm or math.dist(q[-3], q[-1]) < min_mm:
        return False
    return (a[0] * b[0] + a[1] * b[1]) >= cos_min * la * lb


def _overlapping(d, others, overlap_mm: float) -> bool:
    """Whether ``d`` lies over another piece (``others``: the centres of those seen in the same frame and the
    resting places of those unseen, taken of ``d``'s size) by more than ``overlap_mm``: two discs cannot, so the
    fit is wrong (a resting pawn's fit slid onto the neighbour it touches, missed in that frame)."""
    return any(math.dist(xy, d.centre_mm) < 2.0 * d.radius_mm - overlap_mm for xy in others)


def _spread(q) -> float:
    m = _mean(q)
    return max(math.dist(m, xy) for xy in q)


def _mean(q) -> tuple[float, float]:
    xs = [x for x, _ in q]
    ys = [y for _, y in q]
    return (sum(xs) / len(xs), sum(ys) / len(ys))


def _median(q) -> tuple[float, float]:
    xs = sorted(x for x, _ in q)
    ys = sorted(y for _, y in q)
    n = len(xs)
    return ((xs[(n - 1) // 2] + xs[n // 2]) / 2.0, (ys[(n - 1) // 2] + ys[n // 2]) / 2.0)
