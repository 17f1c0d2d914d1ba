"""The placement assistant on the spectators' page in headless Chromium (Debian's chromium through Playwright),
fed with simulator frames through the real vision pipeline: a penalty pawn put down 5 mm off its spot is
shown off, then confirmed placed once moved within 2 mm, and play goes on."""
import re

import pytest

from judge.overlay import OverlayHub, OverlayServer, board_for, create_app
from judge.placement_live import PlacementAssistant
from judge.placement_view import PlacementView
from tests.placement_frames import OFF_MM, filmed, play, vision_for
from tests import test_overlay_browser

pytestmark = pytest.mark.browser
page = test_overlay_browser.page  # the one headless Chromium fixture


def test_page_shows_the_spot_off_then_placed_then_play_on(page, tmp_path):
    film = filmed()
    hub = OverlayHub(board_for(film.profile))
    srv = OverlayServer(create_app(hub, object(), "tok-123"), "127.0.0.1", 0).start()
    try:
        vision = vision_for(film)
        assistant = PlacementAssistant(film.profile, vision, hub, PlacementView(film.calibration))
        publish = lambda frame: hub.publish_frame(assistant.draw(frame))  # noqa: E731 - as run_live does
        play(film, vision, assistant, film.rest, publish)
        page.goto(srv.url, wait_until="domcontentloaded")  # the MJPEG stream never finishes "loading"
        page.wait_for_selector("#connection:text('live')", timeout=5000)
        assert page.is_hidden("#placement")  # nothing to place yet

        hub({"type": "call", "game_no": 1, "shot_no": 1, "ruling": film.ruling, "state": {"positions": {}}})
        assistant({"type": "call", "game_no": 1, "shot_no": 1, "ruling": film.ruling})
        vision.tell(film.hints_after)
        play(film, vision, assistant, film.off, publish)
        item = page.wait_for_selector("#placement-list li.off[data-piece='A3']", timeout=5000)
        text = item.inner_text()
        found = re.match(r"A3: (\d+\.\d) mm off — move it \d\.\d mm towards B's cushion and \d\.\d mm to the left "
                         r"\(as seen from A's side\) penalty pawn", text)
        assert found, text
        assert float(found.group(1)) == pytest.approx(OFF_MM, abs=1.0)
        assert page.inner_text("#placement-head") == "Place 1 of 1: A3"
        spot = page.locator("#board #placement-spots g.spot.off[data-piece='A3']")
        assert spot.count() == 1
        assert page.get_attribute("#board #placement-spots g[data-piece='A3'] circle", "cx") == "0"
        assert page.get_attribute("#board #placement-spots g[data-piece='A3'] circle", "cy") == "-484"
        page.screenshot(path=str(tmp_path / "placement-off.png"))

        play(film, vision, assistant, film.near, publish)
        page.wait_for_selector("#placement.done #placement-list li.placed[data-piece='A3']", timeout=5000)
        assert page.inner_text("#placement-head") == "All pieces placed: play on"
        assert re.fullmatch(r"A3 placed \((0|1)\.\d mm\) penalty pawn", page.inner_text("#placement-list li").strip())
        # the board diagram is drawn again on every state: the spots stay on it
        hub({"type": "gap", "text": "frames lost", "state": {"positions": {"B1": [-200.0, -200.0]}}})
        page.wait_for_selector("#board g[data-piece='B1']", timeout=5000)
        assert page.locator("#board #placement-spots g.spot.placed[data-piece='A3']").count() == 1
        page.wait_for_function("document.getElementById('video').naturalWidth === 1280", timeout=5000)  # MJPEG

        # a page opened now gets the status with the hello; "play on" leaves the page after a while
        second = page.context.browser.new_page()
        second.goto(srv.url, wait_until="domcontentloaded")
        second.wait_for_selector("#placement.done li.placed[data-piece='A3']", timeout=5000)
        from hardware.frame import Frame
        last = film.near[-1]
        assistant.on_frame(Frame(last.image, last.index + 1, last.t_s + 3.5, "sim"))
        page.wait_for_selector("#placement", state="hidden", timeout=5000)
        assert page.locator("#placement-spots").count() == 0
    finally:
        srv.stop()
