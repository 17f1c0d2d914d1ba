"""Judging a recorded match: the live loop run on a file, with nothing dropped and everything kept.

``judge_video`` opens the video through ``hardware`` (time from frame index and frame rate), checks
the calibration against the frame size, starts vision from the game state (the rule engine's opening
layout unless a state file says otherwise) and feeds every frame through ``judge.live.run_live``
with the ``block`` queue policy (decoding on its own thread, judging on this one). Each shot record
goes to the pure rule engine; the result keeps, per shot, the record, the ruling, the fitted
motions vision solved the events from, and a log of every tracked position per frame, so the report,
the overlay and the dispute view can be drawn afterwards without guessing.

A video that breaks off (cut short or damaged: ``hardware.TruncatedVideo``) keeps every shot vision
completed before the break; the shot in progress there is not judged from its partial motion, and
``ReplayResult.cut`` describes the break for the report. Later passes over the video read only the
judged frames (``judged_frames``), never into the break again.
"""
from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np

from .errors import UserError

__all__ = ["ReplayShot", "ReplayResult", "FrameLog", "Replay", "judge_video", "judged_frames", "layout_of", "load_state",
           "start_options", "tell_off_view", "vision_review"]


@dataclass(frozen=True, eq=False)
class ReplayShot:
    """One judged (or unjudgeable) shot. ``no`` counts shots through the whole video from 1."""

    no: int
    game_no: int
    record: Mapping[str, Any]
    ruling: Mapping[str, Any] | None  # None: the engine refused the record (``error`` says why)
    error: str | None = None
    motions: Mapping[str, Any] = field(default_factory=dict)  # piece -> vision.events.Motion

    @property
    def review(self) -> bool:
        """The referee should look: the engine refused the record, a call asks for review, or vision
        flagged the record itself (``meta.review``: e.g. a piece it lost sight of without seeing it leave)."""
        return self.ruling is None or bool(self.ruling.get("review")) or bool(vision_review(self.record))


def vision_review(record: Mapping[str, Any]) -> list[str]:
    """What vision asks the referee to check in a shot record (``meta.review``), as one line each."""
    out = []
    for item in ((record or {}).get("meta") or {}).get("review") or ():
        at = item.get("at")
        where = f" at ({at[0]:.0f}, {at[1]:.0f}) mm, kept there" if at else ""
        out.append(f"{item.get('piece', '?')} {item.get('reason', 'needs checking')}{where}: please check")
    return out


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
        raise UserError(f"--state {p}: no such file") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UserError(f"--state {p}: not a JSON state file ({exc})") from None
    if not isinstance(data, dict):
        raise UserError(f"--state {p}: a state file must be a JSON object")
    try:
        return engine.state_from_dict(data)
    except (KeyError, TypeError, ValueError) as exc:
        raise UserError(f"--state {p}: not a {engine.game} state ({type(exc).__name__}: {exc})") from None


def layout_of(state) -> dict[str, tuple[float, float]]:
    """The pieces on the playing surface in a game state (Novuss ``positions``, Cvrnkaná ``field``)."""
    d = state.to_dict()
    where = d.get("positions") if "positions" in d else d.get("field", {})
    return {k: (float(v[0]), float(v[1])) for k, v in (where or {}).items() if v is not None}


