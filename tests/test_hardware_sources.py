"""Webcam (fake cv2.VideoCapture at the vendor boundary), video files, image folders, source specs."""
import os
from fractions import Fraction

import av
import cv2
import numpy as np
import pytest

import fake_cv2_capture as fcv
from hardware import (GapDetector, ImageFolderSource, ReconnectingSource, SourceError, TruncatedVideo,
                      VideoFileSource, open_source)
from hardware.opencv import StreamSource, UsbCameraSource


# ----- webcam ------------------------------------------------------------------------------------
def test_webcam_is_asked_for_mjpg_720p60_over_v4l2_and_read_back(monkeypatch):
    fcv.install(monkeypatch, {0: fcv.Device()})
    with UsbCameraSource(0, size=(1280, 720), fps=60) as src:
        cap = fcv.FakeVideoCapture.instances[0]
        assert cap.api == cv2.CAP_V4L2
        assert fcv._text(cap.wanted[cv2.CAP_PROP_FOURCC]) == "MJPG"
        frames = [src.read() for _ in range(3)]
    assert src.size == (1280, 720) and src.fps == 60.0
    assert src.info == {"requested": "1280x720 at 60 fps MJPG", "actual": "1280x720 at 60 fps MJPG", "exposure": "auto",
                        "clock": "v4l2_buffer"}
    assert src.warnings == []
    assert [f.index for f in frames] == [0, 1, 2]
    assert [round(b.t_s - a.t_s, 6) for a, b in zip(frames, frames[1:])] == [round(1 / 60, 6)] * 2
    assert not cap.isOpened()  # released on close


def test_webcam_controls_are_read_and_set_through_the_source_and_a_refusal_is_false(monkeypatch):
    fcv.install(monkeypatch, {0: fcv.Device(refuse=(cv2.CAP_PROP_WB_TEMPERATURE,))})
    src = UsbCameraSource(0, size=(1280, 720), fps=60)
    with pytest.raises(SourceError, match="usb:0: the webcam is not open"):
        src.get_control(cv2.CAP_PROP_GAIN)
    with src:
        cap = fcv.FakeVideoCapture.instances[0]
        assert src.get_control(cv2.CAP_PROP_GAIN) == 32.0
        assert src.set_control(cv2.CAP_PROP_GAIN, 10) is True
        assert src.get_control(cv2.CAP_PROP_GAIN) == 10.0
        assert src.set_control(cv2.CAP_PROP_WB_TEMPERATURE, 5000) is False
        assert src.get_control(cv2.CAP_PROP_WB_TEMPERATURE) == 4600.0
        assert cap.sets[-2:] == [(cv2.CAP_PROP_GAIN, 10.0, True), (cv2.CAP_PROP_WB_TEMPERATURE, 5000.0, False)]
    with pytest.raises(SourceError, match="not open"):
        src.set_control(cv2.CAP_PROP_GAIN, 1)


# The fake driver captures frame n of an open at 1000 + n/60 s (the open itself reads frame 1) and the host
# gets it LATENCY after at the earliest, one value per frame in turn.
LATENCY = (0.002, 0.009, 0.004)


def capture_t(n, fps=60):
    return 1000.0 + n / fps


def test_webcam_frames_carry_the_drivers_buffer_timestamps_not_their_arrival(monkeypatch):
    """The USB transfer and the wakeup jitter by 2-9 ms; the buffer timestamps are the capture times."""
    clock = fcv.install(monkeypatch, {0: fcv.Device(latency_s=LATENCY)})
    with UsbCameraSource(0, size=(1280, 720), fps=60) as src:
        frames = [src.read() for _ in range(6)]
        arrived = clock.now
    assert [round(f.t_s, 6) for f in frames] == [round(capture_t(n), 6) for n in range(2, 8)]
    assert all(abs(b.t_s - a.t_s - 1 / 60) <= 1e-9 for a, b in zip(frames, frames[1:]))
    assert round(arrived - frames[-1].t_s, 6) == LATENCY[(7 - 1) % 3]  # the host had the last one this much later
    assert [f.metadata["clock"] for f in frames] == ["v4l2_buffer"] * 6
    assert src.info["clock"] == "v4l2_buffer" and "clock_fallback" not in src.info and src.warnings == []
    assert "clock=v4l2_buffer" in src.describe()


