"""Live judging: capture on its own thread, judge on the main one, never silently lose frames.

The capture thread reads the source as fast as it delivers and puts frames into a bounded queue.
When judging falls behind, the queue drops its *oldest* frame (the newest matter for what is
happening now) and the processing side reports the hole as a :class:`FrameGap` with reason
``queue``; holes the camera made are reported with reason ``camera`` or ``reconnect``. Vision is
driven through its declared seam (``vision.pipeline.Vision``): started from the match's hints on
the first frame, told the new hints whenever the game state changed, fed every frame; each shot
it finishes is judged by the match (``Match`` live, ``Replay`` for a file) with the one referee step.

When the source fails for good (a video cut short, a camera that never came back) the shot in
progress is *not* read from its partial motion: only shots vision had completed are judged, and
``LiveResult.unfinished`` says one was cut off.

Exactly once: each shot goes to the match with its place in the source (the frame vision finished it on;
a recording's frame index, a camera's frame time), and a restart on a recording reads past the frames
already consumed (``resume_after``) with vision started from the journaled state. When the engine refuses
a shot (vision and the state disagree) the referee gets it as a review item and vision starts again from
what it sees, named by the state (``judge.resync``), so the next shot is judged.
"""
from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from hardware.frame import Frame, FrameGap, GapDetector, SourceError
from hardware.source import FrameSource
from rules import RecordError
from rules.record import Shot

from .i18n import N_, _
from .start_watch import StartWatch

__all__ = ["FrameQueue", "LiveResult", "run_live", "source_key", "ConsoleAnnouncer", "review_reasons"]

#: frames missing for longer than this during a shot: the call is flagged for the referee (a burst of a few
#: dropped frames is timed by vision itself; a quarter second can hide a contact)
FLAG_BLIND_S = 0.25
#: frames missing for longer than this during a shot (a stalled stream, a camera replugged): the camera saw
#: too little of it to rule; it is a review item, not a call
REFUSE_BLIND_S = 1.0


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
    reviewed: int = 0  # of ``shots``: judged, and flagged for the referee to check
    skipped: int = 0  # duplicates: already in the journal (a restart re-reading its input)
    refused: int = 0  # the engine refused the shot: a review item, the referee was asked to decide
    resumed_over: int = 0  # frames of a recording read past on a restart (their shots are in the journal)
    gaps: list[FrameGap] = field(default_factory=list)
    dropped: int = 0
    error: SourceError | None = None
    seconds: float = 0.0
    unfinished: bool = False  # the source failed during a shot, which was therefore not judged


def run_live(source: FrameSource, vision, match, *, queue_size: int = 64, recorder=None,
             hub=None, stop: threading.Event | None = None, overlay_fps: float = 10.0,
             on_frame: Callable[[Frame], None] | None = None, resume_after: int = -1, placement=None) -> LiveResult:
    """Judge ``source`` (already open) with ``vision`` (a ``vision.pipeline.Vision``) until it ends, fails
    for good, or ``stop`` is set. ``match`` judges each shot (``judge(shot, motions, position)``) and says
    when the game state changed (``changed_since(revision) -> (revision, hints, restart) | None``).
    Frames up to index ``resume_after`` are read past (a restart: their shots are judged already).
    ``placement`` (``judge.placement_live.PlacementAssistant``) sees each frame after vision and draws the
    spots of pieces being put down on the spectators' video.

    Returns what happened; a source error (truncated file, camera gone for good) is in
    ``result.error`` after every frame read before it was judged and journalled. After such an error
    vision is not asked to ``finish``: a shot cut off mid-motion is never judged.
    """
    stop = stop or threading.Event()
    queue = FrameQueue(queue_size, "drop_oldest" if source.live else "block")
    result = LiveResult()
    errors: list[SourceError] = []

    # vision's work on the image alone (``Vision.prepare``) is done on the capture thread
    thread = threading.Thread(target=_capture, args=(source, queue, stop, errors, vision.prepare), name="capture",
                              daemon=True)
    seen_revision = None  # the game state vision was last told (None: not started)
    started = time.monotonic()
    thread.start()
    last: Frame | None = None
    next_overlay_t = None
    watch = StartWatch()  # a video that begins during a shot: said, not lost silently
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
            if frame.index <= resume_after:
                last, result.resumed_over = frame, result.resumed_over + 1
                continue
            if last is not None and frame.t_s <= last.t_s:
                last = _out_of_order(last, frame, match, result)
                continue
            _queue_gap(last, frame, source.fps, match, result)
            last = frame
            result.frames += 1
            if recorder is not None:
                recorder.add(frame)
            seen_revision = _tell(vision, match, seen_revision, frame)
            if not watch.done:  # until vision sees its first shot begin: then nothing more each frame
                _watch_start(watch, vision, match, frame)
            _judge(_seen(vision.feed, frame, match), match, recorder, frame, result, source)
            if on_frame is not None:
                on_frame(frame)
            if placement is not None:
                placement.on_frame(frame)
            if hub is not None and (next_overlay_t is None or frame.t_s >= next_overlay_t):
                next_overlay_t = frame.t_s + 1.0 / overlay_fps
                hub.publish_frame(frame.image if placement is None else placement.draw(frame), None)
        thread.join(timeout=5.0)  # the queue is closed and drained: capture has ended, ``errors`` is final
        if errors:
            result.unfinished = result.frames > 0 and bool(vision.in_shot)
        elif last is not None:
            _judge(_seen(lambda _: vision.finish(), last, match), match, recorder, last, result, source)
    finally:
        stop.set()
        queue.close()  # wakes a capture thread blocked on a full queue
        thread.join(timeout=5.0)
    result.dropped = queue.dropped
    result.error = errors[0] if errors else None
    result.seconds = time.monotonic() - started
    return result


