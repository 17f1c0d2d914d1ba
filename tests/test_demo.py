"""shotjudge demo: simulated games filmed and judged end to end, files written, calls against ground truth."""
import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from judge.demo import simulate
from sim.video import read_video_frames

ROOT = Path(__file__).resolve().parent.parent


def test_demo_stretches_are_short_complete_games():
    novuss = simulate("novuss")
    assert len(novuss.session.shots) == 4 and novuss.session.over
    assert novuss.truth[-1]["game_over"]["result"] == "win"
    cvrnkana = simulate("cvrnkana")
    assert len(cvrnkana.session.shots) == 4 and cvrnkana.session.over
    assert [c["code"] for c in cvrnkana.truth[-1]["calls"]][-1] == "pit_count"
    assert simulate("novuss").truth == novuss.truth  # deterministic


@pytest.fixture(scope="module")
def quick_demo(tmp_path_factory):
    """``shotjudge demo --quick`` run once as a new user would (a fresh process), output captured."""
    out = tmp_path_factory.mktemp("demo") / "shotjudge-demo"
    env = {**os.environ, "COLUMNS": "200", "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "judge.cli", "demo", "--quick", "--out", str(out)], cwd=str(out.parent),
                          env=env, capture_output=True, text=True, timeout=300)
    return proc.returncode, out, proc.stdout + proc.stderr


def test_demo_writes_videos_reports_and_a_table(quick_demo):
    rc, out, text = quick_demo
    assert rc == 0, text
    schema = json.loads((ROOT / "docs/schemas/ruling.schema.json").read_text())
    for game in ("novuss", "cvrnkana"):
        d = out / game
        for name in ("video.mp4", "judged.mp4", "report.json", "calibration.json", "empty-board.png", "start-state.json"):
            assert (d / name).is_file(), f"{game}: {name} missing"
        assert len(read_video_frames(d / "judged.mp4")) == len(read_video_frames(d / "video.mp4"))
        doc = json.loads((d / "report.json").read_text(encoding="utf-8"))
        assert doc["game"] == game and doc["start"]["from"] == str(d / "start-state.json")
        assert (doc["video"], doc["calibration"]) == (str(d / "video.mp4"), str(d / "calibration.json"))  # not where
        # they were made: each game's folder is written under a temporary name and renamed when complete
        for ruling in doc["rulings"]:
            jsonschema.validate(ruling, schema)
    assert "ground truth" in text and "novuss: 2 simulated shot(s)" in text
    assert [p.name for p in out.parent.rglob(".*")] == []  # no temporary file or folder left


def test_demo_calls_match_the_simulator(quick_demo):
    rc, out, text = quick_demo
    assert "all match" in text and text.count("all match") == 2, text