def test_webcam_whose_driver_gives_no_timestamps_is_stamped_on_arrival(monkeypatch):
    fcv.install(monkeypatch, {0: fcv.Device(timestamps="none", latency_s=LATENCY)})
    with UsbCameraSource(0, size=(1280, 720), fps=60) as src:
        frames = [src.read() for _ in range(6)]
    assert [round(f.t_s, 6) for f in frames] == [round(capture_t(n) + LATENCY[(n - 1) % 3], 6) for n in range(2, 8)]
    assert [f.metadata["clock"] for f in frames] == ["host_monotonic"] * 6
    assert src.info["clock"] == "host_monotonic"
    assert src.info["clock_fallback"] == "the driver gives no buffer timestamps"
    assert src.warnings == ["usb:0 frames are stamped on arrival by the host's clock, not by the driver: "
                            "the driver gives no buffer timestamps"]


@pytest.mark.parametrize("device, seen", [
    # a driver stamping on the wall clock (uvcvideo clock=realtime, or a copied timestamp)
    (fcv.Device(timestamps="realtime"), "1700001000.017 s against 1000.017 s"),
    # a clock with another origin (CLOCK_BOOTTIME after a suspend), seconds behind
    (fcv.Device(stamp_offset_s=-10.0), "990.017 s against 1000.017 s"),
    # stamps ahead of the host's clock read after the grab: not a capture time on that clock
    (fcv.Device(stamp_offset_s=0.5), "1000.517 s against 1000.017 s"),
], ids=["realtime", "behind", "ahead"])
def test_webcam_whose_buffer_timestamps_are_on_another_clock_is_stamped_on_arrival(monkeypatch, device, seen):
    fcv.install(monkeypatch, {0: device})
    with UsbCameraSource(0, size=(1280, 720), fps=60) as src:
        frames = [src.read() for _ in range(3)]
    assert [round(f.t_s, 6) for f in frames] == [round(capture_t(n), 6) for n in range(2, 5)]  # (no latency here)
    assert [f.metadata["clock"] for f in frames] == ["host_monotonic"] * 3
    why = f"the buffer timestamps are not on the monotonic clock ({seen})"
    assert src.info["clock"] == "host_monotonic" and src.info["clock_fallback"] == why
    assert src.warnings == [f"usb:0 frames are stamped on arrival by the host's clock, not by the driver: {why}"]


def test_webcam_whose_timestamps_stop_moving_is_stamped_on_arrival_from_then_on(monkeypatch):
    """Three frames (the open's and two more) with their own stamps, then the stamp repeats: the host's clock
    from that frame on, for good; times still increase across the switch."""
    fcv.install(monkeypatch, {0: fcv.Device(stamps_stall_after=3, latency_s=(0.005,))})
    with UsbCameraSource(0, size=(1280, 720), fps=60) as src:
        frames = [src.read() for _ in range(4)]
    assert [f.metadata["clock"] for f in frames] == ["v4l2_buffer", "v4l2_buffer", "host_monotonic", "host_monotonic"]
    assert [round(f.t_s, 6) for f in frames] == [round(capture_t(2), 6), round(capture_t(3), 6),
                                                  round(capture_t(4) + 0.005, 6), round(capture_t(5) + 0.005, 6)]
    why = ("the buffer timestamps stopped increasing (1000.050000 s after 1000.050000 s), "
           "after 3 frame(s) stamped by the driver")
    assert src.info["clock"] == "host_monotonic" and src.info["clock_fallback"] == why
    assert src.warnings == [f"usb:0 frames are stamped on arrival by the host's clock, not by the driver: {why}"]


