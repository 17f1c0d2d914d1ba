"""The board as a browser draws it (the spectators' page, the dispute report's diagrams): its outline,
pockets or pit, circle, zones and start lines in board millimetres, from the profile."""
from __future__ import annotations

from rules.game import PLAYERS

__all__ = ["board_for"]


def board_for(profile) -> dict:
    """What the browser needs to draw the board diagram, in board millimetres, from the profile."""
    spec = profile.spec
    piece_r = spec.piece_radii_mm[spec.piece_kind]
    if spec.pockets_mm:  # a board: pockets at the corners, the centre circle, the striking zones
        h = spec.half_mm
        return {"game": spec.name, "extent_mm": [-h, -h, h, h], "piece_r_mm": piece_r,
                "bat_r_mm": spec.piece_radii_mm[spec.striker],
                "holes": [{"x": sx * h, "y": sy * h, "r": spec.pocket_radius_mm} for sx in (-1, 1) for sy in (-1, 1)],
                "circles": [{"x": 0, "y": 0, "r": spec.geometry.circle_radius_mm}],
                "zones": [{"player": p, "rect": [x0, y0, x1, y1]} for p in PLAYERS
                          for x0, x1, y0, y1 in (spec.zone_rect(p),)]}
    # the field: the camera's view (down to below the start lines), the pit, the start lines left to right
    hw, hh = spec.bounds_mm
    lines = [sorted(line) for line in spec.start_lines_mm()]
    line_y = lines[0][0][1]
    return {"game": spec.name, "extent_mm": [-hw, min(-hh, line_y - 100), hw, hh],
            "piece_r_mm": piece_r, "holes": [{"x": 0, "y": 0, "r": spec.pit_radius_mm}],
            "circles": [], "lines": [[*a, *b] for a, b in lines]}
