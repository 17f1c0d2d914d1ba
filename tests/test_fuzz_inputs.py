"""The input fuzz (``bench/fuzz_inputs.py``) in small: a few hundred bad inputs through the verbs, and not
one traceback or unexplained exit."""
import pytest

import judge.cmd_referee
from bench.fuzz_inputs import mutate, outcome, run, run_verb


def test_a_few_hundred_bad_inputs_through_the_verbs_give_no_traceback():
    tally = run(records=150, documents=30, options=60, seed=7, shots=6, seeds=(0,))
    assert {k: sum(c.values()) for k, c in tally.counts.items()} == {
        "novuss shot records": 150, "cvrnkana shot records": 150, "novuss states (--state)": 30,
        "cvrnkana states (--state)": 30, "calibrations": 30, "profiles (--profile)": 30, "options": 60}
    assert [(k, c["traceback"], c["other"]) for k, c in tally.counts.items() if c["traceback"] or c["other"]] == [], \
        tally.examples
    assert all(c["refused"] > 0 for c in tally.counts.values())  # the mutations do break the documents


def test_the_count_sees_a_traceback(monkeypatch):
    monkeypatch.setenv("SHOTJUDGE_TRACEBACK", "1")
    monkeypatch.setattr(judge.cmd_referee, "run", lambda args: {}["no such key"])
    result = run_verb(["referee", "--game", "novuss", "-"], "")
    assert outcome(*result, True) == "traceback" and result[3].startswith("KeyError: 'no such key'")


@pytest.mark.parametrize("rc, out, err, verdict", [
    (0, "{}\n", "", "accepted"),
    (2, "", "shotjudge referee: error: x.json: no such file\n", "refused"),
    (2, "", "usage: shotjudge live [-h]\n                      --game G\nshotjudge live: error: argument --fps: bad\n", "refused"),
    (2, "{}\n", "shotjudge referee: error: line 2: bad\n", "other"),  # a refusal that wrote output
    (2, "", "judging ━━━ 0/None\nshotjudge replay: error: bad\n", "other"),  # more than the one line
    (1, "", "shotjudge replay: error: the video ends abruptly\n", "other"),
])
def test_outcomes_are_told_apart(rc, out, err, verdict):
    assert outcome(rc, out, err, None, True) == verdict


def test_mutations_are_seeded_and_change_the_document():
    import json
    import random

    doc = {"game": "novuss", "t0": 0.5, "t1": 1.0, "before": {"bat": [0, -440]}, "after": {}, "events": []}
    made = [mutate(doc, random.Random(s)) for s in range(60)]
    assert made == [mutate(doc, random.Random(s)) for s in range(60)]
    assert all(text != json.dumps(doc) for _, text in made)
    assert len({kind for kind, _ in made}) == 12  # every kind of mutation is drawn
