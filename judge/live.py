"""Live judging: capture on its own thread, judge on the main one, never silently lose frames.

The capture thread reads the source as fast as it delivers and puts frames into a bounded queue.
When judging falls behind, the queue drops its *oldest* frame (the newest matter for what is
happening now) and the processing side reports the hole as a :class:`FrameGap` with reason
``queue``; holes the camera made are reported with reason ``camera`` or ``reconnect``. The
vision stage is anything with ``feed(frame) -> list[ShotRecord]``.

When the source fails for good (a video cut short, a camera that never came back) the shot in
progress is *not* read from its partial motion: only shots vision had completed are judged, and
``LiveResult.unfinished`` says one was cut off.
"""
from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, runtime_checkable

from hardware.frame import Frame, FrameGap, GapDetector, SourceError
from hardware.source import FrameSource

__all__ = ["Pipeline", "VisionFeed", "FrameQueue", "LiveResult", "run_live", "ConsoleAnnouncer", "shot_in_progress",
           "review_reasons"]


@runtime_checkable
class Pipeline(Protocol):
    """The seam to vision: frames in, finished shot records out (usually none per frame).

    Optional: ``finish() -> list[ShotRecord]`` for a shot still open when the source ends (called only
    when it ended cleanly), ``shot_in_progress() -> bool`` (whether a shot was under way when the source
    failed), ``overlay(frame) -> OverlayModel | None`` for what to draw on the spectators' video, and
    ``set_state(state)``: the game state after a change (a judged shot, a referee action), given before
    the next frame is fed when the match has ``changed_since(revision)``.
    """

    def feed(self, frame: Frame) -> list: ...


class VisionFeed:
    """Adapts ``vision.pipeline.Pipeline`` (image in, record dict or None out) to the live seam.

    Tracking starts at the first frame from ``layout`` (the pieces on the surface, board mm). A
    record that does not parse is a vision fault: it is reported through ``on_error``, not judged.
    Each game state it is given (``set_state``, on the judging thread) tells vision who is to move and,
    in Cvrnkaná, which marbles lie behind the start lines or on the field out of view.
    """

    def __init__(self, vision, game: str, layout, on_error: Callable[[str], None] | None = None):
        self.vision, self.game, self.layout = vision, game, dict(layout)
        self.on_error = on_error
        self._started = False
        self._state = None

    def set_state(self, state) -> None:
        from .replay import tell_off_view

        self._state = state
        if hasattr(self.vision, "player"):
            self.vision.player = getattr(state, "to_move", None)
        if self._started:
            tell_off_view(self.vision, state)

    def feed(self, frame: Frame) -> list:
        if not self._started:
            from .replay import start_options

            from .replay import in_view

            layout = in_view(self.vision, {k: tuple(v) for k, v in self.layout.items()})
            detector = getattr(self.vision, "detector", None)
            if layout and hasattr(detector, "expect"):
                detector.expect(layout)  # the pieces stand where the game state says: their colours, measured
            options = start_options(self.vision, self._state) if self._state is not None else {}
            self.vision.start(layout, frame.index, frame.t_s, **options)
            self._started = True
        return self._parse(self.vision.feed_image(frame.image, frame.index, frame.t_s), frame.index)

    def finish(self) -> list:
        return self._parse(self.vision.finish(), None) if self._started else []

    def shot_in_progress(self) -> bool:
        return self._started and shot_in_progress(self.vision)

    def _parse(self, raw, index) -> list:
        from rules.record import RecordError, parse_record

        if raw is None:
            return []
        try:
            return [parse_record(raw, f"shot ending at frame {index}", self.game)]
        except RecordError as exc:
            if self.on_error is None:
                raise
            self.on_error(f"vision gave a shot record that cannot be judged: {exc}")
            return []


