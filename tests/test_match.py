"""A match of several games (issue #21 item 1): its length (--games), its score (Cvrnkaná clause 8) through
``shotjudge match``, ``referee --games``, live's journal (resumed too) and replay."""
import json
import subprocess
import sys

import pytest

from calibration import default_profile
from judge.journal import Journal, JournalError
from judge.match import Match, RefereeError
from judge.replay import Replay
from rules import parse_record
from rules.cvrnkana import Cvrnkana
from rules.match import check_games, match_score

ENGINE = Cvrnkana(default_profile("cvrnkana").geometry)


def opening_game(starter, pits, t0):
    """One Cvrnkaná game of 10 marbles each, played out in its opening flicks, the starter first: each
    player's first ``pits[player]`` marbles go straight into the pit, the rest stop on the field. The
    starter pockets all 10, so the other player's final flick (clause 3) ends it: the starter wins."""
    other = "B" if starter == "A" else "A"
    records, t = [], t0
    for i in range(1, 11):
        for p in (starter, other):
            m = f"{p}{i}"
            events = [{"t": t + 0.1, "kind": "touch", "piece": m}]
            after = {}
            if i <= pits[p]:
                events.append({"t": t + 0.2, "kind": "pit", "piece": m})
            else:
                after = {m: [(100.0 if p == "B" else -100.0) * i, 500.0]}
            records.append({"game": "cvrnkana", "t0": t, "t1": t + 0.5, "before": {}, "after": after, "events": events})
            t += 1.0
    return records


# Game 1: A (toss winner) starts and wins, pit A 10, B 3. Game 2: B starts (clause 1) and wins, pit A 5, B 10.
# One game each; marbles A 15, B 13: A wins on marbles, 2 points, B 1 (clause 8).
MATCH = opening_game("A", {"A": 10, "B": 3}, 0.0) + opening_game("B", {"A": 5, "B": 10}, 20.0)
AFTER = {"game": "cvrnkana", "t0": 100.0, "t1": 100.5, "before": {}, "after": {},
         "events": [{"t": 100.1, "kind": "touch", "piece": "A1"}, {"t": 100.2, "kind": "pit", "piece": "A1"}]}
SCORE = {"game": "cvrnkana", "games": 2, "played": 2, "over": True,
         "results": [{"game_no": 1, "result": "win", "winner": "A", "pit": {"A": 10, "B": 3}},
                     {"game_no": 2, "result": "win", "winner": "B", "pit": {"A": 5, "B": 10}}],
         "games_won": {"A": 1, "B": 1}, "marbles": {"A": 15, "B": 13}, "points": {"A": 2, "B": 1}}
LINE = "match over after its 2 games: games won A 1, B 1; marbles A 15, B 13; points (clause 8) A 2, B 1"
REFUSED = f"{LINE}. No further game is opened: this shot is not judged"


def cli(tmp_path, verb, records, *args):
    """``shotjudge VERB ARGS... FILE`` with the records in FILE (``live``, which reads no file: without it)."""
    path = tmp_path / "match.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return subprocess.run([sys.executable, "-m", "judge.cli", verb, *args] + ([] if verb == "live" else [str(path)]),
                          capture_output=True, text=True, timeout=60)


def test_a_two_game_cvrnkana_match_through_the_verb_scores_clause_8_points(tmp_path):
    proc = cli(tmp_path, "match", MATCH, "--game", "cvrnkana")
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout.splitlines() == ["game 1: A won, pit A 10, B 3", "game 2: B won, pit A 5, B 10", LINE]
    proc = cli(tmp_path, "match", MATCH, "--game", "cvrnkana", "--games", "2", "--json")
    assert proc.returncode == 0 and json.loads(proc.stdout) == SCORE


def test_game_2_of_a_match_is_started_by_the_other_player_clause_1(tmp_path):
    proc = cli(tmp_path, "referee", MATCH, "--game", "cvrnkana", "--games", "2")
    rulings = [json.loads(line) for line in proc.stdout.splitlines()]
    assert proc.returncode == 0 and len(rulings) == 40
    assert (rulings[20]["shot"], rulings[20]["player"], rulings[20]["calls"][0]["evidence"]) == (
        1, "B", {"game_number": 2, "starter": "B", "player": "A"})
    assert rulings[19]["game_over"] == {"result": "win", "winner": "A", "reason": "game_won"}
    assert rulings[39]["game_over"] == {"result": "win", "winner": "B", "reason": "game_won"}
    # a match joined in game 2 goes on with game 3, which the toss winner starts
    state = ENGINE.state_from_dict({**ENGINE.initial(game_number=2).to_dict(), "outcome": {
        "result": "draw", "winner": None, "reason": "draw_zero"}})
    assert (ENGINE.next_game(state, None, 2).game_number, ENGINE.next_game(state, None, 2).to_move) == (3, "A")


