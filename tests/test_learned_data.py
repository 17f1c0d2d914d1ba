"""Training data for the learned detector: boxes from the camera model, visibility under occluders, tiles,
YOLO files, the dataset folder and the ``shotjudge train`` arguments."""
from __future__ import annotations

import importlib.util
import math

import numpy as np
import pytest

from judge.cli import main
from sim.frames import Occluder, PieceState, SimFrame
from sim.render_geometry import apparent_point_mm
from sim.render_settings import RenderSettings
import json

from judge.training.train import DataSpec, TrainSpec, build_dataset, merge_datasets, train
from judge.training.data import CLASSES, MIN_VISIBLE, LabelledFrame, label_frame, make_renderer, random_scene, tiles, yolo_lines
from vision.types import VisionError


@pytest.fixture(scope="module")
def small():
    return make_renderer("novuss", 5, (480, 270), RenderSettings(seed=5))


def _pawn(pid, x, y, owner="A", r=16.0):
    return PieceState(pid, "pawn", owner, x, y, 0.0, 0.0, r, True)


def test_box_is_the_projected_piece(small):
    profile, cam, renderer = small
    p = _pawn("A1", 210.0, -130.0)
    (box,) = label_frame(renderer, cam, profile, SimFrame(0, 0.0, (p,), ()))
    centre = cam.project(np.array([apparent_point_mm(profile, p)]))[0]
    assert box.cls == "pawn_a" and box.piece == "A1" and box.visible == 1.0
    assert math.dist(box.centre_px, centre) < 0.6
    ppm = float(np.linalg.norm(cam.project(np.array([[211.0, -130.0, 7.0]])) - cam.project(np.array([[209.0, -130.0, 7.0]]))) / 2)
    assert abs((box.xyxy[2] - box.xyxy[0]) - 32.0 * ppm) < 1.5


def test_a_hand_covers_pieces_under_it_only(small):
    profile, cam, renderer = small
    under, beside, far = _pawn("A1", 0.0, 0.0), _pawn("B1", -70.0, 0.0, "B"), _pawn("A2", 400.0, 400.0)
    hand = Occluder("hand", 0.0, 0.0, math.pi / 2, 30.0, 0.0, 0.0, 45.0)
    boxes = {b.piece: b for b in label_frame(renderer, cam, profile, SimFrame(0, 0.0, (under, beside, far), (hand,)))}
    assert boxes["A1"].visible < MIN_VISIBLE
    assert 0.0 < boxes["B1"].visible < 1.0
    assert boxes["A2"].visible == 1.0
    assert [b.cls for b in boxes.values() if b.piece is None] == ["hand"]
    lines = yolo_lines(list(boxes.values()), cam.width, cam.height)
    classes = sorted(CLASSES[int(s.split()[0])] for s in lines)
    assert classes == ["hand", "pawn_a", "pawn_b"]  # the hidden pawn is not labelled


def test_motion_blur_stretches_the_box_along_the_motion(small):
    profile, cam, renderer = small
    still = _pawn("A1", 0.0, 0.0)

    def states_at(t):
        return SimFrame(0, t, (_pawn("A1", 3000.0 * t, 0.0),), ())

    (sharp,) = label_frame(renderer, cam, profile, SimFrame(0, 0.0, (still,), ()))
    (blur,) = label_frame(renderer, cam, profile, SimFrame(0, 0.0, (still,), ()), states_at, 0.01)
    sw, bw = sharp.xyxy[2] - sharp.xyxy[0], blur.xyxy[2] - blur.xyxy[0]
    assert bw - sw == pytest.approx(30.0 * sw / 32.0, rel=0.1)  # 3 m/s over 10 ms: 30 mm longer
    assert abs((blur.xyxy[3] - blur.xyxy[1]) - (sharp.xyxy[3] - sharp.xyxy[1])) < 0.5
    assert math.dist(blur.centre_px, sharp.centre_px) < 0.6


def test_random_scenes_are_seeded_and_pieces_do_not_overlap(small):
    profile = small[0]
    a, _ = random_scene("novuss", profile, np.random.default_rng(3))
    b, _ = random_scene("novuss", profile, np.random.default_rng(3))
    assert a == b
    pcs = a.pieces
    for i, p in enumerate(pcs):
        assert abs(p.x_mm) <= 500 - p.radius_mm + 1e-9 and abs(p.y_mm) <= 500 - p.radius_mm + 1e-9
        for q in pcs[i + 1:]:
            assert math.dist((p.x_mm, p.y_mm), (q.x_mm, q.y_mm)) >= p.radius_mm + q.radius_mm - 1e-9


def test_moving_share_smears_more_pieces_and_the_default_keeps_the_evaluation_scenes():
    from calibration.profile import default_profile

    profile = default_profile("cvrnkana")

    def moving(share, seed):
        rng = np.random.default_rng(seed)
        out = []
        for i in range(30):
            frame, at = random_scene("cvrnkana", profile, rng, i, float(i), share) if share is not None else \
                random_scene("cvrnkana", profile, rng, i, float(i))
            later = at(i + 0.01)
            out += [(p.x_mm, p.y_mm) != (q.x_mm, q.y_mm) for p, q in zip(frame.pieces, later.pieces)]
        return out

    default, explicit = moving(None, 7), moving(0.12, 7)
    assert default == explicit  # the bench's unseen frames are the same as before the knob existed
    many = moving(0.5, 7)
    assert sum(default) / len(default) < 0.2 < 0.4 < sum(many) / len(many)
    assert not any(moving(0.0, 7))


