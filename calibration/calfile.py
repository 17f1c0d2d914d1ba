"""The calibration file (``shotjudge.calibration/1``): everything needed to turn this camera's pixels into
board millimetres again, for live play and for replays. Written atomically; read back strictly."""
from __future__ import annotations

import datetime as _dt
import json
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from rules.game import GAMES

from .atomic import Staged, write_atomic
from .errors import CalibrationError, parse_json
from .plane import PlaneFit, PlaneMap
from .profile import Profile, ProfileError, load_profile, profile_from_dict

__all__ = ["SCHEMA", "Calibration", "CameraSettings", "save_calibration", "load_calibration", "load_camera_settings"]

SCHEMA = "shotjudge.calibration/1"
INTRINSICS_SOURCES = ("charuco", "nominal", "file", "known")
CAMERA_KINDS = ("picam", "usb")


@dataclass(frozen=True)
class CameraSettings:
    """The camera's settings locked while it was calibrated (``shotjudge setup``): the empty board and the
    piece colours are only right for frames taken the same way, so ``live`` opens the camera with these.
    Pi camera: ``exposure_us``, ``analogue_gain``, ``colour_gains`` (red, blue); webcam: ``exposure`` (driver
    units, V4L2: 100 µs steps), ``gain`` and ``wb_temperature_k``. ``refused``: controls the camera would not
    lock (left automatic). None: not known or not locked. ``readout_s``: the rolling shutter's readout, top row
    to bottom row of the picture (0: a global shutter; None: not known, taken as 0):
    vision dates each sighting by its row (``vision.rows``)."""

    kind: str  # "picam" or "usb"
    size: tuple[int, int]
    fps: float
    exposure_us: int | None = None
    analogue_gain: float | None = None
    colour_gains: tuple[float, float] | None = None
    exposure: float | None = None
    gain: float | None = None
    wb_temperature_k: int | None = None
    refused: tuple[str, ...] = ()
    readout_s: float | None = None

    def to_dict(self) -> dict:
        return {"kind": self.kind, "size": list(self.size), "fps": self.fps, "exposure_us": self.exposure_us,
                "analogue_gain": self.analogue_gain,
                "colour_gains": list(self.colour_gains) if self.colour_gains is not None else None,
                "exposure": self.exposure, "gain": self.gain, "wb_temperature_k": self.wb_temperature_k,
                "refused": list(self.refused), **({"readout_s": self.readout_s} if self.readout_s is not None else {})}


@dataclass(frozen=True, eq=False)
class Calibration:
    """One camera over one board: profile, lens, plane and how well it fitted."""

    profile: Profile
    plane: PlaneMap
    rms_mm: float
    max_mm: float
    rms_px: float
    points: int
    method: str = "markers"  # "markers" or "manual"
    marker_ids: tuple[int, ...] = ()
    intrinsics_source: str = "charuco"  # "charuco", "nominal", "file" or "known"
    intrinsics_rms_px: float | None = None
    created: str = ""
    appearance: Any = None  # calibration.appearance.Appearance measured on this camera (optional)
    camera: CameraSettings | None = None  # the settings the camera was locked to (optional)

    @property
    def game(self) -> str:
        return self.profile.game

    @classmethod
    def from_fit(cls, profile: Profile, fit: PlaneFit, intrinsics_source: str = "charuco",
                 intrinsics_rms_px: float | None = None, created: str | None = None) -> "Calibration":
        created = created or _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()
        return cls(profile, fit.plane, fit.rms_mm, fit.max_mm, fit.rms_px, fit.points, fit.method, fit.marker_ids,
                   intrinsics_source, intrinsics_rms_px, created)

    def with_fit(self, fit: PlaneFit, created: str | None = None) -> "Calibration":
        """The same lens and profile with a new plane (re-calibration after the board moved)."""
        return replace(Calibration.from_fit(self.profile, fit, self.intrinsics_source, self.intrinsics_rms_px, created),
                       appearance=self.appearance, camera=self.camera)

    def with_appearance(self, appearance) -> "Calibration":
        """The same calibration with piece colours measured on this camera."""
        return replace(self, appearance=appearance)

    def piece_appearance(self):
        """The piece colours a detector starts from: measured here, else (per class) the profile's; a
        calibration file written before profiles had colours gets the game's shipped defaults."""
        from .appearance import merged
        from .profile import default_profile

        nominal = self.profile.appearance or default_profile(self.game).appearance
        return merged(self.appearance, nominal)

    def to_dict(self) -> dict:
        p = self.profile.to_dict()
        return {
            "schema": SCHEMA,
            "game": self.game,
            "profile": {"name": p["name"], "defaults_unconfirmed": p["defaults_unconfirmed"],
                        "geometry": p["geometry"], "markers": p["markers"],
                        **({"appearance": p["appearance"]} if "appearance" in p else {})},
            "image_size": list(self.plane.image_size),
            "camera_matrix": self.plane.camera_matrix.tolist(),
            "distortion": self.plane.distortion.tolist(),
            "homography_image_to_board": self.plane.homography.tolist(),
            "residuals": {"rms_mm": self.rms_mm, "max_mm": self.max_mm, "rms_px": self.rms_px, "points": self.points},
            "method": self.method,
            "marker_ids": list(self.marker_ids),
            "intrinsics": {"source": self.intrinsics_source, "rms_px": self.intrinsics_rms_px},
            "created": self.created,
            **({"appearance": self.appearance.to_dict()} if self.appearance is not None else {}),
            **({"camera": self.camera.to_dict()} if self.camera is not None else {}),
        }


