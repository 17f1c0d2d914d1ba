"""ArUco markers fixed at known board positions: their corners in board mm and finding them in an image.

Convention (shared with the simulator's renderer and the printed sheets): a profile's
``markers.centres_mm[id] = [x, y]`` is the centre of a black square of side ``size_mm`` (OpenCV's marker
side: the outer edge of the black border), axis-aligned with the board frame and upright when the board is
seen with +y up. Its corners are listed in OpenCV's aruco order as seen in such an image: top-left,
top-right, bottom-right, bottom-left, i.e. (-s,+s), (+s,+s), (+s,-s), (-s,-s) around the centre, s = size/2.
"""
from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from .errors import CalibrationError
from .profile import Profile

__all__ = ["MarkerDetection", "MarkerDetector", "aruco_dictionary", "marker_corners_mm"]

#: Corner offsets in units of half a side, in aruco order (TL, TR, BR, BL) with board +y = image up.
_CORNER_SIGNS = np.array([[-1.0, 1.0], [1.0, 1.0], [1.0, -1.0], [-1.0, -1.0]])


def aruco_dictionary(name: str) -> cv2.aruco.Dictionary:
    """The predefined OpenCV dictionary called ``name`` (e.g. ``DICT_4X4_50``)."""
    code = getattr(cv2.aruco, name, None) if isinstance(name, str) and name.startswith("DICT_") else None
    if not isinstance(code, int):
        raise CalibrationError(f"unknown ArUco dictionary {name!r}")
    return cv2.aruco.getPredefinedDictionary(code)


def marker_corners_mm(profile: Profile) -> dict[int, np.ndarray]:
    """``{id: (4,2) corners in board mm}`` in aruco order (TL, TR, BR, BL as seen with board +y up)."""
    markers = profile.markers
    if not markers or not markers.get("centres_mm"):
        raise CalibrationError(f"profile {profile.name!r} places no ArUco markers (markers.centres_mm is empty)")
    half = float(markers["size_mm"]) / 2.0
    return {int(k): np.asarray(c, float) + half * _CORNER_SIGNS for k, c in markers["centres_mm"].items()}


@dataclass(frozen=True)
class MarkerDetection:
    """Markers found in one image: ``ids`` (sorted) and their corners ``corners_px`` (n,4,2), aruco order,
    in the image's own (distorted) pixels."""

    ids: tuple[int, ...]
    corners_px: np.ndarray

    def __len__(self) -> int:
        return len(self.ids)

    def as_dict(self) -> dict[int, np.ndarray]:
        return {i: c for i, c in zip(self.ids, self.corners_px)}


REFINE_METHODS = ("edges", "subpix", "none")