class Replay:
    """The referee side of the live seam for a file: judges records with the pure engine, in order."""

    def __init__(self, engine, state, lang: str = "en"):
        self.engine, self.state, self.lang = engine, state, lang
        self.game_no = 1
        self.shots: list[ReplayShot] = []
        self.gaps: list = []
        self.notes: list[str] = []
        self.pending_motions: dict = {}
        self.rules_s = 0.0
        self.expect: Callable[[dict], None] | None = None  # vision: pieces about to be put down by hand
        self.revision = 0  # bumped with every judged shot: the live loop then gives vision the new state

    def changed_since(self, revision: int | None):
        """``(revision, state)`` when a shot was judged after ``revision``, else None (as ``Match``)."""
        return None if revision == self.revision else (self.revision, self.state)

    def judge(self, record) -> ReplayShot:
        from rules.record import RecordError

        started = time.perf_counter()
        raw = record.to_dict()
        motions, self.pending_motions = self.pending_motions, {}
        if getattr(self.state, "outcome", None) is not None:
            self.state = self._next_game(record)
            self.revision += 1
        try:
            state, ruling = self._engine(raw).apply(self.state, record)
        except RecordError as exc:
            shot = ReplayShot(len(self.shots) + 1, self.game_no, raw, None, str(exc), motions)
            self.notes.append(f"shot {shot.no} not judged, referee please decide: {exc}")
        else:
            self.state = state
            self.revision += 1
            shot = ReplayShot(len(self.shots) + 1, self.game_no, raw, ruling.to_dict(self.lang), None, motions)
            self.notes += [f"shot {shot.no}: vision: {line}" for line in vision_review(raw)]
            placed = {a.piece: tuple(a.at) for a in ruling.actions
                      if a.kind in ("place_penalty", "return") and a.piece and a.at is not None}
            if placed and self.expect is not None:
                self.expect(placed)
        self.shots.append(shot)
        self.rules_s += time.perf_counter() - started
        return shot

    def _engine(self, raw: Mapping[str, Any]):
        """The engine told how well vision knows this record's positions: a zone call closer than
        ``meta.position_tolerance_mm`` goes to the referee instead of being guessed."""
        tol = (raw.get("meta") or {}).get("position_tolerance_mm")
        if tol is None or "position_tolerance_mm" not in self.engine.OPTIONS:
            return self.engine
        return type(self.engine)(self.engine.geometry, **{**self.engine.options(), "position_tolerance_mm": float(tol)})

    def _next_game(self, record):
        """A shot after the end of a game opens the next one, from where the pieces stand."""
        self.game_no += 1
        self.notes.append(f"game {self.game_no - 1} is over; shot {len(self.shots) + 1} starts game {self.game_no}")
        if self.engine.game == "novuss":
            return self.engine.initial(first=record.player or "A",
                                       positions={k: v for k, v in record.before.items() if k != "bat"})
        return self.engine.initial(game_number=self.game_no)

    def note_gap(self, gap) -> None:
        self.gaps.append(gap)
        self.notes.append(gap.describe())

    def note(self, text: str, **_: Any) -> None:
        self.notes.append(text)


class _VisionFeed:
    """Frames into ``vision.pipeline.Pipeline`` (record dicts out), keeping what the report needs:
    every frame's tracked positions, and the fitted motions of each shot as it is assembled."""

    def __init__(self, vision, replay: Replay, game: str, layout: Mapping[str, tuple[float, float]], log: FrameLog):
        self.vision, self.replay, self.game, self.layout, self.log = vision, replay, game, dict(layout), log
        self.detect_s = self.track_s = 0.0
        self._started = False
        if hasattr(vision, "expect"):
            replay.expect = vision.expect

    def set_state(self, state) -> None:
        """The state after a judged shot (from the live loop): where the marbles out of view are now."""
        if self._started:
            tell_off_view(self.vision, state)

    def feed(self, frame) -> list:
        if not self._started:
            detector = getattr(self.vision, "detector", None)
            if self.layout and hasattr(detector, "expect"):
                detector.expect(self.layout)  # the pieces stand where the state says: their colours, measured
            self.vision.start(self.layout, frame.index, frame.t_s, **start_options(self.vision, self.replay.state))
            self._started = True
        if hasattr(self.vision, "player"):
            self.vision.player = getattr(self.replay.state, "to_move", None)
        detector = getattr(self.vision, "detector", None)
        t = time.perf_counter()
        if detector is not None and hasattr(self.vision, "feed"):
            dets = detector.detect(frame.image, frame.index, frame.t_s)
            t2 = time.perf_counter()
            raw = self.vision.feed(dets)
        else:
            t2 = t
            raw = self.vision.feed_image(frame.image, frame.index, frame.t_s)
        t3 = time.perf_counter()
        self.detect_s += t2 - t
        self.track_s += t3 - t2
        tracker = getattr(self.vision, "tracker", None)
        self.log.add(frame.index, frame.t_s, tracker.positions() if tracker is not None else {})
        return self._parse(raw, frame.index)

    def finish(self) -> list:
        return self._parse(self.vision.finish(), None) if self._started else []

    def shot_in_progress(self) -> bool:
        from .live import shot_in_progress

        return self._started and shot_in_progress(self.vision)

    def _parse(self, raw, index) -> list:
        from rules.record import RecordError, parse_record

        if raw is None:
            return []
        extractor = getattr(getattr(self.vision, "assembler", None), "extractor", None)
        self.replay.pending_motions = dict(getattr(extractor, "last_motions", None) or {})
        try:
            return [parse_record(raw, f"shot ending at frame {index}", self.game)]
        except RecordError as exc:
            self.replay.note(f"vision gave a shot record that cannot be judged: {exc}")
            return []


