"""What vision asks the referee to check in a shot, as lines a referee reads."""
from __future__ import annotations

from typing import Any, Iterable, Mapping

__all__ = ["vision_review", "review_lines"]


def review_lines(items: Iterable[Mapping[str, Any]]) -> list[str]:
    """One line per review item (``Shot.review`` / ``meta.review``): the piece, why, and where it was kept."""
    out = []
    for item in items or ():
        at = item.get("at")
        where = f" at ({at[0]:.0f}, {at[1]:.0f}) mm, kept there" if at else ""
        out.append(f"{item.get('piece', '?')} {item.get('reason', 'needs checking')}{where}: please check")
    return out


def vision_review(record: Mapping[str, Any]) -> list[str]:
    """What vision asks the referee to check in a shot record (its ``meta.review``), as one line each."""
    return review_lines(((record or {}).get("meta") or {}).get("review") or ())
