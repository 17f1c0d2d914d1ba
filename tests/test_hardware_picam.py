"""The Pi camera source against a fake picamera2 module that behaves like the real API."""
import sys
import time

import pytest

import fake_picamera2
from hardware import FrameGap, GapDetector, ReconnectingSource, SourceError, open_source
from hardware.picam import PicameraSource


@pytest.fixture
def cam(monkeypatch):
    return fake_picamera2.install(monkeypatch)


def test_configures_a_locked_mode_and_stamps_frames_with_the_sensor_clock(cam):
    before_ns = time.monotonic_ns()
    src = PicameraSource(size=(1536, 864), fps=100, exposure_us=2000, analogue_gain=2.0, colour_gains=(1.8, 1.5))
    with src:
        frames = [src.read() for _ in range(5)]
        fake = cam.instances[0]
        assert fake.outstanding == 0  # every request went back to the camera
    assert fake.closed and not fake.started
    _, cfg = fake.calls[0]
    assert cfg["main"] == {"size": (1536, 864), "format": "RGB888"}
    assert cfg["sensor"] == {"output_size": (1536, 864), "bit_depth": 10}
    assert cfg["controls"] == {"FrameDurationLimits": (10000, 10000), "AeEnable": False, "ExposureTime": 2000,
                               "AnalogueGain": 2.0, "AwbEnable": False, "ColourGains": (1.8, 1.5)}
    assert [f.index for f in frames] == [0, 1, 2, 3, 4]
    for f in frames:
        assert f.t_s == f.metadata["SensorTimestamp"] / 1e9
        assert f.t_s * 1e9 >= before_ns  # stale frames from before start() were flushed
        assert f.metadata["ExposureTime"] == 2000 and f.metadata["ColourGains"] == (1.8, 1.5)
        assert f.image.shape == (864, 1536, 3) and not f.image.flags.writeable
        with pytest.raises(ValueError):
            f.image[0, 0, 0] = 1
    steps = {round((b.t_s - a.t_s) * 1e6) for a, b in zip(frames, frames[1:])}
    assert steps == {10000}
    assert src.fps == pytest.approx(100.0)
    assert src.info["sensor_mode"] == "1536x864/10bit" and src.warnings == []
    assert src.info["readout_s"] == round(1 / 120.13, 6)  # the rows read within a frame at the mode's top rate


def test_captured_frame_holds_the_buffer_only_inside_the_block(cam):
    with PicameraSource(fps=60, exposure_us=4000, colour_gains=(2.0, 1.7), frame_timeout_s=0.05) as src:
        fake = cam.instances[0]
        with src.captured_frame() as frame:
            assert fake.outstanding == 1
            assert frame.index == 0
        assert fake.outstanding == 0
        # Holding more requests than the camera has buffers starves it: releasing is not optional.
        held = [src._next_request(flush=None, keep=True) for _ in range(6)]
        with pytest.raises(SourceError, match="no frame for"):
            src.read()
        for r in held:
            r.release()


def test_auto_white_balance_settles_then_locks(cam):
    with PicameraSource(fps=50, exposure_us=5000, colour_gains=None, awb_settle_frames=4) as src:
        fake = cam.instances[0]
        assert src.colour_gains == fake_picamera2.AUTO_GAINS
        lock = [c for name, c in fake.calls if name == "set_controls"]
        assert lock == [{"AwbEnable": False, "ColourGains": fake_picamera2.AUTO_GAINS}]
        assert src.read().metadata["ColourGains"] == fake_picamera2.AUTO_GAINS


def test_sensor_skips_become_gap_events(cam):
    cam.drop_after = {8: 3}
    with PicameraSource(fps=100, exposure_us=2000, colour_gains=(1.8, 1.5)) as src:
        det = GapDetector(src.fps)
        gaps = [g for g in (det.check(src.read()) for _ in range(10)) if g]
    assert len(gaps) == 1
    gap = gaps[0]
    assert isinstance(gap, FrameGap) and gap.count == 3 and gap.reason == "camera"
    assert gap.to_index == gap.from_index + 1  # indices count delivered frames; the time shows the hole
    assert gap.duration_s == pytest.approx(0.04)


