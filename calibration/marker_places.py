"""Where each marker goes, in words and in millimetres a club referee can lay out with a tape measure.

The profile places each marker by its centre in board mm (origin at the board centre or the pit centre, +y
away from player A, +x to A's right). Nobody can measure from a board centre, so the sheet says it from
what can be seen and touched: on a Novuss board from the cushion lines (the edges of the playing surface)
and the frame's outer edge; on a Cvrnkaná field from the pit centre, towards or away from the start lines.
Every number is the profile's own, so the printed sheet and the calibration cannot disagree.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from .errors import CalibrationError
from .profile import Profile

__all__ = ["MarkerPlace", "marker_places", "spacing_text", "reference_text", "mm"]


def mm(value: float) -> str:
    """A length as printed: 0.1 mm at most, no trailing zeros (60, 62.5)."""
    text = f"{abs(value):.1f}".rstrip("0").rstrip(".")
    return text if value >= 0 or text == "0" else "-" + text


def _signed(value: float) -> str:
    return "0" if mm(value) in ("0", "-0") else ("+" if value > 0 else "") + mm(value)


@dataclass(frozen=True)
class MarkerPlace:
    """One marker: its id, centre (board mm), where it goes in words, and how far from what."""

    id: int
    x_mm: float
    y_mm: float
    where: str  # "outside the NE corner (player B's end, on A's right)"
    measures: str  # "its centre 60 mm out from the N and the E cushion line (...)"
    origin: str  # "board centre" or "pit centre"

    @property
    def text(self) -> str:
        """The whole placement in one line, as the sheet prints it under the marker."""
        return (f"marker {self.id}: {self.where}; {self.measures} (x = {_signed(self.x_mm)} mm, "
                f"y = {_signed(self.y_mm)} mm from the {self.origin})")


def _board_axis(value: float, half: float, frame: float, letters: str) -> tuple[str, str]:
    """(distance clause, frame clause) along one axis of a Novuss board; ``letters`` names the - and + sides."""
    side = letters[1] if value > 0 else letters[0]
    a = abs(value)
    if a <= half:
        return "", ""
    inside = frame - a
    edge = ("on the frame's outer edge" if mm(inside) == "0" else
            f"{mm(inside)} mm in from the frame's outer edge" if inside > 0 else
            f"{mm(-inside)} mm beyond the frame's outer edge")
    return f"{mm(a - half)} mm out from the {side} cushion line", edge


def _novuss(profile: Profile, mid: int, x: float, y: float) -> MarkerPlace:
    g = profile.spec.geometry
    half, frame = profile.spec.half_mm, g.frame_mm / 2.0
    ns, ew = ("N" if y > 0 else "S"), ("E" if x > 0 else "W")
    end, hand = ("player B's" if y > 0 else "player A's"), ("right" if x > 0 else "left")
    out_x, out_y = abs(x) > half, abs(y) > half
    if out_x and out_y:
        where = f"outside the {ns}{ew} corner ({end} end, on A's {hand})"
    elif out_y:
        where = f"beyond the {ns} cushion ({end} end)"
    elif out_x:
        where = f"beyond the {ew} cushion (on A's {hand})"
    else:
        where = "on the playing surface"
    (dy, fy), (dx, fx) = _board_axis(y, half, frame, "SN"), _board_axis(x, half, frame, "WE")
    if out_x and out_y and mm(abs(x)) == mm(abs(y)):  # the usual corner marker: one distance both ways
        measures = (f"its centre {mm(abs(y) - half)} mm out from both the {ns} and the {ew} cushion line, "
                    f"{fy} on both sides")
    else:
        parts = [f"{d} ({f})" for d, f in ((dy, fy), (dx, fx)) if d]
        if not out_x:
            parts.append("on the centre line" if mm(x) in ("0", "-0") else
                         f"{mm(abs(x))} mm to A's {hand} of the centre line")
        if not out_y:
            parts.append("level with the middle of the board" if mm(y) in ("0", "-0") else
                         f"{mm(abs(y))} mm from the middle of the board towards player {'B' if y > 0 else 'A'}")
        measures = "its centre " + " and ".join(parts)
    return MarkerPlace(mid, x, y, where, measures, "board centre")


def _cvrnkana(profile: Profile, mid: int, x: float, y: float) -> MarkerPlace:
    hand = "right" if x > 0 else "left"
    ahead = "beyond the pit (away from the start lines)" if y > 0 else "between the pit and the start lines"
    if mm(y) in ("0", "-0"):
        ahead = "level with the pit"
    where = ahead if mm(x) in ("0", "-0") else f"{ahead}, on A's {hand}"
    parts = []
    if mm(x) not in ("0", "-0"):
        parts.append(f"{mm(abs(x))} mm to the {hand} of the pit centre")
    if mm(y) not in ("0", "-0"):
        parts.append(f"{mm(abs(y))} mm {'away from' if y > 0 else 'towards'} the start lines")
    measures = (f"its centre {' and '.join(parts) or 'on the pit centre'}, "
                f"{math.hypot(x, y):.0f} mm from the pit centre in a straight line")
    return MarkerPlace(mid, x, y, where, measures, "pit centre")


def marker_places(profile: Profile) -> list[MarkerPlace]:
    """Every marker of the profile, by id."""
    centres = (profile.markers or {}).get("centres_mm") or {}
    if not centres:
        raise CalibrationError(f"profile {profile.name!r} places no markers")
    describe = _novuss if profile.spec.pockets_mm else _cvrnkana
    return [describe(profile, int(k), float(centres[k][0]), float(centres[k][1])) for k in sorted(centres, key=int)]


def spacing_text(profile: Profile) -> str:
    """The tape-measure check of a finished layout: neighbours around the ring centre to centre, and with
    four markers the two diagonals (equal diagonals: the layout is square with the board)."""
    places = marker_places(profile)
    if len(places) < 2:
        return ""
    cx = sum(p.x_mm for p in places) / len(places)
    cy = sum(p.y_mm for p in places) / len(places)
    ring = sorted(places, key=lambda p: math.atan2(p.y_mm - cy, p.x_mm - cx))
    dist = lambda a, b: f"{a.id}-{b.id} {math.hypot(a.x_mm - b.x_mm, a.y_mm - b.y_mm):.0f} mm"  # noqa: E731
    pairs = [(ring[i], ring[(i + 1) % len(ring)]) for i in range(len(ring) if len(ring) > 2 else 1)]
    text = "Check with a tape, centre to centre: " + ", ".join(dist(a, b) for a, b in pairs)
    if len(ring) == 4:
        text += f"; diagonals {dist(ring[0], ring[2])}, {dist(ring[1], ring[3])}"
    return text + "."


def reference_text(profile: Profile) -> str:
    """What the distances are measured from, with the profile's sizes."""
    spec = profile.spec
    if spec.pockets_mm:
        g = spec.geometry
        return (f"Cushion line: the edge of the playing surface ({mm(g.surface_mm)} mm square, the pockets' centres "
                f"at its corners); the cushions are {mm(g.cushion_width_mm)} mm wide, the frame "
                f"{mm(g.frame_mm)} mm square outside.")
    g = spec.geometry
    return (f"Pit centre: the middle of the pit ({mm(g.pit_diameter_mm)} mm across); the start lines are "
            f"{mm(g.start_line_distance_mm)} mm from it, towards player A.")
