"""Errors a user can fix in calibration: one line that says what is wrong (printed by the CLI, exit 2)."""

__all__ = ["CalibrationError", "EquipmentError"]


class CalibrationError(ValueError):
    """A calibration that cannot be made or trusted: missing/malformed file, too few markers, bad fit."""


class EquipmentError(CalibrationError):
    """A measured piece or pit outside the sizes the rules or the profile allow."""