def save_calibration(calibration: Calibration, path, stage: Staged | None = None) -> Path:
    """Write ``calibration`` to ``path`` atomically (temp file in the same folder, then rename), or into
    ``stage``'s group of files (``calibration.atomic``)."""
    text = json.dumps(calibration.to_dict(), indent=2) + "\n"

    def write(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())

    return stage.file(path, write) if stage is not None else write_atomic(path, write)


def _finite(value, path: str, where: str) -> float:
    if not isinstance(value, bool) and isinstance(value, (int, float)) and abs(value) < 1e300:  # nor nan, nor 10**400
        return float(value)
    raise CalibrationError(f"{where}: {path}: must be a finite number, got {value!r:.60}")


def _matrix(data: dict, key: str, shape: tuple[int, int], where: str) -> np.ndarray:
    if key not in data:
        raise CalibrationError(f"{where}: {key} is missing")
    rows = data[key]
    if not isinstance(rows, list) or len(rows) != shape[0] or not all(isinstance(r, list) and len(r) == shape[1] for r in rows):
        raise CalibrationError(f"{where}: {key} must be a {shape[0]}x{shape[1]} list of numbers")
    return np.array([[_finite(v, f"{key}[{i}][{j}]", where) for j, v in enumerate(r)] for i, r in enumerate(rows)])


def _camera(data: dict, size: list, where: str) -> tuple[np.ndarray, np.ndarray]:
    """The lens: a pinhole camera matrix whose principal point lies in the picture, and its distortion."""
    k = _matrix(data, "camera_matrix", (3, 3), where)
    if k[0, 0] <= 0 or k[1, 1] <= 0:
        raise CalibrationError(f"{where}: camera_matrix: the focal lengths [0][0] and [1][1] must be positive")
    if k[1, 0] != 0 or k[2, 0] != 0 or k[2, 1] != 0 or k[2, 2] != 1:
        raise CalibrationError(f"{where}: camera_matrix: must be [[fx, skew, cx], [0, fy, cy], [0, 0, 1]]")
    if not (0 <= k[0, 2] <= size[0] and 0 <= k[1, 2] <= size[1]):
        raise CalibrationError(f"{where}: camera_matrix: the principal point ({k[0, 2]:.6g}, {k[1, 2]:.6g}) px lies "
                               f"outside the {size[0]}x{size[1]} picture")
    dist = data.get("distortion")
    if not isinstance(dist, list) or len(dist) not in (4, 5, 8, 12, 14):
        raise CalibrationError(f"{where}: distortion must be a list of 4, 5, 8, 12 or 14 numbers")
    return k, np.array([_finite(v, f"distortion[{i}]", where) for i, v in enumerate(dist)])


def _number(value, what: str, where: str, optional: bool = False):
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1e300:
        raise CalibrationError(f"{where}: {what} must be a non-negative number, got {value!r}")
    return float(value)


