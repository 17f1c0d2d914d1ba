"""A stand-in for the ``picamera2`` module that behaves like the real API at its surface.

Modelled on picamera2 (raspberrypi/picamera2, ``picamera2.py``, ``job.py``, ``request.py``):
``Picamera2(camera_num)`` raises IndexError without a camera; ``sensor_modes`` lists dicts with
size/fps/bit_depth/format; ``create_video_configuration`` merges its defaults (XBGR8888 1280x720,
FrameDurationLimits 33333 µs) with the caller's; ``configure`` refuses while started;
``capture_request(wait=False, flush=ns)`` returns a job whose ``get_result(timeout)`` gives a
request whose ``make_array('main')`` copies the buffer and whose ``get_metadata()`` has
``SensorTimestamp`` in ns of ``time.monotonic_ns``'s clock; ``flush`` skips frames exposed before
that time; ``set_controls`` raises RuntimeError for a control not in ``camera_controls``. Requests must be released; a camera holding ``buffer_count`` unreleased requests
starves (like the real one). Frames queued before ``start()`` returns carry the old (auto)
exposure, so a source that does not flush sees stale settings.

Test knobs (class attributes, reset per test by the fixture): ``cameras`` (how many exist),
``drop_after`` {sensor frame k: n frames skipped after it}, ``die_after`` (captures before the
camera stalls), ``instances``, ``image`` (a BGR picture every frame shows instead of black; its size must be
the configured one). While the automatic exposure runs, frames report ``AUTO_EXPOSURE_US`` and ``AUTO_GAIN``.
"""
from __future__ import annotations

import copy
import time
import types

import numpy as np

IMX708_MODES = [
    {"format": "SRGGB10_CSI2P", "unpacked": "SRGGB10", "bit_depth": 10, "size": (1536, 864), "fps": 120.13,
     "crop_limits": (768, 432, 3072, 1728), "exposure_limits": (9, None)},
    {"format": "SRGGB10_CSI2P", "unpacked": "SRGGB10", "bit_depth": 10, "size": (2304, 1296), "fps": 56.03,
     "crop_limits": (0, 0, 4608, 2592), "exposure_limits": (13, 77208384, None)},
    {"format": "SRGGB10_CSI2P", "unpacked": "SRGGB10", "bit_depth": 10, "size": (4608, 2592), "fps": 14.35,
     "crop_limits": (0, 0, 4608, 2592), "exposure_limits": (26, 112015443, None)},
]
AUTO_EXPOSURE_US = 33000
AUTO_GAINS = (1.91, 1.63)
AUTO_GAIN = 2.5  # the analogue gain the automatic exposure settles on


class Job:
    def __init__(self, cam, flush):
        self.cam, self.flush = cam, flush

    def get_result(self, timeout=None):
        return self.cam._complete(self.flush, timeout)


class CompletedRequest:
    def __init__(self, cam, image, metadata):
        self.cam, self._image, self._metadata = cam, image, metadata
        self.released = False

    def make_array(self, name):
        if self.released:
            raise RuntimeError("request already released")
        stream = self.cam.config.get(name)
        if stream is None:
            raise RuntimeError(f"Stream {name!r} is not defined")
        return np.array(self._image, copy=True)

    def get_metadata(self):
        return dict(self._metadata)

    def release(self):
        if not self.released:
            self.released = True
            self.cam.outstanding -= 1


