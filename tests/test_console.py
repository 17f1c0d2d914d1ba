"""The referee's console (#19 item 1): the queue of flagged calls with their evidence; confirm, decide, undo,
each journaled, refused without the token, and shown to spectators as a referee decision."""
from __future__ import annotations

import copy
import shutil

import pytest

from judge.journal import Journal
from judge.match import Match, RefereeError
from judge.overlay import OverlayServer, create_app
from novuss_shots import make_records, novuss_engine
from overlay_helpers import judged_match
from rules import parse_record

TOKEN = "tok-console"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
CHROMIUM = shutil.which("chromium")


def flagged(raw: dict) -> dict:
    """``raw`` with the bat touching B1 1.2 ms after its own pawn, each timed to 0.5 ms: too close to call."""
    out = copy.deepcopy(raw)
    t = out["events"][0]["t"]
    out["events"][0]["t_err"] = 0.0005
    out["events"].insert(1, {"t": t + 0.0012, "kind": "contact", "a": "bat", "b": "B1", "t_err": 0.0005})
    return out


@pytest.fixture
def console(tmp_path):
    journal, hub, match = judged_match(tmp_path / "m.sqlite", [flagged(make_records(1)[0])])
    app = create_app(hub, match, TOKEN, hosts=("testserver",))
    yield app, hub, match, journal
    journal.close()


def test_the_queue_holds_the_flagged_call_with_its_choices_and_needs_the_token(console):
    from fastapi.testclient import TestClient

    app, _, match, _ = console
    with TestClient(app) as client:
        assert client.get("/api/referee/queue").status_code == 401
        (item,) = client.get("/api/referee/queue", headers=AUTH).json()["queue"]
    assert (item["kind"], item["game_no"], item["shot_no"], item["player"], item["last"]) == ("call", 1, 1, "A", True)
    assert [c["code"] for c in item["calls"] if c.get("review")] == ["review_first_contact"]
    assert [(d["code"], d["value"], d["label"]) for d in item["decisions"]] == [
        ("first_contact", "own", "own pawn first"), ("first_contact", "opponent", "opponent's pawn first"),
        ("first_contact", "both", "own and opponent's together")]
    assert item["reasons"] == ["First contact too close to call from the video (1.2 ms apart): referee to decide. (novuss.II.3)"]


def test_overruling_a_flagged_call_rejudges_it_journals_it_and_tells_spectators(console):
    from fastapi.testclient import TestClient

    app, hub, match, journal = console
    heard = []
    match.listeners.append(heard.append)
    body = {"shot_no": 1, "code": "first_contact", "value": "opponent"}
    with TestClient(app) as client:
        refused = client.post("/api/referee/decide", json=body, headers={"Authorization": "Bearer wrong"})
        assert refused.status_code == 401 and [e["kind"] for e in journal.entries()] == ["match", "seen", "shot"]
        done = client.post("/api/referee/decide", json=body, headers=AUTH)
        assert done.status_code == 200 and done.json()["text"] == "shot 1: referee decision: opponent's pawn first"
        assert client.get("/api/referee/queue", headers=AUTH).json()["queue"] == []
    ruling = done.json()["ruling"]
    assert [c["code"] for c in ruling["calls"]] == ["opponent_pawn_first", "penalty_pawn", "turn_lost_penalty",
                                                     "first_contact_decided"]
    assert ruling["review"] is False and ruling["next_player"] == "B" and match.state.to_move == "B"
    last = journal.entries()[-1]
    assert (last["kind"], last["shot_no"], last["payload"]["referee"]) == ("override", 1, [{"code": "first_contact", "value": "opponent"}])
    assert heard[-1]["type"] == "referee" and heard[-1]["action"] == "decide"
    with Journal.open(journal.path) as again:  # a restart folds the decision in: the same state
        assert Match(novuss_engine(), again).state.to_dict() == match.state.to_dict()


def test_confirming_keeps_the_call_and_a_decision_the_record_cannot_bear_writes_nothing(console):
    _, _, match, journal = console
    before = match.rulings[0].to_dict()
    with pytest.raises(RefereeError, match="novuss has no decision 'bat_colour'"):
        match.decide(1, "bat_colour", "red")
    with pytest.raises(RefereeError, match="first_contact is decided as one of own, opponent, both, not 'maybe'"):
        match.decide(1, "first_contact", "maybe")
    own_only = make_records(2)[1]  # B's shot touches only B's own pawn: "opponent first" cannot stand
    match.judge(parse_record(own_only))
    with pytest.raises(RefereeError, match="shot 2: the decision cannot stand: .*the bat touched no opponent's pawn"):
        match.decide(2, "first_contact", "opponent")
    kinds = [e["kind"] for e in journal.entries()]
    event = match.confirm(1)
    assert event["text"] == "shot 1: referee decision: the call stands"
    assert [e["kind"] for e in journal.entries()] == kinds + ["settle"]
    assert match.rulings[0].to_dict() == before
    from judge.console import review_queue

    assert review_queue(match) == []


@pytest.mark.browser
def test_the_referee_walks_the_console_refused_without_the_token_then_overrules_by_keyboard(console):
    if CHROMIUM is None:
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    app, hub, match, journal = console
    srv = OverlayServer(app, "127.0.0.1", 0).start()
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
            ref = browser.new_page(viewport={"width": 900, "height": 1000})  # a tablet, in landscape
            fan = browser.new_page()
            for page in (ref, fan):
                page.goto(srv.url, wait_until="domcontentloaded")
                page.wait_for_selector("#connection:text('live')", timeout=5000)
            ref.click("#referee summary")
            ref.fill("#token", TOKEN)
            ref.press("#token", "Enter")
            ref.click("#call-head")  # the token field loses focus: the queue loads
            item = ref.wait_for_selector("#queue-list > li[data-shot='1']", timeout=5000)
            assert "First contact too close to call" in item.inner_text()
            ref.fill("#token", "wrong")
            with ref.expect_response("**/api/referee/decide") as response:
                ref.click("#queue-list > li[data-shot='1'] button[data-key='2']")
            assert response.value.status == 401
            ref.wait_for_selector("#referee-result.error", timeout=5000)
            assert ref.inner_text("#referee-result").startswith("Refused (401)")
            assert [e["kind"] for e in journal.entries()] == ["match", "seen", "shot"]
            ref.fill("#token", TOKEN)
            ref.click("#call-head")
            with ref.expect_response("**/api/referee/decide") as response:
                ref.keyboard.press("2")  # the second choice: the opponent's pawn first
            assert response.value.status == 200
            ref.wait_for_function("document.getElementById('queue').hidden === true", timeout=5000)
            fan.wait_for_function("document.getElementById('notice').textContent.includes('referee decision')", timeout=5000)
            assert fan.inner_text("#notice") == "shot 1: referee decision: opponent's pawn first"
            assert fan.locator("#calls li[data-code='opponent_pawn_first']").count() == 1
            browser.close()
    finally:
        srv.stop()
    assert journal.entries()[-1]["payload"]["referee"] == [{"code": "first_contact", "value": "opponent"}]
