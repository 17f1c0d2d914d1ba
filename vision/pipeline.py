"""Frames in, shot records out: detector -> tracker -> segmenter -> events -> record.

Each stage is a value with settings and one method; the pipeline only passes ``Detections`` along and
keeps the tracker's history short while nothing moves.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Iterable, Mapping

from rules.record import piece_ids

from .board import Surface
from .segmenter import ShotSegmenter
from .shot import ShotAssembler
from .tracker import Tracker
from .types import Detections

__all__ = ["Pipeline"]


class Pipeline:
    def __init__(self, profile, detector=None, tracker: Tracker | None = None, segmenter: ShotSegmenter | None = None,
                 assembler: ShotAssembler | None = None, preroll_s: float = 0.5, calibration_rms_mm: float = 0.5):
        self.profile = profile
        self.surface = Surface.from_profile(profile)
        self.detector = detector
        self.tracker = tracker or Tracker(self.surface)
        self.segmenter = segmenter or ShotSegmenter(profile.game, surface=self.surface)
        self.assembler = assembler or ShotAssembler(profile, calibration_rms_mm=calibration_rms_mm)
        self.preroll_s = preroll_s
        self.records: list[dict] = []
        self.player: str | None = None
        self._pending = None
        self.last_named: Detections | None = None

    def start(self, layout: Mapping[str, tuple[float, float]], frame: int = 0, t_s: float = 0.0,
              spares: Iterable[str] | None = None) -> None:
        """The pieces on the surface now, by id (from the game state); ``spares`` may appear later
        (default: every other piece of the game)."""
        if spares is None:
            spares = sorted(piece_ids(self.profile.game) - set(layout), key=_id_key)
        self.tracker.start(layout, frame, t_s, spares)
        self.segmenter.seed(layout)

    @property
    def in_shot(self) -> bool:
        """Whether a shot is under way: pieces moving, or a shot that has ended but waits for the tracker
        to say where a vanished piece went. A source that fails now leaves that shot unjudged."""
        return self.segmenter.state != "idle" or self._pending is not None

    def feed_image(self, image, frame: int, t_s: float) -> dict | None:
        return self.feed(self.detector.detect(image, frame, t_s))

    def off_view(self, positions: Mapping[str, tuple[float, float]], spares: Iterable[str] | None = None,
                 behind: Iterable[str] | None = None) -> None:
        """Pieces the game state has on the surface outside the camera's view (Cvrnkaná), by id: one
        that rolls into view keeps its id, and its known place is its place before the shot. ``spares``:
        the ids that may still come into play, in order of preference; ``behind``: those of them still
        behind the start lines (default: all of them)."""
        self.tracker.off_view(positions, spares, behind)
        self.assembler.off_view = dict(positions)

    def expect(self, placements: Mapping[str, tuple[float, float]]) -> None:
        """Pieces the rules are about to have put down by hand (a ruling's returns and penalty pawns):
        ``{piece: (x_mm, y_mm)}``; they keep their ids when they appear there."""
        self.tracker.expect(placements)
        self.segmenter.expect(placements)

    def feed(self, dets: Detections) -> dict | None:
        if self.surface.pit_radius_mm:
            dets = self._field_only(dets)
        named = self.tracker.update(dets)
        self.last_named = named
        if self.segmenter.state == "idle":
            for tr in self.tracker.just_left:
                if tr.left == "pit":  # a marble went in (under the hand, or between two frames): a shot
                    self.segmenter.open(tr.piece, tr.left_t_s, tr.left_frame)
        window = self.segmenter.update(named, hold=bool(self.tracker.rolling_unseen())) or self._pending
        self._pending = None
        if window is not None and self.tracker.missing():
            self._pending = window  # a piece just vanished: wait until the tracker says where it went
            return None
        if self.segmenter.state == "idle" and window is None:
            self.tracker.trim_history(dets.t_s - self.preroll_s)
        if window is None:
            return None
        tracks = self.tracker.tracks
        rec = self.assembler.assemble(window, tracks, self.player)
        self.records.append(rec)
        self.tracker.end_shot(dets.t_s - self.segmenter.still_s)
        return rec

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

    def engine(self, record: Mapping | None = None):
        """The rule engine for this game, told how well the record's positions are known: a Novuss
        zone call on the bat closer than ``meta.position_tolerance_mm`` is flagged for the referee."""
        from rules import engine_for

        options = {}
        if self.profile.game == "novuss":
            meta = (record or {}).get("meta") or {}
            options["position_tolerance_mm"] = float(meta.get("position_tolerance_mm",
                                                              2.0 * self.assembler.calibration_rms_mm))
        return engine_for(self.profile.game, self.profile.geometry, **options)

    def finish(self, t_s: float | None = None) -> dict | None:
        """The stream ended: pieces the tracker was still looking for are given up (a pawn dropping into a
        pocket in the last frames is pocketed, not left on the board), and a shot that had ended but was
        waiting for them, or one still in progress (marked timed out), is read as it stands."""
        self.tracker.conclude()
        window = self._pending or self.segmenter.flush(t_s)
        self._pending = None
        if window is None:
            return None
        rec = self.assembler.assemble(window, self.tracker.tracks, self.player)
        self.records.append(rec)
        return rec


def _id_key(p: str):
    return (0, "", 0) if p == "bat" else (1, p[0], int(p[1:]))