class MarkerDetector:
    """Finds the markers of one dictionary and keeps only ``expected_ids`` (if given).

    ``refine="edges"`` (default) fits a straight line to each of the four outer edges, locating the edge
    along ~20 normals per side at the half-way grey level (exact for any symmetric blur), and intersects
    the lines: on the 20-40 px markers an overhead camera sees, corner-only methods (``"subpix"`` =
    ``cv2.cornerSubPix`` with a window of one cell, or OpenCV's own) are off by 0.3-1 px, edge lines by
    a few hundredths."""

    def __init__(self, dictionary: str = "DICT_4X4_50", expected_ids=None, refine: str = "edges"):
        if refine not in REFINE_METHODS:
            raise CalibrationError(f"unknown corner refinement {refine!r}: expected one of {', '.join(REFINE_METHODS)}")
        self.dictionary_name = dictionary
        self._dictionary = aruco_dictionary(dictionary)
        params = cv2.aruco.DetectorParameters()
        params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_NONE
        self._detector = cv2.aruco.ArucoDetector(self._dictionary, params)
        self.expected_ids = None if expected_ids is None else frozenset(int(i) for i in expected_ids)
        self.refine = refine
        self._cells = self._dictionary.markerSize + 2

    @classmethod
    def for_profile(cls, profile: Profile, refine: str = "edges") -> "MarkerDetector":
        return cls(profile.markers["dictionary"], marker_corners_mm(profile).keys(), refine)

    def __call__(self, image: np.ndarray) -> MarkerDetection:
        gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
        corners, ids, _ = self._detector.detectMarkers(gray)
        found: dict[int, np.ndarray] = {}
        for c, i in zip(corners, [] if ids is None else ids.ravel()):
            i = int(i)
            if self.expected_ids is not None and i not in self.expected_ids:
                continue
            if i in found:  # the same id twice: neither can be trusted
                found[i] = None
                continue
            found[i] = c.reshape(4, 2).astype(np.float32)
        found = {i: c for i, c in found.items() if c is not None}
        if self.refine != "none":
            refine = self._refine_edges if self.refine == "edges" else self._refine_subpix
            for i, c in found.items():
                found[i] = refine(gray, c)
        ids_sorted = tuple(sorted(found))
        arr = np.array([found[i] for i in ids_sorted], float).reshape(-1, 4, 2)
        return MarkerDetection(ids_sorted, arr)

    def _cell_px(self, corners: np.ndarray) -> float:
        return float(np.mean(np.linalg.norm(corners - np.roll(corners, 1, axis=0), axis=1))) / self._cells

    def _refine_edges(self, gray: np.ndarray, corners: np.ndarray) -> np.ndarray:
        cell = self._cell_px(corners)
        reach = float(np.clip(0.6 * cell, 1.5, 10.0))
        t = np.linspace(0.15, 0.85, int(np.clip(4 * cell, 8, 40)))
        s = np.arange(-reach, reach + 1e-9, 0.2)
        lines = []
        for k in range(4):
            a, b = corners[k], corners[(k + 1) % 4]
            d = (b - a) / np.linalg.norm(b - a)
            n = np.array([d[1], -d[0]])
            base = a + t[:, None] * (b - a)
            pts = base[:, None, :] + s[None, :, None] * n
            prof = cv2.remap(gray, pts[..., 0].astype(np.float32), pts[..., 1].astype(np.float32), cv2.INTER_LINEAR,
                             borderMode=cv2.BORDER_REPLICATE).astype(float)
            edge = []
            for row, p in zip(base, prof):
                lo, hi = p.min(), p.max()
                if hi - lo < 30:
                    continue
                level = (lo + hi) / 2
                above = p > level
                flips = np.nonzero(above[1:] != above[:-1])[0]
                if len(flips) != 1:  # not one clean edge within reach: skip this normal
                    continue
                j = flips[0]
                f = (level - p[j]) / (p[j + 1] - p[j])
                edge.append(row + (s[j] + f * (s[j + 1] - s[j])) * n)
            if len(edge) < 4:
                return self._refine_subpix(gray, corners)
            vx, vy, x0, y0 = cv2.fitLine(np.asarray(edge, np.float32), cv2.DIST_HUBER, 0, 0.01, 0.01).ravel()
            lines.append(np.cross([x0, y0, 1.0], [x0 + vx, y0 + vy, 1.0]))
        out = []
        for k in range(4):
            p = np.cross(lines[(k - 1) % 4], lines[k])
            out.append(p[:2] / p[2])
        out = np.asarray(out)
        if np.max(np.linalg.norm(out - corners, axis=1)) > max(2.0, cell):
            return self._refine_subpix(gray, corners)
        return out

    def _refine_subpix(self, gray: np.ndarray, corners: np.ndarray) -> np.ndarray:
        half = int(np.clip(round(0.7 * self._cell_px(corners)), 2, 12))
        criteria = (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 50, 1e-3)
        refined = cv2.cornerSubPix(gray, corners.reshape(-1, 1, 2).copy(), (half, half), (-1, -1), criteria)
        refined = refined.reshape(4, 2)
        # cornerSubPix can wander off a corner it cannot see well; keep the coarse corner then.
        moved = np.linalg.norm(refined - corners, axis=1)
        return np.where((moved < half)[:, None], refined, corners)
