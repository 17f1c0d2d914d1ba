"""The match journal: append-only, idempotent, resumable, and it survives SIGKILL mid-match."""
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import cv2
import numpy as np
import pytest

from judge.journal import Journal, JournalError, record_hash
from judge.match import Match, RefereeError
from novuss_shots import make_records, novuss_engine
from rules import parse_record

HERE = Path(__file__).parent


def judge_all(match, raws):
    return [match.judge(parse_record(r)) for r in raws]


def test_wal_full_sync_and_append_only(tmp_path):
    with Journal.open(tmp_path / "m.sqlite", create=True, match={"game": "novuss"}) as j:
        assert j._conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert j._conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
        j.append_action("note", 1, {"text": "hello"})
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            j._conn.execute("UPDATE entries SET payload='{}'")
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            j._conn.execute("DELETE FROM entries")
        assert [e["kind"] for e in j.entries()] == ["match", "note"]


def test_same_shot_twice_is_stored_once(tmp_path):
    raw = make_records(1)[0]
    with Journal.open(tmp_path / "m.sqlite", create=True) as j:
        first, added = j.append_shot(1, raw, {"calls": []}, {"x": 1})
        again, added_again = j.append_shot(1, dict(reversed(list(raw.items()))), {"calls": ["other"]}, None)
        assert (added, added_again) == (True, False)
        assert again.seq == first.seq and again.shot_no == 1 and again.ruling == {"calls": []}
        assert first.record_hash == record_hash(raw)
        assert len(j.entries("shot")) == 1


def test_match_resumes_with_state_rebuilt_by_replay(tmp_path):
    raws = make_records(7)
    path = tmp_path / "m.sqlite"
    with Journal.open(path, create=True, match={"game": "novuss"}) as j:
        m = Match(novuss_engine(), j)
        shots = judge_all(m, raws[:4])
        assert [s.shot_no for s in shots] == [1, 2, 3, 4]
    with Journal.open(path) as j:
        events = []
        m = Match(novuss_engine(), j, listeners=[events.append])
        assert m.resumed_shots == 4
        assert judge_all(m, raws[:4]) == [None] * 4 and m.skipped == 4 and events == []  # nothing judged twice
        judge_all(m, raws[4:])
        assert [e["shot_no"] for e in events] == [5, 6, 7]
        resume = j.resume()
    expected_state, expected_rulings = novuss_engine().replay([parse_record(r) for r in raws])
    assert [dict(r) for r in resume.records] == raws
    assert resume.last_state == expected_state.to_dict()
    assert [s.ruling for s in resume.shots] == [r.to_dict() for r in expected_rulings]
    assert resume.next_shot_no == 8


def test_referee_actions_are_appended_and_replayed(tmp_path):
    raws = make_records(5)
    with Journal.open(tmp_path / "m.sqlite", create=True, match={"game": "novuss"}) as j:
        m = Match(novuss_engine(), j)
        judge_all(m, raws[:3])
        undo = m.undo()
        assert undo["shot_no"] == 3 and len(m.records) == 2
        m.judge(parse_record(raws[3]))  # the game goes on after the undo
        assert m.shot_nos == [1, 2, 4]
        ov = m.override(2, "pawn_moved_by_hand", note="seen by the referee")
        codes = [c["code"] for c in ov["ruling"]["calls"]]
        assert "referee_foul" in codes
        with pytest.raises(RefereeError, match="no shot 3"):
            m.override(3, "x")
        with pytest.raises(RefereeError, match="override code"):
            m.override(2, "DROP TABLE")
        m.next_game()
        assert m.game_no == 2 and m.records == []
        with pytest.raises(RefereeError, match="nothing to undo in game 2"):
            m.undo()
        kinds = [e["kind"] for e in j.entries()]
        assert kinds == ["match", "seen", "shot", "seen", "shot", "seen", "shot", "undo", "seen", "shot", "override",
                         "next_game"]  # each record written ahead of its ruling
        resume = j.resume()
        assert resume.game_no == 2 and resume.records == ()
        game1 = resume.games[1]
        assert [r["t0"] for r in game1] == [raws[0]["t0"], raws[1]["t0"], raws[3]["t0"]]
        assert game1[1]["referee"] == [{"code": "pawn_moved_by_hand", "note": "seen by the referee"}]
        # after the override the game-1 state is what the engine makes of the effective records
        state, rulings = novuss_engine().replay([parse_record(dict(r)) for r in game1])
        assert ov["state"]["positions"] == state.to_dict()["positions"]
        assert rulings[1].codes() == ["referee_foul", "penalty_pawn", "turn_lost_penalty"]  # was series_continues
        assert ov["ruling"] == rulings[1].to_dict()
        assert m.journal.entries("shot")[1]["payload"]["record"] == raws[1]  # the stored shot is untouched


