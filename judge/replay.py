"""Judging a recorded match: the live loop run on a file, with nothing dropped and everything kept.

``judge_video`` opens the video through ``hardware`` (time from frame index and frame rate), checks
the calibration against the frame size, and runs ``judge.live.run_live`` over it with the ``block``
queue policy (decoding on its own thread, judging on this one): vision starts from the hints of the game
state (the rule engine's opening unless a state file says otherwise) and each shot is judged by the one
referee step (``judge.referee``), exactly as live. The result keeps, per shot, the shot, the ruling, the
fitted motions vision solved the events from, and a log of every tracked position per frame, so the
report, the overlay and the dispute view can be drawn afterwards without guessing.

A video that breaks off (cut short or damaged: ``hardware.TruncatedVideo``) keeps every shot vision
completed before the break; the shot in progress there is not judged from its partial motion, and
``ReplayResult.cut`` describes the break for the report. Later passes over the video read only the
judged frames (``judged_frames``), never into the break again.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np

from rules import Shot
from rules.match import result_of

from .errors import UserError
from .gap_text import gap_text
from .i18n import _
from .referee import Referee
from .review import vision_review
from .setup import check_calibration, make_vision, read_background

__all__ = ["ReplayShot", "ReplayResult", "FrameLog", "Replay", "judge_video", "judged_frames", "load_state",
           "vision_review"]


@dataclass(frozen=True, eq=False)
class ReplayShot:
    """One judged (or unjudgeable) shot. ``no`` counts shots through the whole video from 1. ``record``
    and ``ruling`` are the shot's and the ruling's documented JSON forms, for the report."""

    no: int
    game_no: int
    record: Mapping[str, Any]
    ruling: Mapping[str, Any] | None  # None: the engine refused the record (``error`` says why)
    error: str | None = None
    motions: Mapping[str, Any] = field(default_factory=dict)  # piece -> vision.events.Motion
    review: bool = False  # the referee should look (``judge.referee.Step.review``)

    @property
    def ruling_dict(self) -> Mapping[str, Any] | None:
        """The ruling's JSON form (as ``judge.match.JudgedShot``'s)."""
        return self.ruling


class FrameLog:
    """Every tracked position per frame (board mm), for trails, overlays and positions between fits."""

    def __init__(self):
        self.index: list[int] = []
        self.t_s: list[float] = []
        self.positions: list[dict[str, tuple[float, float]]] = []

    def add(self, index: int, t_s: float, positions: Mapping[str, tuple[float, float]]) -> None:
        self.index.append(int(index))
        self.t_s.append(float(t_s))
        self.positions.append({k: (float(v[0]), float(v[1])) for k, v in positions.items()})

    def __len__(self) -> int:
        return len(self.index)

    def at_frame(self, index: int) -> dict[str, tuple[float, float]]:
        i = int(np.searchsorted(self.index, index))
        return self.positions[i] if i < len(self.index) and self.index[i] == index else {}

    def at(self, t_s: float) -> dict[str, tuple[float, float]]:
        """Positions at ``t_s``, linear between the two frames around it (pieces seen in both)."""
        if not self.t_s:
            return {}
        j = int(np.searchsorted(self.t_s, t_s))
        if j <= 0 or j >= len(self.t_s):
            return dict(self.positions[min(max(j, 0), len(self.t_s) - 1)])
        ta, tb = self.t_s[j - 1], self.t_s[j]
        f = 0.0 if tb <= ta else (t_s - ta) / (tb - ta)
        a, b = self.positions[j - 1], self.positions[j]
        return {k: (a[k][0] + f * (b[k][0] - a[k][0]), a[k][1] + f * (b[k][1] - a[k][1])) for k in a if k in b}

    def trail(self, piece: str, index: int, frames: int) -> list[tuple[float, float]]:
        """The piece's positions over the last ``frames`` frames up to ``index`` (oldest first)."""
        i = int(np.searchsorted(self.index, index, side="right"))
        return [p[piece] for p in self.positions[max(0, i - frames):i] if piece in p]