class _TimedSource:
    """The source as ``run_live`` sees it, timing the decoding (it runs on the capture thread)."""

    def __init__(self, source, on_frame: Callable[[int], None] | None = None):
        self.source, self.decode_s, self.on_frame = source, 0.0, on_frame
        self.fps, self.live, self.name = source.fps, False, source.name

    def read(self):
        t = time.perf_counter()
        frame = self.source.read()
        self.decode_s += time.perf_counter() - t
        return frame


def make_vision(calibration, background: list, purpose: str = "replay", detector: str = "classical",
                weights=None, fallback: bool = True):
    """The detector on this calibration inside the vision pipeline. ``classical`` (the default: the
    fastest and most precise on the benchmarks) is taught the empty board; its piece colours are the
    calibration's (``shotjudge calibrate --pieces``) or the profile's nominal ones, refined from the first
    frame's known layout and then from every confident detection. ``learned`` runs the YOLO weights
    (``weights``, default the shipped model); if they cannot be loaded it falls back to the classical
    detector (with a warning) when ``fallback`` and a background are given, else it is a one-line error.
    ``purpose`` names the command in error messages (replay, live judging)."""
    try:
        from vision.detectors import make_detector
        from vision.pipeline import Pipeline
        from vision.types import VisionError
    except ImportError as exc:
        raise UserError(f"{purpose} needs the vision pipeline, which this build lacks ({exc})") from None
    if detector not in ("classical", "learned"):
        raise UserError(f"--detector must be classical or learned, not {detector!r}")
    setup = dict(weights=weights, appearance=calibration.piece_appearance())
    found = None
    if detector == "learned":
        try:
            # box centres refined by the rim fit, boxes with no plausible rim dropped: the one set-up
            # that measured right on the hard cases (models/README.md)
            found = make_detector("learned", calibration.plane, calibration.profile, refine=True, drop_unfit=True, **setup)
        except VisionError as exc:
            if not fallback:
                raise UserError(f"{exc} (--no-fallback)") from None
            if not background:
                raise UserError(f"{exc}; the classical fallback needs --background") from None
            print(f"shotjudge: warning: {exc}; falling back to the classical detector", file=sys.stderr)
    if found is None:
        if not background:
            raise UserError(f"{purpose} needs --background EMPTY.png: a picture of the empty board from this camera")
        found = make_detector("classical", calibration.plane, calibration.profile, **setup)
        found.learn_background(list(background))
    return Pipeline(calibration.profile, detector=found, assembler=assembler_for(calibration.profile, found))


def assembler_for(profile, detector):
    """The shot assembler told the detector's position error (a still piece's repeated fit would make it
    look far smaller, and contact times falsely sure)."""
    from vision.board import Surface
    from vision.events import EventExtractor
    from vision.shot import ShotAssembler

    sigma = getattr(detector, "position_sigma_mm", None)
    return ShotAssembler(profile, EventExtractor(Surface.from_profile(profile), sigma_mm=sigma))


def start_options(vision, state) -> dict:
    """What the game state tells vision beyond the pieces in view (Cvrnkaná), for ``vision.start``: the
    marbles that may still come into play, so a marble rolling in never takes the id of one in the pit.
    The pieces on the field outside the camera's view go to ``vision.off_view`` (see ``tell_off_view``)."""
    spares = tell_off_view(vision, state)
    return {} if spares is None else {"spares": spares}


