"""Camera intrinsics (focal lengths, principal point, lens distortion) from views of a ChArUco board.

The homography alone cannot undo a curved lens: straight board lines bow by a few pixels at the image edge
of a cheap wide lens, i.e. several millimetres. So the lens is calibrated once per camera (and focus/zoom
setting) by showing it a printed ChArUco board at ~10 poses, and the result is kept in the calibration file.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import cv2
import numpy as np

from .errors import CalibrationError
from .markers import aruco_dictionary

__all__ = ["CharucoSpec", "Intrinsics", "CharucoCalibrator", "calibrate_intrinsics", "nominal_intrinsics"]


@dataclass(frozen=True)
class CharucoSpec:
    """The printed board: squares across/down, square and marker sides in mm, ArUco dictionary (a different
    one from the table markers, so a board lying on the table never confuses the plane fit)."""

    squares_x: int = 7
    squares_y: int = 5
    square_mm: float = 32.0
    marker_mm: float = 24.0
    dictionary: str = "DICT_5X5_100"

    def board(self) -> "cv2.aruco.CharucoBoard":
        if self.marker_mm >= self.square_mm:
            raise CalibrationError("ChArUco marker side must be smaller than the square side")
        return cv2.aruco.CharucoBoard((self.squares_x, self.squares_y), float(self.square_mm), float(self.marker_mm),
                                      aruco_dictionary(self.dictionary))


@dataclass(frozen=True, eq=False)
class Intrinsics:
    """A calibrated (or assumed) lens: camera matrix, OpenCV distortion, RMS reprojection error in px."""

    image_size: tuple[int, int]
    camera_matrix: np.ndarray
    distortion: np.ndarray
    rms_px: float | None
    views: int
    source: str  # "charuco", "nominal" or "file"

    def to_dict(self) -> dict:
        return {"image_size": list(self.image_size), "camera_matrix": np.asarray(self.camera_matrix).tolist(),
                "distortion": np.asarray(self.distortion).ravel().tolist(), "rms_px": self.rms_px,
                "views": self.views, "source": self.source}


def nominal_intrinsics(image_size, hfov_deg: float = 70.0) -> Intrinsics:
    """A distortion-free pinhole with a typical field of view: only for a lens known to be straight (its
    error then shows up in the plane residual); calibrate with ChArUco otherwise."""
    w, h = (int(v) for v in image_size)
    f = (w / 2) / np.tan(np.radians(hfov_deg) / 2)
    k = np.array([[f, 0, (w - 1) / 2], [0, f, (h - 1) / 2], [0, 0, 1.0]])
    return Intrinsics((w, h), k, np.zeros(5), None, 0, "nominal")


class CharucoCalibrator:
    """Collects ChArUco corners view by view (``add``), then solves the lens (``calibrate``). Views with
    fewer than ``min_corners`` corners, or corners on one line, are skipped. ``flags`` go to
    ``cv2.calibrateCamera``; by default k3 is fixed at 0 (k1, k2, p1, p2 describe the usual webcam or Pi
    lens, and a free k3 overfits a handful of views)."""

    def __init__(self, spec: CharucoSpec = CharucoSpec(), min_corners: int = 8, flags: int = cv2.CALIB_FIX_K3):
        self.spec = spec
        self.board = spec.board()
        self._detector = cv2.aruco.CharucoDetector(self.board)
        self.min_corners = min_corners
        self.flags = flags
        self._obj: list[np.ndarray] = []
        self._img: list[np.ndarray] = []
        self.image_size: tuple[int, int] | None = None

    @property
    def views(self) -> int:
        return len(self._obj)

    def add(self, image: np.ndarray) -> int:
        """Detect the board in one image; returns the number of corners kept (0 if the view was skipped)."""
        size = (image.shape[1], image.shape[0])
        if self.image_size is None:
            self.image_size = size
        elif size != self.image_size:
            raise CalibrationError(f"calibration images differ in size: {size[0]}x{size[1]} after "
                                   f"{self.image_size[0]}x{self.image_size[1]}")
        gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
        corners, ids, _, _ = self._detector.detectBoard(gray)
        if ids is None or len(ids) < self.min_corners:
            return 0
        if self.board.checkCharucoCornersCollinear(ids):
            return 0
        obj, img = self.board.matchImagePoints(corners, ids)
        self._obj.append(obj.reshape(-1, 3).astype(np.float32))
        self._img.append(img.reshape(-1, 2).astype(np.float32))
        return len(ids)

    def calibrate(self, min_views: int = 4) -> Intrinsics:
        if self.views < min_views:
            raise CalibrationError(f"the ChArUco board was found in {self.views} image(s); need at least {min_views} "
                                   f"views at different angles")
        rms, k, d, _, _ = cv2.calibrateCamera(self._obj, self._img, self.image_size, None, None, flags=self.flags)
        if not np.isfinite(rms):
            raise CalibrationError("lens calibration did not converge (views too similar?)")
        return Intrinsics(self.image_size, k, d.ravel(), float(rms), self.views, "charuco")


def calibrate_intrinsics(images: Iterable[np.ndarray], spec: CharucoSpec = CharucoSpec(), min_views: int = 4,
                         flags: int = cv2.CALIB_FIX_K3) -> Intrinsics:
    """Lens calibration from any iterable of frames showing the ChArUco board (folder, video, camera)."""
    cal = CharucoCalibrator(spec, flags=flags)
    for image in images:
        cal.add(image)
    return cal.calibrate(min_views)