@dataclass
class ReplayResult:
    video: str
    game: str
    fps: float
    size: tuple[int, int]
    frames: int
    shots: list[ReplayShot]
    log: FrameLog
    layout: dict[str, tuple[float, float]]
    gaps: list = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    error: Exception | None = None  # e.g. hardware.TruncatedVideo: the shots before it are kept
    seconds: float = 0.0
    stages_s: dict[str, float] = field(default_factory=dict)
    calibration: Any = None  # calibration.calfile.Calibration the frames were read with
    unfinished: bool = False  # the video broke off during a shot, which was therefore not judged
    match: Mapping[str, Any] | None = None  # the match score (``rules.match.match_score``) at the end

    @property
    def duration_s(self) -> float:
        return self.frames / self.fps if self.fps else 0.0

    @property
    def cut(self) -> dict | None:
        """Where the video broke off (None when it was read to its end): the last good frame and its
        time, the frame count the file announced, whether a shot was cut off, and why it stopped."""
        if self.error is None:
            return None
        last = self.log.index[-1] if len(self.log) else self.frames - 1
        return {"last_frame": last, "last_t_s": round(last / self.fps, 3) if self.fps else None,
                "frames_expected": getattr(self.error, "frames_expected", None),
                "shot_in_progress": self.unfinished,
                "reason": getattr(self.error, "detail", "") or str(self.error)}


def judged_frames(source, frames: int):
    """The first ``frames`` frames of an open source, without reading one more: after a video that broke
    off, the next read would hit the break again."""
    if frames <= 0:
        return
    for frame in source:
        yield frame
        if frame.index + 1 >= frames:
            return


def load_state(engine, path: str | Path):
    """A game state document (``state.to_dict()`` form) from a JSON file, read by the engine itself."""
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(_("--state {p}: no such file").format(p=p)) from None
    except RecursionError:
        raise UserError(_("--state {p}: JSON nested too deeply to be a game state").format(p=p)) from None
    except ValueError as exc:  # not UTF-8, not JSON, or a number too long to read
        raise UserError(_("--state {p}: not a JSON state file ({value})").format(
            p=p, value=str(exc).splitlines()[0][:120])) from None
    return engine.state_from_dict(data, where=f"--state {p}")  # a StateError names the field


class Replay:
    """The referee side of ``run_live`` for a file: the one referee step, in order, nothing journaled.
    ``games``: the match's length (None: open); ``finished``: the results of the games played out."""

    def __init__(self, engine, state, lang: str = "en", games: int | None = None):
        self.engine, self.state, self.lang = engine, state, lang
        self.referee = Referee(engine, games)
        self.game_no = 1
        self.finished: list[dict[str, Any]] = []
        self.shots: list[ReplayShot] = []
        self.gaps: list = []
        self.notes: list[str] = []
        self.rules_s = 0.0
        self.hints = self.referee.hints(state)
        self.revision = 0  # bumped with every judged shot: the live loop then tells vision the new hints
        self.restart_revision = 0  # a refused shot: vision re-syncs (as ``Match``)

    def changed_since(self, revision: int | None):
        """``(revision, hints, restart)`` when a shot was judged after ``revision``, else None (as ``Match``)."""
        if revision == self.revision:
            return None
        return self.revision, self.hints, "resync" if revision is not None and self.restart_revision > revision else None

    def judge(self, shot: Shot, motions: Mapping[str, Any] | None = None,
              position: Mapping[str, Any] | None = None) -> ReplayShot:
        started = time.perf_counter()
        refused = tuple(s.no for s in self.shots if s.ruling is None and s.game_no == self.game_no)  # none settles them
        step = self.referee.step(self.state, shot, self.game_no, self.finished, refused)
        no = len(self.shots) + 1
        if step.new_game is not None:
            self.finished.append(result_of(self.state, self.game_no))
            self.notes.append(_("game {game_no} is over; shot {no} starts game {next_game}").format(
                game_no=self.game_no, no=no, next_game=step.game_no))
        self.game_no, self.state, self.hints = step.game_no, step.state, step.hints
        self.revision += 1
        if step.ruling is None:
            self.restart_revision = self.revision
        ruling = step.ruling.to_dict(self.lang) if step.ruling is not None else None
        judged = ReplayShot(no, self.game_no, shot.to_dict(), ruling, step.error, dict(motions or {}), step.review)
        if step.ruling is None:
            self.notes.append(f"shot {no} not judged, referee please decide: {step.error}")
        if step.unsettled:
            self.notes.append(_("shot {no}: judged after shot {shots}, which was not judged: this call assumes that "
                                "shot changed nothing").format(no=no, shots=", ".join(str(n) for n in step.unsettled)))
        self.notes += [f"shot {no}: vision: {line}" for line in vision_review(judged.record)]
        self.shots.append(judged)
        self.rules_s += time.perf_counter() - started
        return judged

    def score(self) -> dict[str, Any]:
        """The match score so far (as ``Match.score``)."""
        return self.referee.score(self.state, self.game_no, self.finished)

    def refuse(self, shot: Shot, reason: str, position: Mapping[str, Any] | None = None) -> ReplayShot:
        """A shot not ruled on (the camera saw too little of it), listed as a refused one (as ``Match``)."""
        no = len(self.shots) + 1
        judged = ReplayShot(no, self.game_no, shot.to_dict(), None, reason, {}, True)
        self.notes.append(f"shot {no} not judged, referee please decide: {reason}")
        self.shots.append(judged)
        self.revision += 1
        self.restart_revision = self.revision
        return judged

    def note_gap(self, gap) -> None:
        self.gaps.append(gap)
        self.notes.append(gap_text(gap))

    def note(self, text: str, **_: Any) -> None:
        self.notes.append(text)


