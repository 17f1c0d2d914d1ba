"""A scripted stand-in for vision (the ``vision.pipeline.Vision`` seam): tracked positions are the
simulator's, and each shot's ground-truth record is reported a few frames after the shot ended (as a real
segmenter would).
It tests and benchmarks the judge's side of replay apart from vision's accuracy (tests/test_replay.py,
``bench/replay.py --scripted``)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping

from rules.record import Shot, parse_record

__all__ = ["ScriptedVision", "ScriptedShot", "shot_spans"]


@dataclass(frozen=True)
class ScriptedShot:
    """What the stand-in hands the judge for a shot, as vision's ``VisionShot`` does (no fitted motions)."""

    shot: Shot
    motions: Mapping[str, Any] = field(default_factory=dict)


def shot_spans(demo, fps: float, delay_frames: int = 3) -> list[tuple[int, int]]:
    """Per ground-truth shot of ``demo`` (anything with the simulated ``session``, e.g. a
    ``judge.demo.DemoGame``): the frame it starts moving on and the frame ``ScriptedVision`` reports it on."""
    return [(int(math.floor(s.record["t0"] * fps)), int(math.ceil(s.record["t1"] * fps)) + delay_frames)
            for s in demo.session.shots]


class _TruthSegmenter:
    """``state`` as vision's shot segmenter has it: 'moving' from a shot's first frame until it is reported."""

    def __init__(self, spans):
        self.spans, self.frame = spans, -1

    @property
    def state(self) -> str:
        return "moving" if any(a <= self.frame < b for a, b in self.spans) else "idle"


class ScriptedVision:
    """Stands in for vision on ``demo``'s simulated session (see ``shot_spans``): the same members as the
    ``Vision`` seam (``start``, ``feed``, ``tell``, ``in_shot``, ``finish``, ``positions``, ``timings``)."""

    def __init__(self, demo, fps: float, delay_frames: int = 3):
        self.clip = demo.session.rec.clip()
        self.fps = fps
        self.by_frame: dict[int, list[Shot]] = {}
        for shot, (_, end) in zip(demo.session.shots, shot_spans(demo, fps, delay_frames)):
            self.by_frame.setdefault(end, []).append(parse_record(dict(shot.record), "simulated shot"))
        self.segmenter = _TruthSegmenter(shot_spans(demo, fps, delay_frames))
        self.timings = {"detect": 0.0, "track+events": 0.0}
        self.started = None  # the layout vision was started from
        self._now = 0.0

    def start(self, hints, frame, t_s) -> None:
        self.started = dict(hints.layout)

    def tell(self, hints) -> None:
        """The truth's records need nothing from the game state."""

    def prepare(self, image) -> None:
        """Nothing to work out ahead of ``feed``: the records are the simulator's."""

    @property
    def in_shot(self) -> bool:  # as ``Pipeline.in_shot``
        return self.segmenter.state != "idle"

    def positions(self):
        f = self.clip.states_at(self._now)
        return {p.id: (p.x_mm, p.y_mm) for p in f.pieces if p.visible and p.z_mm > -20.0}

    def feed(self, frame):
        self._now = frame.t_s
        self.segmenter.frame = frame.index
        shots = self.by_frame.pop(frame.index, [])
        return ScriptedShot(shots[0]) if shots else None

    def finish(self, t_s=None):
        left = [r for rs in self.by_frame.values() for r in rs]
        self.by_frame = {}
        return ScriptedShot(left[0]) if left else None
