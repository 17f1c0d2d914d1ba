"""Printable marker sheets at true scale (A4, PDF or PNG), each with a 100 mm ruler to check the printer.

Markers are drawn exactly ``size_mm`` wide (the black square) on a white quiet zone, with their id and
where they go on the table; the page resolution is written into the file, so "actual size" printing gives
true millimetres. A printer that scales ("fit to page") shows up on the ruler.
"""
from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from .atomic import staged_files, write_atomic
from .errors import CalibrationError
from .markers import aruco_dictionary
from .profile import Profile

__all__ = ["A4_MM", "marker_pages", "charuco_pages", "save_marker_sheets", "save_pages", "placement_text"]

A4_MM = (210.0, 297.0)
_MARGIN_MM = 12.0
_LABEL_MM = 14.0
_RULER_MM = 100.0


def placement_text(profile: Profile, marker_id: int) -> str:
    """Where a marker goes, in words a club referee can follow."""
    x, y = (float(v) for v in profile.markers["centres_mm"][str(marker_id)])
    if profile.spec.pockets_mm:  # a board: the markers sit at its corners
        corner = ("N" if y > 0 else "S") + ("E" if x > 0 else "W")
        side = "player B's" if y > 0 else "player A's"
        hand = "right" if x > 0 else "left"
        where = f"corner {corner} ({side} side, on A's {hand})"
    else:
        where = "beside the pit, " + ("far" if y > 0 else "near") + " " + ("right" if x > 0 else "left")
    return f"{where}: centre at x={x:+.0f} mm, y={y:+.0f} mm from the board centre, upright with +y away from player A"


def _font(px: int):
    try:
        return ImageFont.load_default(size=px)
    except TypeError:  # Pillow without FreeType
        return ImageFont.load_default()


