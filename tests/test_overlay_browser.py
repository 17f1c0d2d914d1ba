"""The spectators' page in headless Chromium (Debian's chromium through Playwright), loopback only."""
import os
import shutil

import numpy as np
import pytest

from judge.overlay import OverlayServer, create_app
from novuss_shots import make_records
from overlay_helpers import judged_match
from rules import parse_record
from rules.ruling import CODES

pytestmark = pytest.mark.browser
CHROMIUM = shutil.which("chromium")


@pytest.fixture
def server(tmp_path):
    journal, hub, match = judged_match(tmp_path / "m.sqlite")
    srv = OverlayServer(create_app(hub, match, "tok-123"), "127.0.0.1", 0).start()
    yield srv, hub, match, journal
    srv.stop()
    journal.close()


@pytest.fixture
def page():
    if CHROMIUM is None:
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        yield browser.new_page(viewport={"width": 1100, "height": 700})
        browser.close()


def test_page_shows_pushed_call_and_refuses_referee_without_token(server, page, tmp_path):
    srv, hub, match, journal = server
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    raws = make_records(3)
    match.judge(parse_record(raws[0]))
    hub.publish_frame(np.dstack([np.full((240, 320), v, np.uint8) for v in (60, 110, 40)]))
    page.goto(srv.url, wait_until="domcontentloaded")  # the MJPEG stream never finishes "loading"
    page.wait_for_selector("#connection:text('live')", timeout=5000)
    assert page.inner_text("#call-head").startswith("Game 1 · shot 1")

    match.judge(parse_record(raws[1]))  # pushed over the WebSocket by the server
    page.wait_for_function("document.getElementById('call-head').textContent.startsWith('Game 1 · shot 2')", timeout=5000)
    item = page.wait_for_selector("#calls li[data-code='series_continues']", timeout=5000)
    assert f"§ {CODES['series_continues']}" in item.inner_text()
    assert page.inner_text("#call-head").startswith("Game 1 · shot 2")
    assert page.locator("#board g[data-piece]").count() == 14  # 16 pawns less the two pocketed
    page.wait_for_function("document.getElementById('video').naturalWidth === 320", timeout=5000)  # MJPEG

    page.click("#referee summary")
    with page.expect_response("**/api/referee/undo") as response:
        page.click("#undo")
    assert response.value.status == 401
    page.wait_for_selector("#referee-result.error", timeout=5000)
    assert page.inner_text("#referee-result").startswith("Refused (401): referee token required")
    assert [e["kind"] for e in journal.entries()] == ["match", "seen", "shot", "seen", "shot"]

    page.fill("#token", "tok-123")
    with page.expect_response("**/api/referee/undo") as response:
        page.click("#undo")
    assert response.value.status == 200
    page.wait_for_selector("#referee-result.ok", timeout=5000)
    page.wait_for_function("document.getElementById('call-head').textContent.startsWith('Game 1 · shot 1')",
                           timeout=5000)  # the undone shot's call is no longer shown
    assert [e["kind"] for e in journal.entries()][-1] == "undo"
    page.screenshot(path=str(tmp_path / "overlay.png"))
    shot_dir = os.environ.get("SHOTJUDGE_SCREENSHOTS")
    if shot_dir:
        page.screenshot(path=os.path.join(shot_dir, "overlay.png"))
    assert all(u.startswith(srv.url) or u.startswith(srv.url.replace("http", "ws")) for u in requests), requests


def test_transparent_mode_for_obs(server, page):
    srv, hub, match, _ = server
    match.judge(parse_record(make_records(1)[0]))
    page.goto(srv.url + "?transparent=1", wait_until="domcontentloaded")
    page.wait_for_selector("#calls li", timeout=5000)
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgba(0, 0, 0, 0)"
    assert not page.is_visible("#video") and not page.is_visible("#referee")
    assert page.evaluate("document.getElementById('video').getAttribute('src')") is None


def test_on_a_phone_the_video_spans_the_screen_and_the_obs_overlay_is_one_tap_away(server):
    if CHROMIUM is None:
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    srv, hub, match, _ = server
    hub.publish_frame(np.dstack([np.full((360, 640), v, np.uint8) for v in (60, 110, 40)]))
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        phone = browser.new_page(viewport={"width": 390, "height": 844}, device_scale_factor=2, is_mobile=True)
        phone.goto(srv.url, wait_until="domcontentloaded")
        phone.wait_for_function("document.getElementById('video').naturalWidth === 640", timeout=5000)
        box = phone.locator("#video").bounding_box()
        assert box["width"] >= 0.9 * 390 and box["height"] >= 0.9 * 390 * 360 / 640
        assert phone.get_attribute("#obs-link", "href") == "?transparent=1" and phone.is_visible("#obs-link")
        phone.click("#obs-link")
        phone.wait_for_function("document.body.classList.contains('transparent')", timeout=5000)
        assert not phone.is_visible("#obs-link")
        browser.close()


def test_when_the_judge_stops_the_page_says_so_and_the_server_stops_without_a_traceback(server, page, capfd):
    srv, hub, match, _ = server
    hub.publish_frame(np.dstack([np.full((240, 320), v, np.uint8) for v in (60, 110, 40)]))
    match.judge(parse_record(make_records(1)[0]))
    page.goto(srv.url, wait_until="domcontentloaded")
    page.wait_for_function("document.getElementById('video').naturalWidth === 320", timeout=5000)  # MJPEG open
    page.wait_for_selector("#connection:text('live')", timeout=5000)
    hub.close("The video has ended: judging is over.")
    srv.stop()
    page.wait_for_selector("#connection.ended", timeout=5000)
    assert page.inner_text("#connection") == page.inner_text("#notice") == "The video has ended: judging is over."
    assert page.inner_text("#call-head").startswith("Game 1 · shot 1")  # the last call stays on the page
    err = capfd.readouterr().err
    assert "Traceback" not in err and "CancelledError" not in err