class FrameQueue:
    """Bounded FIFO between capture and judging with an explicit policy when it is full.

    ``drop_oldest`` (cameras: the present matters, the camera will not wait) drops the oldest frame
    and counts it; ``block`` (recordings: nothing is gained by losing frames) makes the reader wait.
    Gap events ride along in order and are never dropped.
    """

    def __init__(self, maxsize: int, policy: str = "drop_oldest"):
        if maxsize < 1:
            raise ValueError(f"queue size must be at least 1, got {maxsize}")
        if policy not in ("drop_oldest", "block"):
            raise ValueError(f"queue policy must be 'drop_oldest' or 'block', got {policy!r}")
        self._items: deque = deque()
        self.maxsize = maxsize
        self.policy = policy
        self.dropped = 0
        self._cond = threading.Condition()
        self._closed = False

    def put(self, item: Any) -> Any | None:
        """Add an item; returns the item dropped to make room, if any."""
        with self._cond:
            dropped = None
            if isinstance(item, Frame) and self.policy == "block":
                self._cond.wait_for(lambda: self._frames() < self.maxsize or self._closed)
            if isinstance(item, Frame) and self._frames() >= self.maxsize:
                # drop the oldest frame; events (gaps) are never dropped
                dropped = next(i for i in self._items if isinstance(i, Frame))
                self._items.remove(dropped)
                self.dropped += 1
            self._items.append(item)
            self._cond.notify()
            return dropped

    def _frames(self) -> int:
        return sum(1 for i in self._items if isinstance(i, Frame))

    def get(self, timeout: float | None = None) -> Any | None:
        """The next item, or None once closed and empty (or on timeout)."""
        with self._cond:
            if not self._cond.wait_for(lambda: self._items or self._closed, timeout):
                return None
            item = self._items.popleft() if self._items else None
            self._cond.notify_all()  # a blocked producer may go on
            return item

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    @property
    def closed(self) -> bool:
        return self._closed


@dataclass
class LiveResult:
    frames: int = 0
    shots: int = 0
    skipped: int = 0
    gaps: list[FrameGap] = field(default_factory=list)
    dropped: int = 0
    error: SourceError | None = None
    seconds: float = 0.0
    unfinished: bool = False  # the source failed during a shot, which was therefore not judged


def shot_in_progress(vision) -> bool:
    """Whether the vision (a ``vision.pipeline.Pipeline``, or anything with ``in_shot``) is inside a shot."""
    return bool(getattr(vision, "in_shot", False))


def run_live(source: FrameSource, pipeline: Pipeline, match, *, queue_size: int = 64, recorder=None,
             hub=None, stop: threading.Event | None = None, overlay_fps: float = 10.0,
             on_frame: Callable[[Frame], None] | None = None) -> LiveResult:
    """Judge ``source`` (already open) until it ends, fails for good, or ``stop`` is set.

    Returns what happened; a source error (truncated file, camera gone for good) is in
    ``result.error`` after every frame read before it was judged and journalled. After such an error
    the pipeline is not asked to ``finish``: a shot cut off mid-motion is never judged.
    """
    stop = stop or threading.Event()
    queue = FrameQueue(queue_size, "drop_oldest" if source.live else "block")
    result = LiveResult()
    errors: list[SourceError] = []

    def capture() -> None:
        detector = GapDetector(source.fps)
        try:
            while not stop.is_set():
                frame = source.read()
                if frame is None:
                    break
                gap = detector.check(frame)
                if gap is not None:
                    queue.put(gap)
                queue.put(frame)
        except SourceError as exc:
            errors.append(exc)
        finally:
            queue.close()

    thread = threading.Thread(target=capture, name="capture", daemon=True)
    set_state = getattr(pipeline, "set_state", None)
    changed_since = getattr(match, "changed_since", None) if set_state is not None else None
    seen_revision = None  # the game state vision was last given (None: not yet)
    started = time.monotonic()
    thread.start()
    last: Frame | None = None
    next_overlay_t = None
    try:
        while True:
            item = queue.get(timeout=0.5)
            if item is None:
                if queue.closed:
                    break
                continue
            if isinstance(item, FrameGap):
                result.gaps.append(item)
                match.note_gap(item)
                continue
            frame: Frame = item
            prev_index, prev_t = (last.index, last.t_s) if last is not None else (-1, frame.t_s - frame.index / max(source.fps, 1e-9))
            if frame.index > prev_index + 1:  # also frames dropped before the judge took its first one
                gap = FrameGap(prev_index, prev_t, frame.index, frame.t_s, frame.index - prev_index - 1, "queue")
                result.gaps.append(gap)
                match.note_gap(gap)
            last = frame
            result.frames += 1
            if recorder is not None:
                recorder.add(frame)
            if changed_since is not None:  # after a judged shot or a referee action (from the web thread)
                changed = changed_since(seen_revision)
                if changed is not None:
                    seen_revision, state = changed
                    set_state(state)
            _judge(pipeline.feed(frame), match, recorder, frame, result)
            if on_frame is not None:
                on_frame(frame)
            if hub is not None and (next_overlay_t is None or frame.t_s >= next_overlay_t):
                next_overlay_t = frame.t_s + 1.0 / overlay_fps
                model = pipeline.overlay(frame) if hasattr(pipeline, "overlay") else None
                hub.publish_frame(frame.image, model)
        thread.join(timeout=5.0)  # the queue is closed and drained: capture has ended, ``errors`` is final
        if errors:
            result.unfinished = bool(getattr(pipeline, "shot_in_progress", lambda: False)())
        elif hasattr(pipeline, "finish") and last is not None:
            _judge(pipeline.finish(), match, recorder, last, result)
    finally:
        stop.set()
        queue.close()  # wakes a capture thread blocked on a full queue
        thread.join(timeout=5.0)
    result.dropped = queue.dropped
    result.error = errors[0] if errors else None
    result.seconds = time.monotonic() - started
    return result


