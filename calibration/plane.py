"""The playing plane: the only place image pixels become board millimetres and back.

A ``PlaneMap`` holds the lens (camera matrix + distortion) and the homography from *undistorted* image
pixels to board mm. Pixels given to it and returned by it are the camera's own (distorted) pixels, so a
caller never undistorts by hand. It is found from the ArUco markers the profile places (``fit_markers``),
from four clicked points (``from_points``), or read from a calibration file (``calibration.calfile``).
"""
from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from .errors import CalibrationError
from .markers import MarkerDetection, MarkerDetector, marker_corners_mm
from .profile import Profile

__all__ = ["PlaneMap", "PlaneFit", "fit_markers", "fit_detection", "from_points", "Rectifier"]

_UNDISTORT = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 40, 1e-10)


def _as_points(pts) -> np.ndarray:
    a = np.asarray(pts, float)
    return a.reshape(-1, 2)


def _check_homography(h: np.ndarray, what: str) -> np.ndarray:
    h = np.asarray(h, float)
    if h.shape != (3, 3) or not np.all(np.isfinite(h)):
        raise CalibrationError(f"{what} must be a finite 3x3 matrix")
    s = np.linalg.svd(h, compute_uv=False)
    if s[-1] <= 1e-12 * s[0]:
        raise CalibrationError(f"{what} is singular (it maps the image onto a line or a point)")
    return h / h[2, 2] if abs(h[2, 2]) > 1e-12 else h


def _lens_terms(dist: np.ndarray) -> tuple | None:
    """The twelve coefficients of ``_distort_normalised`` (zeros where the model has fewer), or None for
    the tilted model; worked out once per lens, not per call (the rim fits map points many times a frame)."""
    if len(dist) > 12 and np.any(dist[12:]):
        return None
    d = np.zeros(12)
    d[:min(len(dist), 12)] = dist[:12]
    return tuple(d)


def _distort_normalised(x: np.ndarray, y: np.ndarray, terms: tuple | None):
    """OpenCV's lens model (radial, tangential, rational, thin prism) in numpy: ``cv2.projectPoints`` is
    ~10x slower on the millions of points a remap table needs. ``terms``: ``_lens_terms``. Returns
    (None, None) for the tilted model."""
    if terms is None:
        return None, None
    k1, k2, p1, p2, k3, k4, k5, k6, s1, s2, s3, s4 = terms
    r2 = x * x + y * y
    radial = (1 + r2 * (k1 + r2 * (k2 + r2 * k3))) / (1 + r2 * (k4 + r2 * (k5 + r2 * k6)))
    xd = x * radial + 2 * p1 * x * y + p2 * (r2 + 2 * x * x) + s1 * r2 + s2 * r2 * r2
    yd = y * radial + p1 * (r2 + 2 * y * y) + 2 * p2 * x * y + s3 * r2 + s4 * r2 * r2
    return xd, yd