def test_tiles_keep_full_resolution_and_shift_the_boxes(small):
    profile, cam, renderer = small
    frame = SimFrame(0, 0.0, (_pawn("A1", -200.0, 150.0), _pawn("B1", 250.0, -100.0, "B")), ())
    img = renderer.render(frame)
    lf = LabelledFrame(img, tuple(label_frame(renderer, cam, profile, frame)), "novuss", 5, 0, False)
    for crop, boxes in tiles(lf, 128, 4, np.random.default_rng(0)):
        assert crop.shape == (128, 128, 3)
        for b in boxes:
            assert 0 <= b.xyxy[0] < b.xyxy[2] <= 128 and 0 <= b.xyxy[1] < b.xyxy[3] <= 128
            src = next(s for s in lf.boxes if s.piece == b.piece)
            assert b.xyxy[2] - b.xyxy[0] == pytest.approx(src.xyxy[2] - src.xyxy[0], abs=1e-6)
        lines = yolo_lines(boxes, 128, 128)
        assert all(len(s.split()) == 5 and all(0 <= float(v) <= 1 for v in s.split()[1:]) for s in lines)


def test_dataset_is_written_once_and_reused(tmp_path):
    spec = DataSpec(settings_per_game=1, frames_per_setting=1, val_settings_per_game=1, tile_px=96,
                    tiles_per_frame=2, size=(320, 180))
    yaml = build_dataset(spec, tmp_path / "ds", progress=lambda s: None)
    text = yaml.read_text()
    assert "train: images/train" in text and "  6: cue" in text
    assert len(list((tmp_path / "ds" / "images" / "train").glob("*.jpg"))) == 4  # 2 games x 1 frame x 2 tiles
    assert len(list((tmp_path / "ds" / "labels" / "val").glob("*.txt"))) == 4
    stamp = (tmp_path / "ds" / "spec.json").stat().st_mtime_ns
    assert build_dataset(spec, tmp_path / "ds") == yaml and (tmp_path / "ds" / "spec.json").stat().st_mtime_ns == stamp
    with pytest.raises(VisionError, match="holds another dataset"):
        build_dataset(DataSpec(settings_per_game=2, size=(320, 180)), tmp_path / "ds")
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no half-written folder left


def test_a_dataset_made_before_a_spec_field_existed_is_reused_and_others_join_its_training(tmp_path):
    spec = DataSpec(settings_per_game=1, frames_per_setting=1, val_settings_per_game=1, tile_px=96,
                    tiles_per_frame=1, size=(320, 180))
    yaml = build_dataset(spec, tmp_path / "old", progress=lambda s: None)
    stamp = tmp_path / "old" / "spec.json"
    old = json.loads(stamp.read_text())
    del old["moving_share"]  # as written before the field existed
    stamp.write_text(json.dumps(old, sort_keys=True))
    assert build_dataset(spec, tmp_path / "old") == yaml
    with pytest.raises(VisionError, match="holds another dataset"):
        build_dataset(DataSpec(**{**old, "size": (320, 180), "moving_share": 0.4}), tmp_path / "old")
    build_dataset(DataSpec(**{**old, "size": (320, 180), "seed": 2, "moving_share": 0.4}), tmp_path / "fast",
                  progress=lambda s: None)
    merged = merge_datasets(yaml, [tmp_path / "fast"])
    text = merged.read_text()
    assert f"  - {(tmp_path / 'old' / 'images' / 'train').resolve()}" in text
    assert f"  - {(tmp_path / 'fast' / 'images' / 'train').resolve()}" in text
    assert "val: images/val" in text and "  6: cue" in text and yaml.read_text().count("train:") == 1
    with pytest.raises(VisionError, match="not a finished dataset folder"):
        merge_datasets(yaml, [tmp_path / "nowhere"])


@pytest.mark.skipif(importlib.util.find_spec("ultralytics") is None, reason="ultralytics not installed")
def test_specs_reject_bad_values():
    with pytest.raises(VisionError, match="unknown game"):
        DataSpec(games=("chess",))
    with pytest.raises(VisionError, match=">= 1"):
        DataSpec(frames_per_setting=0)
    with pytest.raises(VisionError, match="moving share must be between 0 and 1"):
        DataSpec(moving_share=1.5)
    with pytest.raises(VisionError, match="model YAML or a local .pt"):
        train(TrainSpec(model="yolo11n.pt", project="/nonexistent/runs"), "data.yaml", resume=False)


def test_train_command_rejects_a_bad_export_size(capsys):
    assert main(["train", "--export-size", "1280x720"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "shotjudge train: error: --export-size sides must be multiples of 32, got 1280x720"


def test_train_command_renders_the_data_only_and_refuses_an_unfinished_extra_dataset(tmp_path, capsys):
    common = ["train", "--renderers", "1", "--frames", "1", "--val-renderers", "1", "--tiles", "1", "--tile-px", "96"]
    assert main(common + ["--data-dir", str(tmp_path / "ds"), "--moving", "0.3", "--data-only"]) == 0
    assert json.loads((tmp_path / "ds" / "spec.json").read_text())["moving_share"] == 0.3
    assert capsys.readouterr().out.strip().splitlines()[-1] == f"dataset: {tmp_path / 'ds' / 'data.yaml'}"
    assert main(common + ["--data-dir", str(tmp_path / "ds"), "--moving", "0.3", "--also-train",
                          str(tmp_path / "none"), "--name", "x"]) != 0
    err = capsys.readouterr().err.strip()
    assert err.endswith("is not a finished dataset folder (build it with 'shotjudge train --data-dir')")
    assert len(err.splitlines()) == 1 and not (tmp_path / "ds" / "data+none.yaml").exists()
