"""The dispute report (#19 item 3): one self-contained HTML page per match and its PDF, from a replay report
or from a live journal with its clips; the calls, clause texts, instants, crops and referee decisions on it."""
from __future__ import annotations

import base64
import html
import json
import re
import shutil

import pytest

from judge import cli
from judge.dispute_report import from_journal
from judge.journal import Journal
from judge.match import Match
from novuss_shots import make_records, novuss_engine
from replay_helpers import filmed_scenario
from rules import parse_record

CHROMIUM = shutil.which("chromium")


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    """One Novuss clip with a penalty (the bat touches the opponent's pawn first), judged by replay (report with
    crops) and by live (journal and clips)."""
    d = tmp_path_factory.mktemp("dispute")
    filmed_scenario(d, "novuss", "opponent-first", seed=1, fps=30.0, size=(640, 360))
    common = ["--game", "novuss", "--calibration", str(d / "calibration.json"), "--background", str(d / "empty-board.png"),
              "--state", str(d / "start-state.json")]
    assert cli.main(["replay", str(d / "video.mp4"), *common, "--report", str(d / "report.json")]) in (0, 1)
    assert cli.main(["live", "--source", str(d / "video.mp4"), *common, "--journal", str(d / "match.sqlite"),
                     "--clips", str(d / "clips"), "--no-overlay"]) == 0
    return d


def _sections(page: str) -> dict[str, str]:
    parts = re.split(r'<section class="shot" id="([^"]+)">', page)
    return dict(zip(parts[1::2], parts[2::2]))


def _calls(section: str) -> list[tuple[str, str]]:
    return [(html.unescape(t), c) for t, c in re.findall(r"<li><b>(.*?)</b> <code>(.*?)</code>", section)]


