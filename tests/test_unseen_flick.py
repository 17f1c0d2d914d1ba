"""Cvrnkaná flicks the camera never saw: entered by the referee, judged and journaled like camera shots,
and vision told after every judged shot where the marbles it cannot see are."""
import threading

import numpy as np
import pytest
from fastapi.testclient import TestClient

from calibration import default_profile
from hardware import Frame
from judge.journal import Journal
from judge.live import run_live
from judge.match import Match, RefereeError
from judge.overlay import OverlayHub, OverlayServer, board_for, create_app
from novuss_shots import make_records, novuss_engine
from rules import engine_for, parse_record
from vision.pipeline import Pipeline, VisionShot
from test_overlay_browser import page, server  # noqa: F401 - the browser fixtures

TOKEN = "s3cret-token"
A_ALL = [f"A{i}" for i in range(1, 11)]
B_ALL = [f"B{i}" for i in range(1, 11)]


def cvrnkana_engine():
    return engine_for("cvrnkana", default_profile("cvrnkana").geometry)


def cvrnkana_match(tmp_path, listeners=None):
    journal = Journal.open(tmp_path / "m.sqlite", create=True, match={"game": "cvrnkana"})
    return Match(cvrnkana_engine(), journal, listeners=listeners), journal


def codes(event):
    return [c["code"] for c in event["ruling"]["calls"]]


def touched(entry):
    return [(e["kind"], e["piece"], e["t"]) for e in entry["payload"]["record"]["events"]]


def test_referee_entries_are_judged_journaled_resumed_and_undone(tmp_path):
    heard = []
    match, journal = cvrnkana_match(tmp_path, listeners=[heard.append])
    first = match.unseen_flick()
    assert (first["type"], first["action"], first["piece"], first["shot_no"]) == ("referee", "unseen_flick", "A1", 1)
    assert first["text"] == "shot 1: A flicked A1 out of the camera's view (entered by the referee)"
    assert codes(first) == ["coin_toss", "opening_flick"] and first["ruling"]["next_player"] == "B"
    assert first["state"]["to_move"] == "B" and first["state"]["shots"] == 1
    second = match.unseen_flick(by="referee 2")
    assert (second["piece"], second["shot_no"], codes(second)) == ("B1", 2, ["opening_flick"])
    assert second["text"] == "shot 2: B flicked B1 out of the camera's view (entered by the referee 2)"
    state = match.state.to_dict()
    assert state["to_move"] == "A" and state["field"] == {"A1": None, "B1": None}
    assert state["behind"] == A_ALL[1:] + B_ALL[1:] and state["flicks"] == {"A": 1, "B": 1}
    # told like a camera shot (the call) and then as the referee action
    assert [(e["type"], e.get("action")) for e in heard] == [("call", None), ("referee", "unseen_flick")] * 2
    shots = journal.entries("shot")
    assert [touched(e) for e in shots] == [[("touch", "A1", 0.0), ("off", "A1", 0.0)],
                                           [("touch", "B1", 0.001), ("off", "B1", 0.001)]]
    assert [e["payload"]["record"]["meta"]["entered_by"] for e in shots] == ["referee", "referee 2"]
    assert [e["payload"]["record"]["meta"]["source"] for e in shots] == ["referee", "referee"]
    journal.close()

    with Journal.open(tmp_path / "m.sqlite") as again:  # the judge restarted
        resumed = Match(cvrnkana_engine(), again)
        assert resumed.resumed_shots == 2 and resumed.state.to_dict() == state
        third = resumed.unseen_flick()
        assert (third["piece"], third["shot_no"], third["state"]["to_move"]) == ("A2", 3, "B")
        undone = resumed.undo()
        assert undone["shot_no"] == 3 and resumed.state.to_dict() == state
        # the same entry again is a new shot, timed after the undone one (the journal knows shots by record)
        fourth = resumed.unseen_flick("a2")
        assert (fourth["piece"], fourth["shot_no"]) == ("A2", 4)
        assert [touched(e) for e in again.entries("shot")][2:] == [[("touch", "A2", 0.002), ("off", "A2", 0.002)],
                                                                  [("touch", "A2", 0.003), ("off", "A2", 0.003)]]
        assert [e["kind"] for e in again.entries()] == ["match", "seen", "shot", "seen", "shot", "seen", "shot", "undo", "seen", "shot"]
        assert [r.events[0].piece for r in resumed.records] == ["A1", "B1", "A2"]


