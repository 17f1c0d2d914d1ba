"""Exactly once and never stalled: a shot is known by its place in the source, its record is written ahead
of its ruling, a restart judges what was seen and not judged, a refused shot is a review item the referee
settles, and vision starts again from what it sees named by the state (``judge.resync``)."""
import copy
import sqlite3

import numpy as np
import pytest

from hardware.frame import Frame
from judge.journal import SCHEMA_VERSION, Journal, JournalError
from judge.live import run_live
from judge.match import Match, RefereeError
from judge.resync import resync_layout
from novuss_shots import make_records, novuss_engine
from rules import parse_record
from sim.scripted_vision import ScriptedShot

FILE = {"source": "/clips/match.mp4", "live": False}


def at(end_index, **more):
    return {**FILE, "end_index": end_index, "end_t_s": end_index / 30, **more}


def refused_record(raws):
    """Shot 2 again, but it pockets A1, which shot 1 pocketed: the engine refuses it."""
    bad = copy.deepcopy(raws[1])
    bad["events"] = [{"t": bad["t0"] + 0.2, "kind": "contact", "a": "bat", "b": "A1"},
                     {"t": bad["t0"] + 0.6, "kind": "pocket", "piece": "A1", "pocket": "NW"}]
    return bad


def test_a_place_in_a_recording_is_judged_once_whatever_vision_saw_there(tmp_path):
    raws = make_records(4)
    with Journal.open(tmp_path / "m.sqlite", create=True, match={"game": "novuss"}) as j:
        m = Match(novuss_engine(), j)
        assert m.judge(parse_record(raws[0]), position=at(40)).shot_no == 1
        # a restart that re-read the video saw shot 2 a little differently (another record), ending on frame 40
        assert m.judge(parse_record(raws[1]), position=at(40)) is None
        assert m.judge(parse_record(raws[1]), position=at(38)) is None and m.skipped == 2
        assert m.judge(parse_record(raws[1]), position=at(90)).shot_no == 2
        # a camera's frames never come again: its positions are not compared
        live = {"source": "usb:0", "live": True, "end_index": 3, "end_t_s": 1000.0}
        assert m.judge(parse_record(raws[2]), position=live).shot_no == 3
        assert m.consumed_in("/clips/match.mp4") == 90 and m.consumed_in("usb:0") == -1
        shots = j.entries("shot")
        assert [s["payload"]["position"]["end_index"] for s in shots] == [40, 90, 3]
        seen = {e["seq"] for e in j.entries("seen")}
        assert {s["payload"]["seen"] for s in shots} == seen  # each ruling settles the record written ahead
        assert j.resume().consumed == {"/clips/match.mp4": 90} and j.resume().pending == ()


def test_a_record_seen_and_not_judged_before_a_crash_is_judged_on_restart(tmp_path):
    raws = make_records(3)
    path = tmp_path / "m.sqlite"
    with Journal.open(path, create=True, match={"game": "novuss"}) as j:
        m = Match(novuss_engine(), j)
        m.judge(parse_record(raws[0]), position=at(40))
        seq = j.append_seen(1, raws[1], at(95))  # the process died here, before the referee step
        assert [p.seq for p in j.resume().pending] == [seq] and j.resume().consumed == {"/clips/match.mp4": 95}
    with Journal.open(path) as j:
        events = []
        m = Match(novuss_engine(), j, listeners=[events.append])
        assert m.pending_judged == 1 and m.shot_nos == [1, 2]
        assert [e["shot_no"] for e in events if e["type"] == "call"] == [2]  # announced once, on restart
        shot = j.entries("shot")[-1]
        assert shot["payload"]["record"] == raws[1] and shot["payload"]["seen"] == seq
        assert j.resume().pending == ()
        state, rulings = novuss_engine().replay([parse_record(r) for r in raws[:2]])
        assert shot["payload"]["ruling"] == rulings[1].to_dict() and m.state.to_dict() == state.to_dict()
        assert m.judge(parse_record(raws[1]), position=at(95)) is None  # the re-read shot is a duplicate
    with Journal.open(path) as j:
        assert Match(novuss_engine(), j).pending_judged == 0  # judged once only


def test_a_refused_shot_is_a_review_item_the_referee_settles(tmp_path):
    raws = make_records(3)
    with Journal.open(tmp_path / "m.sqlite", create=True, match={"game": "novuss"}) as j:
        m = Match(novuss_engine(), j)
        m.judge(parse_record(raws[0]), position=at(40))
        rev = m.changed_since(None)[0]
        got = m.judge(parse_record(refused_record(raws)), position=at(80))
        assert got.ruling is None and "A1" in got.error
        revision, _, restart = m.changed_since(rev)
        assert restart == "resync"  # vision must start again from what it sees, named by the state
        items = m.open_reviews()
        assert [i["error"] for i in items] == [got.error] and items[0]["position"]["end_index"] == 80
        assert m.snapshot()["reviews"] == [{"review": items[0]["review"], "error": got.error}]
        assert m.judge(parse_record(raws[1]), position=at(120)).shot_no == 2  # the next shot is judged
        assert m.changed_since(m.revision - 1)[2] is None  # a judged shot: vision is told, not restarted
        m.settle(items[0]["review"])
        assert m.open_reviews() == [] and m.changed_since(revision)[2] == "state"  # the board is as the state says
        with pytest.raises(RefereeError, match="no open review item"):
            m.settle(items[0]["review"])
    with Journal.open(tmp_path / "m.sqlite") as j:
        resumed = Match(novuss_engine(), j)
        assert resumed.open_reviews() == [] and resumed.shot_nos == [1, 2]
        assert [r.settled for r in j.resume().reviews] == ["confirm"]


