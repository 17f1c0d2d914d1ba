"""What vision asks the referee to check in a shot, as lines a referee reads."""
from __future__ import annotations

from typing import Any, Iterable, Mapping

from .i18n import N_, _

#: vision's review reasons that are whole sentences (translated where shown; a reason with a measurement in it
#: is shown as vision wrote it)
VISION_REASONS = (N_("went under the hand and was not seen again: taken to be in the pit"),
                  N_("set off with no contact seen (a contact the frames missed, or outside interference)"),
                  N_("taken by a hand"), N_("lost from sight"), N_("seen to leave the surface before the shot began"),
                  N_("set off with no stroke seen (the video began during the stroke, or the bat was not recognised): "
                     "the calls that depend on the stroke are the referee's"))

__all__ = ["vision_review", "review_lines", "unsettled_line"]


def review_lines(items: Iterable[Mapping[str, Any]]) -> list[str]:
    """One line per review item (``Shot.review`` / ``meta.review``): the piece, why, and where it was kept."""
    out = []
    for item in items or ():
        at = item.get("at")
        reason = _(item["reason"]) if item.get("reason") else _("needs checking")
        if at:
            line = _("{piece} {reason} at ({x}, {y}) mm, kept there: please check")
        else:
            line = _("{piece} {reason}: please check")
        out.append(line.format(piece=item.get("piece", "?"), reason=reason, x=f"{at[0]:.0f}" if at else "",
                               y=f"{at[1]:.0f}" if at else ""))
    return out


def vision_review(record: Mapping[str, Any]) -> list[str]:
    """What vision asks the referee to check in a shot record (its ``meta.review``), as one line each."""
    return review_lines(((record or {}).get("meta") or {}).get("review") or ())


def unsettled_line(reviews) -> str:
    """Why a call judged while refused shots were still open goes to the referee (their review numbers)."""
    return _("judged while review {reviews} (a shot not judged) was still open: this call assumes that shot "
             "changed nothing").format(reviews=", ".join(str(r) for r in reviews))
