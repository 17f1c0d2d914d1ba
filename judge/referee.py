"""The one referee step: a shot and the game state in, the call and what vision must now expect out.

Live judging (``judge.match.Match``: the step plus the journal), replay (``judge.replay.Replay``: the step
plus a log) and the accuracy bench all judge a shot here, so they cannot disagree:

* a shot played after the game ended opens the next game (``Ruleset.next_game``), unless that game was the
  last of the match (``Referee(engine, games=N)``): then the match is over and the shot is refused;
* the engine is told how well the shot's positions are known (``Ruleset.told``: a zone call closer
  than ``meta.position_tolerance_mm`` goes to the referee);
* a shot the engine refuses is a refusal with its reason, never an exception, and the state stays;
* a shot judged while a refused shot of its game is still open (``unsettled``: the referee has not said
  what it did) is judged on a state that shot may have changed: its ruling is flagged for review, never a
  confident call on a guess (a live stream lost the bat for a stroke, the stroke was refused, and the next
  shot was called for the wrong player, unflagged);
* the hints for vision (``Ruleset.hints``) come from the state after the shot and the ruling: who is to
  move, the penalty pawns and returned marbles about to be put down, the marbles out of view.

The step is pure: ``Referee(engine).step(state, shot, game_no, finished)`` returns a frozen ``Step``;
``finished`` are the results of the match's games before the current one (``rules.match.result_of``), which
the caller folds as it folds the state: a shot that opens a new game finishes the one before it
(``Referee.play`` folds a match's records so, for ``referee --games`` and ``shotjudge match``).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Iterable, Mapping, Sequence

from rules import RecordError, Ruleset, Ruling, Shot
from rules.hints import Hints
from rules.match import match_score, result_of

from .score_text import score_line

__all__ = ["Referee", "Step", "Played"]


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
    unsettled: tuple[int, ...] = ()  # the open refused shots (review numbers) its ruling assumed changed nothing

    @property
    def judged(self) -> bool:
        return self.ruling is not None

    @property
    def review(self) -> bool:
        """The referee should look: the shot was refused, a call asks for review, or vision flagged the
        shot itself (``Shot.review``: e.g. a piece it lost sight of without seeing it leave)."""
        return self.ruling is None or self.ruling.review or any(c.review for c in self.ruling.calls) or bool(self.shot.review)


@dataclass(frozen=True)
class Played:
    """Records folded through the step (``Referee.play``): the last game's state, its number in the
    match, the results of the games before it and every ruling in order."""

    state: Any
    game_no: int
    finished: tuple[dict[str, Any], ...]
    rulings: tuple[Ruling, ...]


class Referee:
    """Applies shots with one ruleset. Holds no game state: the caller folds ``Step.state`` (and the
    finished games). ``games``: the match's length (None: open, a game follows each one that ends)."""

    def __init__(self, engine: Ruleset, games: int | None = None):
        self.engine = engine
        self.games = games

    def score(self, state: Any, game_no: int, finished: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
        """The match score (``rules.match.match_score``): the ``finished`` games, and the current one,
        ``game_no`` in ``state``, once it is over."""
        done = list(finished) + ([result_of(state, game_no)] if state.outcome is not None else [])
        return match_score(self.engine.game, done, self.games)

    def hints(self, state: Any) -> Hints:
        """What vision must know of ``state`` (at the start, after a referee action)."""
        return self.engine.hints(state)

    def step(self, state: Any, shot: Shot, game_no: int, finished: Sequence[Mapping[str, Any]] = (),
             unsettled: Sequence[int] = ()) -> Step:
        """``unsettled``: the review numbers of the refused shots of game ``game_no`` the referee has not
        settled (none count once this shot opens the next game)."""
        new_game = None
        if state.outcome is not None:  # the game is over: this shot opens the next one, if the match has one
            score = self.score(state, game_no, finished)
            if score["over"]:
                error = f"{score_line(score)}. No further game is opened: this shot is not judged"
                return Step(shot, game_no, state, None, self.engine.hints(state), error)
            game_no += 1
            state = new_game = self.engine.next_game(state, shot, game_no)
        try:
            after, ruling = self.engine.told(shot).apply(state, shot)
        except RecordError as exc:
            return Step(shot, game_no, state, None, self.engine.hints(state), str(exc), new_game)
        open_ = () if new_game is not None else tuple(unsettled)
        if open_:
            ruling = replace(ruling, review=True)
        return Step(shot, game_no, after, ruling, self.engine.hints(after, ruling), None, new_game, open_)

    def play(self, state: Any, records: Iterable[Shot], where: str = "record") -> Played:
        """The records of a match folded from ``state`` (game 1) through the step, each next game opened
        by the record after a game ended; a record the step refuses is a ``RecordError`` naming it
        (``where`` and its number from 1)."""
        game_no, finished, rulings = 1, [], []
        for i, shot in enumerate(records, 1):
            step = self.step(state, shot, game_no, finished)
            if step.ruling is None:
                raise RecordError(f"{where} {i}: {step.error}")
            if step.new_game is not None:
                finished.append(result_of(state, game_no))
            state, game_no = step.state, step.game_no
            rulings.append(step.ruling)
        return Played(state, game_no, tuple(finished), tuple(rulings))