def test_the_page_from_a_replay_report_holds_every_call_instant_and_crop(judged, tmp_path):
    doc = json.loads((judged / "report.json").read_text())
    assert doc["rulings"], "the clip must give a judged shot"
    out = tmp_path / "sub" / "report.html"
    out.parent.mkdir()
    assert cli.main(["report", "--replay-report", str(judged / "report.json"), "--html", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert "src=\"http" not in page and "href=\"http" not in page  # self-contained: nothing from elsewhere
    sections = _sections(page)
    assert list(sections) == [f"g{s['game_no']}-s{s['no']}" for s in doc["shots"]]
    for s in doc["shots"]:
        section = sections[f"g{s['game_no']}-s{s['no']}"]
        assert _calls(section) == [(c["text"], c["clause"]) for c in s["ruling"]["calls"]]
        images = re.findall(r'<img alt="[^"]*" src="data:image/png;base64,([^"]+)">', section)
        assert [base64.b64decode(b) for b in images] == [(judged / e["image"]).read_bytes() for e in s["evidence"]]
        assert section.count("<svg") == len(s["evidence"])  # a board diagram beside each crop
    assert [a for s in doc["shots"] for a in s["ruling"]["actions"]] == [{"kind": "debt", "player": "A", "amount": 1}]
    assert "To do: nothing now; A owes 1 penalty pawn(s), placed once they have pocketed a pawn" in page
    assert out.stat().st_mode & 0o777 == 0o644


@pytest.mark.browser
def test_the_pdf_is_chromium_s_print_of_the_page_titled_as_the_page(judged, tmp_path):
    if CHROMIUM is None:
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    out, pdf = tmp_path / "r.html", tmp_path / "r.pdf"
    assert cli.main(["report", "--replay-report", str(judged / "report.json"), "--html", str(out), "--pdf", str(pdf)]) == 0
    data = pdf.read_bytes()
    assert data.startswith(b"%PDF-")
    title = re.search(rb"/Title <FEFF([0-9A-F]+)>", data)
    assert title and bytes.fromhex(title.group(1).decode()).decode("utf-16-be") == "Dispute report — Novuss match"
    assert "<title>Dispute report — Novuss match</title>" in out.read_text(encoding="utf-8")


def test_the_page_from_a_live_journal_and_its_clips_gives_the_same_calls_as_replay(judged, tmp_path):
    replay_page, live_page = tmp_path / "replay.html", tmp_path / "live.html"
    assert cli.main(["report", "--replay-report", str(judged / "report.json"), "--html", str(replay_page)]) == 0
    assert cli.main(["report", "--journal", str(judged / "match.sqlite"), "--clips", str(judged / "clips"),
                     "--html", str(live_page)]) == 0
    from_replay, from_live = _sections(replay_page.read_text()), _sections(live_page.read_text())
    assert list(from_live) == list(from_replay)
    for key, section in from_live.items():
        assert _calls(section) == _calls(from_replay[key])
        assert "no picture" not in section  # every instant's crop was cut from the shot's clip
        assert section.count("data:image/png;base64,") >= 1
    report = from_journal(judged / "match.sqlite", judged / "clips")
    first = report.shots[0].instants[0]
    assert first.name == "first_contact" and first.png.startswith(b"\x89PNG")


def test_the_page_from_a_journal_shows_refused_shots_and_every_referee_decision(tmp_path):
    raws = make_records(4)
    refused = json.loads(json.dumps(raws[1]))
    refused["events"] = [{"t": refused["t0"] + 0.2, "kind": "contact", "a": "bat", "b": "A1"},
                         {"t": refused["t0"] + 0.6, "kind": "pocket", "piece": "A1", "pocket": "NW"}]
    path = tmp_path / "m.sqlite"
    with Journal.open(path, create=True, match={"game": "novuss"}) as j:
        m = Match(novuss_engine(), j)
        m.judge(parse_record(raws[0]))
        bad = m.judge(parse_record(refused))
        assert bad.ruling is None
        m.settle(m.open_reviews()[0]["review"])
        m.judge(parse_record(raws[1]))
        m.judge(parse_record(raws[2]))
        m.override(2, "pawn_moved_by_hand", note="B's sleeve")
        m.undo()
        expected_score = m.score()
    report = from_journal(path)
    assert [(s.shot_no, s.ruling is None, s.undone) for s in report.shots] == \
        [(1, False, False), (None, True, False), (2, False, False), (3, False, True)]
    assert report.shots[1].error == bad.error and [d.kind for d in report.shots[1].decisions] == ["settle"]
    assert [d.kind for d in report.shots[2].decisions] == ["override"]
    assert [d.kind for d in report.shots[3].decisions] == ["undo"]
    assert report.score == expected_score  # refolded read only, as the running match keeps it
    out = tmp_path / "m.html"
    assert cli.main(["report", "--journal", str(path), "--html", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert f"<b>The rules could not judge this shot:</b> {html.escape(bad.error)}" in page
    assert "override: pawn_moved_by_hand (B&#x27;s sleeve) (by referee)" in page
    assert "the referee undid this shot" in page and "settled by the referee (confirm)" in page
    assert "no picture: no clips were given (--clips)" in page


@pytest.mark.parametrize("argv, message", [
    (["--replay-report", "{tmp}/nope.json", "--html", "{tmp}/o.html"], "cannot read the replay report"),
    (["--replay-report", "{tmp}/other.json", "--html", "{tmp}/o.html"], "not a replay report"),
    (["--journal", "{tmp}/nope.sqlite", "--html", "{tmp}/o.html"], "no such journal"),
    (["--replay-report", "{tmp}/other.json", "--clips", "c", "--html", "{tmp}/o.html"], "--clips and --calibration go with --journal"),
    (["--replay-report", "{tmp}/other.json", "--html", "{tmp}/missing/o.html"], "folder"),
])
def test_bad_input_is_one_line_and_writes_nothing(tmp_path, capsys, argv, message):
    (tmp_path / "other.json").write_text(json.dumps({"schema": "something else"}))
    assert cli.main(["report", *[a.format(tmp=tmp_path) for a in argv]]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("shotjudge report: error: ") and message in err[0]
    assert not (tmp_path / "o.html").exists()


def _console(tmp_path):
    from judge.cmd_report import report_html
    from judge.overlay import create_app
    from overlay_helpers import judged_match

    journal, hub, match = judged_match(tmp_path / "m.sqlite", make_records(2))
    app = create_app(hub, match, "tok-123", hosts=("testserver",),
                     report=lambda: report_html("en", journal=str(journal.path)))
    return journal, hub, match, app


def test_the_console_serves_the_report_of_the_match_as_it_stands_to_the_referee_only(tmp_path):
    from fastapi.testclient import TestClient

    from judge.overlay import create_app

    journal, hub, match, app = _console(tmp_path)
    with TestClient(app) as client:
        assert client.get("/api/referee/report").status_code == 401
        page = client.get("/api/referee/report", headers={"Authorization": "Bearer tok-123"})
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        assert list(_sections(page.text)) == ["g1-s1", "g1-s2"]
        match.judge(parse_record(make_records(3)[2]))  # the next shot is on the page the next time it is asked for
        again = client.get("/api/referee/report", headers={"Authorization": "Bearer tok-123"})
        assert list(_sections(again.text)) == ["g1-s1", "g1-s2", "g1-s3"]
    with TestClient(create_app(hub, match, "tok-123", hosts=("testserver",))) as client:
        res = client.get("/api/referee/report", headers={"Authorization": "Bearer tok-123"})
        assert res.status_code == 404 and "no journal" in res.json()["detail"]
    journal.close()


@pytest.mark.browser
def test_the_console_button_opens_the_report_in_a_page_of_its_own(tmp_path):
    if CHROMIUM is None:
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    from judge.overlay import OverlayServer

    journal, hub, match, app = _console(tmp_path)
    srv = OverlayServer(app, "127.0.0.1", 0).start()
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
            page = browser.new_page()
            page.goto(srv.url, wait_until="domcontentloaded")
            page.click("#referee summary")
            page.fill("#token", "tok-123")
            with page.expect_popup() as popup:
                page.click("#dispute-report")
            report = popup.value
            report.wait_for_selector("section.shot#g1-s2", timeout=10000)
            assert report.title() == "Dispute report — Novuss match"
            browser.close()
    finally:
        srv.stop()
        journal.close()


def test_the_console_s_evidence_is_cut_from_the_clip_of_the_shot(judged):
    from judge.dispute_report import clip_evidence

    evidence = clip_evidence(judged / "clips", str(judged / "calibration.json"), "novuss")
    with Journal.open(judged / "match.sqlite") as j:
        (shot,) = j.entries("shot")
    instants = evidence(shot["game_no"], shot["shot_no"], shot["payload"]["record"], shot["payload"]["ruling"])
    assert [k.name for k in instants][:1] == ["first_contact"] and all(k.png.startswith(b"\x89PNG") for k in instants)
    missing = clip_evidence(judged / "no-clips", str(judged / "calibration.json"), "novuss")
    assert {k.no_picture for k in missing(1, 1, shot["payload"]["record"], shot["payload"]["ruling"])} == \
        {"no clip of this shot has been written (yet)"}
