"""Frames in, shots out: detector -> tracker -> segmenter -> events -> ``VisionShot``.

``Vision`` is the one seam between the judge and vision: ``start(hints, frame, t_s)`` once, ``feed(frame)``
for every frame (a ``VisionShot`` when a shot has ended, else None), ``tell(hints)`` after every judged
shot or referee action (``rules.Hints``: who is to move, pieces about to be put down, marbles out of view),
``in_shot`` and ``finish()`` when the stream ends; ``prepare(image)`` is the work on a frame's image alone, which
the live loop does on its capture thread (None: none). ``Pipeline`` is vision's implementation of it; each
stage is a value with settings and one method, and only ``Detections`` pass between them.
"""
from __future__ import annotations

import time
from dataclasses import replace
from typing import Any, Mapping, Protocol, runtime_checkable

import numpy as np

from rules.game import piece_key
from rules.hints import Hints

from .board import Surface
from .rows import RowClock
from .segmenter import ShotSegmenter
from .shot import ShotAssembler, VisionShot
from .tracker import Tracker
from .types import Detections

__all__ = ["Pipeline", "Vision", "VisionShot"]


@runtime_checkable
class Vision(Protocol):
    """What the judge drives; a scripted stand-in in tests implements the same members (its ``prepare``
    returns None)."""

    @property
    def in_shot(self) -> bool: ...

    def start(self, hints: Hints, frame: int, t_s: float) -> None: ...

    def feed(self, frame: Any) -> VisionShot | None: ...

    def tell(self, hints: Hints) -> None: ...

    def finish(self, t_s: float | None = None) -> VisionShot | None: ...

    def positions(self) -> dict[str, tuple[float, float]]: ...

    def prepare(self, image: Any) -> Any: ...