@pytest.mark.parametrize("timestamps", ["monotonic", "none"])
def test_a_judge_that_stalls_sees_the_drivers_drops_only_with_buffer_timestamps(monkeypatch, timestamps):
    """The judge is busy 110 ms: the driver queues four frames in its buffers and drops the next two. With the
    buffer timestamps the queued frames keep their capture times and the gap shows where the two were lost;
    stamped on arrival the four carry one time, and the loss is put where there was none."""
    dev = fcv.Device(timestamps=timestamps, buffers=4)
    clock = fcv.install(monkeypatch, {0: dev})
    with UsbCameraSource(0, size=(1280, 720), fps=60) as src:
        det = GapDetector(src.fps)
        frames = [src.read() for _ in range(2)]  # frames 2 and 3
        clock.sleep(0.11)  # frames 4-9 captured meanwhile: 4-7 queued, 8 and 9 dropped
        frames += [src.read() for _ in range(5)]  # 4, 5, 6, 7 at once, then 10 when it is captured
        gaps = [g for g in map(det.check, frames) if g]
    assert dev.lost == 2
    if timestamps == "monotonic":
        assert [round(f.t_s, 6) for f in frames] == [round(capture_t(n), 6) for n in (2, 3, 4, 5, 6, 7, 10)]
        assert [(g.from_index, g.to_index, g.count, g.reason) for g in gaps] == [(5, 6, 2, "camera")]
    else:
        assert [round(f.t_s, 6) for f in frames] == [round(t, 6) for t in (capture_t(2), capture_t(3)) + (1000.16,) * 4
                                                      + (capture_t(10),)]
        assert [(g.from_index, g.to_index, g.count) for g in gaps] == [(1, 2, 6)]


def test_stream_frames_are_stamped_on_arrival_whatever_the_backend_reports(monkeypatch):
    """An MJPEG/HTTP or RTSP stream through FFmpeg has no capture times OpenCV could give: host stamping."""
    fcv.install(monkeypatch, {"http://192.0.2.7/video.mjpg": fcv.Device(latency_s=LATENCY)})
    with StreamSource("http://192.0.2.7/video.mjpg") as src:
        frames = [src.read() for _ in range(3)]
    assert fcv.FakeVideoCapture.instances[0].api == cv2.CAP_FFMPEG
    assert [round(f.t_s, 6) for f in frames] == [round(capture_t(n, 30) + LATENCY[(n - 1) % 3], 6) for n in range(2, 5)]
    assert [f.metadata["clock"] for f in frames] == ["host_monotonic"] * 3 and src.info["clock"] == "host_monotonic"


def test_webcam_that_cannot_do_the_request_says_what_it_gives(monkeypatch):
    fcv.install(monkeypatch, {0: fcv.Device(modes=[(640, 480, 30.0, "YUYV")])})
    with UsbCameraSource(0, size=(1920, 1080), fps=60, exposure=50) as src:
        assert src.size == (640, 480) and src.fps == 30.0
        assert src.read().size == (640, 480)
        assert src.info["exposure"] == 50.0
    assert src.warnings == ["usb:0 gives 640x480 at 30 fps YUYV, not the requested 1920x1080 at 60 fps MJPG",
                            "usb:0 sends YUYV instead of MJPG"]


