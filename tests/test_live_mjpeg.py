"""``shotjudge live`` from a real MJPEG stream: an HTTP server on loopback (tests/mjpeg_server.py) serves a
filmed Novuss stretch in real time with jittered send times, some frames dropped and some sent twice,
and a real ``live`` process judges it through OpenCV's FFmpeg backend, its frames stamped on arrival.
Shot by shot its calls equal those of ``live`` on the same JPEG frames at their exact times (a video file
of those very JPEGs), or the differing shot is flagged for the referee (a review call, vision review
items in the record, or the shot refused) — never silently different; and it judges at least all but
one of the shots.

The frames are the same to the bit: the stream's, decoded by OpenCV's FFmpeg, and the file's, decoded by
PyAV's FFmpeg, are the same JPEGs through the same decoder (checked when this test was written); only
their times differ.

The recording: ``judge.demo``'s Novuss stretch (three shots), filmed at 30 frames/s, 960x540, with two
seconds of the still table before (a stream is not opened on the first shot) and after the shots (the
last shot must end while the stream still runs: when the server closes the connection the source is
lost, and a shot cut off there is not judged).
"""
from __future__ import annotations

import os
import random
import re
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import pytest

from mjpeg_server import MjpegServer, jittered_schedule

ROOT = Path(__file__).resolve().parents[1]
FPS, SIZE = 30.0, (960, 540)
SHOTS = 3
LEAD_S = TAIL_S = 2.0
JPEG_QUALITY = 90
JITTER_S = 0.003
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    """The filmed stretch as JPEG images (what the server sends) and as an MJPEG video of the same JPEG
    bytes (what the exact-time run reads: decoded by FFmpeg's decoder, as the stream is)."""
    import av
    import cv2

    from judge.demo import film, simulate

    folder = tmp_path_factory.mktemp("mjpeg")
    demo = simulate("novuss", SHOTS)
    film(demo, folder / "film", FPS, SIZE)
    with av.open(str(demo.files["video"])) as c:
        images = [f.to_ndarray(format="bgr24") for f in c.decode(video=0)]
    lead, tail = int(LEAD_S * FPS), int(TAIL_S * FPS)
    images = [images[0]] * lead + images + [images[-1]] * tail
    jpegs = [cv2.imencode(".jpg", im, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])[1].tobytes() for im in images]
    video = folder / "frames.mkv"
    with av.open(str(video), "w") as out:
        stream = out.add_stream("mjpeg", rate=Fraction(int(FPS)))
        stream.width, stream.height, stream.pix_fmt = SIZE[0], SIZE[1], "yuvj420p"
        for i, data in enumerate(jpegs):
            packet = av.Packet(data)
            packet.stream, packet.pts, packet.dts, packet.duration = stream, i, i, 1
            packet.time_base, packet.is_keyframe = Fraction(1, int(FPS)), True
            out.mux(packet)
    return {"demo": demo, "jpegs": jpegs, "video": video, "truth": demo.truth}


def _command(demo, source: str, journal: Path, *extra: str) -> list[str]:
    f = demo.files
    return [sys.executable, "-m", "judge.cli", "live", "--game", "novuss", "--source", source,
            "--calibration", str(f["calibration"]), "--background", str(f["background"]), "--state", str(f["state"]),
            "--journal", str(journal), "--no-overlay", "--no-clips", *extra]


ENV = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "300"}


def _journal(path: Path) -> dict:
    """The judged shots and the refused ones in order (``ruling`` None for a refused one), and the gaps."""
    from judge.journal import Journal

    shots, gaps = [], []
    with Journal.open(path) as j:
        for e in j.entries():
            p = e["payload"]
            if e["kind"] == "shot":
                shots.append({"ruling": p["ruling"], "record": p["record"]})
            elif e["kind"] == "refused" or e["kind"] == "note" and "error" in p:
                shots.append({"ruling": None, "record": p.get("record", {}), "error": p["error"]})
            elif e["kind"] == "gap":
                gaps.append(p)
    return {"shots": shots, "gaps": gaps}


def flagged(shot: dict) -> list[str]:
    """Why the referee is asked to look at this shot (nothing: it stands as called)."""
    if shot["ruling"] is None:
        return [f"refused: {shot.get('error', '')}"]
    ruling = shot["ruling"]
    why = [f"review call {c['code']}" for c in ruling.get("calls", []) if c.get("review")]
    if ruling.get("review") and not why:
        why.append("ruling flagged for review")
    why += [f"vision: {item.get('code')} {item.get('piece', '')}".rstrip() if isinstance(item, dict) else f"vision: {item}"
            for item in (shot["record"].get("meta") or {}).get("review") or []]
    return why


def codes(shot: dict) -> list[str] | None:
    return None if shot["ruling"] is None else [c["code"] for c in shot["ruling"]["calls"]]


def _frame_time(sent: list[tuple[int, float]], t: float) -> float:
    """The exact time (index / fps) of the frame the stream run stamped ``t``: the last one the server had
    sent by then (a frame arrives a few ms after it is written; the gap to the next send is 33 ms)."""
    index = sent[0][0]
    for i, at in sent:
        if at > t:
            break
        index = i
    return index / FPS


