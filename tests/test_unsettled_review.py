"""A shot judged while a refused shot of its game is still open is flagged for the referee (``Referee.step``'s
``unsettled``): the refused shot may have changed the game (whose turn, what was pocketed), and the call after
it assumes it changed nothing. Seen live: a stream lost the bat for a stroke, the stroke was refused, and the
next shot was called for the wrong player with no flag."""
from __future__ import annotations

import io

from calibration import default_profile
from judge.console import review_queue
from judge.journal import Journal
from judge.live import ConsoleAnnouncer
from judge.match import Match
from judge.replay import Replay
from rules import parse_record
from rules.cvrnkana import Cvrnkana

ENGINE = Cvrnkana(default_profile("cvrnkana").geometry)
WHY = "judged while review {n} (a shot not judged) was still open: this call assumes that shot changed nothing"


def flick(marble: str, t0: float, x_mm: float) -> dict:
    """An opening flick of ``marble`` that stops on the field at (x, 500) mm."""
    return {"game": "cvrnkana", "t0": t0, "t1": t0 + 0.5, "before": {}, "after": {marble: [x_mm, 500.0]},
            "events": [{"t": t0 + 0.1, "kind": "touch", "piece": marble}]}


# A1; B1, refused (the camera saw too little of it); then B2 (B is still to move in the judge's state) and A2
SHOTS = [flick("A1", 0.0, -100.0), flick("B1", 1.0, 100.0), flick("B2", 2.0, 200.0), flick("A2", 3.0, -200.0)]


def _record(i: int):
    return parse_record(SHOTS[i], "test", "cvrnkana")


def test_a_call_after_an_open_refused_shot_is_flagged_naming_it_until_the_referee_settles_it(tmp_path):
    path = tmp_path / "m.sqlite"
    out = io.StringIO()
    from rich.console import Console
    with Journal.open(path, create=True, match={"game": "cvrnkana"}) as journal:
        match = Match(ENGINE, journal, listeners=[ConsoleAnnouncer(Console(file=out, width=400, highlight=False))])
        first = match.judge(_record(0))
        assert first.ruling.review is False and first.ruling_dict["review"] is False
        match.refuse(_record(1), "the camera saw nothing for 1.2 s during this shot (frames lost): too little to rule on")
        (review,) = [r["review"] for r in match.open_reviews()]
        third = match.judge(_record(2))
        assert third.ruling.review is True and third.ruling_dict["review"] is True
        assert [c.review for c in third.ruling.calls] == [False] * len(third.ruling.calls)  # the calls as made
        assert match.unsettled == {(1, third.shot_no): (review,)}
        assert WHY.format(n=review) in out.getvalue()
        queue = review_queue(match)
        assert [(q["kind"], q["shot_no"]) for q in queue] == [("call", third.shot_no), ("refused", None)]
        assert queue[0]["reasons"] == [WHY.format(n=review)]
        (stored,) = [e for e in journal.entries() if e["kind"] == "shot" and e["shot_no"] == third.shot_no]
        assert stored["payload"]["ruling"]["review"] is True
    with Journal.open(path) as journal:  # restarted with the review still open: the call keeps its flag
        match = Match(ENGINE, journal)
        assert [r.review for r in match.rulings] == [False, True]
        match.settle(review)  # the referee: the refused shot changed nothing
        assert [r.review for r in match.rulings] == [False, False] and match.unsettled == {}
        assert review_queue(match) == []
        fourth = match.judge(_record(3))
        assert fourth.ruling.review is False


def test_the_same_shots_without_a_refusal_are_not_flagged(tmp_path):
    with Journal.open(tmp_path / "m.sqlite", create=True, match={"game": "cvrnkana"}) as journal:
        match = Match(ENGINE, journal)
        assert [match.judge(_record(i)).ruling.review for i in (0, 1, 3, 2)] == [False] * 4
        assert match.unsettled == {}


def test_a_replay_flags_every_later_call_of_the_game_and_says_which_shot_it_assumed():
    replay = Replay(ENGINE, ENGINE.initial())
    replay.judge(_record(0))
    replay.refuse(_record(1), "too little to rule on")
    third, fourth = replay.judge(_record(2)), replay.judge(_record(3))
    assert (third.review, third.ruling["review"], fourth.review) == (True, True, True)
    assert (third.ruling["player"], fourth.ruling["player"]) == ("B", "A")
    assert "shot 3: judged after shot 2, which was not judged: this call assumes that shot changed nothing" in replay.notes
    plain = Replay(ENGINE, ENGINE.initial())
    assert [plain.judge(_record(i)).review for i in (0, 1, 3, 2)] == [False] * 4