def test_webcam_that_dies_mid_stream_is_reopened_with_backoff_and_the_hole_reported(monkeypatch):
    dev = fcv.Device(frames_until_death=6, refuse_opens=2)
    clock = fcv.install(monkeypatch, {0: dev})
    events, sleeps = [], []

    def sleep(s):
        sleeps.append(s)
        clock.sleep(s)

    src = open_source("usb:0", fps=60, size=(1280, 720), on_event=lambda kind, msg: events.append((kind, msg)))
    assert isinstance(src, ReconnectingSource)
    src._sleep = sleep
    with src:
        det = GapDetector(src.fps)
        frames = [src.read() for _ in range(10)]
        gaps = [g for g in map(det.check, frames) if g]
    assert [f.index for f in frames] == list(range(10))
    assert sleeps == [0.25, 0.5, 1.0]  # two refused opens, then the camera is back
    assert [k for k, _ in events] == ["lost", "retry", "retry", "reconnected"]
    assert "usb:0: the webcam stopped delivering frames" in events[0][1]
    assert len(gaps) == 1
    gap = gaps[0]
    assert gap.reason == "reconnect" and gap.from_index == 4 and gap.to_index == 5
    # 1.75 s of backoff plus the first frame the reopened camera gave at 60 fps
    assert gap.count == round((1.75 + 2 / 60) * 60) - 1


def test_webcam_that_never_comes_back_ends_with_a_clear_message(monkeypatch):
    clock = fcv.install(monkeypatch, {0: fcv.Device(frames_until_death=2, refuse_opens=99)})
    src = open_source("usb:0", max_reconnects=3)
    src._sleep = clock.sleep
    with src, pytest.raises(SourceError) as err:
        for _ in range(5):
            src.read()
    assert str(err.value).startswith("usb:0: stopped delivering frames and could not be reopened after 3 attempts")


def test_webcam_that_comes_back_with_another_image_size_is_refused(monkeypatch):
    """Replugged, the camera offers only another mode: the calibration no longer fits, so the source ends
    with one line instead of handing out frames it would misread."""
    fcv.install(monkeypatch, {0: fcv.Device(modes=[(1280, 720, 60.0, "MJPG")], frames_until_death=4)})
    src = open_source("usb:0", fps=60, size=(1280, 720))
    src._sleep = lambda s: None
    with src:
        frames = [src.read() for _ in range(3)]  # (the open itself reads one frame)
        fcv.FakeVideoCapture.devices[0] = fcv.Device(modes=[(640, 480, 30.0, "YUYV")])
        with pytest.raises(SourceError) as err:
            src.read()
    assert [f.index for f in frames] == [0, 1, 2] and all(f.size == (1280, 720) for f in frames)
    assert str(err.value) == "usb:0: the camera came back with 640x480 instead of 1280x720; the calibration no longer fits"


def test_missing_webcam_is_a_clear_error(monkeypatch):
    fcv.install(monkeypatch, {})
    with pytest.raises(SourceError, match=r"usb:3: cannot open the webcam /dev/video3"):
        open_source("usb:3").open()


def test_stream_redacts_password_and_uses_ffmpeg(monkeypatch):
    fcv.install(monkeypatch, {})
    src = StreamSource("rtsp://judge:secret@192.0.2.7/table1")
    assert src.name == "rtsp://judge:***@192.0.2.7/table1"
    with pytest.raises(SourceError, match=r"cannot open the stream"):
        src.open()
    assert fcv.FakeVideoCapture.instances[0].api == cv2.CAP_FFMPEG


# ----- recorded material -------------------------------------------------------------------------
def write_mp4(path, n=48, fps=30, size=(96, 64), faststart=False, seed=0, fragmented=False):
    """Every frame a keyframe with its index in the top-left square (brightness 20 i mod 256). ``faststart``:
    index before the data (as cameras and phones write); ``fragmented``: no frame count at all, as a
    crash-safe recorder writes."""
    rng = np.random.default_rng(seed)
    options = {"movflags": "frag_keyframe+empty_moov"} if fragmented else {"movflags": "faststart"} if faststart else {}
    with av.open(str(path), "w", options=options) as out:
        stream = out.add_stream("libx264", rate=Fraction(fps))
        stream.width, stream.height, stream.pix_fmt = size[0], size[1], "yuv420p"
        stream.options = {"g": "1"}  # every frame a keyframe: a cut file still decodes up to the cut
        for i in range(n):
            image = rng.integers(0, 255, (size[1], size[0], 3), dtype=np.uint8)
            image[:16, :16] = (i * 20) % 256
            for packet in stream.encode(av.VideoFrame.from_ndarray(image, format="bgr24")):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)