def test_refused_on_a_novuss_match_with_nothing_journaled(tmp_path):
    journal = Journal.open(tmp_path / "n.sqlite", create=True, match={"game": "novuss"})
    match = Match(novuss_engine(), journal)
    with pytest.raises(RefereeError) as info:
        match.unseen_flick()
    assert str(info.value) == "a flick out of view is a Cvrnkaná entry; this is a novuss match"
    assert [e["kind"] for e in journal.entries()] == ["match"] and match.revision == 1
    journal.close()


def test_refused_without_a_marble_behind_unless_one_is_named(tmp_path):
    match, journal = cvrnkana_match(tmp_path)
    pieces = [match.unseen_flick()["piece"] for _ in range(20)]  # every marble once: all out of view
    assert pieces == [m for pair in zip(A_ALL, B_ALL) for m in pair]
    assert match.state.to_dict()["behind"] == [] and match.state.to_move == "A"
    with pytest.raises(RefereeError) as info:
        match.unseen_flick()
    assert str(info.value) == "unseen flick: A has no marble behind the start line; say which field marble was flicked"
    with pytest.raises(RefereeError) as info:
        match.unseen_flick("B3")
    assert str(info.value) == "unseen flick: B3 is not a marble of A (to move) behind the line or on the field"
    with pytest.raises(RefereeError) as info:
        match.unseen_flick("A3!")
    assert str(info.value) == "marble must be an id like A7 or B12, got 'A3!'"
    assert len(journal.entries("shot")) == 20 and journal.entries("note") == []
    named = match.unseen_flick("A3")
    assert (named["piece"], named["shot_no"], named["state"]["to_move"]) == ("A3", 21, "B")
    journal.close()


@pytest.fixture
def served(tmp_path):
    hub = OverlayHub(board_for(default_profile("cvrnkana")))
    match, journal = cvrnkana_match(tmp_path, listeners=[hub])
    with TestClient(create_app(hub, match, TOKEN, hosts=("testserver",))) as client:
        yield client, hub, match, journal
    journal.close()


def test_overlay_endpoint_needs_the_token_and_maps_refusals(served):
    client, hub, match, journal = served
    assert client.get("/api/state").json()["board"]["game"] == "cvrnkana"  # what the page shows the button by
    for headers in ({}, {"Authorization": "Bearer wrong"}):
        res = client.post("/api/referee/unseen-flick", headers=headers, json={"piece": "A1"})
        assert res.status_code == 401 and res.json() == {"detail": "referee token required"}
    assert [e["kind"] for e in journal.entries()] == ["match"]
    auth = {"Authorization": f"Bearer {TOKEN}"}
    plain = client.post("/api/referee/unseen-flick", headers=auth)  # no body: the next marble behind
    assert plain.status_code == 200 and (plain.json()["piece"], plain.json()["shot_no"]) == ("A1", 1)
    named = client.post("/api/referee/unseen-flick", headers=auth, json={"piece": "B4"})
    assert named.status_code == 200 and (named.json()["piece"], named.json()["state"]["to_move"]) == ("B4", "A")
    wrong = client.post("/api/referee/unseen-flick", headers=auth, json={"piece": "B5"})
    assert wrong.status_code == 409
    assert wrong.json()["detail"] == "unseen flick: B5 is not a marble of A (to move) behind the line or on the field"
    too_long = client.post("/api/referee/unseen-flick", headers=auth, json={"piece": "A" * 11})
    assert too_long.status_code == 422
    with client.websocket_connect("/ws") as ws:
        hello = ws.receive_json()
        assert hello["last"]["shot_no"] == 2 and hello["state"]["shots"] == 2
        assert client.post("/api/referee/unseen-flick", headers=auth, json={}).json()["piece"] == "A2"
        pushed = [ws.receive_json(), ws.receive_json()]
    assert [(m["type"], m.get("shot_no")) for m in pushed] == [("call", 3), ("referee", 3)]
    assert [touched(e)[0][1] for e in journal.entries("shot")] == ["A1", "B4", "A2"]


