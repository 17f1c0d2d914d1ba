"""The one referee step: a shot and the game state in, the call and what vision must now expect out.

Live judging (``judge.match.Match``: the step plus the journal), replay (``judge.replay.Replay``: the step
plus a log) and the accuracy bench all judge a shot here, so they cannot disagree:

* a shot played after the game ended opens the next game (``Ruleset.next_game``);
* the engine is told how well the shot's positions are known (``Ruleset.told``: a zone call closer
  than ``meta.position_tolerance_mm`` goes to the referee);
* a shot the engine refuses is a refusal with its reason, never an exception, and the state stays;
* the hints for vision (``Ruleset.hints``) come from the state after the shot and the ruling: who is to
  move, the penalty pawns and returned marbles about to be put down, the marbles out of view.

The step is pure: ``Referee(engine).step(state, shot, game_no)`` returns a frozen ``Step``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rules import RecordError, Ruleset, Ruling, Shot
from rules.hints import Hints

__all__ = ["Referee", "Step"]


@dataclass(frozen=True)
class Step:
    """One judged (or refused) shot. ``state``: the game state after it (the state it was refused in);
    ``new_game``: the state a new game started from before this shot, if the shot opened one."""

    shot: Shot
    game_no: int
    state: Any
    ruling: Ruling | None
    hints: Hints
    error: str | None = None
    new_game: Any = None

    @property
    def judged(self) -> bool:
        return self.ruling is not None

    @property
    def review(self) -> bool:
        """The referee should look: the shot was refused, a call asks for review, or vision flagged the
        shot itself (``Shot.review``: e.g. a piece it lost sight of without seeing it leave)."""
        return self.ruling is None or self.ruling.review or any(c.review for c in self.ruling.calls) or bool(self.shot.review)


class Referee:
    """Applies shots with one ruleset. Holds no game state: the caller folds ``Step.state``."""

    def __init__(self, engine: Ruleset):
        self.engine = engine

    def hints(self, state: Any) -> Hints:
        """What vision must know of ``state`` (at the start, after a referee action)."""
        return self.engine.hints(state)

    def step(self, state: Any, shot: Shot, game_no: int) -> Step:
        new_game = None
        if state.outcome is not None:  # the game is over: this shot opens the next one
            game_no += 1
            state = new_game = self.engine.next_game(state, shot, game_no)
        try:
            after, ruling = self.engine.told(shot).apply(state, shot)
        except RecordError as exc:
            return Step(shot, game_no, state, None, self.engine.hints(state), str(exc), new_game)
        return Step(shot, game_no, after, ruling, self.engine.hints(after, ruling), None, new_game)
