"""The hall's page in headless Chromium (Debian's chromium through Playwright): three tables publish through a real
broker to the hub, and a call from each arrives on the page as it is made; the table's page lists its calls and
links a dispute report that is really there."""
import pytest

from calibration import default_profile
from hub_services import Broker
from judge.hub import Hub
from judge.hub_store import open_store
from judge.hub_web import create_hall_app
from judge.journal import Journal
from judge.match import Match
from judge.overlay import OverlayServer
from judge.table_feed import TableFeed
from novuss_shots import make_records, novuss_engine
from rules import parse_record
from rules.cvrnkana import Cvrnkana
from test_match import opening_game
from test_overlay_browser import page  # noqa: F401 - the fixture: Debian's chromium through Playwright

pytestmark = pytest.mark.browser


@pytest.fixture
def hall(tmp_path):
    broker = Broker(tmp_path / "broker").start()
    store = open_store(str(tmp_path / "hub.sqlite"))
    hub = Hub(store, "127.0.0.1", broker.port)
    server = OverlayServer(create_hall_app(hub), "127.0.0.1", 0).start()
    hub.start()
    tables, closing = {}, []
    for name, game in (("t1", "novuss"), ("t2", "novuss"), ("t3", "cvrnkana")):
        engine = novuss_engine() if game == "novuss" else Cvrnkana(default_profile("cvrnkana").geometry)
        journal = Journal.open(tmp_path / f"{name}.sqlite", create=True,
                               match={"game": game, "ruleset": game, "players": {"A": f"{name}-a", "B": f"{name}-b"}})
        feed = TableFeed(name, tmp_path / f"{name}.sqlite", "127.0.0.1", broker.port).start()
        tables[name] = Match(engine, journal, listeners=[feed])
        closing += [feed.stop, journal.close]
    yield server, hub, tables
    for close in closing:
        close()
    hub.stop()
    server.stop()
    store.close()
    broker.stop()


def test_the_hall_page_sees_a_call_from_each_table_arrive(hall, page):  # noqa: F811 - the fixture
    server, hub, tables = hall
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    records = {"t1": make_records(2), "t2": make_records(2), "t3": opening_game("A", {"A": 10, "B": 3}, 0.0)[:2]}
    tables["t1"].judge(parse_record(records["t1"][0]))  # before the page: it is in the hall's first picture
    page.goto(server.url)
    page.wait_for_selector("#connection:text('live')", timeout=10000)
    page.wait_for_selector("#tables tr[data-table='t1']", timeout=10000)
    for name in ("t1", "t2", "t3"):  # each made now, with the page open: pushed over the WebSocket
        shot = 2 if name == "t1" else 1
        tables[name].judge(parse_record(records[name][shot - 1]))
        item = page.wait_for_selector(f"#feed li[data-table='{name}'][data-shot='1.{shot}']", timeout=15000)
        ruling = tables[name].journal.entries("shot")[-1]["payload"]["ruling"]
        assert item.inner_text().startswith(f"{name}: game 1 shot {shot}, {ruling['player']}: {ruling['calls'][0]['code']}")
    page.wait_for_function("document.querySelectorAll('#tables tbody tr').length === 3", timeout=10000)
    page.wait_for_selector("#tables tr[data-table='t3'] td:text('t3-a v t3-b')", timeout=10000)
    page.wait_for_selector("#tables tr[data-table='t1'] td.last:text('game 1 shot 2')", timeout=10000)

    page.click("#tables tr[data-table='t1'] a")  # the table's page: its calls and its dispute report
    page.wait_for_selector("#calls-table tr[data-shot='1.2']", timeout=10000)
    assert page.locator("#calls-table tbody tr").count() == 2
    page_href = page.get_attribute("#report", "href")
    assert page_href == "/tables/t1/report"
    sheet = page.request.get(server.url.rstrip("/") + page_href)
    assert sheet.ok and sheet.text().count('<section class="shot"') == len(records["t1"])
    href = page.get_attribute("#report-json", "href")
    assert href == "/api/tables/t1/report"
    report = page.request.get(server.url.rstrip("/") + href).json()
    assert [s["record"] for s in report["shots"]] == records["t1"]
    assert [s["ruling"] for s in report["shots"]] == [e["payload"]["ruling"] for e in tables["t1"].journal.entries("shot")]
    assert all(u.startswith(server.url) or u.startswith("ws://127.0.0.1") for u in requests), requests  # nothing from outside
