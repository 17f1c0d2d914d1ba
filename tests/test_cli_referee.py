"""`shotjudge referee` as a user runs it: good input, every kind of bad input, nothing half-written."""
import json
import subprocess
import sys

import pytest

GOOD = [
    {"game": "novuss", "t0": 0, "t1": 1, "before": {"bat": [0, -440], "A4": [-16, 484]}, "after": {"bat": [0, 300]},
     "events": [{"t": 0.1, "kind": "contact", "a": "bat", "b": "A4"}, {"t": 0.5, "kind": "pocket", "piece": "A4", "pocket": "NW"}]},
    {"game": "novuss", "t0": 2, "t1": 3, "before": {"bat": [0, -440]}, "after": {"bat": [0, 300]}, "events": []},
]


def run(tmp_path, text, *args, name="shots.jsonl"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "judge.cli", "referee", *args, str(path)],
                          capture_output=True, text=True, timeout=60)
    return proc


def jsonl(records):
    return "".join(json.dumps(r) + "\n" for r in records)


def test_rulings_one_per_line(tmp_path):
    proc = run(tmp_path, jsonl(GOOD), "--game", "novuss", "--lang", "ru")
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [r["shot"] for r in lines] == [1, 2]
    assert lines[0]["calls"][0]["code"] == "series_continues" and lines[0]["next_player"] == "A"
    assert lines[0]["calls"][0]["text"] == "Своя пешка забита: A бьёт снова."
    assert lines[1]["actions"] == [{"kind": "place_penalty", "piece": "A4", "player": "A", "at": [-16.0, 484.0], "reason": "penalty_pawn"}]


def test_json_array_input_pretty_and_state(tmp_path):
    proc = run(tmp_path, json.dumps(GOOD), "--game", "novuss", "--pretty", name="shots.json")
    assert proc.returncode == 0 and proc.stdout.startswith("{\n  \"shot\": 1")
    proc = run(tmp_path, json.dumps(GOOD), "--game", "novuss", "--print-state", name="shots.json")
    state = json.loads(proc.stdout)
    assert state["to_move"] == "B" and state["positions"]["A4"] == [-16.0, 484.0] and state["pocketed"] == []


def _bad(record_index, mutate):
    recs = json.loads(json.dumps(GOOD))
    mutate(recs[record_index])
    return recs


@pytest.mark.parametrize("text,message", [
    (jsonl(_bad(0, lambda r: r["events"][0].update(b="A9"))), "shots.jsonl line 1: events[0].b: unknown piece 'A9' for novuss"),
    (jsonl(GOOD).replace('"A4": [-16, 484]}', '"A4": [-16, 484], "A4": [0, 0]}', 1), "shots.jsonl line 1: before.A4: piece appears twice (a piece in two places)"),
    (jsonl([GOOD[0], {**GOOD[0], "t0": 1.0, "t1": 2.0,
                      "events": [{**e, "t": e["t"] + 1.0} for e in GOOD[0]["events"]]}]),
     "shots.jsonl record 2: shot 2: before.A4: A4 is already pocketed"),
    (jsonl([GOOD[0], GOOD[0]]), "shots.jsonl line 2: t0: the shot starts at 0 s, before the previous one ended (1 s): "
                                "shot times must not go back"),
    (jsonl(_bad(0, lambda r: r["before"].update(A4=[1e300, 0]))),
     "shots.jsonl record 1: shot 1: before.A4: (1e+300, 0) mm is off the novuss surface (at most "),
    (jsonl(_bad(0, lambda r: r["after"].update(B2=[99999, 0]))),
     "shots.jsonl record 1: shot 1: after.B2: (99999, 0) mm is off the novuss surface (at most "),
    (jsonl(_bad(0, lambda r: r["events"].reverse())), "shots.jsonl line 1: events[1].t: is out of order (0.1 comes after 0.5)"),
    (jsonl(GOOD)[:-20] + "\n", "shots.jsonl line 2: malformed JSON"),
    (jsonl(_bad(1, lambda r: r.update(game="cvrnkana"))), "shots.jsonl line 2: game: is 'cvrnkana' but this is a novuss match"),
    (jsonl(_bad(0, lambda r: r["after"].update(A4=[1, 1]))), "shots.jsonl line 1: events[1].piece: A4 left the surface (pocket) but is also in after"),
    ("", "shots.jsonl: no shot records (the file is empty)"),
    # what a fuzzer found: a list or an object where a piece id or a kind belongs, numbers no float holds,
    # nesting deeper than any shot record
    (jsonl(_bad(0, lambda r: r["events"][0].update(b=["A4"]))), "shots.jsonl line 1: events[0].b: unknown piece ['A4'] for novuss"),
    (jsonl(_bad(0, lambda r: r["events"][0].update(kind={"k": 1}))), "shots.jsonl line 1: events[0].kind: unknown event kind {'k': 1}"),
    (jsonl(_bad(0, lambda r: r.update(t1=10 ** 320))), "shots.jsonl line 1: t1: must be a finite number, got an integer of 321 digits"),
    pytest.param('{"game": "novuss", "t0": ' + "9" * 5000 + "}\n", "shots.jsonl line 1: JSON that cannot be read as a shot "
                 "record", id="5000-digit-integer"),
    pytest.param("[" * 100_000 + "]" * 100_000, "shots.jsonl: JSON nested too deeply to be a shot record", id="deep-nesting"),
])
def test_bad_input_is_one_line_exit_2_and_no_output(tmp_path, text, message):
    proc = run(tmp_path, text, "--game", "novuss")
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("shotjudge referee: error: ")
    assert message in proc.stderr


def test_missing_file_and_unknown_profile(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "judge.cli", "referee", "--game", "novuss", str(tmp_path / "nope.jsonl")],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "nope.jsonl: no such file" in proc.stderr
    proc = run(tmp_path, jsonl(GOOD), "--game", "novuss", "--profile", "club-table")
    assert proc.returncode == 2 and "profile 'club-table' does not exist" in proc.stderr
    proc = run(tmp_path, jsonl(GOOD), "--game", "novuss", "--profile", "cvrnkana-default")
    assert proc.returncode == 2 and "is for cvrnkana, not novuss" in proc.stderr
