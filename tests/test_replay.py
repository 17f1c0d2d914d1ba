"""shotjudge replay: a filmed simulated shot judged from its video; report, evidence, dispute view, bad input."""
import json
from pathlib import Path

import cv2
import jsonschema
import numpy as np
import pytest

import judge.replay as replay_mod
from judge import cli
from judge.cmd_replay import same_ruling
from judge.report import shot_frames
from judge.textdraw import draw_lines, font_path, to_ascii
from replay_helpers import ScriptedVision, filmed_scenario
from sim.video import read_video_frames

ROOT = Path(__file__).resolve().parent.parent
FPS = 30.0


@pytest.fixture(scope="module")
def clip(tmp_path_factory):
    """Novuss 'opponent-first' (B1 touched 3 ms before A1: a penalty), filmed at 640x360, 30 fps."""
    d = tmp_path_factory.mktemp("opponent_first")
    demo = filmed_scenario(d, "novuss", "opponent-first", seed=1, fps=FPS, size=(640, 360))
    return d, demo


@pytest.fixture
def scripted(monkeypatch, clip):
    """Vision replaced by the simulator's own records: tests the judge's side of replay on its own."""
    _, demo = clip
    monkeypatch.setattr(replay_mod, "make_vision", lambda cal, bg: ScriptedVision(demo, FPS))
    return demo


def _args(d, *extra):
    return ["replay", str(d / "video.mp4"), "--game", "novuss", "--calibration", str(d / "calibration.json"),
            "--background", str(d / "empty-board.png"), "--state", str(d / "start-state.json"), "--quiet", *extra]


def test_report_rulings_match_the_schema_with_evidence_crops(clip, scripted, tmp_path, capsys):
    d, demo = clip
    report = tmp_path / "report.json"
    assert cli.main(_args(d, "--report", str(report), "--lang", "cs")) == 0
    doc = json.loads(report.read_text(encoding="utf-8"))
    schema = json.loads((ROOT / "docs/schemas/ruling.schema.json").read_text())
    assert len(doc["rulings"]) == len(demo.session.shots) == 1
    for ruling in doc["rulings"]:
        jsonschema.validate(ruling, schema)
    truth = demo.session.shots[0].ruling
    assert same_ruling(doc["rulings"][0], truth)
    assert [c["code"] for c in doc["rulings"][0]["calls"]] == [c["code"] for c in truth["calls"]]
    assert doc["rulings"][0]["first_contact"] == "opponent"
    shot = doc["shots"][0]
    names = [e["name"] for e in shot["evidence"]]
    assert names[:2] == ["first_contact", "second_contact"] and "bat_hole" in names
    first = shot["evidence"][0]
    t_true = next(e["t"] for e in demo.session.shots[0].record["events"] if e["kind"] == "contact")
    assert first["t_s"] == pytest.approx(t_true, abs=1e-6)
    assert first["frame_before"] == int(t_true * FPS) and first["frame_after"] == first["frame_before"] + 1
    assert sorted(first["pieces"]) == ["B1", "bat"]
    for item in shot["evidence"]:
        crop = cv2.imread(str(report.parent / item["image"]))
        assert crop is not None and crop.shape == (240, 240, 3)
    assert shot["frames"] == list(shot_frames(replay_mod.ReplayShot(1, 1, shot["record"], None), FPS, doc["frames"]))
    # Czech call texts, with their diacritics, are in the report as the engine wrote them
    assert any(any(ord(ch) > 127 for ch in c["text"]) for c in doc["rulings"][0]["calls"])
    out = capsys.readouterr().out
    assert "opponent_pawn_first" in out


def test_dispute_view_has_slow_times_the_shot_frames(clip, scripted, tmp_path):
    d, _ = clip
    report, dispute = tmp_path / "r.json", tmp_path / "dispute.mp4"
    assert cli.main(_args(d, "--report", str(report), "--shot", "1", "--slow", "8", "--dispute", str(dispute))) == 0
    first, last = json.loads(report.read_text())["shots"][0]["frames"]
    frames = read_video_frames(dispute)
    assert len(frames) == (last - first + 1) * 8
    assert frames[0].shape == (360, 640, 3)
    # the zoom boxes sit in the top-right corner: that area differs from the plain video frame
    plain = read_video_frames(d / "video.mp4")[first]
    assert np.abs(frames[0][10:100, -150:-10].astype(int) - plain[10:100, -150:-10]).mean() > 10