def test_foreign_or_corrupt_files_are_refused(tmp_path):
    other = tmp_path / "other.sqlite"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    conn.close()
    with pytest.raises(JournalError, match="not a shotjudge journal \\(another SQLite database\\)"):
        Journal.open(other)
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(JournalError, match="not a shotjudge journal \\(not an SQLite file"):
        Journal.open(junk)
    with pytest.raises(JournalError, match="no such journal"):
        Journal.open(tmp_path / "missing.sqlite")
    with Journal.open(tmp_path / "m.sqlite", create=True, match={"game": "novuss"}):
        pass
    with pytest.raises(JournalError, match="is a novuss match, not cvrnkana"):
        Journal.open(tmp_path / "m.sqlite", match={"game": "cvrnkana"})


def _shots_in(path) -> int:
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1)
        try:
            return conn.execute("SELECT COUNT(*) FROM entries WHERE kind='shot'").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error:
        return 0


def test_killed_mid_match_restarts_with_no_shot_lost_or_judged_twice(tmp_path):
    """``shotjudge live`` (vision scripted) is SIGKILLed mid-match; the same command again says it resumes,
    skips the shots the journal has and judges the rest: each shot once, in order, as the engine rules."""
    from test_live import write_calibration

    n = 10
    raws = make_records(n)
    (tmp_path / "records.json").write_text(json.dumps(raws))
    frames = tmp_path / "frames"
    frames.mkdir()
    for i in range(4 * n + 3):
        cv2.imwrite(str(frames / f"f{i:04d}.png"), np.full((24, 32, 3), i % 256, np.uint8))
    write_calibration(tmp_path / "cal.json", (32, 24))
    journal = tmp_path / "match.sqlite"
    cmd = [sys.executable, str(HERE / "live_worker.py"), str(journal), str(frames), str(tmp_path / "records.json"),
           str(tmp_path / "cal.json")]
    env = {**os.environ, "COLUMNS": "300"}
    proc = subprocess.Popen(cmd + ["0.02"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    deadline = time.monotonic() + 60
    while _shots_in(journal) < 4 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = _shots_in(journal)
    assert 4 <= before < n, "the worker should have been killed mid-match"
    with Journal.open(journal) as j:
        pending = len(j.resume().pending)  # killed between a record written ahead and its ruling: 0 or 1
        consumed = max(j.resume().consumed.values())
    done = subprocess.run(cmd + ["0"], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    resumed = (f"resuming {journal}: game 1, {before} shot(s) already judged"
               + (f", {pending} seen before the stop judged now" if pending else "")
               + f"; reading on after frame {consumed}")
    assert resumed in done.stdout, done.stdout
    # the frames before the last judged shot's end are read past, not judged again: no duplicate at all
    frames_fed = 4 * n + 3 - (consumed + 1)
    assert (f"{frames_fed} frames, {n - before - pending} shot(s) judged (0 flagged for review), 0 refused "
            f"(0 review item(s) open for the referee), 0 duplicate(s) already in the journal") in done.stdout
    announced = [line.split(" player")[0] for line in done.stdout.splitlines() if line.startswith("game 1 shot ")]
    assert announced == [f"game 1 shot {k}" for k in range(before + 1, n + 1)]  # only the new ones are announced
    with Journal.open(journal) as j:
        shots = j.entries("shot")
        resume = j.resume()
    assert [s["shot_no"] for s in shots] == list(range(1, n + 1))
    assert [s["payload"]["record"] for s in shots] == raws
    state, rulings = novuss_engine().replay([parse_record(r) for r in raws])
    assert resume.last_state == state.to_dict()
    assert [s["payload"]["ruling"] for s in shots] == [r.to_dict() for r in rulings]