def _judge(records, match, recorder, frame: Frame, result: LiveResult) -> None:
    for record in records:
        shot = match.judge(record)
        if shot is None:
            result.skipped += 1
            continue
        result.shots += 1
        if recorder is not None:
            recorder.save(shot.game_no, shot.shot_no, record.to_dict(), shot.ruling_dict, record.t0, frame.t_s)


class ConsoleAnnouncer:
    """Prints calls as they happen (rich console). A call the referee must check says so on its first
    line, with why: each call flagged for review (its text and clause) and what vision flagged in the
    shot record (``meta.review``, e.g. a piece lost from sight)."""

    def __init__(self, console=None):
        if console is None:
            from rich.console import Console
            console = Console(highlight=False)
        self.console = console

    def __call__(self, event: dict) -> None:
        from rich.markup import escape

        kind = event.get("type")
        if kind == "call":
            ruling = event["ruling"]
            head = f"[bold]game {event['game_no']} shot {event['shot_no']}[/bold] player {ruling.get('player')}"
            reasons = review_reasons(ruling, event.get("vision_review"))
            if reasons:
                head += " [bold red]— REVIEW:[/] [red]" + escape("; ".join(reasons)) + "[/]"
            self.console.print(head)
            for call in ruling.get("calls", []):
                style = "red" if call.get("review") else "cyan"
                self.console.print(f"  [{style}]{call['code']}[/] ({call['clause']}) {escape(call.get('text', ''))}",
                                   markup=True)
            if ruling.get("game_over"):
                over = ruling["game_over"]
                self.console.print(f"  [bold green]game over: {over['result']} {over.get('winner') or ''}[/]")
        elif kind == "gap":
            self.console.print(f"[yellow]frames lost: {escape(event['text'])}[/]")
        elif kind in ("referee", "message", "unjudged"):
            style = "magenta" if kind == "referee" else "yellow"
            self.console.print(f"[{style}]{escape(event['text'])}[/]", markup=True)


def review_reasons(ruling, vision_items=None) -> list[str]:
    """Why the referee should look at a call, one phrase each: the calls flagged for review (text and
    clause), what vision flagged in the record (``meta.review`` items), or the ruling's own flag."""
    from .replay import vision_review

    out = [f"{c.get('text') or c['code']} ({c['clause']})" for c in ruling.get("calls", []) if c.get("review")]
    out += [f"vision: {line}" for line in vision_review({"meta": {"review": vision_items or []}})]
    if not out and ruling.get("review"):
        out.append("the rules flag this shot for the referee")
    return out