def test_overlay_video_has_every_frame(clip, scripted, tmp_path):
    d, _ = clip
    overlay = tmp_path / "o.mp4"
    assert cli.main(_args(d, "--overlay", str(overlay))) == 0
    got, plain = read_video_frames(overlay), read_video_frames(d / "video.mp4")
    assert len(got) == len(plain)
    assert np.abs(got[-1].astype(int) - plain[-1]).mean() > 1.0  # zones, tracks and the call are drawn


def test_truncated_video_is_refused_and_writes_nothing(clip, scripted, tmp_path, capsys):
    d, _ = clip
    cut = tmp_path / "cut.mp4"
    data = (d / "video.mp4").read_bytes()
    cut.write_bytes(data[: len(data) // 2])
    report = tmp_path / "report.json"
    args = _args(d, "--report", str(report))
    args[1] = str(cut)
    assert cli.main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("shotjudge replay: error: ") and str(cut) in err[-1]
    assert not report.exists() and not any(tmp_path.glob("*report*_files*"))


def test_calibration_for_another_image_size_is_refused(clip, tmp_path, capsys):
    d, _ = clip
    other = tmp_path / "other"
    filmed_scenario(other, "novuss", "opponent-first", seed=1, fps=FPS, size=(320, 240))
    args = _args(d, "--report", str(tmp_path / "r.json"))
    args[args.index("--calibration") + 1] = str(other / "calibration.json")
    assert cli.main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "made for 320x240 images but the frames are 640x360" in err[0]
    assert not (tmp_path / "r.json").exists()


@pytest.mark.parametrize("change, message", [
    (("--game", "chess"), "unknown game 'chess'"),
    (("--shot", "0"), "--shot must be 1 or more"),
    (("--report", "/nonexistent/dir/r.json"), "does not exist"),
])
def test_bad_options_are_one_line_errors(clip, change, message, capsys):
    d, _ = clip
    args = _args(d)
    if change[0] in args:
        args[args.index(change[0]) + 1] = change[1]
    else:
        args += list(change)
    assert cli.main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


def test_replay_with_vision_reproduces_the_ground_truth(tmp_path):
    """The real pipeline (classical detector, tracking, events) on a filmed shot: the same ruling.

    At the resolution the targets are set for (1280x720): at 960x540 the H.264 colour subsampling moves
    the rims by ~0.7 mm and the 3 ms gap is (honestly) flagged for review instead."""
    demo = filmed_scenario(tmp_path, "novuss", "opponent-first", seed=1, fps=60.0, size=(1280, 720))
    result = replay_mod.judge_video(tmp_path / "video.mp4", "novuss", tmp_path / "calibration.json",
                                    background=str(tmp_path / "empty-board.png"), state=tmp_path / "start-state.json")
    assert result.error is None and result.frames == len(read_video_frames(tmp_path / "video.mp4"))
    truth = [s.ruling for s in demo.session.shots]
    assert len(result.shots) == len(truth)
    for got, want in zip(result.shots, truth):
        assert same_ruling(got.ruling, want), (got.ruling, want)


def test_call_text_keeps_czech_and_russian_letters():
    assert font_path() is not None, "DejaVu Sans (fonts-dejavu-core) should be installed"
    img = np.zeros((60, 400, 3), np.uint8)
    cs = draw_lines(img, [("Příliš žluťoučký kůň", (255, 255, 255))], (0, 0), 18, background=None)
    ru = draw_lines(img, [("Штраф: ход переходит", (255, 255, 255))], (0, 0), 18, background=None)
    assert cs.sum() > 0 and ru.sum() > 0 and not np.array_equal(cs, ru)
    assert img.sum() == 0  # drawing never touches the input
    assert to_ascii("Příliš žluťoučký") == "Prilis zlutoucky" and to_ascii("Штраф") == "Shtraf"
