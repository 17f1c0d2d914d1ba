"""The small things a referee or organiser trips over: required options said to be required, output folders
made, outputs readable like any other file, a command that cannot finish refused before it starts, and the
demo saying what it is doing."""
from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

import pytest

from calibration.atomic import DIR_MODE, FILE_MODE
from judge import cli


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_output_modes_follow_the_umask_like_any_tool():
    mask = os.umask(0)
    os.umask(mask)
    assert (FILE_MODE, DIR_MODE) == (0o666 & ~mask, 0o777 & ~mask)


def test_markers_make_the_folders_named_and_write_an_ordinary_file(tmp_path, capsys):
    out = tmp_path / "club" / "sheets" / "m.pdf"
    assert cli.main(["markers", "--game", "novuss", "--dpi", "72", "--out", str(out)]) == 0
    assert out.is_file() and _mode(out) == FILE_MODE
    assert _mode(out.parent) == DIR_MODE and _mode(out.parent.parent) == DIR_MODE


def test_an_output_folder_that_cannot_be_made_is_one_line(tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    assert cli.main(["markers", "--game", "novuss", "--out", str(tmp_path / "file" / "m.pdf")]) == 2
    assert capsys.readouterr().err == (f"shotjudge markers: error: --out {tmp_path / 'file' / 'm.pdf'}: "
                                       f"{tmp_path / 'file'} is a file, not a folder\n")
    assert cli.main(["markers", "--game", "novuss", "--out", str(tmp_path / "file" / "deeper" / "m.pdf")]) == 2
    assert capsys.readouterr().err == (f"shotjudge markers: error: --out {tmp_path / 'file' / 'deeper' / 'm.pdf'}: "
                                       f"cannot make the folder {tmp_path / 'file' / 'deeper'}: Not a directory\n")


def test_the_reports_crops_folder_is_an_ordinary_folder(tmp_path):
    from judge.report import _swap_in

    crops = Path(tempfile.mkdtemp(dir=tmp_path))
    assert _mode(crops) == 0o700  # what mkdtemp makes
    assert _swap_in(crops, tmp_path / "report_files") is None
    assert _mode(tmp_path / "report_files") == DIR_MODE


def _help(capsys, *command) -> str:
    with pytest.raises(SystemExit):
        cli.main([*command, "--help"])
    return " ".join(capsys.readouterr().out.split())


def test_help_says_which_options_are_required_and_when(capsys):
    assert ("--background BACKGROUND picture(s) of the empty board from this camera: a file or a folder; required with "
            "the classical detector (the default), not with --detector learned") in _help(capsys, "live")
    assert ("--out DIR output folder, required (except with --list): new, empty, or an earlier output of this command "
            "(replaced); missing parent folders are made") in _help(capsys, "sim")


def test_train_without_the_learned_extra_stops_before_rendering(monkeypatch, capsys):
    import importlib.util

    import judge.training.train as train

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "ultralytics" else real(name, *a))
    monkeypatch.setattr(train, "build_dataset", lambda *a, **k: pytest.fail("rendered the dataset"))
    assert cli.main(["train", "--data-dir", "nowhere"]) == 2
    assert capsys.readouterr().err == ("shotjudge train: error: train needs the learned detector's packages "
                                       "(ultralytics): pip install '.[learned]'\n")


def test_the_demo_says_each_stage_as_it_starts(monkeypatch, tmp_path):
    import judge.demo as demo

    said = []

    class Played:
        shots = [1, 2, 3]

    monkeypatch.setattr(demo, "simulate", lambda game, max_shots: demo.DemoGame(game, None, Played(), {}, 0))
    monkeypatch.setattr(demo, "film", lambda d, out, fps, size: said.append("(filmed)"))
    monkeypatch.setattr(demo, "judge_demo_game", lambda *a, **k: said.append("(judged)") or ("result", "doc"))
    demo._demo_game("novuss", tmp_path, tmp_path, 60.0, (960, 540), "en", None, None, say=said.append)
    assert said == ["novuss: simulating the play…", "novuss: filming 3 shot(s) with the synthetic camera…", "(filmed)",
                    "novuss: judging the video (vision and rules)…", "(judged)"]
