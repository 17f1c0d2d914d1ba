"""Live judging: capture thread + bounded queue + scripted vision, faults end in clear messages and intact data."""
import json
import threading
import time

import numpy as np
import pytest

import fake_cv2_capture as fcv
from calibration import default_profile
from calibration.calfile import Calibration, save_calibration
from calibration.plane import from_points
from hardware import Frame, FrameGap, ImageFolderSource, open_source
from judge import cli
from judge.journal import Journal
from judge.live import FrameQueue, run_live
from judge.match import Match
from novuss_shots import make_records, novuss_engine
from rules import parse_record
from test_hardware_sources import write_mp4


class ScriptedPipeline:
    """Stands in for vision: shot k (1-based) is reported at the k-th frame index in ``at``."""

    def __init__(self, raws, at, delay_s=0.0):
        self.records = [parse_record(r) for r in raws]
        self.at = dict(zip(at, range(len(at))))
        self.delay_s = delay_s
        self.seen = []

    def feed(self, frame):
        self.seen.append(frame.index)
        if self.delay_s:
            time.sleep(self.delay_s)
        k = self.at.get(frame.index)
        return [self.records[k]] if k is not None else []


def frame(i, t=None):
    return Frame(np.zeros((2, 2, 3), np.uint8), i, i / 30 if t is None else t, "t")


def test_queue_drops_oldest_frames_for_cameras_and_never_drops_events():
    q = FrameQueue(2)
    gap = FrameGap(0, 0.0, 5, 0.2, 4)
    assert q.put(frame(0)) is None and q.put(gap) is None and q.put(frame(1)) is None
    assert q.put(frame(2)).index == 0 and q.put(frame(3)).index == 1
    assert q.dropped == 2
    q.close()
    items = [q.get(), q.get(), q.get(), q.get()]
    assert items[0] is gap and [i.index for i in items[1:3]] == [2, 3] and items[3] is None


def test_queue_blocks_for_recordings_instead_of_losing_frames():
    q = FrameQueue(1, "block")
    q.put(frame(0))
    done = threading.Event()
    threading.Thread(target=lambda: (q.put(frame(1)), done.set()), daemon=True).start()
    assert not done.wait(0.1)  # full: the producer waits
    assert q.get().index == 0
    assert done.wait(1.0) and q.get().index == 1 and q.dropped == 0


def _match(tmp_path, listeners=None):
    journal = Journal.open(tmp_path / "m.sqlite", create=True, match={"game": "novuss"})
    return Match(novuss_engine(), journal, listeners=listeners), journal


def test_camera_that_dies_mid_match_and_comes_back_loses_no_shot(tmp_path, monkeypatch):
    clock = fcv.install(monkeypatch, {0: fcv.Device(modes=[(64, 48, 30.0, "MJPG")], frames_until_death=12,
                                                    refuse_opens=1)})
    raws = make_records(4)
    pipeline = ScriptedPipeline(raws, at=[5, 10, 15, 20])  # shots 3 and 4 come after the camera is back
    match, journal = _match(tmp_path)
    src = open_source("usb:0", size=(64, 48), fps=30)
    src._sleep = clock.sleep
    stop = threading.Event()
    with src:
        # the fake camera runs faster than real time: a queue that never fills keeps every frame
        result = run_live(src, pipeline, match, stop=stop, queue_size=100000,
                          on_frame=lambda f: f.index >= 24 and stop.set())
    assert result.error is None and result.shots == 4
    assert src.reconnects == 1
    entries = journal.entries()
    assert [e["shot_no"] for e in entries if e["kind"] == "shot"] == [1, 2, 3, 4]
    gaps = [e["payload"] for e in entries if e["kind"] == "gap"]
    assert len(gaps) == 1 and gaps[0]["reason"] == "reconnect" and gaps[0]["count"] >= 1
    assert pipeline.seen[:25] == list(range(25))  # frame indices continue across the reconnect
    journal.close()


def test_slow_judging_on_a_camera_drops_oldest_and_reports_it(tmp_path, monkeypatch):
    fcv.install(monkeypatch, {0: fcv.Device(modes=[(64, 48, 30.0, "MJPG")])})
    match, journal = _match(tmp_path)
    pipeline = ScriptedPipeline([], at=[], delay_s=0.02)
    stop = threading.Event()
    with open_source("usb:0", size=(64, 48), fps=30) as src:
        result = run_live(src, pipeline, match, queue_size=2, stop=stop,
                          on_frame=lambda f: len(pipeline.seen) >= 15 and stop.set())
    queue_gaps = [g for g in result.gaps if g.reason == "queue"]
    assert result.dropped > 0 and queue_gaps
    journalled = [e["payload"] for e in journal.entries("gap")]
    assert [g for g in journalled if g["reason"] == "queue"] == [g.to_dict() for g in queue_gaps]
    # every frame the judge skipped is accounted for: seen + reported gaps cover the whole range
    assert sum(g.count for g in queue_gaps) == pipeline.seen[-1] + 1 - len(pipeline.seen)
    journal.close()


