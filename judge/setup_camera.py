"""Exposure, gain and white balance found by the camera's automatics once, then locked, for ``shotjudge setup``.

The frame sources keep them fixed by design (hardware/picam.py) or leave a webcam's automatics on; the
empty board and the piece colours are only right for frames taken with the same settings, so set-up lets
the automatics settle on the room's light, reads what they chose (the metering) and locks exactly that on
the driver: picamera2 controls for the Pi camera, V4L2 controls through OpenCV for a webcam, through the
sources' public control methods (``PicameraSource.set_controls``/``control_limits``,
``UsbCameraSource.get_control``/``set_control``). A control the camera refuses is named in the status line
and left out of what ``live`` re-applies.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from judge.i18n import _

__all__ = ["camera_kind", "Metering", "meter_and_lock", "open_kwargs", "settings_for_live"]

#: how close (relative) a frame's reported value must come to the locked one to count as taken
TAKEN = 0.02


def camera_kind(spec: str) -> str | None:
    """``picam`` or ``usb`` for a camera ``--source``, None for anything else (a file, a stream)."""
    text = (spec or "").strip()
    if re.fullmatch(r"picam(:\d+)?", text):
        return "picam"
    if re.fullmatch(r"usb:\d+", text):
        return "usb"
    return None


@dataclass
class Metering:
    """What the automatics chose, what was locked, and what the camera refused."""

    kind: str
    values: dict  # setting -> value as metered (exposure_us/analogue_gain/colour_gains or exposure/gain/wb)
    locked: list = field(default_factory=list)
    refused: list = field(default_factory=list)
    notes: list = field(default_factory=list)

    def status(self, name: str, size, fps: float, frames: int) -> str:
        v = self.values
        if self.kind == "picam":
            seen = (f"exposure {v['exposure_us']} µs, gain {v['analogue_gain']:.2f}, "
                    f"colour gains {v['colour_gains'][0]:.2f},{v['colour_gains'][1]:.2f}")
        else:
            seen = ", ".join(f"{label} {v[k]:g}{unit}" if v.get(k) is not None else f"{label} not reported"
                             for k, label, unit in (("exposure", "exposure", " (webcam units)"), ("gain", "gain", ""),
                                                    ("wb_temperature_k", "white balance", " K")))
        text = (f"camera: {name} {size[0]}x{size[1]} at {fps:g} fps; metered over {frames} frames: {seen}; "
                f"locked: {', '.join(self.locked) or 'nothing'}")
        if self.refused:
            text += f"; REFUSED by the camera: {', '.join(self.refused)} (left automatic: pictures may drift)"
        return text + "".join(f"; {n}" for n in self.notes)


def meter_and_lock(source, kind: str, settle_frames: int) -> Metering:
    """Let the automatics of the open ``source`` settle over ``settle_frames`` frames, then lock them."""
    return (_picam if kind == "picam" else _usb)(source, max(1, settle_frames))


def _picam(source, frames: int) -> Metering:
    source.set_controls({"AeEnable": True, "AwbEnable": True})
    meta: dict = {}
    for _frame in range(frames):
        meta = dict(source.read().metadata)
    if not all(k in meta for k in ("ExposureTime", "AnalogueGain", "ColourGains")):
        from .errors import UserError

        raise UserError(_("{name}: the camera reports no exposure, gain or colour gains to lock").format(name=source.name))
    exposure_us, gain = int(meta["ExposureTime"]), float(meta["AnalogueGain"])
    gains = (round(float(meta["ColourGains"][0]), 4), round(float(meta["ColourGains"][1]), 4))
    m = Metering("picam", {"exposure_us": exposure_us, "analogue_gain": gain, "colour_gains": gains})
    frame_us = int(round(1e6 / source.fps))
    if exposure_us > frame_us:  # the same light in a shorter exposure: the gain makes up the difference
        limit = source.control_limits().get("AnalogueGain", (1.0, 16.0, None))[1] or 16.0
        gain = min(float(limit), gain * exposure_us / frame_us)
        m.notes.append(f"exposure shortened to {frame_us} µs to fit a frame, gain raised to {gain:.2f}")
        exposure_us = frame_us
    m.values.update(exposure_us=exposure_us, analogue_gain=round(gain, 4))
    wanted = {"AeEnable": False, "AwbEnable": False, "ExposureTime": exposure_us, "AnalogueGain": gain,
              "ColourGains": gains}
    names = {"ExposureTime": "exposure", "AnalogueGain": "gain", "ColourGains": "white balance"}
    known = source.control_limits()
    refused = [k for k in wanted if k not in known]
    try:
        source.set_controls({k: v for k, v in wanted.items() if k in known})
    except ValueError as exc:  # a SourceError: the camera rejected the controls
        refused = list(wanted)
        m.notes.append(f"set_controls failed: {exc}")
    meta = {}
    for _frame in range(10):  # libcamera applies controls a few frames late
        meta = dict(source.read().metadata)
        if _taken(meta, wanted):
            break
    needs = {"ExposureTime": "AeEnable", "AnalogueGain": "AeEnable", "ColourGains": "AwbEnable"}
    for key, label in names.items():
        if key in refused or needs[key] in refused:  # the value, or turning its automatic off
            m.refused.append(label)
        elif not _taken(meta, {key: wanted[key]}):
            m.refused.append(f"{label} (set but frames show {meta.get(key)})")
        else:
            m.locked.append(label)
    return m


def _taken(meta: dict, wanted: dict) -> bool:
    for key in ("ExposureTime", "AnalogueGain", "ColourGains"):
        if key not in wanted:
            continue
        got, want = meta.get(key), wanted[key]
        if got is None:
            return False
        pairs = zip(got, want) if isinstance(want, tuple) else [(got, want)]
        if any(abs(float(a) - float(b)) > TAKEN * max(abs(float(b)), 1e-6) for a, b in pairs):
            return False
    return True


def _usb(source, frames: int) -> Metering:
    import cv2

    source.set_control(cv2.CAP_PROP_AUTO_EXPOSURE, 3)  # V4L2: 3 = automatic (an earlier set-up may have left it manual)
    source.set_control(cv2.CAP_PROP_AUTO_WB, 1)
    for _frame in range(frames):
        source.read()
    values = {}
    for key, prop in (("exposure", cv2.CAP_PROP_EXPOSURE), ("gain", cv2.CAP_PROP_GAIN),
                      ("wb_temperature_k", cv2.CAP_PROP_WB_TEMPERATURE)):
        got = source.get_control(prop)
        values[key] = got if got > 0 else None  # OpenCV gives 0 or -1 for a control the driver lacks
    m = Metering("usb", values)
    steps = {"exposure": [(cv2.CAP_PROP_AUTO_EXPOSURE, 1), (cv2.CAP_PROP_EXPOSURE, values["exposure"])],
             "gain": [(cv2.CAP_PROP_GAIN, values["gain"])],
             "white balance": [(cv2.CAP_PROP_AUTO_WB, 0), (cv2.CAP_PROP_WB_TEMPERATURE, values["wb_temperature_k"])]}
    for label, sets in steps.items():
        if any(value is None for _, value in sets):
            m.refused.append(f"{label} (not reported by the webcam)")
        elif all(source.set_control(prop, float(value)) for prop, value in sets):  # stops at the first refusal
            m.locked.append(label)
        else:
            m.refused.append(label)
    if values["wb_temperature_k"] is not None:
        values["wb_temperature_k"] = int(round(values["wb_temperature_k"]))
    return m


def recorded(metering: Metering, size, fps: float, readout_s: float | None = None):
    """The calibration's camera block for what was locked (``readout_s``: the rolling shutter's, as the
    source reports it; None: not known)."""
    from calibration.calfile import CameraSettings

    locked = set(metering.locked)
    v = {k: value for k, value in metering.values.items()  # only what the camera took
         if {"exposure_us": "exposure", "analogue_gain": "gain", "colour_gains": "white balance",
             "wb_temperature_k": "white balance"}.get(k, k) in locked}
    return CameraSettings(metering.kind, tuple(size), float(fps), refused=tuple(metering.refused), readout_s=readout_s, **v)


def open_kwargs(camera) -> dict:
    """``open_source`` settings that open the camera as ``camera`` (a CameraSettings) recorded it."""
    keys = ("exposure_us", "analogue_gain", "colour_gains") if camera.kind == "picam" else ("exposure", "wb_temperature_k")
    out = {"fps": camera.fps, "size": tuple(camera.size)}
    out.update({k: getattr(camera, k) for k in keys if getattr(camera, k) is not None})
    return out


def settings_for_live(calibration_path: str, spec: str, fps, size, given: dict) -> tuple[dict, str | None]:
    """What ``live`` opens ``spec`` with: the options given (``fps``, ``size`` and the camera settings in
    ``given``), the rest from the calibration's camera block when it was made on this kind of camera; and a
    line saying what was taken from the file (None if nothing)."""
    from calibration.calfile import load_camera_settings

    out = {"fps": fps, "size": size, **given}
    camera = load_camera_settings(calibration_path) if camera_kind(spec) else None
    if camera is None or camera.kind != camera_kind(spec):
        return out, None
    used = {k: v for k, v in open_kwargs(camera).items() if out.get(k) is None}
    out.update(used)
    if not used:
        return out, None
    shown = ", ".join(f"{k} {'x'.join(map(str, v)) if k == 'size' else ','.join(map(str, v)) if isinstance(v, tuple) else v}"
                      for k, v in used.items())
    return out, f"camera settings from {calibration_path}: {shown}"
