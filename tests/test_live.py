"""Live judging: capture thread + bounded queue + scripted vision, faults end in clear messages and intact data."""
import io
import json
import threading
import time

import numpy as np
import pytest

import fake_cv2_capture as fcv
import hardware
from calibration import default_profile
from calibration.calfile import Calibration, save_calibration
from calibration.plane import from_points
from hardware import Frame, FrameGap, open_source
from judge import cli
from judge.journal import Journal
from judge.live import ConsoleAnnouncer, FrameQueue, run_live
from judge.match import Match
from vision.pipeline import Vision
from novuss_shots import make_records, novuss_engine
from rules import parse_record
from rules.hints import Hints
from sim.scripted_vision import ScriptedShot
from test_hardware_sources import write_mp4


class ScriptedPipeline:
    """Stands in for vision (the ``Vision`` seam): shot k (1-based) is reported at the k-th frame index in
    ``at``. With ``open_from``, the next record's shot starts moving at that frame and is never completed:
    only ``finish`` (the stream ended cleanly) would read it as it stands."""

    def __init__(self, raws, at, delay_s=0.0, open_from=None):
        self.records = [parse_record(r) for r in raws]
        self.at = dict(zip(at, range(len(at))))
        self.delay_s = delay_s
        self.open_from = open_from
        self.seen = []
        self.finished = 0
        self.hints = []  # what the judge told it: the start, then after every change
        self.timings = {}

    def start(self, hints, frame, t_s):
        self.hints.append(hints)

    def tell(self, hints):
        self.hints.append(hints)

    def positions(self):
        return {}

    def prepare(self, image):
        return None  # nothing to work out ahead of feed

    def feed(self, frame):
        self.seen.append(frame.index)
        if self.delay_s:
            time.sleep(self.delay_s)
        k = self.at.get(frame.index)
        return ScriptedShot(self.records[k]) if k is not None else None

    @property
    def in_shot(self):
        return self.open_from is not None and bool(self.seen) and self.seen[-1] >= self.open_from

    def finish(self, t_s=None):
        self.finished += 1
        return ScriptedShot(self.records[len(self.at)]) if self.in_shot else None


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


def test_a_shot_cut_off_by_a_broken_recording_is_never_judged(tmp_path):
    """The file breaks off while shot 3 is moving: shots 1 and 2 are judged, shot 3 is not read from its
    partial motion (``finish`` is not asked), and the result says a shot was cut off."""
    path = tmp_path / "cut.mp4"
    write_mp4(path, n=48, faststart=True)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) * 6 // 10])  # 28 of the 48 frames survive
    match, journal = _match(tmp_path)
    pipeline = ScriptedPipeline(make_records(3), at=[3, 8], open_from=20)
    with open_source(str(path)) as src:
        result = run_live(src, pipeline, match)
    assert isinstance(result.error, hardware.TruncatedVideo) and result.error.frames_read == result.frames == 28
    assert result.unfinished and pipeline.finished == 0
    assert result.shots == 2 and [e["payload"]["record"] for e in journal.entries("shot")] == make_records(2)
    journal.close()
    # the same pipeline on a recording that ends cleanly: the open shot is read at the end, as before
    whole = tmp_path / "whole.mp4"
    write_mp4(whole, n=24)
    (tmp_path / "m.sqlite").unlink()
    match, journal = _match(tmp_path)
    pipeline = ScriptedPipeline(make_records(3), at=[3, 8], open_from=20)
    with open_source(str(whole)) as src:
        result = run_live(src, pipeline, match)
    assert result.error is None and not result.unfinished and pipeline.finished == 1 and result.shots == 3
    journal.close()


def _review_record():
    """Shot 1 of make_records with the opponent's B1 touched 3 ms after A1 at low confidence (the
    engine asks for review) and a pawn vision lost from sight (``meta.review``)."""
    raw = make_records(1)[0]
    raw["events"].insert(1, {"t": raw["events"][0]["t"] + 0.003, "kind": "contact", "a": "bat", "b": "B1",
                             "confidence": 0.4})
    raw["meta"] = {"review": [{"piece": "B3", "reason": "lost from sight", "at": [250.0, -100.0]}]}
    return raw


