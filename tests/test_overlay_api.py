"""Spectator overlay server: read-only for spectators, referee actions need the token and are journalled."""
import re
import threading

import cv2
import numpy as np
import pytest
from fastapi.testclient import TestClient

from judge.overlay import STATIC, create_app
from judge.overlay_draw import ContactMark, OverlayModel, TrackMark, ZoneMark, draw_overlay
from novuss_shots import make_records
from overlay_helpers import judged_match
from rules import parse_record

TOKEN = "s3cret-token"


@pytest.fixture
def served(tmp_path):
    journal, hub, match = judged_match(tmp_path / "m.sqlite", make_records(3))
    with TestClient(create_app(hub, match, TOKEN, hosts=("testserver",))) as client:
        yield client, hub, match, journal
    journal.close()


def test_referee_actions_need_the_bearer_token(served):
    client, _, _, journal = served
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {TOKEN}"},
                    {"Authorization": TOKEN}):
        res = client.post("/api/referee/undo", headers=headers)
        assert res.status_code == 401 and res.headers["www-authenticate"] == "Bearer"
        assert res.json() == {"detail": "referee token required"}
    assert [e["kind"] for e in journal.entries()] == ["match"] + ["seen", "shot"] * 3
    ok = client.post("/api/referee/undo", headers={"Authorization": f"Bearer {TOKEN}"})
    assert ok.status_code == 200 and ok.json()["shot_no"] == 3
    ov = client.post("/api/referee/override", headers={"Authorization": f"Bearer {TOKEN}"},
                     json={"shot_no": 1, "code": "pawn_moved_by_hand"})
    assert ov.status_code == 200 and "referee_foul" in [c["code"] for c in ov.json()["ruling"]["calls"]]
    bad = client.post("/api/referee/override", headers={"Authorization": f"Bearer {TOKEN}"},
                      json={"shot_no": 9, "code": "x"})
    assert bad.status_code == 409 and bad.json()["detail"] == "game 1 has no shot 9 to override"
    nxt = client.post("/api/referee/next-game", headers={"Authorization": f"Bearer {TOKEN}"})
    assert nxt.status_code == 200 and nxt.json()["game_no"] == 2
    kinds = [(e["kind"], e["shot_no"]) for e in journal.entries()][7:]
    assert kinds == [("undo", 3), ("override", 1), ("next_game", None)]


def test_websocket_greets_with_state_and_pushes_calls(served):
    client, hub, match, _ = served
    with client.websocket_connect("/ws") as ws:
        hello = ws.receive_json()
        assert hello["type"] == "hello" and hello["board"]["game"] == "novuss"
        assert hello["state"]["shots"] == 3 and hello["last"]["shot_no"] == 3
        raw = make_records(4)[3]
        thread = threading.Thread(target=match.judge, args=(parse_record(raw),))  # from the judging thread
        thread.start()
        thread.join()
        event = ws.receive_json()
    assert event["type"] == "call" and event["shot_no"] == 4
    assert event["ruling"]["calls"][0]["clause"].startswith("novuss.")
    assert event["state"]["shots"] == 4


def test_latest_frame_is_served_as_jpeg(served):
    client, hub, _, _ = served
    assert client.get("/snapshot.jpg").status_code == 404
    hub.publish_frame(np.full((48, 64, 3), 200, np.uint8))
    res = client.get("/snapshot.jpg")
    image = cv2.imdecode(np.frombuffer(res.content, np.uint8), cv2.IMREAD_COLOR)
    assert res.headers["content-type"] == "image/jpeg" and image.shape == (48, 64, 3)
    assert abs(float(image.mean()) - 200) < 2


def test_page_is_offline_and_read_only_for_spectators(served):
    client, *_ = served
    page = client.get("/")
    assert page.status_code == 200 and "board diagram" in page.text
    for path in STATIC.iterdir():
        text = path.read_text().replace('"http://www.w3.org/2000/svg"', "")  # a namespace name, not a fetch
        assert not re.search(r"https?://|//cdn|@import|fonts\.googleapis", text), path.name
    assert client.get("/static/app.js").status_code == 200
    assert client.get("/api/referee/undo").status_code == 405  # no GET door to an action


def test_drawing_marks_tracks_contacts_and_zones_on_a_copy():
    image = np.zeros((120, 160, 3), np.uint8)
    image.flags.writeable = False
    model = OverlayModel(tracks=(TrackMark("A1", 40, 40, 10),), contacts=(ContactMark(100, 60),),
                         zones=(ZoneMark("A zone", ((5, 80), (150, 80), (150, 115), (5, 115))),))
    out = draw_overlay(image, model)
    assert image.max() == 0 and out is not image
    assert tuple(out[60, 100]) == (40, 40, 255)  # contact cross centre, red
    assert tuple(out[40, 50]) == (0, 140, 255)  # ring of player A's pawn, orange
    assert tuple(out[80, 80]) == (0, 220, 220)  # zone edge, yellow
    assert out[40, 40].max() == 0  # the pawn's centre is left visible


@pytest.mark.parametrize("host, ok", [("evil.example", False), ("evil.example:8080", False), ("127.0.0.1:8080", True),
                                      ("localhost:8080", True), ("[::1]:8080", True), ("192.168.1.20", True),
                                      ("testserver", True)])
def test_a_request_for_another_site_is_refused(served, host, ok):
    """DNS rebinding: a page on another name resolved to this machine must not read the spectators' data."""
    client = served[0]
    res = client.get("/api/state", headers={"Host": host})
    assert res.status_code == (200 if ok else 421)
    if not ok:
        from starlette.websockets import WebSocketDisconnect

        with pytest.raises(WebSocketDisconnect):
            with client.websocket_connect("/ws", headers={"Host": host}) as ws:
                ws.receive_text()


def test_the_referee_settles_a_refused_shot_or_sets_the_state_over_the_api(served):
    import copy

    client, _, match, journal = served
    auth = {"Authorization": f"Bearer {TOKEN}"}
    bad = copy.deepcopy(make_records(4)[3])
    gone = match.state.to_dict()["pocketed"][0]
    bad["before"][gone] = bad["after"][gone] = [0.0, 0.0]  # a pocketed pawn on the board: the engine refuses it
    refused = match.judge(parse_record(bad))
    assert refused.ruling is None
    assert client.get("/api/referee/reviews").status_code == 401
    items = client.get("/api/referee/reviews", headers=auth).json()["reviews"]
    assert [i["error"] for i in items] == [refused.error]
    assert client.get("/api/state").json()["state"]["reviews"] == [{"review": items[0]["review"], "error": refused.error}]
    assert client.post("/api/referee/settle", json={"review": 999}, headers=auth).status_code == 409
    done = client.post("/api/referee/settle", json={"review": items[0]["review"]}, headers=auth)
    assert done.status_code == 200 and done.json()["action"] == "settle"
    assert client.get("/api/referee/reviews", headers=auth).json()["reviews"] == []
    state = match.state.to_dict()
    state["to_move"] = "B" if state["to_move"] == "A" else "A"
    assert client.post("/api/referee/set-state", json={"state": {"bogus": 1}}, headers=auth).status_code == 409
    set_ = client.post("/api/referee/set-state", json={"state": state}, headers=auth)
    assert set_.status_code == 200 and match.state.to_dict()["to_move"] == state["to_move"]
    kinds = [e["kind"] for e in journal.entries()][-4:]
    assert kinds == ["seen", "refused", "settle", "set_state"]