def test_truncated_recording_keeps_the_shots_before_the_cut(tmp_path):
    path = tmp_path / "cut.mp4"
    write_mp4(path, n=48, faststart=True)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) * 6 // 10])
    match, journal = _match(tmp_path)
    pipeline = ScriptedPipeline(make_records(3), at=[3, 8, 45])
    with open_source(str(path)) as src:
        result = run_live(src, pipeline, match)
    assert result.error is not None and "ends early" in str(result.error)
    assert result.shots == 2 and len(journal.entries("shot")) == 2
    journal.close()


# ----- the command ---------------------------------------------------------------------------------
def write_calibration(path, size):
    w, h = size
    profile = default_profile("novuss")
    half = profile["surface_mm"] / 2
    fit = from_points([[4, h - 4], [w - 4, h - 4], [w - 4, 4], [4, 4]],
                      [[-half, -half], [half, -half], [half, half], [-half, half]], size,
                      [[w, 0, w / 2], [0, w, h / 2], [0, 0, 1]], [0, 0, 0, 0, 0])
    save_calibration(Calibration.from_fit(profile, fit, intrinsics_source="nominal"), path)


@pytest.fixture
def live_setup(tmp_path, monkeypatch):
    import judge.cmd_live

    video = tmp_path / "match.mp4"
    write_mp4(video, n=30, size=(96, 64))
    cal = tmp_path / "cal.json"
    write_calibration(cal, (96, 64))
    raws = make_records(3, step_s=0.2)  # shot times in the video's time: shot k starts at 0.2 (k-1) s
    made = []

    def fake_pipeline(calibration, fps, game, layout=None, on_error=None, background=()):
        assert calibration.plane.image_size == (96, 64) and fps == 30 and game == "novuss"
        made.append(ScriptedPipeline(raws, at=[5, 12, 20]))
        return made[-1]

    monkeypatch.setattr(judge.cmd_live, "make_pipeline", fake_pipeline)
    monkeypatch.chdir(tmp_path)
    args = ["live", "--game", "novuss", "--source", str(video), "--calibration", str(cal), "--no-overlay",
            "--journal", str(tmp_path / "j.sqlite")]
    return tmp_path, args, raws


def test_live_command_judges_records_clips_and_resumes(live_setup, capsys):
    tmp_path, args, raws = live_setup
    assert cli.main(args) == 0
    out = capsys.readouterr().out
    assert "game 1 shot 3" in out and "3 shot(s) judged, 0 already in the journal" in out
    info = json.loads((tmp_path / "clips" / "game01" / "shot002.json").read_text())
    assert info["record"] == raws[1]
    assert info["clip"]["first_frame"] == 0 and info["clip"]["last_frame"] == 12  # 1 s before t0 .. the call
    assert (tmp_path / "clips" / "game01" / "shot002.mp4").stat().st_size > 0
    assert cli.main(args) == 0  # the same match again: resumed, nothing judged twice
    out = capsys.readouterr().out
    assert "resuming" in out and "0 shot(s) judged, 3 already in the journal" in out
    with Journal.open(tmp_path / "j.sqlite") as j:
        assert [e["payload"]["record"] for e in j.entries("shot")] == raws


def test_live_command_refuses_a_calibration_for_another_image_size(live_setup, capsys):
    tmp_path, args, _ = live_setup
    write_calibration(tmp_path / "cal.json", (1280, 720))
    assert cli.main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("shotjudge live: error: ") and "1280x720" in err and "96x64" in err
    assert not (tmp_path / "j.sqlite").exists()  # nothing written for a match that never started


def test_live_command_on_a_truncated_video_says_what_was_kept(live_setup, capsys):
    tmp_path, args, _ = live_setup
    video = tmp_path / "match.mp4"
    write_mp4(video, n=48, size=(96, 64), faststart=True)
    data = video.read_bytes()
    video.write_bytes(data[: len(data) * 6 // 10])
    assert cli.main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "the video ends early after" in err and "of 48 frames" in err
    assert "the 3 shot(s) judged before it are in" in err
    with Journal.open(tmp_path / "j.sqlite") as j:
        assert len(j.entries("shot")) == 3


def test_the_real_vision_pipeline_plugs_into_the_live_seam(tmp_path):
    import judge.cmd_live
    from calibration.calfile import load_calibration

    write_calibration(tmp_path / "cal.json", (96, 64))
    cal = load_calibration(tmp_path / "cal.json", expected_image_size=(96, 64))
    layout = novuss_engine().initial().to_dict()["positions"]
    empty = np.full((64, 96, 3), 90, np.uint8)
    with pytest.raises(judge.cmd_live.UserError, match="needs --background"):
        judge.cmd_live.make_pipeline(cal, 30.0, "novuss", layout=layout)
    pipeline = judge.cmd_live.make_pipeline(cal, 30.0, "novuss", layout=layout, background=[empty])
    still = [Frame(empty.copy(), i, i / 30, "t") for i in range(3)]
    assert [pipeline.feed(f) for f in still] == [[], [], []]  # nothing moves: no shot
    assert pipeline.finish() == []
