"""The checks behind ``shotjudge doctor``: each one looks at one thing a match needs on this machine and
says in one line whether it is there. A check never raises for what it finds wrong: that is its FAIL line."""
from __future__ import annotations

import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from .i18n import _

__all__ = ["Check", "camera", "calibration", "detector", "disk", "clock", "NEED_FREE_GB"]

#: free space wanted where the journal and the clips go: a match's clips (one MP4 of a few MB per shot, a few
#: hundred shots) with room to spare, so a full card does not stop the recording in the last game
NEED_FREE_GB = 2.0
#: a wall clock before this has never been set (a Pi without a real-time clock boots at its last saved time,
#: or at 1970): the journal's times would be wrong
EARLIEST_WALL_S = 1735689600.0  # 2025-01-01 00:00 UTC
#: webcam modes asked for, to list what the driver really gives (OpenCV cannot list a camera's modes)
USB_PROBES = ((640, 480, 30.0), (1280, 720, 30.0), (1280, 720, 60.0), (1920, 1080, 30.0), (1920, 1080, 60.0))


@dataclass(frozen=True)
class Check:
    status: str  # "ok", "warn" or "FAIL"
    name: str
    text: str

    def line(self) -> str:
        return f"{self.status:<5} {self.name}: {self.text}"


def _fps(value: float) -> str:
    return f"{round(float(value), 2):g}"


def _picamera2_missing() -> str | None:
    """Why picamera2 cannot be used, or None. From pip alone it imports nothing: its camera library,
    libcamera, comes only from Raspberry Pi OS's apt, and a venv sees it only with --system-site-packages."""
    try:
        import picamera2  # noqa: F401
    except ImportError as exc:
        if getattr(exc, "name", None) == "libcamera" or "libcamera" in str(exc):
            return ("picamera2 is installed but libcamera's Python bindings are not visible (on Raspberry Pi OS: "
                    "sudo apt install python3-libcamera, and make the venv with --system-site-packages)")
        return "the picamera2 package is not installed (on Raspberry Pi OS: sudo apt install python3-picamera2)"
    except ValueError as exc:  # raspberrypi/picamera2#1211: apt's simplejpeg is built for numpy 1.x, the venv has 2.x
        first = (str(exc).splitlines() or [""])[0]
        hint = " (in the venv: pip install --force-reinstall --no-deps simplejpeg)" if "numpy" in first else ""
        return f"picamera2 cannot be imported: {first}{hint}"
    return None


def camera(spec: str, fps=None, size=None, settings=None, save_frame=None) -> tuple[list[Check], tuple[int, int] | None]:
    """Open the source as ``live`` would (no reconnecting), read one frame: its size, rate and modes."""
    from hardware import SourceError, open_source

    name = f"camera {spec}"
    if spec.startswith("picam") and (why := _picamera2_missing()):
        return [Check("FAIL", name, why)], None
    try:
        src = open_source(spec, fps=fps, size=size, reconnect=False, **(settings or {}))
        with src:
            frame = src.read()
            if frame is None:
                return [Check("FAIL", name, _("opened, but gave no frame"))], None
            w, h = frame.image.shape[1], frame.image.shape[0]
            text = f"{w}x{h} at {_fps(src.fps)} fps"
            extra = _picam_text(src) or _usb_text(src)
            if extra:
                text += f" ({extra})"
            checks = [Check("ok", name, text)] + [Check("warn", name, w_) for w_ in getattr(src, "warnings", [])]
        modes = _usb_modes(src.device) if hasattr(src, "device") else ""  # probed with the camera closed
        if modes:
            checks.append(Check("ok", f"{name} modes", modes))
        if save_frame:
            checks.append(_save(frame.image, save_frame, f"{name} picture"))
        return checks, (w, h)
    except SourceError as exc:
        text = str(exc).splitlines()[0]
        for prefix in (f"{spec}: ", "picam: "):
            text = text[len(prefix):] if text.startswith(prefix) else text
        return [Check("FAIL", name, text)], None


def _save(image, path: str, name: str) -> Check:
    """The frame as a PNG (written whole or not at all): a picture at live's settings for calibrate and
    --background."""
    from sim.video import write_png

    try:
        write_png(path, image)
    except OSError as exc:
        return Check("FAIL", name, _("cannot write {path}: {value}").format(path=path, value=exc.strerror or exc))
    return Check("ok", name, _("saved {value}x{value2} to {path}").format(value=image.shape[1], value2=image.shape[0], path=path))


