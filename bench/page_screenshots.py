"""Screenshots of the spectators' page with the referee's console open, in the user's language (docs/images/).

    python bench/page_screenshots.py [--lang cs lv] [--out docs/images]

A Novuss match judged from scripted shot records (the third one's first contact too close to call, so the
console has a call to decide), the board rendered by the synthetic camera where the state has the pieces,
served by the real overlay and photographed in Debian's Chromium at a tablet's size. One PNG per language,
``page-<lang>.png``, each kept under 300 KB.
"""
from __future__ import annotations

import argparse
import copy
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

TOKEN = "docs-token"


def _records(engine, n: int) -> list[dict]:
    """``n`` strokes, each pocketing the first pawn still on the table of the player to move."""
    state, out = engine.initial(), []
    from rules import parse_record

    for k in range(n):
        player = state.to_move
        pawn = state.on_table(player)[0]
        x, y = state.pos[pawn]
        bat_y = -380.0 if player == "A" else 380.0
        raw = {"game": "novuss", "t0": 2.0 * k, "t1": 2.0 * k + 1.5, "before": {"bat": [0.0, bat_y]},
               "after": {"bat": [0.0, bat_y / 4]},
               "events": [{"t": 2.0 * k + 0.2, "kind": "contact", "a": "bat", "b": pawn},
                          {"t": 2.0 * k + 0.6, "kind": "pocket", "piece": pawn,
                           "pocket": ("N" if y > 0 else "S") + ("E" if x > 0 else "W")}]}
        state, _ = engine.apply(state, parse_record(raw))
        out.append(raw)
    return out


def _flagged(raw: dict) -> dict:
    out = copy.deepcopy(raw)
    t = out["events"][0]["t"]
    out["events"][0]["t_err"] = 0.0005
    other = "B1" if out["events"][0]["b"].startswith("A") else "A8"
    out["events"].insert(1, {"t": t + 0.0012, "kind": "contact", "a": "bat", "b": other, "t_err": 0.0005})
    return out


def _frame(match, profile):
    """The board as the state has it, through the synthetic camera."""
    from sim.frames import PieceState, SimFrame
    from sim.render import Renderer
    from sim.render_settings import RenderSettings, make_camera

    g = profile.geometry
    pieces = [PieceState(p, "pawn", p[0], x, y, 0.0, 0.4 * k, g["pawn_diameter_mm"] / 2, True)
              for k, (p, (x, y)) in enumerate(sorted(match.state.pos.items()))]
    pieces.append(PieceState("bat", "bat", None, 60.0, -430.0, 0.0, 0.0, g["bat_diameter_mm"] / 2, True))
    settings = RenderSettings(seed=1, camera_tilt_deg=4.0)
    return Renderer(make_camera(profile, 1280, 720, settings), profile, settings).render(SimFrame(0, 0.0, tuple(pieces), ()))


def shoot(lang: str, out: Path, chromium: str) -> Path:
    from playwright.sync_api import sync_playwright

    from calibration import default_profile
    from judge.i18n import set_language
    from judge.journal import Journal
    from judge.match import Match
    from judge.overlay import OverlayHub, OverlayServer, board_for, create_app
    from bench.docs_frames import save_small
    from rules import engine_for, parse_record

    set_language(lang)
    profile = default_profile("novuss")
    with tempfile.TemporaryDirectory() as tmp:
        journal = Journal.open(Path(tmp) / "m.sqlite", create=True, match={"game": "novuss"})
        hub = OverlayHub(board_for(profile))
        engine = engine_for("novuss", profile.geometry)
        match = Match(engine, journal, lang=lang, listeners=[hub])
        raws = _records(engine, 3)
        for raw in raws[:2]:
            match.judge(parse_record(raw))
        match.judge(parse_record(_flagged(raws[2])))
        hub.publish_frame(_frame(match, profile))
        srv = OverlayServer(create_app(hub, match, TOKEN), "127.0.0.1", 0).start()
        png = Path(tmp) / "page.png"
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox"])
                page = browser.new_page(viewport={"width": 1280, "height": 1400})
                page.goto(srv.url, wait_until="domcontentloaded")
                page.wait_for_function("document.getElementById('video').naturalWidth > 0", timeout=10000)
                page.click("#referee summary")
                page.fill("#token", TOKEN)
                page.click("#call-head")
                page.wait_for_selector("#queue-list > li", timeout=10000)
                page.screenshot(path=str(png), full_page=True)
                browser.close()
        finally:
            srv.stop()
            journal.close()
        import cv2

        target = out / f"page-{lang}.png"
        size, width = save_small(cv2.imread(str(png)), target, 1280)
    print(f"{target}: {size / 1000:.0f} KB, {width} px wide")
    return target


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lang", nargs="+", default=["cs", "lv"])
    ap.add_argument("--out", default="docs/images")
    args = ap.parse_args(argv)
    chromium = shutil.which("chromium")
    if chromium is None:
        print("page_screenshots: Debian's chromium is needed (apt-get install chromium)", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for lang in args.lang:
        shoot(lang, out, chromium)
    return 0


if __name__ == "__main__":
    sys.exit(main())