class _TimedSource:
    """The source as ``run_live`` sees it, timing the decoding (it runs on the capture thread)."""

    def __init__(self, source):
        self.source, self.decode_s = source, 0.0
        self.fps, self.live, self.name = source.fps, False, source.name

    def read(self):
        t = time.perf_counter()
        frame = self.source.read()
        self.decode_s += time.perf_counter() - t
        return frame


def judge_video(video: str | Path, game: str, calibration: str | Path, *, background=None, state: str | Path | None = None,
                ruleset: str | None = None, lang: str = "en", fps: float | None = None,
                progress: Callable[[int, int | None], None] | None = None, vision_factory=None,
                start_from_board: Callable[..., Any] | None = None, games: int | None = None) -> ReplayResult:
    """Judge every shot of ``video``; see the module docstring. ``background`` is a path (file or folder of
    empty-board images) or a list of images; ``progress(frames_done, frames_total)`` is called per frame.
    ``start_from_board(engine, calibration, background_images, open_video)``: the start state read from the
    board (``judge.start_state``), instead of ``state`` or the opening; ``open_video()`` opens the video again
    for it, so judging still starts at its first frame. ``games``: the match's length (``Replay``)."""
    import rules
    from hardware import SourceError, open_source

    from .live import run_live

    if game not in rules.GAMES:
        raise UserError(_("unknown game {game}: expected novuss or cvrnkana").format(game=repr(game)))
    video = Path(video)
    if not video.exists():
        raise UserError(_("{video}: no such video file").format(video=video))
    started = time.perf_counter()
    try:
        source = open_source(str(video), fps=fps)
    except SourceError as exc:
        raise UserError(str(exc)) from None
    with source:
        cal = check_calibration(str(calibration), source.size, game)
        engine = rules.engine_for(ruleset or game, cal.profile.geometry, game)
        if engine.game != game:
            raise UserError(_("ruleset {ruleset} is for {game}, not {game2}").format(
                ruleset=repr(ruleset), game=engine.game, game2=game))
        if state is not None and start_from_board is not None:
            raise UserError(_("--state and --start-from-board both say where the video starts: give one of them"))
        start_state = load_state(engine, state) if state is not None else engine.initial()
        images = read_background(background, source.size) if isinstance(background, (str, Path)) else list(background or [])
        if start_from_board is not None:
            start_state = start_from_board(engine, cal, images, lambda: open_source(str(video), fps=fps))
        vision = (vision_factory or make_vision)(cal, images)
        replay = Replay(engine, start_state, lang, games)
        layout = dict(replay.hints.layout)
        log = FrameLog()
        total = getattr(source, "frames_expected", None)  # a video says; a folder or a stream may not
        timed = _TimedSource(source)

        def on_frame(frame) -> None:
            log.add(frame.index, frame.t_s, vision.positions())
            if progress is not None:
                progress(frame.index + 1, total)

        live = run_live(timed, vision, replay, queue_size=32, on_frame=on_frame)
    stages = {"decode": timed.decode_s, **vision.timings, "rules": replay.rules_s}
    return ReplayResult(str(video), game, float(source.fps), tuple(source.size), live.frames, replay.shots, log, layout,
                        replay.gaps, replay.notes, live.error, time.perf_counter() - started, stages, cal, live.unfinished,
                        replay.score())