def _picam_text(src) -> str:
    """The Pi camera's sensor modes (``PicameraSource.sensor_modes``, read off the open camera: ``info``
    names only the mode it chose) and the settings it locked; '' for any other source."""
    from hardware.picam import PicameraSource

    if not isinstance(src, PicameraSource):
        return ""
    info = src.info
    modes = ", ".join(f"{m['size'][0]}x{m['size'][1]}@{_fps(m['fps'])}" for m in src.sensor_modes()
                      if "size" in m and "fps" in m)  # (a sensor that is not raw lists only its format)
    gains = info.get("colour_gains")
    locked = f"; exposure {info.get('exposure_us')} µs, gain {info.get('analogue_gain')}"
    locked += f", colour gains {gains[0]:g},{gains[1]:g}" if gains else ""
    return f"sensor mode {info.get('sensor_mode')}; modes: {modes}{locked}"


def _usb_text(src) -> str:
    info = getattr(src, "info", {})
    return f"{info['actual']}, frames stamped by {info.get('clock', 'the host')}" if "actual" in info else ""


def _usb_modes(device: int) -> str:
    """What the webcam gives when asked for a few common modes (the driver answers with the nearest it has)."""
    import cv2

    from hardware.opencv import fourcc_text

    cap = cv2.VideoCapture(device, cv2.CAP_V4L2)
    found: list[tuple[int, int, float, str]] = []
    try:
        if not cap.isOpened():
            return ""
        for w, h, fps in USB_PROBES:
            for fourcc in ("MJPG", "YUYV"):
                cap.set(cv2.CAP_PROP_FOURCC, cv2.VideoWriter_fourcc(*fourcc))
                cap.set(cv2.CAP_PROP_FRAME_WIDTH, w)
                cap.set(cv2.CAP_PROP_FRAME_HEIGHT, h)
                cap.set(cv2.CAP_PROP_FPS, fps)
                got = (int(cap.get(cv2.CAP_PROP_FRAME_WIDTH)), int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT)),
                       round(float(cap.get(cv2.CAP_PROP_FPS)), 2), fourcc_text(cap.get(cv2.CAP_PROP_FOURCC)))
                if got not in found:
                    found.append(got)
    finally:
        cap.release()
    return ", ".join(f"{w}x{h}@{fps:g} {fourcc}".rstrip() for w, h, fps, fourcc in sorted(found))


def calibration(path: str | None, size: tuple[int, int] | None, game: str | None = None) -> tuple[list[Check], object]:
    """The calibration loads and was made for the camera's image size (and the game, when given)."""
    from .errors import UserError
    from .setup import check_calibration

    if path is None:
        return [Check("warn", "calibration", _("none given (--calibration FILE): live needs one (shotjudge calibrate)"))], None
    name = f"calibration {path}"
    try:
        if game is not None and size is not None:
            cal = check_calibration(path, size, game)
        else:
            from calibration.calfile import load_calibration

            cal = load_calibration(path, expected_image_size=size)
            if game is not None and cal.game != game:
                return [Check("FAIL", name, _("this calibration is for {game}, not {game2}").format(
                    game=cal.game, game2=game))], None
    except (ValueError, UserError) as exc:  # CalibrationError, a game mismatch: one line each
        text = str(exc).splitlines()[0]
        return [Check("FAIL", name, text[len(path) + 2:] if text.startswith(f"{path}: ") else text)], None
    w, h = cal.plane.image_size
    fits = "fits the camera" if size is not None else "not compared with a camera (no camera checked)"
    status = "ok" if size is not None else "warn"
    return [Check(status, name, _("{game}, {w}x{h}, {fits}; plane residual {rms_mm} mm RMS").format(
        game=cal.game, w=w, h=h, fits=fits, rms_mm=format(cal.rms_mm, '.2f')))], cal


