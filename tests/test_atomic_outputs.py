"""Every verb's outputs are whole or absent: a disk that fills up mid-write gives one line naming the file,
exit 2, and leaves the folder exactly as it was (no partial output, no temporary file, an older output intact)."""
import builtins
import errno
import fnmatch
import io
import json
from pathlib import Path

import cv2
import numpy as np
import pytest

import judge.replay as replay_mod
import sim.video
from judge import cli
from judge.journal import Journal
from replay_helpers import ScriptedVision, filmed_scenario
from test_live import live_setup  # noqa: F401 - the live command's fixture

ENOSPC = "No space left on device"


class _Disk:
    """Files opened for writing under ``folder`` whose name matches ``pattern`` share ``room`` bytes; the
    write that needs more writes what fits and fails as a full disk does (ENOSPC, no file name)."""

    def __init__(self, folder: Path, room: int, pattern: str):
        self.folder, self.room, self.pattern = str(folder.resolve()), room, pattern

    def covers(self, file, mode: str) -> bool:
        if isinstance(file, int) or not any(c in mode for c in "wax+"):
            return False
        path = str(Path(file).resolve())
        return path.startswith(self.folder) and fnmatch.fnmatch(Path(path).name, self.pattern)


class _FillingFile:
    def __init__(self, fh, disk: _Disk):
        self._fh, self._disk = fh, disk

    def write(self, data):
        if len(data) > self._disk.room:
            self._fh.write(data[: self._disk.room])
            self._fh.flush()
            self._disk.room = 0
            raise OSError(errno.ENOSPC, ENOSPC)
        self._disk.room -= len(data)
        return self._fh.write(data)

    def __getattr__(self, name):
        return getattr(self._fh, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._fh.close()


@pytest.fixture
def full_disk(monkeypatch):
    """``full_disk(folder, room=0, pattern="*")``: from now on the disk under ``folder`` holds ``room`` more
    bytes of the files matching ``pattern`` (Python's own writes: open, pathlib, PIL)."""
    real = io.open

    def fill(folder, room=0, pattern="*"):
        disk = _Disk(Path(folder), room, pattern)

        def opener(file, mode="r", *args, **kwargs):
            fh = real(file, mode, *args, **kwargs)
            return _FillingFile(fh, disk) if disk.covers(file, mode) else fh

        monkeypatch.setattr(io, "open", opener)
        monkeypatch.setattr(builtins, "open", opener)
        return disk

    return fill


def listing(folder: Path) -> dict[str, bytes | None]:
    """Everything under ``folder`` (hidden too): each file with its content, each folder with None."""
    return {str(p.relative_to(folder)): p.read_bytes() if p.is_file() else None for p in sorted(folder.rglob("*"))}


def old_outputs(folder: Path, *names: str) -> dict[str, bytes]:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(f"older {name}".encode())
    return listing(folder)


def one_line(capsys, verb: str) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith(f"shotjudge {verb}: error: ")
    return err.strip()


# ----- replay --report / --overlay ------------------------------------------------------------------------
FPS = 30.0


@pytest.fixture(scope="module")
def clip(tmp_path_factory):
    d = tmp_path_factory.mktemp("clip")
    return d, filmed_scenario(d, "novuss", "opponent-first", seed=1, fps=FPS, size=(320, 180))


@pytest.fixture
def replay(clip, monkeypatch, tmp_path):
    d, demo = clip
    monkeypatch.setattr(replay_mod, "make_vision", lambda cal, bg: ScriptedVision(demo, FPS))
    out = tmp_path / "out"
    before = old_outputs(out, "report.json", "report_files/shot001_first_contact.png", "o.mp4")
    args = ["replay", str(d / "video.mp4"), "--game", "novuss", "--calibration", str(d / "calibration.json"),
            "--background", str(d / "empty-board.png"), "--state", str(d / "start-state.json"), "--quiet",
            "--report", str(out / "report.json"), "--overlay", str(out / "o.mp4")]
    return out, before, args


def test_replay_writes_report_crops_and_overlay_over_older_ones(replay):
    out, before, args = replay
    assert cli.main(args) == 0
    after = listing(out)
    crops = [f"report_files/{e['image'].split('/')[-1]}" for e in json.loads(after["report.json"])["shots"][0]["evidence"]]
    assert sorted(after) == sorted(["o.mp4", "report.json", "report_files"] + crops)
    assert all(after[k] != v for k, v in before.items() if k in after and v is not None)
    assert (out / "report.json").stat().st_mode & 0o777 == (out / "o.mp4").stat().st_mode & 0o777  # not private


@pytest.mark.parametrize("pattern, room, failed", [
    ("*.png", 100, "report_files/shot001_"),  # the first evidence crop
    ("*.json", 2000, "report.json"),          # the report, after every crop and the overlay were written
])
def test_replay_on_a_full_disk_leaves_the_older_outputs(replay, full_disk, capsys, pattern, room, failed):
    out, before, args = replay
    full_disk(out, room, pattern)
    assert cli.main(args) == 2
    err = one_line(capsys, "replay")
    assert err.startswith(f"shotjudge replay: error: {out / failed}") and err.endswith(f": {ENOSPC}")
    assert listing(out) == before


def test_replay_overlay_failing_mid_video_leaves_the_older_outputs(replay, monkeypatch, capsys):
    out, before, args = replay
    real, written = sim.video.VideoWriter._write, []

    def filling(self, bgr):
        if len(written) == 5:
            raise OSError(errno.ENOSPC, ENOSPC)  # as FFmpeg's muxer reports it, once frames are in the file
        written.append(real(self, bgr))

    monkeypatch.setattr(sim.video.VideoWriter, "_write", filling)
    assert cli.main(args) == 2
    assert one_line(capsys, "replay") == f"shotjudge replay: error: {out / 'o.mp4'}: {ENOSPC}"
    assert listing(out) == before


def test_a_video_whose_last_flush_fails_is_not_kept(tmp_path, monkeypatch):
    """The encoder takes frames, then the disk fills at the close: the video is not renamed into place."""
    class Stream:
        def encode(self, frame=None):
            return []

    class Container:
        def mux(self, packet):
            pass

        def close(self):
            raise OSError(errno.ENOSPC, ENOSPC)

    def fake_open(self):
        Path(self._tmp).write_bytes(b"half a video")
        self._container, self._stream, self.codec = Container(), Stream(), "fake"

    monkeypatch.setattr(sim.video.VideoWriter, "_open", fake_open)
    before = old_outputs(tmp_path, "v.mp4")
    with pytest.raises(OSError) as exc:
        with sim.video.VideoWriter(tmp_path / "v.mp4", 30, (16, 16)) as video:
            video.write(np.zeros((16, 16, 3), np.uint8))
    assert (exc.value.errno, exc.value.filename) == (errno.ENOSPC, str(tmp_path / "v.mp4"))
    assert listing(tmp_path) == before


# ----- calibrate --out / --preview ------------------------------------------------------------------------
@pytest.fixture
def calibrate(tmp_path):
    source = tmp_path / "table.png"
    cv2.imwrite(str(source), np.full((180, 320, 3), 90, np.uint8))
    out = tmp_path / "out"
    before = old_outputs(out, "cal.json", "preview.png")
    args = ["calibrate", "--game", "novuss", "--source", str(source), "--hfov", "70",
            "--points", "40,170;280,170;280,10;40,10", "--out", str(out / "cal.json"), "--preview", str(out / "preview.png")]
    return out, before, args


@pytest.mark.parametrize("pattern, failed", [("*.json", "cal.json"), ("*.png", "preview.png")])
def test_calibrate_on_a_full_disk_writes_neither_file(calibrate, full_disk, capsys, pattern, failed):
    out, before, args = calibrate
    full_disk(out, 100, pattern)
    assert cli.main(args) == 2
    assert one_line(capsys, "calibrate") == f"shotjudge calibrate: error: {out / failed}: {ENOSPC}"
    assert listing(out) == before


def test_calibrate_checks_the_preview_before_writing_anything(calibrate, capsys):
    out, before, args = calibrate
    assert cli.main(args[:-1] + [str(out / "preview.jpg")]) == 2
    assert one_line(capsys, "calibrate") == "shotjudge calibrate: error: --preview must be a .png file"
    assert listing(out) == before
    assert cli.main(args) == 0
    assert json.loads((out / "cal.json").read_text())["schema"] == "shotjudge.calibration/1"
    assert cv2.imread(str(out / "preview.png")).shape == (180, 320, 3)


# ----- markers --out --------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, room", [("sheets.pdf", 3000), ("sheets.png", 3000)])
def test_markers_on_a_full_disk_leave_the_older_sheets(tmp_path, full_disk, capsys, name, room):
    out = tmp_path / "out"
    before = old_outputs(out, name, name.replace(".", "-2."))
    full_disk(out, room)
    assert cli.main(["markers", "--game", "novuss", "--dpi", "72", "--out", str(out / name)]) == 2
    assert one_line(capsys, "markers") == f"shotjudge markers: error: {out / name}: {ENOSPC}"
    assert listing(out) == before


def test_sheets_of_several_pages_are_written_all_or_none(tmp_path, full_disk):
    from PIL import Image

    from calibration.sheets import save_pages

    page = Image.new("L", (600, 800), 255)
    first = io.BytesIO()
    page.save(first, "PNG", dpi=(72, 72))
    before = old_outputs(tmp_path, "s.png", "s-2.png")
    full_disk(tmp_path, len(first.getvalue()) + 10)  # the first page fits, the second does not
    with pytest.raises(OSError) as exc:
        save_pages([page, page], tmp_path / "s.png", 72)
    assert (exc.value.errno, exc.value.filename) == (errno.ENOSPC, str(tmp_path / "s-2.png"))
    assert listing(tmp_path) == before


# ----- demo --out -----------------------------------------------------------------------------------------
def test_demo_on_a_full_disk_leaves_the_older_demo(tmp_path, full_disk, capsys):
    out = tmp_path / "demo"
    before = old_outputs(out, "novuss/video.mp4", "novuss/report.json", "novuss/report_files/shot001_first_contact.png")
    full_disk(tmp_path, 10, "*.png")  # the empty board's picture, the first file a game writes
    assert cli.main(["demo", "--quick", "--game", "novuss", "--size", "320x240", "--fps", "10", "--out", str(out)]) == 2
    assert one_line(capsys, "demo") == f"shotjudge demo: error: {out / 'novuss' / 'empty-board.png'}: {ENOSPC}"
    assert listing(out) == before and [p.name for p in tmp_path.iterdir()] == ["demo"]


def test_demo_refuses_a_folder_of_someone_elses_before_any_work(tmp_path, capsys):
    out = tmp_path / "demo"
    before = old_outputs(out, "novuss/notes.txt")
    assert cli.main(["demo", "--quick", "--game", "novuss", "--out", str(out)]) == 2
    assert "is not empty and not a previous output of this command (it holds notes.txt)" in one_line(capsys, "demo")
    assert listing(out) == before


# ----- sim --out ------------------------------------------------------------------------------------------
def test_sim_on_a_full_disk_leaves_the_older_output(tmp_path, full_disk, capsys):
    out = tmp_path / "out"
    base = ["sim", "novuss", "--scenario", "bat-off", "--no-video", "--out", str(out)]
    assert cli.main(base) == 0
    capsys.readouterr()
    before = listing(tmp_path)
    full_disk(tmp_path, 1000, "*.json")  # truth.json
    assert cli.main(base[:-2] + ["--seed", "3", "--out", str(out)]) == 2
    assert one_line(capsys, "sim") == f"shotjudge sim: error: cannot write {out / 'truth.json'}: {ENOSPC}"
    assert listing(tmp_path) == before


# ----- live: the journal, and a crash report --------------------------------------------------------------
def test_live_on_a_full_disk_keeps_the_journal_whole_and_says_so_in_one_line(live_setup, monkeypatch, capsys):  # noqa: F811
    tmp_path, args, raws, _ = live_setup
    real = Journal.open

    def tight(*a, **kw):  # the journal may grow by one page: SQLite's own "database or disk is full"
        j = real(*a, **kw)
        pages = j._conn.execute("PRAGMA page_count").fetchone()[0]
        j._conn.execute(f"PRAGMA max_page_count={pages + 1}")
        return j

    monkeypatch.setattr(Journal, "open", tight)
    assert cli.main(args + ["--no-clips"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"shotjudge live: error: {tmp_path / 'j.sqlite'}: cannot write "
                                                   f"the journal (database or disk is full); every entry before this "
                                                   f"one is kept")
    monkeypatch.undo()
    with Journal.open(tmp_path / "j.sqlite") as j:
        assert j._conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        shots = [e["payload"]["record"] for e in j.entries("shot")]
        assert shots == raws[: len(shots)] and len(shots) < len(raws)


@pytest.mark.parametrize("failing", ["clip", "json"])
def test_live_clips_on_a_full_disk_are_reported_and_leave_the_older_ones(tmp_path, monkeypatch, full_disk, failing):
    import judge.recorder
    from hardware import Frame

    game = tmp_path / "clips" / "game01"
    before = old_outputs(game, "shot001.mp4", "shot001.json")
    if failing == "clip":
        def encode(tmp, *args):  # FFmpeg's muxer filling the disk, half a clip in the file
            Path(tmp).write_bytes(b"half a clip")
            raise OSError(errno.ENOSPC, ENOSPC, tmp)

        monkeypatch.setattr(judge.recorder, "_encode", encode)
    else:
        full_disk(game, 10, "*.json")
    with judge.recorder.ShotRecorder(tmp_path / "clips", fps=30) as rec:
        for i in range(5):
            rec.add(Frame(np.zeros((16, 16, 3), np.uint8), i, i / 30, "t"))
        assert rec.save(1, 1, {}, {}, 0.0, 1.0).result() is None
    assert rec.errors == [f"{game / 'shot001.mp4'}: OSError: [Errno 28] {ENOSPC}: "
                          f"'{game / ('shot001.mp4' if failing == 'clip' else 'shot001.json')}'"]
    assert listing(game) == before


def test_a_crash_report_the_disk_refuses_leaves_no_half_file(monkeypatch, capsys, tmp_path, full_disk):
    import tempfile

    import judge.cmd_referee

    monkeypatch.setattr(judge.cmd_referee, "run", lambda args: {}["no such key"])
    monkeypatch.delenv("SHOTJUDGE_TRACEBACK", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    real_fdopen = __import__("os").fdopen

    def fdopen(fd, *a, **kw):  # the crash file is opened from mkstemp's descriptor
        return _FillingFile(real_fdopen(fd, *a, **kw), _Disk(tmp_path, 20, "*"))

    monkeypatch.setattr("os.fdopen", fdopen)
    assert cli.main(["referee", "--game", "novuss", "x.json"]) == 70
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == ("shotjudge referee: internal error: KeyError: 'no such key' (the trace could not "
                                    "be written to a file; please report it)")
    assert list(tmp_path.iterdir()) == []


def test_an_output_reaches_the_disk_before_its_name_does(tmp_path, monkeypatch):
    """A power cut must leave the old file or the new one: each file's data is flushed before the renames,
    and its folder's entry after them (a rename alone can reach the disk before the data it names)."""
    import os as os_mod

    from calibration import atomic

    events = []
    real_fsync, real_replace = os_mod.fsync, os_mod.replace

    def fsync(fd):
        events.append(("fsync", os_mod.readlink(f"/proc/self/fd/{fd}")))
        return real_fsync(fd)

    def replace(src, dst):
        events.append(("rename", str(dst)))
        return real_replace(src, dst)

    monkeypatch.setattr(atomic.os, "fsync", fsync)
    monkeypatch.setattr(atomic.os, "replace", replace)
    with atomic.staged_files() as stage:
        stage.file(tmp_path / "a.json", lambda t: open(t, "w").write("{}"))
        stage.file(tmp_path / "b.json", lambda t: open(t, "w").write("[]"))
    kinds = [k for k, _ in events]
    assert kinds == ["fsync", "fsync", "rename", "rename", "fsync"], events
    assert [os_mod.path.dirname(p) for k, p in events[:2]] == [str(tmp_path)] * 2  # the temporary files
    assert events[2:] == [("rename", str(tmp_path / "a.json")), ("rename", str(tmp_path / "b.json")),
                          ("fsync", str(tmp_path))]
    assert (tmp_path / "a.json").read_text() == "{}" and (tmp_path / "b.json").read_text() == "[]"