def test_overlay_endpoint_refuses_on_a_novuss_match(tmp_path):
    journal = Journal.open(tmp_path / "n.sqlite", create=True, match={"game": "novuss"})
    hub = OverlayHub(board_for(default_profile("novuss")))
    match = Match(novuss_engine(), journal, listeners=[hub])
    match.judge(parse_record(make_records(1)[0]))
    with TestClient(create_app(hub, match, TOKEN, hosts=("testserver",))) as client:
        res = client.post("/api/referee/unseen-flick", headers={"Authorization": f"Bearer {TOKEN}"})
    assert res.status_code == 409
    assert res.json() == {"detail": "a flick out of view is a Cvrnkaná entry; this is a novuss match"}
    assert [e["kind"] for e in journal.entries()] == ["match", "seen", "shot"]
    journal.close()


class ListSource:
    """A recording of ``n`` blank frames at 30 fps (run_live's source seam)."""

    fps, live, name = 30.0, False, "list"

    def __init__(self, n):
        self.frames = [Frame(np.zeros((2, 2, 3), np.uint8), i, i / 30, "list") for i in range(n)]

    def read(self):
        return self.frames.pop(0) if self.frames else None


class RecordingVision(Pipeline):
    """The real vision pipeline on the Cvrnkaná profile, with scripted shots: keeps every call its tracker
    gets from the seam (``start`` and ``off_view``, from the hints the judge tells) with the frames fed
    before it, the player and the calling thread."""

    def __init__(self, records_at):
        super().__init__(default_profile("cvrnkana"))
        self.records_at = records_at
        self.fed: list[int] = []
        self.calls: list[tuple] = []
        self.behind: list[list[str]] = []  # the spares still behind the start lines, per off_view call
        start, off_view = self.tracker.start, self.tracker.off_view

        def spy_start(layout, frame=0, t_s=0.0, spares=()):
            self.calls.append(("start", len(self.fed), dict(layout), list(spares)))
            start(layout, frame, t_s, spares)

        def spy_off_view(positions, spares=None, behind=None):
            self.calls.append(("off_view", len(self.fed), dict(positions), list(spares), self.player,
                               threading.current_thread().name))
            self.behind.append(list(behind))
            off_view(positions, spares, behind)

        self.tracker.start, self.tracker.off_view = spy_start, spy_off_view

    def feed(self, frame):
        self.fed.append(frame.index)
        rec = self.records_at.get(frame.index)
        return VisionShot(parse_record(rec), {}) if rec is not None else None

    def finish(self, t_s=None):
        return None


def flick(player, piece, t0, t1, to):
    return {"game": "cvrnkana", "player": player, "t0": t0, "t1": t1, "before": {}, "after": {piece: to},
            "events": [{"t": t0, "kind": "touch", "piece": piece}]}


def test_live_loop_tells_vision_where_the_unseen_marbles_are_after_every_judged_shot(tmp_path):
    """Camera shot at frame 2 (A1 stops out of view at a known place), the referee enters B's unseen flick
    from another thread after frame 3, a camera shot at frame 6: before the frame after each, the judging
    thread gives vision the marbles out of view, the ones that may still roll in, and who is to move."""
    match, journal = cvrnkana_match(tmp_path)
    vision = RecordingVision({2: flick("A", "A1", 0.03, 0.06, [100.0, -500.0]),
                              6: flick("A", "A2", 0.16, 0.2, [50.0, 60.0])})

    def referee(frame):
        if frame.index == 3:
            web = threading.Thread(target=match.unseen_flick, name="web")
            web.start()
            web.join()

    result = run_live(ListSource(9), vision, match, on_frame=referee)
    assert result.error is None and result.shots == 2 and vision.fed == list(range(9))
    out = {"A1": (100.0, -500.0)}
    assert vision.calls == [
        ("start", 0, {}, A_ALL + B_ALL),
        ("off_view", 0, {}, A_ALL + B_ALL, "A", "MainThread"),
        ("off_view", 3, out, A_ALL[1:] + B_ALL, "B", "MainThread"),  # after the camera's shot 1
        ("off_view", 4, out, A_ALL[1:] + B_ALL[1:] + ["B1"], "A", "MainThread"),  # after the referee's entry
        ("off_view", 7, out, A_ALL[2:] + B_ALL[1:] + ["B1"], "B", "MainThread"),  # after the camera's shot 3
    ]
    # B1, somewhere on the field after the unseen flick, may roll in, but is no longer behind the line
    assert vision.behind[2] == A_ALL[1:] + B_ALL[1:] and vision.behind[3] == A_ALL[2:] + B_ALL[1:]
    assert [touched(e)[0][1] for e in journal.entries("shot")] == ["A1", "B1", "A2"]
    assert journal.entries("shot")[1]["payload"]["record"]["t0"] == 0.061  # just after shot 1's t1
    journal.close()