def test_video_file_times_come_from_index_and_rate(tmp_path):
    path = tmp_path / "clip.mp4"
    write_mp4(path, n=12, fps=30)
    with VideoFileSource(path) as src:
        frames = list(src)
    assert src.fps == 30.0 and src.size == (96, 64)
    assert [f.index for f in frames] == list(range(12))
    assert [f.t_s for f in frames] == [i / 30 for i in range(12)]
    assert [int(round(float(f.image[2:14, 2:14].mean()) / 20)) for f in frames] == list(range(12))
    assert all(not f.image.flags.writeable for f in frames)


@pytest.mark.parametrize("cores, threads", [({0}, 1), ({0, 1}, 1), ({0, 1, 2, 3}, 3)])
def test_video_decoding_leaves_one_core_to_the_judge_and_gives_the_same_frames(tmp_path, monkeypatch, cores, threads):
    """FFmpeg's decoding threads: every core the process may use but one (the judging thread's); at least one.
    The frames are the same whatever the count."""
    path = tmp_path / "clip.mp4"
    write_mp4(path, n=10, fps=30)
    with VideoFileSource(path) as src:
        plain = [f.image.copy() for f in src]
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(cores))
    with VideoFileSource(path) as src:
        assert src._stream.thread_count == threads
        frames = [f.image for f in src]
    assert len(frames) == 10 and all(np.array_equal(a, b) for a, b in zip(frames, plain))


def test_truncated_video_ends_with_how_many_frames_were_read(tmp_path):
    path = tmp_path / "cut.mp4"
    write_mp4(path, n=48, faststart=True)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) * 6 // 10])
    got = []
    with VideoFileSource(path) as src, pytest.raises(TruncatedVideo) as err:
        for frame in src:
            got.append(frame.index)
    assert 0 < len(got) < 48 and got == list(range(len(got)))
    assert err.value.frames_read == len(got) and err.value.frames_expected == 48
    assert f"the video ends early after {len(got)} of 48 frames" in str(err.value)


def packet_spans(path):
    """(byte offset, size) of each video packet in the file, in decoding order."""
    with av.open(str(path)) as c:
        return [(p.pos, p.size) for p in c.demux(c.streams.video[0]) if p.size]


def read_until_break(path):
    got = []
    with VideoFileSource(path) as src, pytest.raises(TruncatedVideo) as err:
        for frame in src:
            got.append(frame)
    return got, err.value


def assert_first_frames(frames, n):
    assert [f.index for f in frames] == list(range(n))
    assert all(abs(float(f.image[2:14, 2:14].mean()) - (i * 20) % 256) < 8 for i, f in enumerate(frames))