def test_the_referee_sets_the_state_and_the_game_goes_on_from_it(tmp_path):
    raws = make_records(4)
    engine = novuss_engine()
    with Journal.open(tmp_path / "m.sqlite", create=True, match={"game": "novuss"}) as j:
        m = Match(engine, j)
        m.judge(parse_record(raws[0]), position=at(40))
        review = m.judge(parse_record(refused_record(raws)), position=at(80))
        corrected = m.state.to_dict()
        corrected["positions"]["A2"] = [100.0, 120.0]  # where the referee found it
        with pytest.raises(RefereeError, match="the state cannot be used"):
            m.set_state({"nonsense": 1})
        m.set_state(corrected, review=m.open_reviews()[0]["review"])
        assert m.open_reviews() == [] and m.state.to_dict()["positions"]["A2"] == [100.0, 120.0]
        assert review.ruling is None
        with pytest.raises(RefereeError, match="nothing to undo"):
            m.undo()  # undo does not reach behind a state the referee set
        assert m.judge(parse_record(raws[1]), position=at(120)).shot_no == 2
    with Journal.open(tmp_path / "m.sqlite") as j:
        resumed = Match(engine, j)
        expected, _ = engine.replay([parse_record(raws[1])], engine.state_from_dict(corrected))
        assert resumed.state.to_dict() == expected.to_dict()


def test_a_journal_of_format_1_is_upgraded_with_every_entry_kept(tmp_path):
    path = tmp_path / "old.sqlite"
    raws = make_records(2)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.executescript("""
    CREATE TABLE entries (seq INTEGER PRIMARY KEY AUTOINCREMENT,
        kind TEXT NOT NULL CHECK (kind IN ('match', 'shot', 'override', 'undo', 'next_game', 'gap', 'note')),
        game_no INTEGER NOT NULL, shot_no INTEGER, record_hash TEXT, wall_time REAL NOT NULL, payload TEXT NOT NULL,
        UNIQUE (game_no, record_hash));
    PRAGMA application_id=1397246532; PRAGMA user_version=1;""")
    conn.close()
    with Journal.open(path) as j:  # an empty journal of format 1 is upgraded when opened
        j.start_match({"game": "novuss"})
        m = Match(novuss_engine(), j)
        m.judge(parse_record(raws[0]))
        assert j._conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 2
    # one with an entry and the old trigger: the entry is kept, and the journal stays append-only
    old = tmp_path / "old1.sqlite"
    conn = sqlite3.connect(old, isolation_level=None)
    conn.executescript("""
    CREATE TABLE entries (seq INTEGER PRIMARY KEY AUTOINCREMENT,
        kind TEXT NOT NULL CHECK (kind IN ('match', 'shot', 'override', 'undo', 'next_game', 'gap', 'note')),
        game_no INTEGER NOT NULL, shot_no INTEGER, record_hash TEXT, wall_time REAL NOT NULL, payload TEXT NOT NULL,
        UNIQUE (game_no, record_hash));
    CREATE TRIGGER entries_no_delete BEFORE DELETE ON entries BEGIN SELECT RAISE(ABORT, 'the journal is append-only'); END;
    PRAGMA application_id=1397246532; PRAGMA user_version=1;""")
    conn.execute("INSERT INTO entries (kind, game_no, shot_no, record_hash, wall_time, payload) VALUES "
                 "('match', 1, NULL, NULL, 0, '{\"game\": \"novuss\"}')")
    conn.close()
    with Journal.open(old) as j:
        assert [e["kind"] for e in j.entries()] == ["match"] and j.match() == {"game": "novuss"}
        m = Match(novuss_engine(), j)
        m.judge(parse_record(raws[0]), position=at(10))
        assert [e["kind"] for e in j.entries()] == ["match", "seen", "shot"]
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            j._conn.execute("DELETE FROM entries")