class Picamera2:
    cameras = 1
    drop_after: dict[int, int] = {}
    die_after: int | None = None
    instances: list["Picamera2"] = []
    image: np.ndarray | None = None

    def __init__(self, camera_num=0):
        if camera_num >= type(self).cameras:
            raise IndexError("list index out of range")
        self.camera_num = camera_num
        self.sensor_modes = copy.deepcopy(IMX708_MODES)
        self.camera_properties = {"Model": "imx708", "PixelArraySize": (4608, 2592)}
        self.camera_controls = {"ExposureTime": (9, 112015443, 20000), "AnalogueGain": (1.0, 16.0, 1.0),
                                "FrameDurationLimits": (8333, 112015443, 33333), "ColourGains": (0.0, 32.0, None),
                                "AeEnable": (False, True, True), "AwbEnable": (False, True, None),
                                "NoiseReductionMode": (0, 4, 0)}
        self.config = None
        self.started = False
        self.closed = False
        self.controls: dict = {}
        self.pending: list[tuple[int, dict]] = []  # controls applied from sensor frame k on
        self.outstanding = 0
        self.captures = 0
        self.calls: list[tuple] = []
        type(self).instances.append(self)

    # ----- configuration -------------------------------------------------------------------------
    def create_video_configuration(self, main={}, lores=None, raw={}, transform=None, colour_space=None,
                                   buffer_count=6, controls={}, display="main", encode="main", queue=True,
                                   sensor={}, use_case="video"):
        self.calls.append(("create_video_configuration", dict(main=main, sensor=sensor, controls=controls)))
        main = {"format": "XBGR8888", "size": (1280, 720), "preserve_ar": True} | dict(main)
        main["size"] = (main["size"][0] - main["size"][0] % 2, main["size"][1] - main["size"][1] % 2)
        controls = {"NoiseReductionMode": 1, "FrameDurationLimits": (33333, 33333)} | dict(controls)
        return {"use_case": use_case, "transform": transform, "colour_space": colour_space,
                "buffer_count": buffer_count, "queue": queue, "main": main, "lores": lores,
                "raw": None if raw is None else {"format": "SRGGB10_CSI2P", "size": main["size"]} | dict(raw),
                "controls": controls, "sensor": sensor}

    def configure(self, config):
        if self.started:
            raise RuntimeError("Camera must be stopped before configuring")
        bad = set((config.get("sensor") or {}).keys()) - {"bit_depth", "output_size"}
        if bad:
            raise RuntimeError(f"Unexpected keys {bad} in sensor configuration")
        fmt = config["main"]["format"]
        if fmt not in ("RGB888", "BGR888", "XBGR8888", "XRGB8888", "YUV420"):
            raise RuntimeError("Bad format " + fmt + " in stream main")
        size = config["main"]["size"]
        if not isinstance(size, tuple) or len(size) != 2:
            raise RuntimeError("size in main stream should be (width, height)")
        self.config = copy.deepcopy(config)
        out = (config.get("sensor") or {}).get("output_size") or size
        self.mode = min(self.sensor_modes, key=lambda m: abs(m["size"][0] - out[0]) + abs(m["size"][1] - out[1]))
        self.controls = {"AeEnable": True, "AwbEnable": True} | dict(config["controls"])

    def camera_configuration(self):
        return copy.deepcopy(self.config)

    def set_controls(self, controls):
        self.calls.append(("set_controls", dict(controls)))
        for name in controls:  # picamera2's Controls refuses what libcamera does not list, before applying any
            if name not in self.camera_controls:
                raise RuntimeError(f"Control {name} is not advertised by libcamera")
        # libcamera applies controls a few frames after they are set.
        self.pending.append((self._k + 3 if self.started else 0, dict(controls)))

    # ----- running -------------------------------------------------------------------------------
    def start(self):
        if self.config is None:
            raise RuntimeError("Camera has not been configured")
        self.started = True
        self.duration_ns = self._duration_us() * 1000
        now = time.monotonic_ns()
        # Two frames were already in flight, exposed with the automatic settings before start returned.
        self._k = 0
        self._t0 = now - 2 * self.duration_ns
        self._stale = 2

    def _duration_us(self):
        lo = self.controls.get("FrameDurationLimits", (33333, 33333))[0]
        return max(lo, int(1e6 / self.mode["fps"]))

    def capture_request(self, wait=None, signal_function=None, flush=None):
        if not self.started:
            raise RuntimeError("Camera is not running")
        if flush is True:
            flush = time.monotonic_ns()
        job = Job(self, flush)
        return job if wait is False else job.get_result()

    def _complete(self, flush, timeout=None):
        die = type(self).die_after
        starved = self.outstanding >= self.config["buffer_count"]  # the application holds every buffer
        if (die is not None and self.captures >= die) or starved:
            time.sleep(timeout or 0.0)  # like the real future: nothing arrives within the timeout
            raise TimeoutError()
        while True:
            k = self._k
            self._k += 1
            skip = type(self).drop_after.get(k)
            if skip:
                self._k += skip
            ts = self._t0 + k * self.duration_ns
            if flush is not None and ts < flush:
                continue
            break
        wait_ns = ts + self.duration_ns - time.monotonic_ns()  # a frame is complete after its exposure
        if wait_ns > 0:
            time.sleep(wait_ns / 1e9)
        for at, controls in list(self.pending):
            if k >= at:
                self.controls.update(controls)
                self.pending.remove((at, controls))
        stale = k < self._stale
        exposure = AUTO_EXPOSURE_US if stale or self.controls.get("AeEnable", True) else self.controls["ExposureTime"]
        gains = AUTO_GAINS if stale or self.controls.get("AwbEnable", True) else tuple(self.controls["ColourGains"])
        w, h = self.config["main"]["size"]
        depth = 3 if self.config["main"]["format"] in ("RGB888", "BGR888") else 4
        auto = stale or self.controls.get("AeEnable", True)
        if type(self).image is not None:
            shown = type(self).image
            if shown.shape[:2] != (h, w):
                raise RuntimeError(f"fake image is {shown.shape[1]}x{shown.shape[0]}, the stream {w}x{h}")
            image = np.dstack([shown, np.full((h, w), 255, np.uint8)]) if depth == 4 else shown.copy()
        else:
            image = np.zeros((h, w, depth), np.uint8)
            image[0, 0, 0] = k % 256
        metadata = {"SensorTimestamp": ts, "FrameDuration": self.duration_ns // 1000, "ExposureTime": exposure,
                    "AnalogueGain": AUTO_GAIN if auto else self.controls.get("AnalogueGain", 1.0), "DigitalGain": 1.0,
                    "ColourGains": gains, "SensorBlackLevels": (4096, 4096, 4096, 4096), "Lux": 400.0,
                    "ColourTemperature": 4500}
        self.captures += 1
        self.outstanding += 1
        return CompletedRequest(self, image, metadata)

    def stop(self):
        self.started = False

    def close(self):
        if self.started:
            self.stop()
        self.closed = True


def install(monkeypatch):
    """Put this fake in place of the picamera2 package for one test; returns the fake class."""
    Picamera2.cameras, Picamera2.drop_after, Picamera2.die_after, Picamera2.instances = 1, {}, None, []
    Picamera2.image = None
    module = types.ModuleType("picamera2")
    module.Picamera2 = Picamera2
    monkeypatch.setitem(__import__("sys").modules, "picamera2", module)
    return Picamera2