class Pipeline:
    """The vision pipeline on one profile. ``feed`` takes a frame (anything with ``image``, ``index`` and
    ``t_s``: the detector runs on it) or ``Detections`` already made (a bench's oracle, a test)."""

    def __init__(self, profile, detector=None, tracker: Tracker | None = None, segmenter: ShotSegmenter | None = None,
                 assembler: ShotAssembler | None = None, preroll_s: float = 0.5, calibration_rms_mm: float = 0.5,
                 repeat_max_s: float = 0.1, rows: RowClock | None = None):
        """``rows``: the camera's rolling shutter (each sighting dated by its row); None: a global shutter."""
        self.profile = profile
        self.spec = profile.spec
        self.surface = Surface.from_profile(profile)
        self.detector = detector
        self.tracker = tracker or Tracker(self.surface)
        self.segmenter = segmenter or ShotSegmenter(profile.game, surface=self.surface)
        self.assembler = assembler or ShotAssembler(profile, calibration_rms_mm=calibration_rms_mm)
        self.preroll_s = preroll_s
        self.rows = rows
        self.shots: list[VisionShot] = []
        self.player: str | None = None
        self._pending = None
        #: the last frame's detections, named by the tracker (for a bench's identity scoring)
        self.last_named: Detections | None = None
        #: seconds spent per stage since the start (detect, track+events)
        self.timings = {"detect": 0.0, "track+events": 0.0}
        #: frames not tracked, by why: ``repeated`` (the same time again, or the same picture again while
        #: pieces moved) and ``backwards`` (a time before the last frame's)
        self.skipped = {"repeated": 0, "backwards": 0}
        self.repeat_max_s = repeat_max_s
        self._last_t: float | None = None
        self._last_image = None
        self._last_seen: tuple | None = None  # (the last tracked frame's pieces, when that picture was new)

    # ----- the seam ----------------------------------------------------------------------------------
    def start(self, hints: Hints, frame: int = 0, t_s: float = 0.0) -> None:
        """Tracking starts from the pieces the state has on the surface inside the camera's view; the
        detector learns their colours on the next frame; the rest of ``hints`` is told as by ``tell``."""
        layout = {p: (float(x), float(y)) for p, (x, y) in hints.layout.items()
                  if self.spec.sees_whole_field or self.spec.in_view((x, y))}
        if layout and self.detector is not None:
            self.detector.expect(layout)
        spares = hints.spares
        if spares is None:
            spares = tuple(sorted(self.spec.ids() - set(layout), key=piece_key))
        self.tracker.start(layout, frame, t_s, spares)
        self.segmenter.seed(layout)
        self._last_t, self._last_image, self._last_seen = None, None, None  # the first frame may be at t_s itself
        self.tell(hints)

    def tell(self, hints: Hints) -> None:
        """What the game state says now: who is to move, the pieces about to be put down by hand (they
        keep their ids when they appear there) and, where the camera does not see the whole field, the
        marbles the state has outside its view (one that rolls into view keeps its id and its known place
        is its place before the shot) and the ids that may still come into play."""
        self.player = hints.player
        turn = getattr(self.detector, "turn", None)  # a detector that finds the mover's pieces by their shape
        if turn is not None:
            turn(hints.player)
        if not self.spec.sees_whole_field:
            out = {p: (float(x), float(y)) for p, (x, y) in hints.layout.items() if not self.spec.in_view((x, y))}
            self.tracker.off_view(out, hints.spares, hints.behind)
            self.assembler.off_view = out
        if hints.placements:
            self.tracker.expect(hints.placements)
            self.segmenter.expect(hints.placements)
            placing = getattr(self.detector, "placing", None)  # a detector that looks for the bat by its place
            if placing is not None:
                placing(hints.placements)

    @property
    def in_shot(self) -> bool:
        """Whether a shot is under way: pieces moving, or a shot that has ended but waits for the tracker
        to say where a vanished piece went. A source that fails now leaves that shot unjudged."""
        return self.segmenter.state != "idle" or self._pending is not None

    def positions(self) -> dict[str, tuple[float, float]]:
        """Where the tracker has each piece now (board mm)."""
        return self.tracker.positions()

    def prepare(self, image) -> Any:
        """What the detector can work out from ``image`` alone (its ``prepare``; None if it has none), for
        the live loop's capture thread to do ahead (``judge.live``); ``feed`` hands it back to the detector
        with the frame (``frame.prepared``). Touches nothing the judging thread changes."""
        prep = getattr(self.detector, "prepare", None)
        return prep(image) if prep is not None else None

    def feed(self, frame: Any) -> VisionShot | None:
        """Frame times are taken as they come (a live stream's jitter, dropped frames, a drifting rate):
        only a frame that is not after the last one, or the last picture again while pieces move (a
        stream repeating a frame under a new time), is skipped, counted in ``skipped``."""
        if isinstance(frame, Detections):
            return self._track(frame)
        if self._out_of_order(frame.t_s):
            return None
        image, last = frame.image, self._last_image
        self._last_image = image
        if (last is not None and image is not last and getattr(image, "shape", None) == getattr(last, "shape", 0)
                and self._repeat(frame.t_s) and _same_picture(image, last)):
            return self._skip_repeat()
        t = time.perf_counter()
        prepared = getattr(frame, "prepared", None)
        if prepared is None:
            dets = self.detector.detect(frame.image, frame.index, frame.t_s)
        else:
            dets = self.detector.detect(frame.image, frame.index, frame.t_s, prepared=prepared)
        self.timings["detect"] += time.perf_counter() - t
        return self._track(dets)

    def finish(self, t_s: float | None = None) -> VisionShot | None:
        """The stream ended: pieces the tracker was still looking for are given up (a pawn dropping into a
        pocket in the last frames is pocketed, not left on the board), and a shot that had ended but was
        waiting for them, or one still in progress (marked timed out), is read as it stands."""
        self.tracker.conclude()
        window = self._pending or self.segmenter.flush(t_s)
        self._pending = None
        if window is None:
            return None
        seen = self.assembler.assemble(window, self.tracker.tracks, self.player)
        self.shots.append(seen)
        return seen

    # ----- inside ------------------------------------------------------------------------------------
    def _track(self, dets: Detections) -> VisionShot | None:
        t = time.perf_counter()
        try:
            return self._step(dets if self.rows is None else self.rows(dets))
        finally:
            self.timings["track+events"] += time.perf_counter() - t

    def _out_of_order(self, t_s: float) -> bool:
        """A frame stamped at or before the last tracked one: the same frame again, or a time gone back
        (a stream's clock reset, a frame out of order). Tracking it would step back in time."""
        if self._last_t is None or t_s > self._last_t:
            return False
        self.skipped["repeated" if t_s == self._last_t else "backwards"] += 1
        return True

    def _repeat(self, t_s: float) -> bool:
        """Whether an identical picture now would be a repeat to skip: while pieces move (a real still
        scene gives the same picture and is still), and not once the same picture has lasted
        ``repeat_max_s`` (the scene has stopped; the shot must be able to end)."""
        if self._last_seen is None or t_s - self._last_seen[1] > self.repeat_max_s:
            return False
        return self.tracker.moving()

    def _skip_repeat(self) -> None:
        self.skipped["repeated"] += 1
        return None

    def _step(self, dets: Detections) -> VisionShot | None:
        if self._out_of_order(dets.t_s):
            return None
        pieces = tuple(sorted((d.kind, d.owner or "", d.centre_mm) for d in dets.pieces()))
        if pieces and self._last_seen is not None and pieces == self._last_seen[0] and self._repeat(dets.t_s):
            return self._skip_repeat()  # the very same sightings again: the picture was repeated
        if self._last_seen is None or pieces != self._last_seen[0]:
            self._last_seen = (pieces, dets.t_s)
        self._last_t = dets.t_s
        if self.spec.has_pit:
            dets = self._field_only(dets)
        named = self.tracker.update(dets)
        self.last_named = named
        if self.segmenter.state == "idle":
            for tr in self.tracker.just_left:
                if self._pending is not None and tr.left_t_s is not None and tr.left_t_s <= self._pending.t1_s:
                    continue  # it left in the shot that waits for the tracker to say where it went: that shot's
                if tr.left == "pit" or self._set_off_unseen(tr):  # a marble went in (under the hand, or
                    self.segmenter.open(tr.piece, tr.left_t_s, tr.left_frame)  # between two frames): a shot
        window = self.segmenter.update(named, hold=bool(self.tracker.rolling_unseen())) or self._pending
        self._pending = None
        if window is not None and self.tracker.missing():
            self._pending = window  # a piece just vanished: wait until the tracker says where it went
            return None
        if self.segmenter.state == "idle" and window is None:
            self.tracker.trim_history(dets.t_s - self.preroll_s)
        if window is None:
            return None
        seen = self.assembler.assemble(window, self.tracker.tracks, self.player)
        self.shots.append(seen)
        self.tracker.end_shot(dets.t_s - self.segmenter.still_s)
        return seen

    def _set_off_unseen(self, tr) -> bool:
        """Where any touch of a piece is a shot (Cvrnkaná), a piece last seen already off its rest and then
        gone under the hand was flicked (into the pit, between two frames): the frame that would have shown
        it moving ``move_mm`` (the segmenter's start) fell just before or after, as a frame's time may. The
        shot it starts ends as any other, and the record asks the referee (the piece is unseen)."""
        if self.spec.unexplained_launch != "touch" or tr.left not in ("pickup", "lost"):
            return False
        seen = tr.observed()
        return bool(seen) and self.segmenter.off_rest(tr.piece, seen[-1].centre_mm)

    def _field_only(self, dets: Detections) -> Detections:
        """What lies in the pit has left the field: a marble whose centre is over it has fallen in, and
        a blob inside it (marbles settling in its shadow) is neither a piece nor a hand over the field."""
        s = self.surface

        def inside(d) -> bool:
            if not s.in_pit(d.centre_mm, -1.0):
                return False
            if d.kind not in ("hand", "cue"):
                return True
            if d.outline_mm:  # a hand reaches in from outside the pit; the pit's own blob stays within it
                return all(s.in_pit(q) for q in d.outline_mm)
            return d.radius_mm <= s.pit_radius_mm

        keep = tuple(d for d in dets if not inside(d))
        return dets if len(keep) == len(dets) else replace(dets, items=keep)


def _same_picture(a: np.ndarray, b: np.ndarray) -> bool:
    """``np.array_equal(a, b)``, first on every 16th row: two different frames almost always differ
    there already, and the whole comparison (a millisecond at 1280x720) is made only for a likely repeat."""
    return np.array_equal(a[::16], b[::16]) and np.array_equal(a, b)


def hints_for(layout: Mapping[str, tuple[float, float]], player: str | None = None, **more: Any) -> Hints:
    """Hints from a bare layout (a test, a bench that knows the pieces' places): ``more`` as ``rules.Hints``."""
    return Hints(player, dict(layout), **more)