@dataclass(frozen=True, eq=False)
class PlaneMap:
    """Image pixels <-> board mm for one camera and one board position (read-only arrays)."""

    image_size: tuple[int, int]  # (width, height) px
    camera_matrix: np.ndarray  # 3x3
    distortion: np.ndarray  # OpenCV order k1, k2, p1, p2[, k3, ...]
    homography: np.ndarray  # undistorted image px -> board mm

    def __post_init__(self):
        k = np.array(self.camera_matrix, float)
        if k.shape != (3, 3) or not np.all(np.isfinite(k)) or k[0, 0] <= 0 or k[1, 1] <= 0:
            raise CalibrationError("camera matrix must be a finite 3x3 matrix with positive focal lengths")
        d = np.array(self.distortion, float).ravel()
        if len(d) not in (4, 5, 8, 12, 14) or not np.all(np.isfinite(d)):
            raise CalibrationError("distortion must be 4, 5, 8, 12 or 14 finite numbers (OpenCV order)")
        h = _check_homography(self.homography, "image->board homography")
        w, ht = (int(v) for v in self.image_size)
        if w <= 0 or ht <= 0:
            raise CalibrationError(f"image size must be positive, got {self.image_size}")
        for name, value in (("camera_matrix", k), ("distortion", d), ("homography", h)):
            value.setflags(write=False)
            object.__setattr__(self, name, value)
        object.__setattr__(self, "image_size", (w, ht))
        inv = np.linalg.inv(h)
        inv.setflags(write=False)
        object.__setattr__(self, "_inverse", inv / inv[2, 2])
        object.__setattr__(self, "_distorted", bool(np.any(d)))
        object.__setattr__(self, "_lens", _lens_terms(d))

    @property
    def board_to_undistorted(self) -> np.ndarray:
        return self._inverse

    def undistort_px(self, px) -> np.ndarray:
        pts = _as_points(px)
        if not np.any(self.distortion):
            return pts.copy()
        return cv2.undistortPoints(pts.reshape(-1, 1, 2), self.camera_matrix, self.distortion, R=np.eye(3),
                                   P=self.camera_matrix, criteria=_UNDISTORT).reshape(-1, 2)

    def distort_px(self, undistorted_px) -> np.ndarray:
        pts = _as_points(undistorted_px)
        if not self._distorted or len(pts) == 0:
            return pts.copy()
        k = self.camera_matrix
        x = (pts[:, 0] - k[0, 2]) / k[0, 0]
        y = (pts[:, 1] - k[1, 2]) / k[1, 1]
        xd, yd = _distort_normalised(x, y, self._lens)
        if xd is None:  # tilted-sensor model: let OpenCV do it
            out, _ = cv2.projectPoints(np.column_stack([x, y, np.ones(len(x))]).reshape(-1, 1, 3), np.zeros(3),
                                       np.zeros(3), k, self.distortion)
            return out.reshape(-1, 2)
        return np.column_stack([k[0, 0] * xd + k[0, 1] * yd + k[0, 2], k[1, 1] * yd + k[1, 2]])

    def to_board_mm(self, px) -> np.ndarray:
        """Image pixels (N,2) as the camera delivers them -> board mm (N,2)."""
        und = self.undistort_px(px)
        q = np.column_stack([und, np.ones(len(und))]) @ self.homography.T
        return q[:, :2] / q[:, 2:3]

    def to_image_px(self, mm) -> np.ndarray:
        """Board mm (N,2) -> image pixels (N,2) as the camera delivers them (lens distortion applied)."""
        pts = _as_points(mm)
        q = np.column_stack([pts, np.ones(len(pts))]) @ self._inverse.T
        return self.distort_px(q[:, :2] / q[:, 2:3])

    def mm_per_px(self, mm) -> np.ndarray:
        """Local scale (mm per image pixel) at board points, for tolerances given in pixels."""
        pts = _as_points(mm)
        a = self.to_image_px(pts)
        b = self.to_image_px(pts + [1.0, 0.0])
        return 1.0 / np.linalg.norm(b - a, axis=1)

    def with_homography(self, homography) -> "PlaneMap":
        return PlaneMap(self.image_size, self.camera_matrix, self.distortion, homography)


@dataclass(frozen=True, eq=False)
class PlaneFit:
    """A fitted plane and how well it fits: residuals of the points used, in board mm and image px."""

    plane: PlaneMap
    rms_mm: float
    max_mm: float
    rms_px: float
    points: int
    marker_ids: tuple[int, ...] = ()
    method: str = "markers"