def detector(kind: str, weights: str | None, cal) -> Check:
    """The detector ``live --detector KIND`` would build loads (the learned one is run once on a blank frame)."""
    from importlib.util import find_spec

    name = f"detector {kind}"
    if kind == "classical":
        if cal is not None:
            from vision.detectors import make_detector

            make_detector("classical", cal.plane, cal.profile, appearance=cal.piece_appearance())
            return Check("ok", name, _("built for {game} (it learns the empty board from --background at start)").format(
                game=cal.game))
        return Check("ok", name, _("built in, no model file (it learns the empty board from --background at start)"))
    from .weights import shipped_weights

    path = Path(weights) if weights else shipped_weights()
    if not path.exists():
        return Check("FAIL", name, _("model {path} not found").format(path=path))
    if find_spec("ultralytics") is None:
        return Check("FAIL", name, _("ultralytics is not installed (pip install '.[learned]'), or use --detector classical"))
    if path.is_dir() and path.name.endswith("_ncnn_model") and find_spec("ncnn") is None:
        return Check("FAIL", name, _("the NCNN model {name} needs the ncnn package (pip install ncnn)").format(name=path.name))
    if cal is None:
        return Check("warn", name, _("model {path} found, not test-run (give --calibration to load it)").format(path=path))
    from vision.detectors import make_detector
    from vision.types import VisionError

    import logging

    from vision.yolo_offline import offline_ultralytics

    offline_ultralytics()  # imported first: the import sets its logger's level
    quiet = logging.getLogger("ultralytics")  # its "Loading ... for NCNN inference" would be a line of its own
    level, t0 = quiet.level, time.perf_counter()
    quiet.setLevel(logging.WARNING)
    try:
        make_detector("learned", cal.plane, cal.profile, refine=True, drop_unfit=True, weights=path,
                      appearance=cal.piece_appearance())
    except VisionError as exc:
        return Check("FAIL", name, str(exc).splitlines()[0])
    finally:
        quiet.setLevel(level)
    return Check("ok", name, _("{name} loaded and ran once in {value} s").format(
        name=path.name, value=format(time.perf_counter() - t0, '.1f')))


def _existing(folder: Path) -> Path:
    """The folder, or the nearest folder above it that exists (where it would be made)."""
    folder = folder.resolve()
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return folder


def disk(folders: dict[str, Path], need_gb: float = NEED_FREE_GB) -> list[Check]:
    """Free space and write permission where each output goes; one line per file system."""
    groups: dict[int, list[tuple[str, Path, Path]]] = {}
    for what, folder in folders.items():
        probe = _existing(folder)
        groups.setdefault(probe.stat().st_dev, []).append((what, folder.resolve(), probe))
    checks = []
    for items in groups.values():
        places = ", ".join(dict.fromkeys(str(f) for _, f, _ in items))
        where = f"where the {' and the '.join(w for w, _, _ in items)} go ({places})"
        free_gb = shutil.disk_usage(items[0][2]).free / 1e9
        if not all(os.access(p, os.W_OK) for _, _, p in items):
            checks.append(Check("FAIL", "disk", _("cannot write {where}: no permission for this user").format(where=where)))
        elif free_gb < need_gb:
            checks.append(Check("FAIL", "disk", _("{free_gb} GB free {where} (need {need_gb} GB for a match's clips)").format(
                free_gb=format(free_gb, '.1f'), where=where, need_gb=format(need_gb, 'g'))))
        else:
            checks.append(Check("ok", "disk", _("{free_gb} GB free {where}").format(free_gb=format(free_gb, '.1f'), where=where)))
    return checks


def ntp_synchronised() -> tuple[bool | None, str]:
    """systemd's answer to 'is the clock synchronised?': (True/False, ""), or (None, why it cannot be asked)."""
    if shutil.which("timedatectl") is None:
        return None, "no timedatectl to ask"
    try:
        out = subprocess.run(["timedatectl", "show", "-p", "NTPSynchronized", "--value"], capture_output=True,
                             text=True, timeout=5)
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"timedatectl failed: {exc}"
    answer = out.stdout.strip()
    if out.returncode != 0 or answer not in ("yes", "no"):
        return None, "timedatectl cannot tell (" + ((out.stderr or out.stdout).strip().splitlines() or ["no answer"])[0] + ")"
    return answer == "yes", ""


def clock(settle_s: float = 0.2) -> Check:
    """The wall clock is set and synchronised (the journal stamps every entry with it), and does not jump
    against the monotonic clock (frame times use the monotonic one)."""
    wall = time.time()
    shown = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(wall))
    if wall < EARLIEST_WALL_S:
        return Check("FAIL", "clock", _("reads {shown}: the time was never set (connect to a network with time "
                                        "service, or set it with sudo date)").format(shown=shown))
    m0, w0 = time.monotonic(), time.time()
    time.sleep(settle_s)
    step_s = (time.time() - w0) - (time.monotonic() - m0)
    if abs(step_s) > 0.05:
        return Check("warn", "clock", _("the wall clock moved {step_s} s against the monotonic one while checked "
                                        "(being corrected now?); journal times may be off, frame times are not").format(
                                            step_s=format(step_s, '+.2f')))
    synced, why = ntp_synchronised()
    if synced:
        return Check("ok", "clock", _("{shown}, synchronised (NTP)").format(shown=shown))
    if synced is False:
        return Check("warn", "clock", _("{shown}, not synchronised (NTP): the journal's times may be off; frame times "
                                        "use the monotonic clock and are unaffected").format(shown=shown))
    return Check("warn", "clock", _("{shown}, synchronisation unknown: {why}").format(shown=shown, why=why))
