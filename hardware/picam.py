"""The Raspberry Pi camera through picamera2, with everything that drifts locked.

Automatic exposure and white balance change colours and blur between frames, which moves the
detector's thresholds during a match; a free-running frame rate makes frame intervals lie. So the
sensor mode, the frame duration, the exposure, the gain and the colour gains are all fixed, and
each frame carries the sensor's own timestamp (the start of exposure, on ``time.monotonic_ns``'s
clock), not the time Python happened to receive it. picamera2 is imported only when this source
is opened, so nothing else needs it installed.
"""
from __future__ import annotations

import time
from typing import Any

from .frame import SourceError, SourceLost
from .source import Captured, FrameSource

__all__ = ["PicameraSource"]

#: metadata copied into each Frame (the rest of libcamera's metadata stays behind)
KEPT_METADATA = ("SensorTimestamp", "FrameDuration", "ExposureTime", "AnalogueGain", "DigitalGain",
                 "ColourGains", "Lux", "ColourTemperature")


class PicameraSource(FrameSource):
    """Pi camera with a locked sensor mode, frame rate, exposure and white balance.

    ``colour_gains=None`` lets the auto white balance settle for ``awb_settle_frames`` frames and
    then locks the gains it found (reported in ``info``). ``sensor_mode`` picks an entry of
    ``Picamera2.sensor_modes`` by index; by default the smallest mode that covers ``size`` at
    ``fps`` is used.
    """

    live = True

    def __init__(self, camera_num: int = 0, size: tuple[int, int] = (1536, 864), fps: float = 100.0,
                 exposure_us: int = 2000, analogue_gain: float = 4.0,
                 colour_gains: tuple[float, float] | None = None, sensor_mode: int | None = None,
                 awb_settle_frames: int = 15, buffer_count: int = 6, frame_timeout_s: float = 2.0,
                 settle_limit: int = 10):
        super().__init__(f"picam:{camera_num}" if camera_num else "picam")
        if fps <= 0:
            raise SourceError(f"{self.name}: frame rate must be positive, got {fps}")
        self.frame_us = int(round(1e6 / fps))
        if exposure_us <= 0 or exposure_us > self.frame_us:
            raise SourceError(f"{self.name}: exposure {exposure_us} µs does not fit in a frame of "
                              f"{self.frame_us} µs at {fps:g} fps")
        self.camera_num = camera_num
        self.requested_size = (int(size[0]), int(size[1]))
        self.requested_fps = float(fps)
        self.exposure_us = int(exposure_us)
        self.analogue_gain = float(analogue_gain)
        self.colour_gains = colour_gains
        self.sensor_mode = sensor_mode
        self.awb_settle_frames = awb_settle_frames
        self.settle_limit = settle_limit
        self.buffer_count = buffer_count
        self.frame_timeout_s = frame_timeout_s
        self.warnings: list[str] = []
        self._cam = None
        self._size = self.requested_size
        self._fps = float(fps)

    # ----- opening -------------------------------------------------------------------------------
    def _open(self) -> None:
        try:
            from picamera2 import Picamera2
        except ImportError:
            raise SourceError(f"{self.name}: the picamera2 package is not installed "
                              f"(on Raspberry Pi OS: sudo apt install python3-picamera2)") from None
        try:
            cam = Picamera2(self.camera_num)
        except (IndexError, RuntimeError) as exc:
            raise SourceError(f"{self.name}: no Raspberry Pi camera number {self.camera_num} found "
                              f"(ribbon cable, camera enabled?): {exc}") from None
        self._cam = cam
        try:
            self._configure_and_start(cam)
        except Exception:
            self._close()
            raise

    def choose_mode(self, modes: list[dict[str, Any]]) -> dict[str, Any]:
        if self.sensor_mode is not None:
            if not 0 <= self.sensor_mode < len(modes):
                raise SourceError(f"{self.name}: sensor mode {self.sensor_mode} does not exist "
                                  f"(modes: {_modes_text(modes)})")
            mode = modes[self.sensor_mode]
        else:
            w, h = self.requested_size
            fits = [m for m in modes if m["size"][0] >= w and m["size"][1] >= h and m["fps"] >= self.requested_fps - 1e-6]
            if not fits:
                raise SourceError(f"{self.name}: no sensor mode gives {w}x{h} at {self.requested_fps:g} fps "
                                  f"(modes: {_modes_text(modes)})")
            mode = min(fits, key=lambda m: (m["size"][0] * m["size"][1], -m["bit_depth"]))
        if mode["fps"] < self.requested_fps - 1e-6:
            raise SourceError(f"{self.name}: sensor mode {mode['size'][0]}x{mode['size'][1]} runs at most "
                              f"{mode['fps']:g} fps, {self.requested_fps:g} requested")
        return mode

    def _controls(self, awb: bool) -> dict[str, Any]:
        controls: dict[str, Any] = {
            "FrameDurationLimits": (self.frame_us, self.frame_us),
            "AeEnable": False, "ExposureTime": self.exposure_us, "AnalogueGain": self.analogue_gain,
            "AwbEnable": awb,
        }
        if not awb:
            controls["ColourGains"] = tuple(float(g) for g in self.colour_gains)
        return controls

    def _configure_and_start(self, cam) -> None:
        mode = self.choose_mode(list(cam.sensor_modes))
        settle_awb = self.colour_gains is None
        config = cam.create_video_configuration(
            main={"size": self.requested_size, "format": "RGB888"},  # RGB888 is B,G,R in memory: OpenCV order
            sensor={"output_size": tuple(mode["size"]), "bit_depth": mode["bit_depth"]},
            controls=self._controls(awb=settle_awb), buffer_count=self.buffer_count)
        cam.configure(config)
        applied = cam.camera_configuration()
        self._size = tuple(applied["main"]["size"])
        cam.start()
        if settle_awb:
            metadata = {}
            for _ in range(max(1, self.awb_settle_frames)):
                metadata = self._next_request(flush=None, keep=False)
            gains = metadata.get("ColourGains")
            if not gains:
                raise SourceError(f"{self.name}: the camera reports no ColourGains; give --colour-gains R,B")
            self.colour_gains = (float(gains[0]), float(gains[1]))
            cam.set_controls({"AwbEnable": False, "ColourGains": self.colour_gains})
        # Frames already queued were exposed before the controls took hold (libcamera applies
        # controls a few frames late): skip to a fresh frame, then to one that shows the locked values.
        metadata = self._next_request(flush=time.monotonic_ns(), keep=False)
        for _ in range(self.settle_limit):
            if self._settled(metadata):
                break
            metadata = self._next_request(flush=None, keep=False)
        duration = metadata.get("FrameDuration") or self.frame_us
        self._fps = 1e6 / duration
        self.info = {
            "sensor_mode": f"{mode['size'][0]}x{mode['size'][1]}/{mode['bit_depth']}bit",
            "fps_actual": round(self._fps, 3), "exposure_us": metadata.get("ExposureTime"),
            "analogue_gain": metadata.get("AnalogueGain"),
            "colour_gains": tuple(round(g, 4) for g in self.colour_gains),
            "readout_s": readout_s(getattr(cam, "camera_properties", None) or {}, mode),
        }
        self.warnings = []
        if (self._size[0], self._size[1]) != self.requested_size:
            self.warnings.append(f"{self.name} gives {self._size[0]}x{self._size[1]}, not the requested "
                                 f"{self.requested_size[0]}x{self.requested_size[1]}")
        if abs(self._fps - self.requested_fps) > 0.01 * self.requested_fps:
            self.warnings.append(f"{self.name} runs at {self._fps:.2f} fps, not {self.requested_fps:g}")
        got_exp = metadata.get("ExposureTime")
        if got_exp is not None and abs(got_exp - self.exposure_us) > 0.1 * self.exposure_us:
            self.warnings.append(f"{self.name} exposes {got_exp} µs, not the requested {self.exposure_us} µs")

    def _settled(self, metadata: dict[str, Any]) -> bool:
        exposure = metadata.get("ExposureTime")
        gains = metadata.get("ColourGains")
        if exposure is not None and abs(exposure - self.exposure_us) > 0.1 * self.exposure_us:
            return False
        return gains is None or all(abs(a - b) <= 0.01 * max(b, 1e-6) for a, b in zip(gains, self.colour_gains))

    def _next_request(self, flush, keep: bool):
        """Wait (bounded) for the next completed request; returns its metadata, or the request itself."""
        try:
            job = self._cam.capture_request(wait=False, flush=flush)
            request = job.get_result(timeout=self.frame_timeout_s)
        except TimeoutError:
            raise SourceLost(f"{self.name}: no frame for {self.frame_timeout_s:g} s "
                             f"(camera stalled or disconnected)") from None
        except RuntimeError as exc:
            raise SourceLost(f"{self.name}: camera error: {exc}") from None
        if keep:
            return request
        try:
            return request.get_metadata()
        finally:
            request.release()

    # ----- controls, for set-up and doctor (public: judge/ never reaches for the camera itself) ------
    def sensor_modes(self) -> list[dict[str, Any]]:
        """The sensor's modes as picamera2 lists them (copies), read off the open camera: ``info``
        names only the one this source chose."""
        return [dict(m) for m in self._open_camera().sensor_modes]

    def control_limits(self) -> dict[str, tuple]:
        """Each control the camera takes, with its (min, max, default): picamera2's ``camera_controls``.
        A control not in it is one the camera does not have."""
        return dict(self._open_camera().camera_controls)

    def set_controls(self, controls: dict[str, Any]) -> None:
        """Hand ``controls`` to the camera (libcamera applies them a few frames later: read frames
        until their metadata shows them). A control the camera rejects is a SourceError."""
        try:
            self._open_camera().set_controls(dict(controls))
        except (RuntimeError, KeyError, ValueError, TypeError) as exc:
            raise SourceError(f"{self.name}: the camera refused the controls {sorted(controls)}: {exc}") from None

    def _open_camera(self):
        if self._cam is None:
            raise SourceError(f"{self.name}: the camera is not open")
        return self._cam

    # ----- frames --------------------------------------------------------------------------------
    def _capture(self) -> Captured:
        request = self._next_request(flush=None, keep=True)
        try:
            metadata = request.get_metadata()
            image = request.make_array("main")  # a copy: valid after release
        except Exception:
            request.release()
            raise
        if "SensorTimestamp" not in metadata:
            request.release()
            raise SourceError(f"{self.name}: the camera gives no SensorTimestamp; frame times would be guesses")
        kept = {k: metadata[k] for k in KEPT_METADATA if k in metadata}
        return Captured(image, metadata["SensorTimestamp"] / 1e9, kept, release=request.release, owned=True)

    def _close(self) -> None:
        cam, self._cam = self._cam, None
        if cam is None:
            return
        try:
            cam.stop()
        except Exception:  # noqa: BLE001 - a dead camera may refuse to stop; closing still matters
            pass
        cam.close()


def _modes_text(modes: list[dict[str, Any]]) -> str:
    return ", ".join(f"{i}: {m['size'][0]}x{m['size'][1]}@{m['fps']:g}" for i, m in enumerate(modes))


#: sensors that expose and read every row at once (the Pi Global Shutter Camera)
GLOBAL_SHUTTER_SENSORS = ("imx296",)


def readout_s(properties: dict, mode: dict) -> float | None:
    """The rolling shutter's top-to-bottom readout in this sensor mode: at most one frame at the mode's
    highest rate (rows are read back to back; only the blanking between frames is left out), so
    ``1 / mode["fps"]``, an upper bound (the Module 3's 120 frames/s mode: 8.3 ms); 0 for a global shutter;
    None where the mode does not say its rate."""
    model = str(properties.get("Model", "")).lower()
    if any(model.startswith(m) for m in GLOBAL_SHUTTER_SENSORS):
        return 0.0
    fps = mode.get("fps")
    return round(1.0 / float(fps), 6) if fps else None