def marker_pages(profile: Profile, dpi: int = 300, page_mm=A4_MM) -> list[Image.Image]:
    """A4 pages (greyscale Pillow images at ``dpi``) holding every marker of the profile, one per region."""
    if not profile.markers or not profile.markers.get("centres_mm"):
        raise CalibrationError(f"profile {profile.name!r} places no markers")
    dictionary = aruco_dictionary(profile.markers["dictionary"])
    size_mm = float(profile.markers["size_mm"])
    quiet_mm = size_mm / (dictionary.markerSize + 2)  # one cell of white around the black square
    cell_w = size_mm + 2 * quiet_mm
    cell_h = cell_w + _LABEL_MM
    usable_w = page_mm[0] - 2 * _MARGIN_MM
    usable_h = page_mm[1] - 2 * _MARGIN_MM - _RULER_MM * 0 - 30.0  # 30 mm for ruler and the check line
    cols, rows = int(usable_w // cell_w), int(usable_h // cell_h)
    if cols < 1 or rows < 1:
        raise CalibrationError(f"markers of {size_mm:.0f} mm do not fit on an A4 page")
    cols, rows = min(cols, 2), min(rows, 2)  # at most 4 per page: each cut out with room to spare
    ids = sorted(int(k) for k in profile.markers["centres_mm"])
    per_page = cols * rows
    mm = dpi / 25.4
    pages = []
    for start in range(0, len(ids), per_page):
        page = Image.new("L", (round(page_mm[0] * mm), round(page_mm[1] * mm)), 255)
        draw = ImageDraw.Draw(page)
        region_w, region_h = usable_w / cols, usable_h / rows
        for k, mid in enumerate(ids[start:start + per_page]):
            cx = _MARGIN_MM + (k % cols + 0.5) * region_w
            cy = _MARGIN_MM + (k // cols) * region_h + _LABEL_MM + cell_w / 2
            side_px = round(size_mm * mm)
            img = cv2.aruco.generateImageMarker(dictionary, mid, side_px, borderBits=1)
            x0, y0 = round(cx * mm - side_px / 2), round(cy * mm - side_px / 2)
            page.paste(Image.fromarray(img), (x0, y0))
            # cutting guide around the quiet zone
            q = round(quiet_mm * mm)
            draw.rectangle([x0 - q, y0 - q, x0 + side_px + q, y0 + side_px + q], outline=170, width=max(1, round(0.2 * mm)))
            label = f"marker {mid} ({profile.markers['dictionary']}, {size_mm:g} mm)"
            draw.text((x0 - q, y0 - q - round(_LABEL_MM * 0.75 * mm)), label, fill=0, font=_font(round(3.5 * mm)))
            where = placement_text(profile, mid)
            draw.text((x0 - q, y0 + side_px + q + round(1.5 * mm)), where.split(":")[0], fill=0, font=_font(round(3.0 * mm)))
        _ruler(draw, mm, _MARGIN_MM, page_mm[1] - _MARGIN_MM - 22.0)
        pages.append(page)
    return pages


def charuco_pages(spec, dpi: int = 300, page_mm=A4_MM) -> list[Image.Image]:
    """One A4 page with the ChArUco board used for lens calibration (``intrinsics.CharucoSpec``)."""
    board = spec.board()
    sx, sy = board.getChessboardSize()
    w_mm, h_mm = sx * spec.square_mm, sy * spec.square_mm
    rotate = w_mm > page_mm[0] - 2 * _MARGIN_MM
    if rotate:
        w_mm, h_mm = h_mm, w_mm
    if w_mm > page_mm[0] - 2 * _MARGIN_MM or h_mm > page_mm[1] - 2 * _MARGIN_MM - 30.0:
        raise CalibrationError(f"a ChArUco board of {w_mm:.0f}x{h_mm:.0f} mm does not fit on an A4 page")
    mm = dpi / 25.4
    img = board.generateImage((round(sx * spec.square_mm * mm), round(sy * spec.square_mm * mm)), marginSize=0,
                              borderBits=1)
    if rotate:
        img = np.ascontiguousarray(np.rot90(img))
    page = Image.new("L", (round(page_mm[0] * mm), round(page_mm[1] * mm)), 255)
    page.paste(Image.fromarray(img), (round((page_mm[0] - w_mm) / 2 * mm), round(_MARGIN_MM * mm)))
    draw = ImageDraw.Draw(page)
    draw.text((_MARGIN_MM * mm, (_MARGIN_MM + h_mm + 4) * mm),
              f"ChArUco {sx}x{sy}, squares {spec.square_mm:g} mm, markers {spec.marker_mm:g} mm, {spec.dictionary}: "
              f"glue flat on card, show to the camera at ~10 angles", fill=0, font=_font(round(3.0 * mm)))
    _ruler(draw, mm, _MARGIN_MM, page_mm[1] - _MARGIN_MM - 22.0, "")
    return [page]


_MARKER_NOTE = "Cut along the grey line. Lay each marker flat, the top of the page pointing away from player A."


def _ruler(draw: ImageDraw.ImageDraw, mm: float, x0_mm: float, y_mm: float, note: str = _MARKER_NOTE) -> None:
    x0, y = x0_mm * mm, y_mm * mm
    w = max(1, round(0.25 * mm))
    draw.line([(x0, y), (x0 + _RULER_MM * mm, y)], fill=0, width=w)
    for t in range(0, int(_RULER_MM) + 1):
        length = 5.0 if t % 10 == 0 else (3.5 if t % 5 == 0 else 2.0)
        xt = x0 + t * mm
        draw.line([(xt, y), (xt, y - length * mm)], fill=0, width=w)
        if t % 10 == 0:
            draw.text((xt + 0.5 * mm, y - 9 * mm), str(t // 10), fill=0, font=_font(round(2.8 * mm)))
    draw.text((x0, y + 2 * mm), "Check: this ruler must measure exactly 100 mm (10 cm). If not, print again at "
              "100% / actual size (no 'fit to page').", fill=0, font=_font(round(3.0 * mm)))
    draw.text((x0, y + 7 * mm), note, fill=0, font=_font(round(3.0 * mm)))


def save_marker_sheets(profile: Profile, out, dpi: int = 300) -> list[Path]:
    """Write the sheets to ``out``: a multi-page PDF, or PNG(s) (``name.png``, ``name-2.png``, ...), with
    the resolution recorded so that the page prints at true scale."""
    return save_pages(marker_pages(profile, dpi), out, dpi)


def save_pages(pages: list[Image.Image], out, dpi: int = 300) -> list[Path]:
    """Write pages as one PDF or numbered PNGs, atomically, with the resolution recorded."""
    out = Path(out).resolve()
    suffix = out.suffix.lower()
    if suffix not in (".pdf", ".png"):
        raise CalibrationError(f"sheets are written as .pdf or .png, not {out.suffix or 'no extension'!r}")
    if not out.parent.is_dir():
        raise CalibrationError(f"folder {out.parent} does not exist")
    if suffix == ".pdf":
        write_atomic(out, lambda tmp: pages[0].save(tmp, "PDF", resolution=float(dpi), save_all=True,
                                                append_images=pages[1:]))
        return [out]
    paths = []
    with staged_files() as stage:  # every page or none
        for k, page in enumerate(pages):
            path = out if k == 0 else out.with_name(f"{out.stem}-{k + 1}{out.suffix}")
            paths.append(stage.file(path, lambda tmp, page=page: page.save(tmp, "PNG", dpi=(dpi, dpi))))
    return paths