def _fit(image_px: np.ndarray, board_mm: np.ndarray, image_size, camera_matrix, distortion, ransac_mm: float,
         method: str, ids=()) -> PlaneFit:
    k = np.asarray(camera_matrix, float)
    d = np.asarray(distortion, float).ravel()
    probe = PlaneMap(image_size, k, d, np.eye(3))
    und = probe.undistort_px(image_px)
    if len(und) == 4:
        h, _ = cv2.findHomography(und, board_mm, 0)
        if h is None:
            raise CalibrationError("the 4 points do not define a plane mapping (collinear or repeated?)")
        inliers = np.ones(4, bool)
    else:
        h, mask = cv2.findHomography(und, board_mm, cv2.RANSAC, ransac_mm, maxIters=2000, confidence=0.999)
        if h is None:
            raise CalibrationError("no homography fits the marker corners (are the markers where the profile says?)")
        inliers = mask.ravel().astype(bool)
        if inliers.sum() < max(4, len(und) // 2):
            raise CalibrationError(f"only {int(inliers.sum())} of {len(und)} marker corners agree with one plane")
        h, _ = cv2.findHomography(und[inliers], board_mm[inliers], 0)
        if h is None:
            raise CalibrationError("no homography fits the marker corners")
    plane = PlaneMap(image_size, k, d, h)
    got_mm = plane.to_board_mm(image_px)
    err_mm = np.linalg.norm(got_mm - board_mm, axis=1)
    err_px = np.linalg.norm(plane.to_image_px(board_mm) - image_px, axis=1)
    return PlaneFit(plane, float(np.sqrt(np.mean(err_mm[inliers] ** 2))), float(err_mm.max()),
                    float(np.sqrt(np.mean(err_px[inliers] ** 2))), int(inliers.sum()), tuple(ids), method)


def fit_detection(detection: MarkerDetection, profile: Profile, image_size, camera_matrix, distortion,
                  min_markers: int = 2, ransac_mm: float = 4.0) -> PlaneFit:
    """Homography from detected markers: every corner of every marker the profile places (RANSAC, then a
    least-squares refit on the inliers)."""
    truth = marker_corners_mm(profile)
    ids = [i for i in detection.ids if i in truth]
    if len(ids) < min_markers:
        want = ", ".join(str(i) for i in sorted(truth))
        raise CalibrationError(f"found {len(ids)} of the board's markers (ids {want}); need at least {min_markers}")
    found = detection.as_dict()
    image_px = np.concatenate([found[i] for i in ids])
    board_mm = np.concatenate([truth[i] for i in ids])
    return _fit(image_px, board_mm, image_size, camera_matrix, distortion, ransac_mm, "markers", ids)


def fit_markers(image: np.ndarray, profile: Profile, camera_matrix, distortion, min_markers: int = 2,
                ransac_mm: float = 4.0, detector: MarkerDetector | None = None) -> PlaneFit:
    """Find the profile's markers in ``image`` and fit the plane to their corners."""
    detector = detector or MarkerDetector.for_profile(profile)
    size = (image.shape[1], image.shape[0])
    return fit_detection(detector(image), profile, size, camera_matrix, distortion, min_markers, ransac_mm)


def from_points(image_px, board_mm, image_size, camera_matrix, distortion) -> PlaneFit:
    """Manual fallback: four (or more) image points clicked on known board points."""
    img = _as_points(image_px)
    brd = _as_points(board_mm)
    if len(img) != len(brd) or len(img) < 4:
        raise CalibrationError(f"need at least 4 image points matched to 4 board points, got {len(img)} and {len(brd)}")
    if abs(cv2.contourArea(brd[:4].astype(np.float32))) < 1.0 or abs(cv2.contourArea(img[:4].astype(np.float32))) < 1.0:
        raise CalibrationError("the 4 points are collinear (pick 4 points spread over the board, e.g. its corners)")
    return _fit(img, brd, image_size, camera_matrix, distortion, 4.0, "manual")


class Rectifier:
    """Top-down view of a board region at ``px_per_mm``: rectified pixel (u, v) sees board point
    (x0 + (u + 0.5) / s, y1 - (v + 0.5) / s) - board +y up, as in the camera image. The remap tables are
    built once (distortion included); calling it on a frame costs one ``cv2.remap``."""

    def __init__(self, plane: PlaneMap, px_per_mm: float = 1.0, region_mm=None, interpolation=cv2.INTER_LINEAR):
        if px_per_mm <= 0:
            raise CalibrationError(f"px_per_mm must be positive, got {px_per_mm}")
        if region_mm is None:
            w, h = plane.image_size
            corners = plane.to_board_mm([[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]])
            region_mm = (*corners.min(0), *corners.max(0))
        x0, y0, x1, y1 = (float(v) for v in region_mm)
        if x1 <= x0 or y1 <= y0:
            raise CalibrationError(f"empty rectification region {region_mm}")
        self.plane, self.px_per_mm, self.region_mm = plane, float(px_per_mm), (x0, y0, x1, y1)
        self.interpolation = interpolation
        self.size = (int(np.ceil((x1 - x0) * px_per_mm)), int(np.ceil((y1 - y0) * px_per_mm)))
        u, v = np.meshgrid(np.arange(self.size[0]), np.arange(self.size[1]))
        mm = self.to_board_mm(np.column_stack([u.ravel(), v.ravel()]))
        src = plane.to_image_px(mm).reshape(self.size[1], self.size[0], 2).astype(np.float32)
        self._map1, self._map2 = cv2.convertMaps(src[..., 0], src[..., 1], cv2.CV_16SC2)

    def to_board_mm(self, rect_px) -> np.ndarray:
        p = _as_points(rect_px)
        x0, _, _, y1 = self.region_mm
        return np.column_stack([x0 + (p[:, 0] + 0.5) / self.px_per_mm, y1 - (p[:, 1] + 0.5) / self.px_per_mm])

    def to_rect_px(self, mm) -> np.ndarray:
        p = _as_points(mm)
        x0, _, _, y1 = self.region_mm
        return np.column_stack([(p[:, 0] - x0) * self.px_per_mm - 0.5, (y1 - p[:, 1]) * self.px_per_mm - 0.5])

    def __call__(self, image: np.ndarray) -> np.ndarray:
        w, h = self.plane.image_size
        if image.shape[1] != w or image.shape[0] != h:
            raise CalibrationError(f"frame is {image.shape[1]}x{image.shape[0]} but the calibration is for {w}x{h}")
        return cv2.remap(image, self._map1, self._map2, self.interpolation, borderMode=cv2.BORDER_CONSTANT)