def tell_off_view(vision, state) -> list[str] | None:
    """Tell vision (``off_view(positions, spares)``) where a Cvrnkaná state has the marbles it cannot see:
    those on the field at a known place outside the view, by id, and the ids that may still roll in,
    in order of preference: the marbles behind the start lines, then those on the field at an unknown
    place (they left the view, or a referee entered a flick the camera did not see). Called at the start
    and after every judged shot or referee action. Returns the spares (None: not a Cvrnkaná state, or a
    vision without ``off_view``)."""
    d = state.to_dict() if hasattr(state, "to_dict") else {}
    if d.get("game") != "cvrnkana" or not hasattr(vision, "off_view"):
        return None
    key = lambda m: (m[0], int(m[1:]))  # noqa: E731
    field = d.get("field") or {}
    behind = sorted(d.get("behind") or (), key=key)
    spares = behind + sorted((k for k, v in field.items() if v is None), key=key)
    profile = getattr(vision, "profile", None)
    out = {}
    if profile is not None:
        out = {k: (float(v[0]), float(v[1])) for k, v in field.items() if v is not None and not _in_view(profile, v)}
    vision.off_view(out, spares, behind)
    return spares


def in_view(vision, layout):
    """The pieces of ``layout`` (id -> board mm) inside the camera's view, where the profile gives one
    (Cvrnkaná): what tracking starts from; the rest is told by ``tell_off_view``."""
    profile = getattr(vision, "profile", None)
    if getattr(profile, "game", None) != "cvrnkana":  # Novuss: the camera sees the whole board
        return dict(layout)
    return {k: v for k, v in layout.items() if _in_view(profile, v)}


def _in_view(profile, xy) -> bool:
    return abs(xy[0]) <= float(profile["view_half_width_mm"]) and abs(xy[1]) <= float(profile["view_half_height_mm"])


def judge_video(video: str | Path, game: str, calibration: str | Path, *, background=None, state: str | Path | None = None,
                ruleset: str | None = None, lang: str = "en", fps: float | None = None,
                progress: Callable[[int, int | None], None] | None = None, vision_factory=None) -> ReplayResult:
    """Judge every shot of ``video``; see the module docstring. ``background`` is a path (file or folder of
    empty-board images) or a list of images; ``progress(frames_done, frames_total)`` is called per frame."""
    import rules
    from hardware import SourceError, open_source

    from .cmd_live import check_calibration, read_background
    from .live import run_live

    if game not in ("novuss", "cvrnkana"):
        raise UserError(f"unknown game {game!r}: expected novuss or cvrnkana")
    video = Path(video)
    if not video.exists():
        raise UserError(f"{video}: no such video file")
    started = time.perf_counter()
    try:
        source = open_source(str(video), fps=fps)
    except SourceError as exc:
        raise UserError(str(exc)) from None
    with source:
        cal = check_calibration(str(calibration), source.size, game)
        engine = rules.engine_for(ruleset or game, cal.profile.geometry)
        if engine.game != game:
            raise UserError(f"ruleset {ruleset!r} is for {engine.game}, not {game}")
        start_state = load_state(engine, state) if state is not None else engine.initial()
        layout = layout_of(start_state)
        images = read_background(background, source.size) if isinstance(background, (str, Path)) else list(background or [])
        vision = (vision_factory or make_vision)(cal, images)
        replay = Replay(engine, start_state, lang)
        log = FrameLog()
        feed = _VisionFeed(vision, replay, game, layout, log)
        total = getattr(source, "frames_expected", None)
        timed = _TimedSource(source)
        on_frame = (lambda f: progress(f.index + 1, total)) if progress is not None else None
        live = run_live(timed, feed, replay, queue_size=32, on_frame=on_frame)
    result = ReplayResult(str(video), game, float(source.fps), tuple(source.size), live.frames, replay.shots, log, layout,
                          replay.gaps, replay.notes, live.error, time.perf_counter() - started,
                          {"decode": timed.decode_s, "detect": feed.detect_s, "track+events": feed.track_s,
                           "rules": replay.rules_s}, cal, live.unfinished)
    return result
