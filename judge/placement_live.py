"""The placement assistant in the live loop: from a judged call that puts pieces down to play going on.

It listens to the match (a ``call`` whose ruling has spots, ``judge.placement.targets_of``, starts a check;
a referee action replaces it with the spots of the ruling it leaves, if any) and sees every frame after
vision (``on_frame``): while the check runs, where vision has each piece (``vision.positions()``, the
tracker's ids: a piece put down near its spot takes its id there because the hints told vision about it,
``rules.hints.placements_of``) goes into the check, and each change goes to the spectators' page as a
``placement`` message through the overlay hub and to the console. The check ends once every piece is
placed, or when the next shot begins (vision is in a shot again), which is noted for the referee with what
was not placed. ``draw`` puts the spots on the live video (``judge.placement_view``), with the last picture
of the board at rest before the shot underneath while pieces go back to where they were.
"""
from __future__ import annotations

import threading
from typing import Any, Callable

from .placement import PlacementCheck, PlacementStatus, targets_of

__all__ = ["PlacementAssistant", "CLEAR"]

#: the message that takes the assistant off the page
CLEAR = {"type": "placement", "active": False}


class PlacementAssistant:
    """``profile``: the board's; ``vision``: the pipeline being fed (``positions()``, ``in_shot``); ``hub``: the
    overlay hub (None: no page); ``view``: a ``PlacementView`` for the video (None: not drawn); ``say``: prints
    a line for the console on each change of a piece's status; ``note``: records a line for the referee (the
    match's ``note``: journaled) when play goes on with pieces not placed. ``refresh_s``: how often (frame
    time) the page gets the distances while a piece is off; ``linger_s``: how long "play on" stays shown."""

    def __init__(self, profile, vision, hub=None, view=None, *, say: Callable[[str], Any] | None = None,
                 note: Callable[[str], Any] | None = None, refresh_s: float = 0.2, linger_s: float = 3.0, **check):
        self.profile, self.vision, self.hub, self.view = profile, vision, hub, view
        self.say, self.note = say, note
        self.refresh_s, self.linger_s, self.check_options = float(refresh_s), float(linger_s), check
        self.check: PlacementCheck | None = None
        self.shown: PlacementStatus | None = None  # what the video and the page show now
        self._before = None  # the last picture of the board at rest (no shot under way)
        self._restore = None  # that picture, kept for the check's returns
        self._sent_t_s: float | None = None
        self._done_t_s: float | None = None
        self._lock = threading.Lock()

    # ----- a match listener ------------------------------------------------------------------------------
    def __call__(self, event: dict) -> None:
        kind = event.get("type")
        if kind == "call":
            self._begin(event.get("ruling"))
        elif kind == "referee":  # the spots stand only for a ruling of the last shot (an override of it, a flick
            last = (event.get("state") or {}).get("last_shot_no")  # entered); an undo, a state set: none
            self._begin(event.get("ruling") if event.get("shot_no") == last else None)

    def _begin(self, ruling) -> None:
        targets = targets_of(ruling, self.profile)
        with self._lock:
            clear = self.shown is not None and not targets
            self.check = PlacementCheck(targets, self.profile.game, **self.check_options) if targets else None
            returns = any(t.kind == "return" for t in targets)
            self._restore = self._before if returns else None
            self.shown, self._sent_t_s, self._done_t_s = None, None, None
        if clear:
            self._publish(CLEAR)

    # ----- every frame, after vision ---------------------------------------------------------------------
    def on_frame(self, frame) -> None:
        with self._lock:
            if self.check is None:
                message, status, previous = self._idle(frame), None, None
            else:
                message, status, previous = self._step(frame)
        if message is not None:
            self._publish(message)
        if status is None:
            return
        if self.say is not None:
            self._say(previous, status)
        if status.ended and not status.done and self.note is not None:
            self.note(status.text)

    def _idle(self, frame) -> dict | None:
        """No check running: the board at rest is remembered; "play on" is taken off after ``linger_s``."""
        if not self.vision.in_shot:
            self._before = frame.image
        if self.shown is not None and self._done_t_s is not None and frame.t_s - self._done_t_s >= self.linger_s:
            self.shown = None
            return CLEAR
        return None

    def _step(self, frame) -> tuple[dict | None, PlacementStatus | None, PlacementStatus | None]:
        """The check fed this frame: (the message for the page, the status, the one before), or Nones when
        nothing is to be sent yet (no change, distances sent less than ``refresh_s`` ago)."""
        if self.vision.in_shot:  # the next shot began: what was not placed stays so
            status = self.check.end(frame.t_s)
            self.check = None
        else:
            status = self.check.update(self.vision.positions(), frame.t_s)
            if status.done:
                self.check, self._done_t_s = None, frame.t_s
        previous, self.shown = self.shown, (None if status.ended else status)
        changed = previous is None or previous.states != status.states or previous.text != status.text
        if not (changed or status.ended or self._sent_t_s is None or frame.t_s - self._sent_t_s >= self.refresh_s):
            return None, None, None
        self._sent_t_s = frame.t_s
        return {**status.to_dict(), "active": not status.ended}, status, previous

    def _say(self, previous: PlacementStatus | None, status: PlacementStatus) -> None:
        before = previous.states if previous is not None else {}
        for p in status.pieces:
            if before.get(p.target.piece) != p.state:
                self.say(p.text)
        if status.done and (previous is None or not previous.done):
            self.say(status.text)

    def _publish(self, message: dict) -> None:
        if self.hub is not None:
            self.hub(message)

    # ----- the live video --------------------------------------------------------------------------------
    def draw(self, frame):
        """The picture the spectators' video shows for ``frame``: with the spots while a check is shown."""
        with self._lock:
            shown, before = self.shown, self._restore
        if shown is None or self.view is None:
            return frame.image
        return self.view.draw(frame.image, shown, before if not shown.done else None)