def test_console_announces_review_flags_on_the_call_line(tmp_path):
    from rich.console import Console

    out = io.StringIO()
    match, journal = _match(tmp_path, listeners=[ConsoleAnnouncer(Console(file=out, width=400, highlight=False))])
    match.judge(parse_record(_review_record()))
    match.judge(parse_record(make_records(2)[1]))  # B's shot (A's first ended in a review, not a miss)
    lines = out.getvalue().splitlines()
    calls = [line for line in lines if line.startswith("game ")]
    assert calls[0] == ("game 1 shot 1 player A — REVIEW: First contact too close to call from the video (3.0 ms "
                        "apart): referee to decide. (novuss.II.3); vision: B3 lost from sight at (250, -100) mm, "
                        "kept there: please check")
    assert "  review_first_contact (novuss.II.3) First contact too close to call from the video (3.0 ms apart): " \
           "referee to decide." in lines
    assert "REVIEW" not in calls[1] and calls[1].startswith("game 1 shot 2 player ")
    assert journal.entries("shot")[0]["payload"]["ruling"]["review"] is True
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
    options = {}  # extra ScriptedPipeline settings a test may set before running the command

    def fake_pipeline(calibration, fps, game, background=(), **vision):
        assert calibration.plane.image_size == (96, 64) and fps == 30 and game == "novuss"
        assert vision == {"detector": "classical", "weights": None, "fallback": True}
        made.append(ScriptedPipeline(raws + make_records(4, step_s=0.2)[3:], at=[5, 12, 20], **options))
        return made[-1]

    monkeypatch.setattr(judge.cmd_live, "make_pipeline", fake_pipeline)
    monkeypatch.chdir(tmp_path)
    args = ["live", "--game", "novuss", "--source", str(video), "--calibration", str(cal), "--no-overlay",
            "--journal", str(tmp_path / "j.sqlite")]
    return tmp_path, args, raws, options


def test_live_command_judges_records_clips_and_resumes(live_setup, capsys):
    tmp_path, args, raws, _ = live_setup
    assert cli.main(args) == 0
    out = capsys.readouterr().out
    assert "game 1 shot 3" in out and ("30 frames, 3 shot(s) judged (0 flagged for review), 0 refused (0 review "
                                       "item(s) open for the referee), 0 duplicate(s) already in the journal") in out
    info = json.loads((tmp_path / "clips" / "game01" / "shot002.json").read_text())
    assert info["record"] == raws[1]
    assert info["clip"]["first_frame"] == 0 and info["clip"]["last_frame"] == 12  # 1 s before t0 .. the call
    assert (tmp_path / "clips" / "game01" / "shot002.mp4").stat().st_size > 0
    assert cli.main(args) == 0  # the same match again: resumed after the last shot's frame, nothing judged twice
    out = capsys.readouterr().out
    assert f"resuming {tmp_path / 'j.sqlite'}: game 1, 3 shot(s) already judged; reading on after frame 20" in out
    assert ("9 frames, 0 shot(s) judged (0 flagged for review), 0 refused (0 review item(s) open for the referee), "
            "0 duplicate(s) already in the journal") in out
    with Journal.open(tmp_path / "j.sqlite") as j:
        assert [e["payload"]["record"] for e in j.entries("shot")] == raws


def test_live_command_refuses_a_calibration_for_another_image_size(live_setup, capsys):
    tmp_path, args, raws, _ = live_setup
    good = (tmp_path / "cal.json").read_bytes()
    write_calibration(tmp_path / "cal.json", (1280, 720))
    assert cli.main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("shotjudge live: error: ") and "1280x720" in err and "96x64" in err
    assert not (tmp_path / "j.sqlite").exists()  # nothing written for a match that never started
    # a match under way, resumed with the wrong calibration: refused before the journal is touched
    (tmp_path / "cal.json").write_bytes(good)
    assert cli.main(args) == 0
    before = (tmp_path / "j.sqlite").read_bytes()
    write_calibration(tmp_path / "cal.json", (1280, 720))
    capsys.readouterr()
    assert cli.main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "made for 1280x720 images but the frames are 96x64" in err[0]
    assert (tmp_path / "j.sqlite").read_bytes() == before
    with Journal.open(tmp_path / "j.sqlite") as j:
        assert [e["payload"]["record"] for e in j.entries("shot")] == raws


