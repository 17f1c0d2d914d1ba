"""``shotjudge sim``: video, ground truth and YOLO folders from one command; determinism; bad input leaves
nothing behind."""
from __future__ import annotations

import json
import math
import pathlib

import cv2
import jsonschema
import numpy as np
import pytest
from referencing import Registry, Resource

from calibration.camera import Camera
from calibration.profile import default_profile
from judge.cli import main
from sim.render_geometry import apparent_point_mm
from sim.render_settings import make_camera
from sim.run import render_settings, run_scenario
from sim.scenarios import build
from sim.truth import frame_table
from sim.video import read_video_frames
from sim.yolo import CLASSES

ROOT = pathlib.Path(__file__).resolve().parents[1]
SCHEMAS = ROOT / "docs" / "schemas"
SMALL = ["--fps", "30", "--size", "320x180"]
PIECE_CLASS = {("pawn", "A"): "pawn_a", ("pawn", "B"): "pawn_b", ("bat", None): "bat",
               ("marble", "A"): "marble_a", ("marble", "B"): "marble_b"}


def sim(*argv) -> int:
    return main(["sim", *argv])


def truth(folder) -> dict:
    return json.loads((pathlib.Path(folder) / "truth.json").read_text())


def validator():
    resources = [Resource.from_contents(json.loads(p.read_text())) for p in SCHEMAS.glob("*.schema.json")]
    registry = Registry().with_resources((r.contents["$id"], r) for r in resources)
    schema = json.loads((SCHEMAS / "truth.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema, registry=registry)


def leftovers(parent: pathlib.Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name.startswith("."))


@pytest.fixture(scope="module")
def novuss_out(tmp_path_factory):
    out = tmp_path_factory.mktemp("cli") / "shot"
    assert sim("novuss", "--scenario", "own-opponent-3ms", "--seed", "1", *SMALL, "--yolo-every", "10",
               "--out", str(out)) == 0
    return out


def test_cli_writes_video_truth_and_yolo_folders(novuss_out, capsys):
    out = novuss_out
    assert sorted(p.name for p in out.iterdir()) == ["calibration.json", "data.yaml", "empty-board.png", "images", "labels",
                                                     "start-state.json", "truth.json", "video.mp4"]
    assert leftovers(out.parent) == []
    doc = truth(out)
    n = len(doc["frames"])
    assert [f["i"] for f in doc["frames"]] == list(range(n))
    assert doc["outputs"] == {"video": "video.mp4", "video_frames": n,
                              "yolo": {"every": 10, "images": math.ceil(n / 10),
                                       "prefix": "novuss-own-opponent-3ms-s1", "split": "train"}}
    video = read_video_frames(out / "video.mp4")
    assert len(video) == n and video[0].shape == (180, 320, 3)
    assert doc["size"] == [320, 180] and doc["camera"]["width"] == 320
    assert f"path: {out.resolve()}" in (out / "data.yaml").read_text()  # the final folder, not the staging one
    images = sorted((out / "images" / "train").iterdir())
    assert [p.stem for p in images] == [f"novuss-own-opponent-3ms-s1_{i:06d}" for i in range(0, n, 10)]
    for img_path in images:
        i = int(img_path.stem.rsplit("_", 1)[1])
        img = cv2.imread(str(img_path))
        # the PNG is the frame the video encoded (lossy H.264: close, not equal)
        assert np.abs(img.astype(int) - video[i].astype(int)).mean() < 4.0
        rows = [line.split() for line in (out / "labels" / "train" / f"{img_path.stem}.txt").read_text().splitlines()]
        piece_boxes = [(CLASSES[int(r[0])], *map(float, r[1:])) for r in rows if CLASSES[int(r[0])] not in ("hand", "cue")]
        seen = [(pid, row) for pid, row in doc["frames"][i]["pieces"].items() if row[6]]
        assert len(piece_boxes) == len(seen)  # one box per piece the truth says a detector should find
        for pid, row in seen:  # and the truth's pixel centre lies inside a box of the piece's class
            info = doc["pieces"][pid]
            u, v = row[4] / 320, row[5] / 180
            assert any(c == PIECE_CLASS[(info["kind"], info["owner"])] and abs(u - cx) < w / 2 and abs(v - cy) < h / 2
                       for c, cx, cy, w, h in piece_boxes), (i, pid)


def test_truth_pixels_camera_and_homography_agree(novuss_out):
    doc = truth(novuss_out)
    cam = Camera.from_dict(doc["camera"])
    hom = np.array(doc["homography"]["board_to_undistorted_px"])
    assert np.allclose(hom @ np.array(doc["homography"]["undistorted_px_to_board"]), np.eye(3), atol=1e-9)
    checked = 0
    for f in doc["frames"][::7]:
        for pid, (x, y, z, vis, u, v, seen) in f["pieces"].items():
            if not vis:
                assert (u, v, seen) == (None, None, 0)
                continue
            top = doc["pieces"][pid]["top_z_mm"]
            assert np.allclose(cam.project([[x, y, top + z]])[0], [u, v], atol=2e-3)
            und = cam.undistort_points(cam.project([[x, y]]))[0]
            p = hom @ [x, y, 1.0]
            assert np.allclose(und, p[:2] / p[2], atol=1e-3)
            checked += 1
    assert checked > 20
    # the bat moves between frames in the truth, in board mm and in pixels
    bat = [f["pieces"]["bat"] for f in doc["frames"] if f["pieces"]["bat"][3]]
    assert max(abs(a[5] - b[5]) for a, b in zip(bat, bat[1:])) > 5.0


def test_truth_validates_against_its_schema(novuss_out, tmp_path):
    v = validator()
    doc = truth(novuss_out)
    v.validate(doc)
    assert run_scenario("cvrnkana", "pit-entry", 2, tmp_path / "c", fps=20, size=(160, 90))["frames"] > 10
    v.validate(truth(tmp_path / "c"))
    bad = json.loads(json.dumps(doc))
    row = next(r for r in bad["frames"][0]["pieces"].values() if not r[3])
    row[4] = 12.0  # a pixel centre for a piece that is not on the surface
    assert not v.is_valid(bad)
    del bad["camera"]
    assert not v.is_valid(bad)


def test_same_command_gives_identical_truth_with_video_on(tmp_path):
    args = ["cvrnkana", "--scenario", "hand-nudge", "--seed", "5", *SMALL, "--randomise", "--tilt", "12",
            "--blur", "2", "--rolling-shutter"]
    assert sim(*args, "--out", str(tmp_path / "a")) == 0
    assert sim(*args, "--out", str(tmp_path / "b")) == 0
    assert sim(*args, "--no-video", "--out", str(tmp_path / "c")) == 0
    a, b = (tmp_path / "a" / "truth.json").read_bytes(), (tmp_path / "b" / "truth.json").read_bytes()
    assert a == b
    doc, no_video = json.loads(a), truth(tmp_path / "c")
    assert not (tmp_path / "c" / "video.mp4").exists() and no_video["outputs"]["video"] is None
    doc.pop("outputs"), no_video.pop("outputs")
    assert doc == no_video  # the truth does not depend on rendering the video
    st = doc["render"]["settings"]
    assert doc["render"]["mode"] == "randomised"
    assert (st["seed"], st["camera_tilt_deg"], st["blur_samples"], st["rolling_shutter_s"]) == (5, 12.0, 2, 0.02)
    assert sim(*args[:4], "6", *args[5:], "--no-video", "--out", str(tmp_path / "d")) == 0
    other = truth(tmp_path / "d")
    assert other["render"]["settings"]["wood_bgr"] != st["wood_bgr"] and other["camera"] != doc["camera"]


def test_rolling_shutter_pixels_are_where_the_rows_are_read():
    prof = default_profile("novuss")
    ep = build("novuss", "ricochet", prof, 1)
    clip = ep.clip()
    fps, readout = 30.0, 0.03
    st = render_settings(1, tilt_deg=10.0, rolling_shutter_s=readout)
    cam = make_camera(prof, 640, 360, st)
    rs = frame_table(clip, fps, cam, prof, st)
    plain = frame_table(clip, fps, cam, prof, render_settings(1, tilt_deg=10.0))
    bands = st.rolling_bands
    moved = 0
    for a, b in zip(rs, plain):
        for pid, row in a["pieces"].items():
            if not row[3]:
                continue
            u, v = row[4], row[5]
            if b["pieces"][pid][:3] == row[:3] and clip.states_at(a["t"] - readout / 2).piece(pid) == \
                    clip.states_at(a["t"] + readout / 2).piece(pid):
                assert (u, v) == tuple(b["pieces"][pid][4:6])  # at rest: the shutter changes nothing
                continue
            band = min(int((v + 0.5) * bands // cam.height), bands - 1)
            t_row = a["t"] + readout * ((band + 0.5) / bands - 0.5)
            p = clip.states_at(t_row).piece(pid)
            want = cam.project([apparent_point_mm(prof, p)])[0]
            assert np.allclose([u, v], want, atol=0.05), (a["i"], pid)
            if np.hypot(u - b["pieces"][pid][4], v - b["pieces"][pid][5]) > 1.0:
                moved += 1
    assert moved >= 3  # the bat at speed is visibly elsewhere than at the frame time


def _assert_refused(capsys, parent: pathlib.Path, *argv, message: str) -> None:
    before = sorted(p.name for p in parent.iterdir())
    assert sim(*argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("shotjudge sim: error: ") and message in err, err
    assert sorted(p.name for p in parent.iterdir()) == before  # nothing written, no temporary folder left


def test_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path, capsys):
    out = str(tmp_path / "new")
    base = ["novuss", "--scenario", "bat-off", *SMALL]
    _assert_refused(capsys, tmp_path, "novuss", "--scenario", "nope", "--out", out, message="unknown novuss scenario 'nope'")
    _assert_refused(capsys, tmp_path, "novuss", "--scenario", "bat-off", "--size", "big", "--out", out, message="WIDTHxHEIGHT")
    _assert_refused(capsys, tmp_path, "novuss", "--scenario", "bat-off", "--size", "8x8", "--out", out, message="out of range")
    for fps in ("0", "5000", "nan"):
        _assert_refused(capsys, tmp_path, *base, "--fps", fps, "--out", out, message="fps must be within 1..1000")
    _assert_refused(capsys, tmp_path, *base, "--seed", "-1", "--out", out, message="seed")
    _assert_refused(capsys, tmp_path, *base, "--blur", "0", "--out", out, message="blur")
    _assert_refused(capsys, tmp_path, *base, "--tilt", "60", "--out", out, message="tilt")
    _assert_refused(capsys, tmp_path, *base, "--yolo-every", "0", "--out", out, message="yolo-every")
    _assert_refused(capsys, tmp_path, *base, "--rolling-shutter", "2", "--out", out, message="rolling-shutter")
    afile = tmp_path / "a_file"
    afile.write_text("keep me")
    _assert_refused(capsys, tmp_path, *base, "--out", str(afile), message="is a file")
    _assert_refused(capsys, tmp_path, *base, "--out", str(afile / "sub"), message="is a file")
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "notes.txt").write_text("mine")
    _assert_refused(capsys, tmp_path, *base, "--out", str(theirs), message="not empty")
    assert afile.read_text() == "keep me" and [p.name for p in theirs.iterdir()] == ["notes.txt"]


def test_failure_while_writing_leaves_nothing(tmp_path, monkeypatch, capsys):
    import sim.run

    def broken(clip, camera, profile, settings, fps, out_dir, **kw):
        (out_dir / "video.mp4").write_bytes(b"half a video")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(sim.run, "render_outputs", broken)
    _assert_refused(capsys, tmp_path, "novuss", "--scenario", "bat-off", *SMALL, "--out", str(tmp_path / "x" / "y"),
                    message="cannot write")

    def crash(*args, **kw):
        raise RuntimeError("renderer bug")

    monkeypatch.setattr(sim.run, "render_outputs", crash)
    with pytest.raises(RuntimeError):
        run_scenario("novuss", "bat-off", 0, tmp_path / "z", video=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_rerun_replaces_an_earlier_output_whole(tmp_path, capsys):
    out = tmp_path / "o"
    out.mkdir()  # an empty folder is fine
    assert sim("novuss", "--scenario", "bat-off", *SMALL, "--yolo-every", "20", "--out", str(out)) == 0
    first = truth(out)
    assert (out / "images").is_dir()
    assert sim("novuss", "--scenario", "bat-off", *SMALL, "--seed", "3", "--no-video", "--out", str(out)) == 0
    assert sorted(p.name for p in out.iterdir()) == ["truth.json"]  # no stale video or YOLO images
    assert truth(out)["seed"] == 3 and first["seed"] == 0
    assert leftovers(tmp_path) == []
    assert "-> " + str(out) in capsys.readouterr().out


def test_in_view_follows_the_yolo_labelling_rule_for_marbles_under_a_hand():
    from sim.render_geometry import CanvasGeometry
    from sim.render_occluders import OccluderPainter
    from sim.yolo import labelled_pieces, yolo_boxes

    prof = default_profile("cvrnkana")
    clip = build("cvrnkana", "random", prof, 1).clip()  # the hand picks a marble up, then flicks it
    st = render_settings(1, tilt_deg=8.0)
    cam = make_camera(prof, 320, 180, st)
    occ = OccluderPainter(CanvasGeometry.for_camera(cam, st.oversample), st)
    under_hand = 0
    for f in clip.frames(30.0):
        seen = labelled_pieces(f, cam, prof, occ)
        boxes = [CLASSES[b[0]] for b in yolo_boxes(f, cam, prof, occ) if CLASSES[b[0]] not in ("hand", "cue")]
        assert sorted(boxes) == sorted(PIECE_CLASS[(p.kind, p.owner)] for p in f.pieces if seen[p.id])
        bare = labelled_pieces(f, cam, prof, None)
        under_hand += sum(1 for p in f.pieces if bare[p.id] and not seen[p.id])
    assert under_hand > 0  # the rule is exercised: marbles in the picture but under the hand are not in view
