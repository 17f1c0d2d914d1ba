"""Errors a user can fix: printed as one line, exit code 2, nothing half-written."""

__all__ = ["UserError", "OUR_PACKAGES", "is_user_error"]

OUR_PACKAGES = frozenset({"rules", "vision", "hardware", "calibration", "sim", "judge"})


class UserError(Exception):
    """Bad input or a setup problem, with a message that says what is wrong."""


def is_user_error(exc: BaseException) -> bool:
    """Our own validation errors (RecordError, ProfileError, ...) are ValueErrors raised with a message."""
    if isinstance(exc, UserError):
        return True
    return isinstance(exc, ValueError) and type(exc).__module__.split(".")[0] in OUR_PACKAGES