def test_live_command_on_a_truncated_video_says_what_was_kept(live_setup, capsys):
    tmp_path, args, _, options = live_setup
    options["open_from"] = 24  # a fourth shot is moving when the file breaks off
    video = tmp_path / "match.mp4"
    write_mp4(video, n=48, size=(96, 64), faststart=True)
    data = video.read_bytes()
    video.write_bytes(data[: len(data) * 6 // 10])
    assert cli.main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "the video ends early after" in err and "of 48 frames" in err
    assert "the 3 shot(s) judged before it are in" in err
    assert err.endswith("; the shot in progress when it stopped was not judged")
    with Journal.open(tmp_path / "j.sqlite") as j:
        assert len(j.entries("shot")) == 3


def test_live_command_camera_that_dies_and_comes_back_keeps_the_match(live_setup, monkeypatch, capsys):
    """The webcam vanishes after 12 frames and is back on the second reopen; shots 2 and 3 come after.
    Later it is gone for good: the command ends with one line saying where the match is kept. (The
    source reads one frame at each open to learn the real size, and a camera is opened once more just
    before judging starts, so no frames queue up during the setting up: 27 frames reach the judge.)"""
    tmp_path, args, raws, _ = live_setup
    device = fcv.Device(modes=[(96, 64, 30.0, "MJPG")], frames_until_death=12, refuse_opens=1, gone_after=30)
    clock = fcv.install(monkeypatch, {0: device})
    real_open = hardware.open_source

    def on_fake_clock(*a, **k):  # reopen backoff on the fake camera's clock, not the wall clock
        src = real_open(*a, **k)
        src._sleep = clock.sleep
        return src

    monkeypatch.setattr(hardware, "open_source", on_fake_clock)
    monkeypatch.setenv("COLUMNS", "300")  # one console line per message
    args = [a if a != str(tmp_path / "match.mp4") else "usb:0" for a in args]
    args += ["--size", "96x64", "--fps", "30", "--queue", "100000", "--max-reconnects", "2", "--no-clips"]
    assert cli.main(args) == 2
    captured = capsys.readouterr()
    out = captured.out
    assert "usb:0: the webcam stopped delivering frames" in out
    assert "usb:0: reopen attempt 1 of 2 failed" in out and "usb:0: reopened after 2 attempt(s)" in out
    gap_line = next(line for line in out.splitlines() if line.startswith("frames lost: "))
    assert "missing between #9 and #10" in gap_line and gap_line.endswith(", reconnect)")
    assert "game 1 shot 3" in out
    assert ("27 frames, 3 shot(s) judged (0 flagged for review), 0 refused (0 review item(s) open for the referee), "
            "0 duplicate(s) already in the journal, 23 frame(s) lost in 1 gap(s)") in out
    err = captured.err.strip().splitlines()
    assert err == [f"shotjudge live: error: usb:0: stopped delivering frames and could not be reopened after 2 "
                   f"attempts (last error: usb:0: cannot open the webcam /dev/video0 (not connected, no permission, "
                   f"or in use by another program)); the 3 shot(s) judged before it are in {tmp_path / 'j.sqlite'}; "
                   f"run the same command again to resume"]
    with Journal.open(tmp_path / "j.sqlite") as j:
        assert [e["payload"]["record"] for e in j.entries("shot")] == raws
        gaps = [e["payload"] for e in j.entries("gap")]
    assert len(gaps) == 1 and gaps[0]["reason"] == "reconnect" and (gaps[0]["from_index"], gaps[0]["to_index"]) == (9, 10)


def test_the_real_vision_pipeline_plugs_into_the_live_seam(tmp_path):
    import judge.cmd_live
    from calibration.calfile import load_calibration

    write_calibration(tmp_path / "cal.json", (96, 64))
    cal = load_calibration(tmp_path / "cal.json", expected_image_size=(96, 64))
    layout = novuss_engine().initial().to_dict()["positions"]
    empty = np.full((64, 96, 3), 90, np.uint8)
    with pytest.raises(judge.cmd_live.UserError, match="needs --background"):
        judge.cmd_live.make_pipeline(cal, 30.0, "novuss")
    pipeline = judge.cmd_live.make_pipeline(cal, 30.0, "novuss", background=[empty])
    assert isinstance(pipeline, Vision)
    pipeline.start(Hints("A", layout), 0, 0.0)
    still = [Frame(empty.copy(), i, i / 30, "t") for i in range(3)]
    assert [pipeline.feed(f) for f in still] == [None, None, None]  # nothing moves: no shot
    assert pipeline.finish() is None


def test_live_command_with_a_bad_empty_board_picture_leaves_no_journal(live_setup, capsys):
    tmp_path, args, _, _ = live_setup
    assert cli.main(args + ["--background", str(tmp_path / "missing.png")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "missing.png" in err[0]
    assert not (tmp_path / "j.sqlite").exists()  # nothing half-made: the journal comes after the checks


class PreparingPipeline(ScriptedPipeline):
    """A vision with ``prepare``: records on which thread it ran and what ``feed`` got back."""

    def __init__(self, *args, fail_at=None, **kw):
        super().__init__(*args, **kw)
        self.fail_at, self.threads, self.prepared = fail_at, set(), []

    def prepare(self, image):
        self.threads.add(threading.current_thread().name)
        if self.fail_at is not None and int(image[0, 0, 0]) == self.fail_at:
            raise RuntimeError("a fault the judging thread is to meet and report")
        return ("prepared", int(image[0, 0, 0]))

    def feed(self, frame):
        self.prepared.append(frame.prepared)
        return super().feed(frame)


class _Numbered:
    """A recorded source of frames whose first pixel is their index."""

    live, name, fps = False, "numbered", 30.0

    def __init__(self, n):
        self.i, self.n = 0, n

    def read(self):
        if self.i >= self.n:
            return None
        image = np.full((2, 2, 3), self.i, np.uint8)
        self.i += 1
        return Frame(image, self.i - 1, (self.i - 1) / 30, "numbered")


def test_vision_prepares_each_frame_on_the_capture_thread_and_gets_it_back_with_the_frame(tmp_path):
    match, journal = _match(tmp_path)
    pipeline = PreparingPipeline(make_records(1), at=[5], fail_at=7)
    result = run_live(_Numbered(12), pipeline, match)
    assert result.frames == 12 and result.shots == 1 and result.error is None
    assert pipeline.threads == {"capture"}
    # a prepare that fails leaves the frame as it is (vision does the work itself, on the judging thread)
    assert pipeline.prepared == [("prepared", i) if i != 7 else None for i in range(12)]
    journal.close()