def _pair(exact: list[dict], streamed: list[dict], sent) -> tuple[list[tuple[int | None, int | None]], list[str]]:
    """Each exact-time shot with the stream run's shot that started within 0.5 s of it (None: none did),
    then the stream run's shots that match none; and one line per pair for the report."""
    used, pairs = set(), []
    times = [_frame_time(sent, s["record"]["t0"]) if "t0" in s["record"] else None for s in streamed]
    for i, e in enumerate(exact):
        near = [j for j, t in enumerate(times) if j not in used and t is not None and abs(t - e["record"]["t0"]) < 0.5]
        j = min(near, key=lambda j: abs(times[j] - e["record"]["t0"])) if near else None
        if j is not None:
            used.add(j)
        pairs.append((i, j))
    pairs += [(None, j) for j in range(len(streamed)) if j not in used]
    lines = []
    for i, j in pairs:
        e = exact[i] if i is not None else None
        s = streamed[j] if j is not None else None
        left = f"exact shot {i + 1} t0={e['record']['t0']:.3f}s {codes(e)}" if e else "exact: (none)"
        right = (f"stream shot {j + 1} t0={times[j]:.3f}s {codes(s)}" + (f" flagged: {flagged(s)}" if flagged(s) else "")
                 if s else "stream: (not judged)")
        verdict = ("same" if e and s and s["ruling"] == e["ruling"] else "DIFFERENT" if e and s else "missing" if e else "extra")
        lines.append(f"{left:<60} | {right} | {verdict}")
    return pairs, lines


def _schedule(n: int, seed: int = 15):
    """±3 ms jitter on every frame; about 3 % of the frames dropped and 2 % sent twice, at random but never
    in the first and last second (the stream's start and its end on the still table)."""
    rng = random.Random(seed)
    middle = range(int(FPS), n - int(FPS))
    drop = sorted(rng.sample(middle, n * 3 // 100))
    repeat = sorted(rng.sample([i for i in middle if i not in drop], n * 2 // 100))
    return jittered_schedule(n, FPS, jitter_s=JITTER_S, drop=drop, repeat=repeat, seed=seed)


def test_live_from_a_real_mjpeg_stream_calls_as_at_exact_times_or_flags_the_shot(recording, tmp_path):
    demo, jpegs = recording["demo"], recording["jpegs"]

    # the exact-time run: the same JPEG frames from a file, at index / fps
    t = time.perf_counter()
    done = subprocess.run(_command(demo, str(recording["video"]), tmp_path / "exact.sqlite"), capture_output=True,
                          text=True, timeout=300, env=ENV, cwd=tmp_path)
    exact_s = time.perf_counter() - t
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    exact = _journal(tmp_path / "exact.sqlite")["shots"]
    assert len(exact) == SHOTS and all(s["ruling"] is not None for s in exact), done.stdout[-3000:]

    # the stream run: the same frames served live over HTTP, jittered, some dropped, some twice
    schedule = _schedule(len(jpegs))
    with MjpegServer(jpegs, schedule) as server:
        cmd = _command(demo, server.url, tmp_path / "stream.sqlite", "--fps", str(FPS), "--max-reconnects", "1")
        t = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=ENV, cwd=tmp_path)
        stream_s = time.perf_counter() - t
        assert server.finished.is_set() and server.error is None, f"the stream broke off: {server.error!r}"
        sent = list(server.sent)
    out = proc.stdout + proc.stderr
    # the judge probes the stream, sets up, then connects again: it gets every send from then on to the end
    sends = [i for i, _ in schedule.sends]
    # (on a loaded machine the setting up takes seconds: what matters is that it connected before the first stroke)
    assert [i for i, _ in sent] == sends[len(sends) - len(sent):], out[-3000:]
    assert sent and sent[0][0] < exact[0]["record"]["t0"] * FPS, f"connected after the first stroke: {sent[:1]}"
    # the stream ends when the server closes; the one reopen is refused: the command ends with one line
    assert proc.returncode == 2, out[-3000:]
    assert re.search(r"stopped delivering frames and could not be reopened after 1 attempts", proc.stderr), out[-3000:]
    assert "the stream stopped delivering frames" in proc.stdout, out[-3000:]
    assert "shot in progress" not in proc.stderr, out[-3000:]  # the last shot ended before the stream did

    run = _journal(tmp_path / "stream.sqlite")
    streamed = run["shots"]
    pairs, lines = _pair(exact, streamed, sent)
    # what the stream run lost: frames the server never sent show as camera gaps of one frame each; gaps
    # beyond those are frames that arrived late and bunched (the stamps are arrival times), frames
    # dropped from the judge's queue are frames it could not keep up with
    queue_lost = sum(g["count"] for g in run["gaps"] if g["reason"] == "queue")
    camera = [g["count"] for g in run["gaps"] if g["reason"] == "camera"]
    summary = next((line for line in proc.stdout.splitlines() if re.match(r"\d+ frames, ", line)), "")
    report = "\n".join([
        f"schedule: {schedule.describe()}",
        f"exact run {exact_s:.1f} s, stream run {stream_s:.1f} s ({len(jpegs) / FPS:.1f} s of stream); {summary}",
        f"stream run: camera gaps {len(camera)} ({sum(camera)} frames; the server dropped {len(schedule.dropped)}, "
        f"largest gap {max(camera, default=0)}), frames dropped from the judge's queue: {queue_lost}",
        *lines])
    print(report)
    silently_different = [line for (i, j), line in zip(pairs, lines)
                          if j is not None and (i is None or streamed[j]["ruling"] != exact[i]["ruling"])
                          and not flagged(streamed[j])]
    assert not silently_different, "calls differ from the exact-time run's with no flag:\n" + report
    judged = [j for i, j in pairs if i is not None and j is not None and streamed[j]["ruling"] is not None]
    assert len(judged) >= SHOTS - 1, f"only {len(judged)} of the {SHOTS} shots judged:\n" + report