def test_fragmented_video_cut_inside_a_packet_ends_exactly_there(tmp_path):
    """No frame count in the header: the demuxer's mark on the packet cut in two is the only sign."""
    path = tmp_path / "frag.mp4"
    write_mp4(path, n=48, fragmented=True)
    pos, size = packet_spans(path)[30]
    path.write_bytes(path.read_bytes()[: pos + size // 2])
    got, err = read_until_break(path)
    assert_first_frames(got, 30)
    assert err.frames_read == 30 and err.frames_expected is None and err.detail == "the last packet is cut short"
    assert str(err) == f"{path}: the video ends early after 30 frames (file truncated or damaged: the last packet is cut short)"


@pytest.mark.parametrize("damage, detail", [
    ("zeros", "data the decoder refuses: Invalid data found when processing input"),
    ("noise", "damaged picture data"),  # decoded with the hole patched over, flagged corrupt
])
def test_video_damaged_mid_file_stops_at_the_damage(tmp_path, damage, detail):
    path = tmp_path / "damaged.mp4"
    write_mp4(path, n=48, faststart=True)
    pos, size = packet_spans(path)[20]
    data = bytearray(path.read_bytes())
    junk = bytes(size) if damage == "zeros" else np.random.default_rng(1).integers(0, 256, size - 8, np.uint8).tobytes()
    data[pos + size - len(junk):pos + size] = junk
    path.write_bytes(bytes(data))
    got, err = read_until_break(path)
    assert_first_frames(got, 20)  # nothing from the damaged packet on
    assert (err.frames_read, err.frames_expected, err.detail) == (20, 48, detail)
    assert "the video ends early after 20 of 48 frames (file truncated or damaged: " in str(err)


def test_garbage_after_a_complete_video_is_not_a_break(tmp_path):
    path = tmp_path / "tail.mp4"
    write_mp4(path, n=12)
    path.write_bytes(path.read_bytes() + np.random.default_rng(2).integers(0, 256, 4000, np.uint8).tobytes())
    with VideoFileSource(path) as src:
        assert_first_frames(list(src), 12)


def test_video_cut_before_its_index_cannot_be_opened(tmp_path):
    path = tmp_path / "cut.mp4"
    write_mp4(path, n=10)  # index (moov) written at the end: a cut file has none
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(SourceError, match="cannot read this file as a video"):
        VideoFileSource(path).open()


def test_image_folder_natural_order_and_times(tmp_path):
    for i in (1, 2, 10):
        cv2.imwrite(str(tmp_path / f"frame{i}.png"), np.full((8, 10, 3), i, np.uint8))
    (tmp_path / "notes.txt").write_text("not an image")
    with ImageFolderSource(tmp_path, fps=50) as src:
        frames = list(src)
    assert [int(f.image[0, 0, 0]) for f in frames] == [1, 2, 10]
    assert [f.t_s for f in frames] == [0.0, 0.02, 0.04]
    assert src.size == (10, 8)


def test_image_folder_with_a_broken_image_names_it(tmp_path):
    cv2.imwrite(str(tmp_path / "a1.png"), np.zeros((4, 4, 3), np.uint8))
    (tmp_path / "a2.png").write_bytes(b"garbage")
    with ImageFolderSource(tmp_path) as src:
        src.read()
        with pytest.raises(SourceError, match=r"a2.png: cannot read this image \(image 2 of 2\)"):
            src.read()


# ----- specs -------------------------------------------------------------------------------------
@pytest.mark.parametrize("spec, message", [
    ("", "source: empty"),
    ("usb:left", "usb needs a device number"),
    ("ftp://host/x", "unknown stream type 'ftp'"),
    ("no/such/file.mp4", "no such file or folder, and not a camera"),
])
def test_nonsense_specs_get_one_line_errors(spec, message):
    with pytest.raises(SourceError) as err:
        open_source(spec)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_a_named_pipe_is_not_taken_for_a_missing_file(tmp_path):
    import os

    fifo = tmp_path / "frames.pipe"
    os.mkfifo(fifo)
    with pytest.raises(SourceError) as err:
        open_source(str(fifo))
    assert str(err.value) == (f"source {str(fifo)!r}: is not a video file or a folder of images (a named pipe or a "
                              f"device); record to a file, or serve it as a stream (http://, rtsp://)")


def test_specs_pick_the_right_source(tmp_path):
    path = tmp_path / "v.mp4"
    write_mp4(path, n=2)
    assert isinstance(open_source(str(path)), VideoFileSource)
    assert isinstance(open_source(str(tmp_path)), ImageFolderSource)
    assert isinstance(open_source("usb:2", reconnect=False), UsbCameraSource)
    assert isinstance(open_source("rtsp://cam/1").inner, StreamSource)
    with pytest.raises(SourceError, match="do not apply to a recording"):
        open_source(str(path), exposure_us=100)
    with pytest.raises(SourceError, match="setting\\(s\\) exposure_us do not apply to this kind of source"):
        open_source("usb:0", exposure_us=100)