def _capture(source: FrameSource, queue: FrameQueue, stop: threading.Event, errors: list[SourceError],
             prepare: Callable[[Any], Any] | None = None) -> None:
    """The capture thread: read the source as fast as it delivers, the camera's own gaps noted in order;
    each frame handed on with ``prepare(image)`` (vision's work on the image alone) done here, on the
    other core, while the judging thread works on the frames before it."""
    detector = GapDetector(source.fps)
    try:
        while not stop.is_set():
            frame = source.read()
            if frame is None:
                break
            gap = detector.check(frame)
            if gap is not None:
                queue.put(gap)
            queue.put(frame if prepare is None else _prepared(frame, prepare))
    except SourceError as exc:
        errors.append(exc)
    finally:
        queue.close()


def _prepared(frame: Frame, prepare: Callable[[Any], Any]) -> Frame:
    """The frame with vision's ``prepare(image)`` in ``prepared`` (as it is where that is None). Whatever goes
    wrong there is not the capture thread's to report: the frame goes on as it is, vision does the work
    itself on the judging thread, and says what is wrong there."""
    try:
        prepared = prepare(frame.image)
    except Exception:  # noqa: BLE001 - see above: the judging thread meets the same fault and reports it
        return frame
    return frame if prepared is None else replace(frame, prepared=prepared)


def _out_of_order(last: Frame, frame: Frame, match, result: LiveResult) -> Frame:
    """A frame stamped at or before the last one (the same frame twice, a clock gone back): vision would
    step back in time, so it is dropped, and said so. Returns the last frame, its index moved on so the
    next frame's index follows this one."""
    why = "repeated time" if frame.t_s == last.t_s else "time went back"
    gap = FrameGap(last.index, last.t_s, frame.index, frame.t_s, 1, why)
    result.gaps.append(gap)
    match.note_gap(gap)
    return replace(last, index=frame.index)


def _queue_gap(last: Frame | None, frame: Frame, fps: float, match, result: LiveResult) -> None:
    """Frames the judge never got (dropped from a full queue, or before it took its first one): a gap."""
    prev_index, prev_t = (last.index, last.t_s) if last is not None else (-1, frame.t_s - frame.index / max(fps, 1e-9))
    if frame.index > prev_index + 1:
        gap = FrameGap(prev_index, prev_t, frame.index, frame.t_s, frame.index - prev_index - 1, "queue")
        result.gaps.append(gap)
        match.note_gap(gap)


def _tell(vision, match, seen_revision, frame: Frame):
    """Before a frame: vision started from the match's hints (the first frame), told the new hints when
    the game state changed (a judged shot, or a referee action from the web thread), or started again
    (not in the middle of a shot, which it would lose): from what it sees named by the state when they
    parted (a refused shot), from the state when the referee set or confirmed it. The revision told."""
    changed = match.changed_since(seen_revision)
    if changed is None:
        return seen_revision
    revision, hints, restart = changed
    if seen_revision is None or restart == "state":
        if restart and vision.in_shot:
            return seen_revision  # after this shot
        vision.start(hints, frame.index, frame.t_s)
    elif restart == "resync":
        if vision.in_shot:
            return seen_revision  # after this shot
        from .resync import resync_hints

        vision.start(resync_hints(hints, vision.positions(), match.engine.game), frame.index, frame.t_s)
    else:
        vision.tell(hints)
    return revision


def _watch_start(watch, vision, match, frame: Frame) -> None:
    """The start watch (``judge.start_watch``) on what vision has seen up to this frame: the layout the match
    started from, the note to the referee if pieces moved with no shot seen."""
    hints = getattr(match, "hints", None)
    if hints is not None:
        watch.begin(hints.layout)
    note = watch.check(vision.positions(), vision.in_shot, frame.t_s)
    if note is not None:
        match.note(note)


def _seen(step, frame: Frame, match):
    """What vision made of ``frame`` (a finished shot or None); a shot vision could not make valid (a
    ``RecordError`` from the shot's constructor) is a vision fault, noted for the referee, not judged."""
    try:
        return step(frame)
    except RecordError as exc:
        match.note(f"vision gave a shot record that cannot be judged: {exc}")
        return None