@pytest.mark.parametrize("verb", ["match", "referee", "replay", "live"])
def test_an_odd_number_of_games_for_cvrnkana_is_refused_naming_the_flag_and_clause_8(tmp_path, verb):
    extra = {"replay": ["--calibration", "c.json"], "live": ["--calibration", "c.json", "--source", "x"]}.get(verb, [])
    proc = cli(tmp_path, verb, MATCH, "--game", "cvrnkana", "--games", "3", *extra)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == (f"shotjudge {verb}: error: --games 3: a Cvrnkaná match is an even number of games "
                           "(clause 8), got 3\n")


def test_records_that_are_no_whole_match_are_one_line_exit_2(tmp_path):
    for records, args, message in (
            (MATCH + [AFTER], ["--games", "2"], f"match.jsonl record 41: {REFUSED}"),
            (MATCH, ["--games", "4"], "match.jsonl: the records hold 2 of the match's 4 games (--games 4)"),
            (MATCH[:20], [], "match.jsonl: a Cvrnkaná match is an even number of games (clause 8), got 1; "
                             "give the records of the whole match"),
            (MATCH[:30], [], "match.jsonl: game 2 is not over after the last record; give the records of the "
                             "whole match")):
        proc = cli(tmp_path, "match", records, "--game", "cvrnkana", *args)
        assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", f"shotjudge match: error: {message}\n")
    proc = cli(tmp_path, "referee", MATCH + [AFTER], "--game", "cvrnkana", "--games", "2")
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", f"shotjudge referee: error: match.jsonl record 41: "
                                                                  f"{REFUSED}\n")


def test_a_live_match_of_two_games_refuses_a_shot_after_game_2_and_resumes_with_its_score(tmp_path):
    path = tmp_path / "m.sqlite"
    with Journal.open(path, create=True, match={"game": "cvrnkana", "games": 2}) as journal:
        match = Match(ENGINE, journal)
        shots = [match.judge(parse_record(r, "test", "cvrnkana")) for r in MATCH]
        assert [s.game_no for s in shots] == [1] * 20 + [2] * 20 and all(s.error is None for s in shots)
        assert match.score() == SCORE and match.snapshot()["match"] == SCORE
        refused = match.judge(parse_record(AFTER, "test", "cvrnkana"))
        assert (refused.game_no, refused.ruling, refused.error) == (2, None, REFUSED)
        with pytest.raises(RefereeError, match=r"^match over after its 2 games: .*\. No further game is opened$"):
            match.next_game()
        assert [e["kind"] for e in journal.entries()].count("next_game") == 1
    with Journal.open(path) as journal:  # resumed: the same game, the same score, still over
        match = Match(ENGINE, journal)
        assert (match.game_no, match.score()) == (2, SCORE)
    with pytest.raises(JournalError, match=r"this journal is a match of 2 games, not 4 \(--games\)"):
        Journal.open(path, match={"game": "cvrnkana", "games": 4})


def test_replay_keeps_the_match_score_and_refuses_a_shot_after_the_last_game():
    replay = Replay(ENGINE, ENGINE.initial(), games=2)
    for raw in MATCH[:20]:
        replay.judge(parse_record(raw, "test", "cvrnkana"))
    assert replay.score() == {**SCORE, "played": 1, "over": False, "results": SCORE["results"][:1],
                              "games_won": {"A": 1, "B": 0}, "marbles": {"A": 10, "B": 3}, "points": None}
    for raw in MATCH[20:] + [AFTER]:
        replay.judge(parse_record(raw, "test", "cvrnkana"))
    assert replay.score() == SCORE and replay.shots[-1].error == REFUSED and replay.game_no == 2
    assert replay.notes[-1] == f"shot 41 not judged, referee please decide: {REFUSED}"


def test_match_score_of_novuss_counts_games_won_and_no_replayed_set():
    results = [{"game_no": 1, "result": "win", "winner": "B"}, {"game_no": 2, "result": "replay", "winner": None},
               {"game_no": 3, "result": "win", "winner": "B"}]
    assert match_score("novuss", results, 3) == {"game": "novuss", "games": 3, "played": 2, "over": False,
                                                 "results": results, "games_won": {"A": 0, "B": 2}}
    assert match_score("novuss", results, 2)["over"] is True
    check_games("novuss", 3)
    with pytest.raises(ValueError, match=r"^a match has 1 game or more, got 0$"):
        check_games("novuss", 0)
