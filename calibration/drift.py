"""Watching the calibration during play: has the board or the camera moved?

Every ``interval_s`` the profile's markers are found again and their corners mapped to board mm through
the current calibration. The first check compares them with where the profile says they are (catching a
move between calibration and play); its positions then become the reference, so later checks measure
movement alone, free of the calibration's own residual (~0.5 mm per corner), and a slow creep still adds
up against that fixed reference. Corner noise is a few hundredths of a pixel, so a 2 mm threshold never
fires on a steady camera while a knock of a few mm does. A check that sees too few markers (a player
leaning over) measures nothing and raises nothing.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .calfile import Calibration
from .errors import CalibrationError
from .markers import MarkerDetector, marker_corners_mm
from .plane import fit_detection

__all__ = ["DriftAlarm", "DriftCheck", "DriftMonitor"]


@dataclass(frozen=True)
class DriftCheck:
    """One re-detection: when, how many markers, and the median / largest corner displacement in mm."""

    t_s: float
    markers: int
    shift_mm: float | None
    max_shift_mm: float | None


@dataclass(frozen=True)
class DriftAlarm:
    """The board or camera moved by ``shift_mm`` (median corner displacement) at or before ``t_s``; calls
    from ``review_from_s`` (the last check that found everything in place) on must be reviewed."""

    t_s: float
    shift_mm: float
    max_shift_mm: float
    review_from_s: float
    recalibrated: bool
    residual_mm: float | None

    def __str__(self) -> str:
        fix = (f"re-calibrated from the markers (residual {self.residual_mm:.2f} mm)" if self.recalibrated
               else "could not re-calibrate: run shotjudge calibrate again")
        return (f"CAMERA OR BOARD MOVED by {self.shift_mm:.1f} mm at t={self.t_s:.2f} s; calls since "
                f"t={self.review_from_s:.2f} s need review; {fix}")


class DriftMonitor:
    """Settings in ``__init__``; ``check(frame, t_s)`` on every frame (it only works every ``interval_s``)
    returns a ``DriftAlarm`` when the board moved by more than ``threshold_mm``, else None."""

    def __init__(self, calibration: Calibration, interval_s: float = 5.0, threshold_mm: float = 2.0,
                 min_markers: int = 2, recalibrate: bool = True, detector: MarkerDetector | None = None):
        if interval_s < 0 or threshold_mm <= 0:
            raise CalibrationError("drift interval must be >= 0 s and threshold > 0 mm")
        self.calibration = calibration
        self.interval_s = float(interval_s)
        self.threshold_mm = float(threshold_mm)
        self.min_markers = int(min_markers)
        self.recalibrate = recalibrate
        self.detector = detector or MarkerDetector.for_profile(calibration.profile)
        self._truth = marker_corners_mm(calibration.profile)
        self._last_check_s: float | None = None
        self._last_good_s: float | None = None
        self._windows: list[list] = []
        self._reference: dict[int, np.ndarray] | None = None  # marker corners (mm) seen by the first good check
        self.alarms: list[DriftAlarm] = []
        self.checks: list[DriftCheck] = []

    def check(self, frame: np.ndarray, t_s: float) -> DriftAlarm | None:
        if self._last_check_s is not None and t_s - self._last_check_s < self.interval_s:
            return None
        self._last_check_s = t_s
        detection = self.detector(frame)
        ids = [i for i in detection.ids if i in self._truth]
        if len(ids) < self.min_markers:
            self.checks.append(DriftCheck(t_s, len(ids), None, None))
            return None
        found = detection.as_dict()
        seen_mm = self.calibration.plane.to_board_mm(np.concatenate([found[i] for i in ids])).reshape(-1, 4, 2)
        ref = self._reference or self._truth
        d = np.linalg.norm(seen_mm - np.array([ref.get(i, self._truth[i]) for i in ids]), axis=2).ravel()
        shift, worst = float(np.median(d)), float(d.max())
        self.checks.append(DriftCheck(t_s, len(ids), shift, worst))
        if shift <= self.threshold_mm:
            self._last_good_s = t_s
            if self._reference is None:
                self._reference = dict(zip(ids, seen_mm))
            else:
                for i, c in zip(ids, seen_mm):
                    self._reference.setdefault(i, c)
            if self._windows and self._windows[-1][1] is None:  # moved back into place
                self._windows[-1][1] = t_s
            return None
        review_from = self._last_good_s if self._last_good_s is not None else t_s
        if not self._windows or self._windows[-1][1] is not None:
            self._windows.append([review_from, None])  # a new move; an open window just stays open
        recalibrated, residual = False, None
        if self.recalibrate:
            try:
                fit = fit_detection(detection, self.calibration.profile, self.calibration.plane.image_size,
                                    self.calibration.plane.camera_matrix, self.calibration.plane.distortion,
                                    min_markers=max(self.min_markers, 3))
            except CalibrationError:
                fit = None
            if fit is not None and fit.max_mm <= self.threshold_mm:
                self.calibration = self.calibration.with_fit(fit)
                recalibrated, residual = True, fit.rms_mm
                self._reference = None  # the next good check sets it under the new calibration
                self._windows[-1][1] = t_s
                self._last_good_s = t_s
        alarm = DriftAlarm(t_s, shift, worst, self._windows[-1][0], recalibrated, residual)
        self.alarms.append(alarm)
        return alarm

    @property
    def review_windows(self) -> tuple[tuple[float, float | None], ...]:
        """``(from_s, to_s)`` spans whose calls must be reviewed; ``to_s`` is None while still uncalibrated."""
        return tuple((a, b) for a, b in self._windows)

    def needs_review(self, t_s: float) -> bool:
        """Whether a call made at ``t_s`` falls in a span when the calibration was not trusted."""
        return any(a <= t_s and (b is None or t_s <= b) for a, b in self._windows)