def _judge(seen, match, recorder, frame: Frame, result: LiveResult, source) -> None:
    if seen is None:
        return
    position = {"source": source_key(source), "live": bool(source.live), "end_index": frame.index,
                "end_t_s": round(frame.t_s, 6), "t0": seen.shot.t0, "t1": seen.shot.t1}
    record, blind = _blind(seen.shot, result.gaps)
    if blind is not None and blind.duration_s > REFUSE_BLIND_S:
        shot = match.refuse(record, f"the camera saw nothing for {blind.duration_s:.1f} s during this shot "
                                    f"({blind.reason}): too little to rule on", position)
    else:
        shot = match.judge(record, seen.motions, position)
    if shot is None:
        result.skipped += 1
        return
    if shot.ruling is None:
        result.refused += 1
        if recorder is not None:  # the evidence for the referee's review
            recorder.save(shot.game_no, None, record.to_dict(), {"refused": shot.error}, record.t0, frame.t_s)
        return
    result.shots += 1
    if review_reasons(shot.ruling_dict, [dict(i) for i in record.review]):
        result.reviewed += 1
    if recorder is not None:
        recorder.save(shot.game_no, shot.shot_no, record.to_dict(), shot.ruling_dict, record.t0, frame.t_s)


def _blind(shot, gaps: list[FrameGap]):
    """The longest hole in the frames during ``shot`` (None: none over ``FLAG_BLIND_S``), and the record
    with a review item saying so when there is one: vision's call rests on what it did not see."""
    inside = [g for g in gaps if g.to_t_s > shot.t0 and g.from_t_s < shot.t1 and g.duration_s > FLAG_BLIND_S]
    if not inside:
        return shot, None
    worst = max(inside, key=lambda g: g.duration_s)
    item = {"code": "frames_missing", "piece": "camera", "t": round(worst.from_t_s, 6),
            "seconds": round(worst.duration_s, 3),
            "reason": f"saw nothing for {worst.duration_s:.2f} s during the shot ({worst.reason})"}
    raw = shot.to_dict()
    raw["meta"] = {**shot.meta, "review": [*(dict(i) for i in shot.review), item]}
    return Shot.from_dict(raw), worst


def source_key(source) -> str:
    """How the journal knows a source: a recording by its full path (a restart from another folder is
    the same file), a camera or stream by its name."""
    if not source.live:
        path = Path(source.name)
        if path.exists():
            return str(path.resolve())
    return source.name


#: how the console says a game ended, by result (translated where printed)
RESULTS = {"win": N_("game over: {winner} wins"), "draw": N_("game over: draw"),
           "replay": N_("game over: the set is replayed")}


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
            head = "[bold]" + escape(_("game {game_no} shot {shot_no}").format(
                game_no=event['game_no'], shot_no=event['shot_no'])) \
                + "[/bold] " + escape(_("player {player}").format(player=ruling.get('player')))
            reasons = review_reasons(ruling, event.get("vision_review"), event.get("unsettled", ()))
            if reasons:
                head += " [bold red]— " + escape(_("REVIEW:")) + "[/] [red]" + escape("; ".join(reasons)) + "[/]"
            self.console.print(head)
            for call in ruling.get("calls", []):
                style = "red" if call.get("review") else "cyan"
                self.console.print(f"  [{style}]{call['code']}[/] ({call['clause']}) {escape(call.get('text', ''))}",
                                   markup=True)
            if ruling.get("game_over"):
                over = ruling["game_over"]
                said = _(RESULTS.get(over["result"], RESULTS["win"])).format(winner=over.get("winner") or "")
                self.console.print(f"  [bold green]{escape(said)}[/]")
                match = (event.get("state") or {}).get("match")
                if match:
                    from .score_text import score_line

                    self.console.print(f"  [bold]{escape(score_line(match))}[/]")
        elif kind == "gap":
            self.console.print("[yellow]" + escape(_("frames lost: {text}").format(text=event["text"])) + "[/]")
        elif kind in ("referee", "message", "unjudged"):
            style = "magenta" if kind == "referee" else "yellow"
            self.console.print(f"[{style}]{escape(event['text'])}[/]", markup=True)


def review_reasons(ruling, vision_items=None, unsettled=()) -> list[str]:
    """Why the referee should look at a call, one phrase each: the calls flagged for review (text and
    clause), what vision flagged in the record (``meta.review`` items), the refused shots still open when
    it was judged (``unsettled``, review numbers: ``Step.unsettled``), or the ruling's own flag."""
    from .review import unsettled_line, vision_review

    out = [f"{c.get('text') or c['code']} ({c['clause']})" for c in ruling.get("calls", []) if c.get("review")]
    out += [_("vision: {line}").format(line=line) for line in vision_review({"meta": {"review": vision_items or []}})]
    if unsettled:
        out.append(unsettled_line(unsettled))
    if not out and ruling.get("review"):
        out.append(_("the rules flag this shot for the referee"))
    return out