def test_a_stalled_camera_is_reopened_and_the_gap_reported(cam):
    cam.die_after = 6  # captures per camera instance (the fake counts per instance)
    events = []
    src = open_source("picam", fps=100, exposure_us=2000, colour_gains=(1.8, 1.5), frame_timeout_s=0.05,
                      on_event=lambda k, m: events.append(k))
    assert isinstance(src, ReconnectingSource)
    src._sleep = lambda s: None
    with src:
        det = GapDetector(src.fps)
        frames, gaps = [], []
        for _ in range(8):
            f = src.read()
            frames.append(f)
            g = det.check(f)
            if g:
                gaps.append(g)
    assert [f.index for f in frames] == list(range(8))
    assert len(cam.instances) == 2 and all(c.closed for c in cam.instances)
    assert events == ["lost", "reconnected"]
    assert src.reconnects == 1
    assert [i for i, f in enumerate(frames) if f.metadata.get("after_reconnect")] == [5]
    # the new camera's clock keeps running: the hole between the cameras is a reconnect gap
    assert [g.reason for g in gaps] == ["reconnect"]


def test_clear_errors_for_missing_package_camera_or_mode(cam, monkeypatch):
    with pytest.raises(SourceError, match="no sensor mode gives 4608x2592 at 60 fps"):
        PicameraSource(size=(4608, 2592), fps=60, exposure_us=1000, colour_gains=(1, 1)).open()
    assert cam.instances[-1].closed
    with pytest.raises(SourceError, match="does not fit in a frame of 8333 µs"):
        PicameraSource(fps=120, exposure_us=10000)
    with pytest.raises(SourceError, match="no Raspberry Pi camera number 1"):
        PicameraSource(camera_num=1, colour_gains=(1, 1)).open()
    monkeypatch.setitem(sys.modules, "picamera2", None)
    with pytest.raises(SourceError, match="picamera2 package is not installed"):
        PicameraSource(colour_gains=(1, 1)).open()


def test_picamera2_is_not_imported_until_a_pi_camera_is_opened(monkeypatch):
    monkeypatch.delitem(sys.modules, "picamera2", raising=False)
    src = open_source("picam:0", fps=30)
    assert "picamera2" not in sys.modules
    assert src.name == "picam"


def test_public_controls_list_modes_and_limits_and_set_what_the_camera_has(cam):
    src = PicameraSource(fps=100, exposure_us=2000, analogue_gain=2.0, colour_gains=(1.8, 1.5))
    with pytest.raises(SourceError, match="picam: the camera is not open"):
        src.sensor_modes()
    with src:
        modes = src.sensor_modes()
        assert [(m["size"], m["fps"], m["bit_depth"]) for m in modes] == [
            ((1536, 864), 120.13, 10), ((2304, 1296), 56.03, 10), ((4608, 2592), 14.35, 10)]
        modes[0]["size"] = (1, 1)  # a copy: the camera's own list is untouched
        assert src.sensor_modes()[0]["size"] == (1536, 864)
        limits = src.control_limits()
        assert limits["AnalogueGain"] == (1.0, 16.0, 1.0) and "Sharpness" not in limits
        src.set_controls({"AnalogueGain": 3.0})
        gains = [src.read().metadata["AnalogueGain"] for _ in range(6)]  # libcamera applies it a few frames late
        assert gains[0] == 2.0 and gains[-1] == 3.0
        with pytest.raises(SourceError, match=r"picam: the camera refused the controls \['Sharpness'\]: "
                                              r"Control Sharpness is not advertised by libcamera"):
            src.set_controls({"Sharpness": 1.0})
    with pytest.raises(SourceError, match="not open"):
        src.set_controls({"AnalogueGain": 1.0})


def test_the_readout_of_a_rolling_shutter_is_a_frame_at_the_modes_top_rate_and_a_global_shutter_has_none():
    from hardware.picam import readout_s

    mode = {"size": (2304, 1296), "bit_depth": 10, "fps": 56.03}
    assert readout_s({"Model": "imx708_wide"}, mode) == round(1 / 56.03, 6)
    assert readout_s({"Model": "imx296"}, mode) == 0.0  # the Global Shutter Camera
    assert readout_s({}, {"size": (640, 480), "bit_depth": 10}) is None  # a mode that does not say its rate