def _profile(data: dict, where: str) -> Profile:
    snap = data.get("profile")
    if not isinstance(snap, dict) or not isinstance(snap.get("name"), str):
        raise CalibrationError(f"{where}: profile must be an object with a name")
    try:
        if "geometry" not in snap:  # a reference only: the profile must exist here
            profile = load_profile(snap["name"])
        else:
            full = {"schema": "shotjudge.profile/1", "game": data.get("game"), **snap}
            profile = profile_from_dict(full, snap["name"])
    except ProfileError as exc:
        raise CalibrationError(f"{where}: profile: {exc}") from None
    if profile.game != data.get("game"):
        raise CalibrationError(f"{where}: profile {profile.name!r} is for {profile.game}, the file says {data.get('game')!r}")
    return profile


def load_calibration(path, expected_image_size=None) -> Calibration:  # noqa: C901
    """Read a calibration file, refusing (``CalibrationError``, one line) anything missing, truncated,
    malformed or inconsistent - including a file made for another image size than ``expected_image_size``."""
    where = str(path)
    p = Path(path)
    if not p.is_file():
        raise CalibrationError(f"calibration file {where} does not exist (run: shotjudge calibrate --out {where})")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise CalibrationError(f"{where}: not a calibration file (not UTF-8 text)") from None
    data = parse_json(text, where, CalibrationError, "a calibration file")
    if not isinstance(data, dict):
        raise CalibrationError(f"{where}: a calibration file must be a JSON object")
    if data.get("schema") != SCHEMA:
        raise CalibrationError(f"{where}: schema must be {SCHEMA!r}, got {data.get('schema')!r} "
                               f"(re-run shotjudge calibrate)")
    if data.get("game") not in tuple(GAMES):
        raise CalibrationError(f"{where}: game must be 'novuss' or 'cvrnkana', got {data.get('game')!r}")
    profile = _profile(data, where)
    size = data.get("image_size")
    if (not isinstance(size, list) or len(size) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) and 0 < v <= 100_000 for v in size)):
        raise CalibrationError(f"{where}: image_size must be [width, height] in pixels, got {size!r:.60}")
    if expected_image_size is not None and tuple(size) != tuple(int(v) for v in expected_image_size):
        w, h = expected_image_size
        raise CalibrationError(f"{where}: made for {size[0]}x{size[1]} images but the frames are {w}x{h} "
                               f"(re-calibrate at this resolution)")
    k, dist = _camera(data, size, where)
    h = _matrix(data, "homography_image_to_board", (3, 3), where)
    res = data.get("residuals")
    if not isinstance(res, dict):
        raise CalibrationError(f"{where}: residuals must be an object with rms_mm, max_mm, rms_px, points")
    intr = _intrinsics(data, where)
    method = data.get("method", "markers")
    if method not in ("markers", "manual"):
        raise CalibrationError(f"{where}: method must be 'markers' or 'manual', got {method!r}")
    ids = data.get("marker_ids", [])
    if not isinstance(ids, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
        raise CalibrationError(f"{where}: marker_ids must be a list of integers")
    try:  # the lens was checked above: what PlaneMap refuses now is the homography
        plane = PlaneMap((size[0], size[1]), k, dist, h)
    except CalibrationError as exc:
        raise CalibrationError(f"{where}: homography_image_to_board: {exc}") from None
    points = res.get("points")
    if isinstance(points, bool) or not isinstance(points, int) or not 4 <= points <= 1_000_000:
        raise CalibrationError(f"{where}: residuals.points must be a whole number from 4 to 1000000, got {points!r:.60}")
    _check_board_in_view(plane, profile, where)
    appearance = None
    if data.get("appearance") is not None:
        from .appearance import AppearanceError, appearance_from_dict

        try:
            appearance = appearance_from_dict(data["appearance"], profile.game, f"{where}: appearance", complete=False)
        except AppearanceError as exc:
            raise CalibrationError(str(exc)) from None
    return Calibration(profile, plane, _number(res.get("rms_mm"), "residuals.rms_mm", where),
                       _number(res.get("max_mm"), "residuals.max_mm", where),
                       _number(res.get("rms_px"), "residuals.rms_px", where), points, method, tuple(ids),
                       intr.get("source", "file"), _number(intr.get("rms_px"), "intrinsics.rms_px", where, True),
                       data.get("created", ""), appearance, _camera_block(data, where))


def load_camera_settings(path) -> CameraSettings | None:
    """Only the camera block of a calibration file (None if it has none, or cannot be read: the full
    ``load_calibration`` says why); what ``live`` needs before it opens the camera."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    return _camera_block(data, str(path)) if isinstance(data, dict) else None


def _camera_block(data: dict, where: str) -> CameraSettings | None:
    """The optional ``camera`` block; files written before it existed have none (None)."""
    cam = data.get("camera")
    if cam is None:
        return None
    w = f"{where}: camera"
    if not isinstance(cam, dict) or cam.get("kind") not in CAMERA_KINDS:
        raise CalibrationError(f"{w} must be an object whose kind is 'picam' or 'usb', got {cam!r:.60}")
    size, gains, refused = cam.get("size"), cam.get("colour_gains"), cam.get("refused", [])
    if (not isinstance(size, list) or len(size) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) and 0 < v <= 100_000 for v in size)):
        raise CalibrationError(f"{w}.size must be [width, height] in pixels, got {size!r:.60}")
    if gains is not None and (not isinstance(gains, list) or len(gains) != 2):
        raise CalibrationError(f"{w}.colour_gains must be [red, blue] or null, got {gains!r:.60}")
    if not isinstance(refused, list) or not all(isinstance(r, str) for r in refused):
        raise CalibrationError(f"{w}.refused must be a list of control names")
    fps = _number(cam.get("fps"), "camera.fps", where)
    if fps <= 0:
        raise CalibrationError(f"{w}.fps must be positive, got {fps:g}")

    def opt(key):
        return _number(cam.get(key), f"camera.{key}", where, optional=True)

    exposure_us, wb, readout_s = opt("exposure_us"), opt("wb_temperature_k"), opt("readout_s")
    if readout_s is not None and abs(readout_s) > 1.0 / fps:  # a frame's rows are all read within the frame
        raise CalibrationError(f"{w}.readout_s must be at most a frame ({1.0 / fps:.4g} s at {fps:g} frames/s), "
                               f"got {readout_s:g}")
    return CameraSettings(cam["kind"], (size[0], size[1]), fps, None if exposure_us is None else int(exposure_us),
                          opt("analogue_gain"),
                          None if gains is None else tuple(_number(g, "camera.colour_gains", where) for g in gains),
                          opt("exposure"), opt("gain"), None if wb is None else int(wb), tuple(refused), readout_s)


def _intrinsics(data: dict, where: str) -> dict:
    """Where the lens came from (optional), and when the file was made (optional text)."""
    intr = data.get("intrinsics", {})
    if not isinstance(intr, dict):
        raise CalibrationError(f"{where}: intrinsics must be an object with source and rms_px, got {intr!r:.60}")
    if intr.get("source", "file") not in INTRINSICS_SOURCES:
        raise CalibrationError(f"{where}: intrinsics.source must be one of {', '.join(INTRINSICS_SOURCES)}, "
                               f"got {intr.get('source')!r:.60}")
    if not isinstance(data.get("created", ""), str):
        raise CalibrationError(f"{where}: created must be a date as text, got {data.get('created')!r:.60}")
    return intr


def _check_board_in_view(plane: PlaneMap, profile: Profile, where: str) -> None:
    """A homography that puts the board behind the camera or flips it is not a calibration."""
    spec = profile.spec
    # a square the camera must see the right way round: round the pit (its diameter out), else the board
    r = spec.geometry.pit_diameter_mm if spec.has_pit else spec.bounds_mm[0]
    square = np.array([[-r, r], [r, r], [r, -r], [-r, -r]])
    q = np.column_stack([square, np.ones(4)]) @ plane.board_to_undistorted.T
    if np.any(q[:, 2] <= 0):
        raise CalibrationError(f"{where}: homography_image_to_board: puts the board behind the camera (file edited or corrupt)")
    px = q[:, :2] / q[:, 2:3]
    # board +y is image up: the board's corners keep their clockwise order in the image
    area = 0.5 * np.sum(px[:, 0] * np.roll(px[:, 1], -1) - np.roll(px[:, 0], -1) * px[:, 1])
    if area <= 0:
        raise CalibrationError(f"{where}: homography_image_to_board: mirrors the board (file edited or corrupt)")