# ----- vision starts again ------------------------------------------------------------------------------
def test_resync_names_what_vision_sees_by_the_state():
    seen = {"A1": (10.0, 10.0), "A7": (200.0, 0.0), "B2": (-50.0, 60.0), "B5": (0.0, -300.0), "bat": (0.0, -400.0)}
    state = {"A1": (12.0, 9.0), "A3": (190.0, 20.0), "B2": (-40.0, 50.0), "B4": (300.0, 300.0)}
    # A7 (the state has it pocketed) is A3, the state's A lost by vision, at vision's place; B5 is nearer B4
    # than nothing: the only B the state has and vision lacks; the bat is not a piece of the state
    assert resync_layout(seen, state, "novuss") == {"A1": (10.0, 10.0), "A3": (200.0, 0.0), "B2": (-50.0, 60.0),
                                                    "B4": (0.0, -300.0)}
    # a piece of the state vision does not see stays where the state has it; an extra one of vision goes
    assert resync_layout({"A1": (0.0, 0.0), "B9": (5.0, 5.0)}, {"A1": (1.0, 1.0), "A2": (50.0, 50.0)},
                         "novuss") == {"A1": (0.0, 0.0), "A2": (50.0, 50.0)}


class _Vision:
    """Emits a refused record, then a good one; records how it was started."""

    in_shot = False
    timings: dict = {}

    def __init__(self, shots):
        self.shots = shots  # frame index -> record
        self.starts, self.told = [], 0

    def start(self, hints, frame, t_s):
        self.starts.append((frame, dict(hints.layout)))

    def tell(self, hints):
        self.told += 1

    def positions(self):
        return {"A1": (-60.0, 200.0), "B1": (5.0, -5.0)}

    def prepare(self, image):
        return None  # nothing to work out ahead of feed

    def feed(self, frame):
        raw = self.shots.get(frame.index)
        return ScriptedShot(parse_record(raw)) if raw else None

    def finish(self, t_s=None):
        return None


class _Frames:
    live, fps, name = False, 30.0, "/clips/match.mp4"

    def __init__(self, n):
        self.n, self.k = n, 0

    def read(self):
        if self.k >= self.n:
            return None
        self.k += 1
        return Frame(np.zeros((4, 4, 3), np.uint8), self.k - 1, (self.k - 1) / 30, self.name)


def test_live_goes_on_after_a_refused_shot_with_vision_started_again(tmp_path):
    raws = make_records(3)
    vision = _Vision({10: raws[0], 20: refused_record(raws), 30: raws[1]})
    with Journal.open(tmp_path / "m.sqlite", create=True, match={"game": "novuss"}) as j:
        m = Match(novuss_engine(), j)
        result = run_live(_Frames(40), vision, m)
        assert (result.shots, result.refused, result.skipped) == (2, 1, 0)
        assert [f for f, _ in vision.starts] == [0, 21]  # started, then again on the frame after the refusal
        # named by the state after shot 1 (A1 pocketed): vision's "A1" is the A pawn the state has nearest it
        engine = novuss_engine()
        after1, ruling1 = engine.apply(engine.initial(), parse_record(raws[0]))
        want = {p: (float(x), float(y)) for p, (x, y) in engine.hints(after1, ruling1).layout.items()}
        nearest = min((p for p in want if p.startswith("A")), key=lambda p: np.hypot(want[p][0] + 60, want[p][1] - 200))
        want.update({"B1": (5.0, -5.0), nearest: (-60.0, 200.0)})
        assert vision.starts[1][1] == want and "A1" not in want
        assert [e["payload"]["position"]["end_index"] for e in j.entries("shot")] == [10, 30]
        assert [r.position["end_index"] for r in j.resume().reviews] == [20]
        # the same video again: read past frame 30, nothing judged twice
        again = run_live(_Frames(40), _Vision({10: raws[0], 20: refused_record(raws), 30: raws[1]}), m,
                         resume_after=m.consumed_in("/clips/match.mp4"))
        assert (again.resumed_over, again.frames, again.shots, again.refused, again.skipped) == (31, 9, 0, 0, 0)


# ----- the disk says no ---------------------------------------------------------------------------------
def test_a_full_disk_mid_match_is_one_error_and_every_entry_before_it_is_kept(tmp_path):
    raws = make_records(16)  # a game's worth: every pawn pocketed in turn
    path = tmp_path / "m.sqlite"
    with Journal.open(path, create=True, match={"game": "novuss"}) as j:
        m = Match(novuss_engine(), j)
        m.judge(parse_record(raws[0]), position=at(10))
        pages = j._conn.execute("PRAGMA page_count").fetchone()[0]
        j._conn.execute(f"PRAGMA max_page_count={pages + 1}")  # SQLite's own "database or disk is full"
        with pytest.raises(JournalError, match=r"cannot write the journal \(database or disk is full\); every entry "
                                               r"before this one is kept"):
            for k, raw in enumerate(raws[1:], 1):
                m.judge(parse_record(raw), position=at(10 + 10 * k))
        judged, pending = len(j.entries("shot")), len(j.resume().pending)
    with Journal.open(path) as j:  # what was committed is whole; the match resumes from it, and a record
        resumed = Match(novuss_engine(), j)  # written ahead of a ruling the disk refused is judged now
        assert resumed.shot_nos == list(range(1, judged + pending + 1)) and 1 <= judged < 16
        assert resumed.pending_judged == pending


def test_a_journal_in_a_missing_folder_says_so(tmp_path):
    with pytest.raises(JournalError, match=r"the folder .*nowhere does not exist$"):
        Journal.open(tmp_path / "nowhere" / "m.sqlite", create=True)