@pytest.mark.browser
def test_page_offers_the_entry_only_for_cvrnkana(tmp_path, page, server):  # noqa: F811
    novuss, *_ = server
    page.goto(novuss.url, wait_until="domcontentloaded")
    page.wait_for_selector("#connection:text('live')", timeout=5000)
    page.click("#referee summary")
    assert page.is_visible("#undo") and not page.is_visible("#unseen-flick")

    hub = OverlayHub(board_for(default_profile("cvrnkana")))
    (tmp_path / "cvrnkana").mkdir()
    match, journal = cvrnkana_match(tmp_path / "cvrnkana", listeners=[hub])
    srv = OverlayServer(create_app(hub, match, TOKEN), "127.0.0.1", 0).start()
    try:
        page.goto(srv.url, wait_until="domcontentloaded")
        page.wait_for_selector("#connection:text('live')", timeout=5000)
        page.click("#referee summary")
        page.fill("#token", TOKEN)
        for typed, text in (("", "shot 1: A flicked A1"), ("b3", "shot 2: B flicked B3")):
            page.fill("#uf-piece", typed)
            with page.expect_response("**/api/referee/unseen-flick") as response:
                page.click("#unseen-flick")
            assert response.value.status == 200
            page.wait_for_function(f"document.getElementById('referee-result').textContent.startsWith({text!r})",
                                   timeout=5000)
        page.wait_for_function("document.getElementById('to-move').textContent === 'to play: A'", timeout=5000)
        assert [touched(e)[0][1] for e in journal.entries("shot")] == ["A1", "B3"]
    finally:
        srv.stop()
        journal.close()


def test_replay_tells_vision_after_every_judged_shot():
    from judge.replay import Replay

    engine = cvrnkana_engine()
    replay = Replay(engine, engine.initial())
    vision = RecordingVision({2: flick("A", "A1", 0.03, 0.06, [100.0, -500.0]),
                              5: flick("B", "B1", 0.12, 0.16, [80.0, 150.0])})
    result = run_live(ListSource(7), vision, replay)
    assert result.shots == 2 and [s.ruling["player"] for s in replay.shots] == ["A", "B"]
    out = {"A1": (100.0, -500.0)}
    assert [c[:4] for c in vision.calls] == [
        ("start", 0, {}, A_ALL + B_ALL),
        ("off_view", 0, {}, A_ALL + B_ALL),
        ("off_view", 3, out, A_ALL[1:] + B_ALL),
        ("off_view", 6, out, A_ALL[1:] + B_ALL[1:]),
    ]


def test_a_resumed_match_starts_tracking_from_the_marbles_in_view_and_tells_vision_the_others(tmp_path):
    """The live command starts vision from ``match.snapshot()["positions"]``: for Cvrnkaná it was always
    empty (the state keeps its marbles in ``field``), so a resumed match began with no marble in view and
    the overlay's board drew none."""
    match, journal = cvrnkana_match(tmp_path)
    for rec in (flick("A", "A1", 0.1, 0.2, [50.0, 60.0]), flick("B", "B1", 0.3, 0.4, [100.0, -500.0])):
        match.judge(parse_record(rec))
    journal.close()
    resumed = Match(cvrnkana_engine(), Journal.open(tmp_path / "m.sqlite"))
    assert resumed.resumed_shots == 2
    positions = resumed.snapshot()["positions"]
    assert positions == {"A1": [50.0, 60.0], "B1": [100.0, -500.0]}  # what the overlay's board draws
    vision = RecordingVision({})
    run_live(ListSource(1), vision, resumed)
    start = next(c for c in vision.calls if c[0] == "start")
    assert start[2] == {"A1": (50.0, 60.0)}  # B1 lies outside the camera's view (600 x 340 mm half-sizes)
    assert vision.calls[-1][:3] == ("off_view", 0, {"B1": (100.0, -500.0)})
