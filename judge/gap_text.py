"""Lost frames (``hardware.frame.FrameGap``) in words, in the user's language: the notice the console and the
spectators' page show, and the note a replay keeps."""
from __future__ import annotations

from .i18n import N_, _, ngettext

__all__ = ["gap_text", "REASONS"]

#: why frames went missing (``FrameGap.reason``), translated where shown
REASONS = (N_("camera"), N_("reconnect"), N_("queue"))


def gap_text(gap) -> str:
    """``3 frame(s) missing between #10 and #14 (67 ms, camera)``, as ``FrameGap.describe`` says it in English."""
    return ngettext("{count} frame missing between #{first} and #{last} ({ms} ms, {reason})",
                    "{count} frames missing between #{first} and #{last} ({ms} ms, {reason})", gap.count).format(
        count=gap.count, first=gap.from_index, last=gap.to_index, ms=f"{gap.duration_s * 1000:.0f}", reason=_(gap.reason))
