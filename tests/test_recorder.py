"""Dispute clips: ring buffer by frame time, one MP4 + JSON per shot, named for the referee, atomic."""
import json

import av
import numpy as np

from hardware import Frame
from judge.recorder import FrameRing, ShotRecorder, clip_paths


def frames(n, fps=30, start=0, size=(64, 48)):
    return [Frame(np.full((size[1], size[0], 3), (i * 10) % 256, np.uint8), i, i / fps, "test")
            for i in range(start, start + n)]


def test_ring_keeps_the_last_seconds_by_frame_time():
    ring = FrameRing(seconds=1.0)
    for f in frames(90):
        ring.append(f)
    assert len(ring) == 31  # the newest is frame 89 (t = 2.967 s): frames 59..89 are within 1 s
    kept = ring.between(0, 100)
    assert kept[0].index == 59 and kept[-1].index == 89


def test_each_shot_becomes_game_and_shot_numbered_clip_with_json(tmp_path):
    rec = ShotRecorder(tmp_path / "clips", fps=30, seconds=5.0, pre_s=0.5)
    clip_frames = frames(60)
    clip_frames = clip_frames[:40] + clip_frames[44:]  # four frames lost: the clip keeps the hole
    for f in clip_frames:
        rec.add(f)
    record = {"game": "novuss", "t0": 1.0, "t1": 1.8, "before": {}, "after": {}, "events": []}
    ruling = {"shot": 17, "calls": [{"code": "stroke_ok", "clause": "novuss.general.2"}]}
    rec.save(3, 17, record, ruling, t0_s=1.0, now_s=clip_frames[-1].t_s).result()
    rec.close()
    assert rec.errors == []
    mp4, meta = clip_paths(tmp_path / "clips", 3, 17)
    assert mp4 == tmp_path / "clips" / "game03" / "shot017.mp4" and meta.name == "shot017.json"
    info = json.loads(meta.read_text())
    assert info["record"] == record and info["ruling"] == ruling
    assert info["clip"]["first_frame"] == 15 and info["clip"]["last_frame"] == 59  # from t0 - 0.5 s
    assert info["clip"]["frames"] == 41 and info["clip"]["codec"] in ("libx264", "libopenh264", "mpeg4")
    with av.open(str(mp4)) as c:
        stream = c.streams.video[0]
        decoded = [(f.pts * stream.time_base, f.to_ndarray(format="bgr24")) for f in c.decode(stream)]
    assert len(decoded) == 41
    times = [float(t) for t, _ in decoded]
    steps = np.round(np.diff(times) * 30).astype(int).tolist()
    assert steps.count(5) == 1 and steps.count(1) == 39  # the hole of four frames is a 5-frame step
    assert abs(float(decoded[0][1].mean()) - 150) < 6  # frame 15 has level 150
    assert sorted(p.name for p in mp4.parent.iterdir()) == ["shot017.json", "shot017.mp4"]  # no temp files left


def test_a_clip_that_cannot_be_written_is_reported_and_leaves_nothing(tmp_path):
    (tmp_path / "clips").write_text("a file where the folder should be")
    rec = ShotRecorder(tmp_path / "clips", fps=30)
    for f in frames(5):
        rec.add(f)
    assert rec.save(1, 1, {}, {}, 0.0, 1.0).result() is None
    rec.close()
    assert len(rec.errors) == 1 and "game01/shot001.mp4" in rec.errors[0]
