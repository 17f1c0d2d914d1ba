"""Errors a user can fix in calibration: one line that says what is wrong (printed by the CLI, exit 2)."""

import json
from typing import Any

__all__ = ["CalibrationError", "EquipmentError", "parse_json"]


class CalibrationError(ValueError):
    """A calibration that cannot be made or trusted: missing/malformed file, too few markers, bad fit."""


class EquipmentError(CalibrationError):
    """A measured piece or pit outside the sizes the rules or the profile allow."""


def parse_json(text: str, where: str, error: type[ValueError], what: str) -> Any:
    """``text`` read as JSON, or one ``error`` line saying why not (cut, not JSON, nested too deeply, a number
    too long to read): a file of ours that is damaged or not ours is a user's to fix, not a traceback."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(f"{where}: truncated or not JSON ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:
        raise error(f"{where}: JSON nested too deeply to be {what}") from None
    except ValueError as exc:
        raise error(f"{where}: JSON that cannot be read as {what} ({str(exc).splitlines()[0][:120]})") from None
