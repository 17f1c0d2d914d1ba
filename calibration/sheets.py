"""Printable marker sheets at true scale (A4, PDF or PNG), each with a 100 mm ruler to check the printer.

Markers are drawn exactly ``size_mm`` wide (the black square) on a white quiet zone, with their id and,
under each, where it goes in words and millimetres (``calibration.marker_places``); a plan of the board with
every marker numbered (``calibration.sheet_plan``) and a tape-measure check close each page. The page
resolution is written into the file, so "actual size" printing gives true millimetres. A printer that
scales ("fit to page") shows up on the ruler.
"""
from __future__ import annotations

import re
from pathlib import Path

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont
from PIL.PngImagePlugin import PngInfo

from .atomic import staged_files, write_atomic
from .errors import CalibrationError
from .marker_places import marker_places, mm, reference_text, spacing_text
from .markers import aruco_dictionary
from .profile import Profile
from .sheet_plan import Plan, draw_plan

__all__ = ["A4_MM", "marker_pages", "charuco_pages", "save_marker_sheets", "save_pages", "placement_text",
           "sheet_title", "sheet_subject", "plan_box_mm"]

A4_MM = (210.0, 297.0)
_MARGIN_MM = 12.0
_LABEL_MM = 8.0  # the marker's id line above its quiet zone
_TEXT_MM = 20.0  # where it goes, under it
_FOOT_MM = 30.0  # the ruler and its two lines
_PLAN_MM = 52.0  # the band with the plan and the tape check, above the ruler
_RULER_MM = 100.0
_TEXT_PT_MM = 2.8  # height of the small print (mm)
GAME_TITLES = {"novuss": "Novuss", "cvrnkana": "Cvrnkaná"}


def placement_text(profile: Profile, marker_id: int) -> str:
    """Where a marker goes, in words and millimetres a club referee can follow (one line)."""
    for place in marker_places(profile):
        if place.id == int(marker_id):
            return place.text
    raise CalibrationError(f"profile {profile.name!r} places no marker {marker_id}")


def plan_box_mm(page_mm=A4_MM) -> tuple[float, float, float, float]:
    """Where each page's plan is drawn (x0, y0, x1, y1 page mm from the top-left corner): above the ruler."""
    bottom = page_mm[1] - _MARGIN_MM - _FOOT_MM
    return (_MARGIN_MM, bottom - _PLAN_MM, _MARGIN_MM + 62.0, bottom - 2.0)


def sheet_title(profile: Profile, charuco: bool = False) -> str:
    """The document title a PDF reader shows (not the temporary file the PDF was written to)."""
    game = GAME_TITLES.get(profile.game, profile.game)
    return "shotjudge ChArUco board (lens calibration)" if charuco else f"shotjudge markers — {game} ({profile.name})"


def sheet_subject(profile: Profile) -> str:
    """Every marker's placement as text: the pages are pictures, so this is what a reader can search and copy."""
    return " / ".join(p.text for p in marker_places(profile))


def _font(px: int):
    try:
        return ImageFont.load_default(size=px)
    except TypeError:  # Pillow without FreeType
        return ImageFont.load_default()


def _wrap(draw: ImageDraw.ImageDraw, text: str, font, width_px: float) -> list[str]:
    """``text`` in lines no wider than ``width_px``, broken at spaces but never inside "60 mm", "x = +560 mm" or
    "0-1 1120 mm" (a unit longer than a line stands alone); the lines joined by spaces give ``text`` back."""
    units: list[str] = []
    for word in text.split(" "):
        if units and (word.startswith("mm") or word == "=" or units[-1].endswith("=")
                      or re.fullmatch(r"\d+-\d+", units[-1])):  # "0-1 1120 mm" is read as one
            units[-1] += " " + word
        else:
            units.append(word)
    lines: list[str] = []
    for word in units:
        trial = f"{lines[-1]} {word}" if lines else word
        if lines and draw.textlength(trial, font=font) <= width_px:
            lines[-1] = trial
        else:
            lines.append(word)
    return lines


def _paragraph(draw: ImageDraw.ImageDraw, text: str, x_px: float, y_px: float, width_px: float, mm_px: float,
               size_mm: float = _TEXT_PT_MM) -> float:
    """Draw ``text`` wrapped to ``width_px`` from (x, y); returns the y under its last line."""
    font = _font(round(size_mm * mm_px))
    step = 1.3 * size_mm * mm_px
    for line in _wrap(draw, text, font, width_px):
        draw.text((x_px, y_px), line, fill=0, font=font)
        y_px += step
    return y_px


def marker_pages(profile: Profile, dpi: int = 300, page_mm=A4_MM) -> list[Image.Image]:
    """A4 pages (greyscale Pillow images at ``dpi``) holding every marker of the profile, one per region,
    each with where it goes; every page ends with the plan of all markers, the tape check and the ruler."""
    places = {p.id: p for p in marker_places(profile)}  # refuses a profile without markers
    dictionary = aruco_dictionary(profile.markers["dictionary"])
    size_mm = float(profile.markers["size_mm"])
    quiet_mm = size_mm / (dictionary.markerSize + 2)  # one cell of white around the black square
    cell_w = size_mm + 2 * quiet_mm
    cell_h = cell_w + _LABEL_MM + _TEXT_MM
    usable_w = page_mm[0] - 2 * _MARGIN_MM
    usable_h = page_mm[1] - 2 * _MARGIN_MM - _FOOT_MM - _PLAN_MM
    cols, rows = int(usable_w // cell_w), int(usable_h // cell_h)
    if cols < 1 or rows < 1:
        raise CalibrationError(f"markers of {size_mm:.0f} mm do not fit on an A4 page")
    cols, rows = min(cols, 2), min(rows, 2)  # at most 4 per page: each cut out with room to spare
    ids = sorted(places)
    per_page = cols * rows
    mm_px = dpi / 25.4
    pages = []
    for start in range(0, len(ids), per_page):
        page = Image.new("L", (round(page_mm[0] * mm_px), round(page_mm[1] * mm_px)), 255)
        draw = ImageDraw.Draw(page)
        region_w, region_h = usable_w / cols, usable_h / rows
        for k, mid in enumerate(ids[start:start + per_page]):
            left, top = _MARGIN_MM + (k % cols) * region_w, _MARGIN_MM + (k // cols) * region_h
            cx, cy = left + region_w / 2, top + _LABEL_MM + cell_w / 2
            side_px = round(size_mm * mm_px)
            img = cv2.aruco.generateImageMarker(dictionary, mid, side_px, borderBits=1)
            x0, y0 = round(cx * mm_px - side_px / 2), round(cy * mm_px - side_px / 2)
            page.paste(Image.fromarray(img), (x0, y0))
            # cutting guide around the quiet zone
            q = round(quiet_mm * mm_px)
            draw.rectangle([x0 - q, y0 - q, x0 + side_px + q, y0 + side_px + q], outline=170,
                           width=max(1, round(0.2 * mm_px)))
            label = f"marker {mid} ({profile.markers['dictionary']}, {mm(size_mm)} mm)"
            draw.text((x0 - q, y0 - q - round(_LABEL_MM * 0.75 * mm_px)), label, fill=0, font=_font(round(3.5 * mm_px)))
            _paragraph(draw, places[mid].text, (left + 1.5) * mm_px, y0 + side_px + q + 1.5 * mm_px,
                       (region_w - 3.0) * mm_px, mm_px)
        _plan_band(draw, profile, mm_px, page_mm, (start // per_page + 1, -(-len(ids) // per_page)))
        _ruler(draw, mm_px, _MARGIN_MM, page_mm[1] - _MARGIN_MM - 22.0)
        pages.append(page)
    return pages


def _plan_band(draw: ImageDraw.ImageDraw, profile: Profile, mm_px: float, page_mm, page_no: tuple[int, int]) -> None:
    """The plan of every marker on the left, what the distances are measured from and the tape check beside it."""
    box = plan_box_mm(page_mm)
    plan = Plan.fit(profile, box)
    draw_plan(draw, profile, plan, mm_px, _font(round(2.6 * mm_px)))
    x, width = (box[2] + 4.0) * mm_px, (page_mm[0] - _MARGIN_MM - box[2] - 4.0) * mm_px
    of = f", page {page_no[0]} of {page_no[1]}" if page_no[1] > 1 else ""
    y = _paragraph(draw, f"Where the markers go: {profile.name}, seen from above, player A at the bottom "
                   f"(plan at 1:{plan.scale}{of})", x, box[1] * mm_px, width, mm_px, 3.2)
    y = _paragraph(draw, reference_text(profile), x, y + 1.0 * mm_px, width, mm_px)
    _paragraph(draw, spacing_text(profile), x, y + 1.0 * mm_px, width, mm_px)


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
    return save_pages(marker_pages(profile, dpi), out, dpi, sheet_title(profile), sheet_subject(profile))


def save_pages(pages: list[Image.Image], out, dpi: int = 300, title: str | None = None,
               subject: str | None = None) -> list[Path]:
    """Write pages as one PDF or numbered PNGs, atomically, with the resolution recorded. A PDF's document
    title is ``title`` (default: the file's own name; never the temporary name it is written under) and its
    subject ``subject``; a PNG carries them as its Title and Description text when given."""
    out = Path(out).resolve()
    suffix = out.suffix.lower()
    if suffix not in (".pdf", ".png"):
        raise CalibrationError(f"sheets are written as .pdf or .png, not {out.suffix or 'no extension'!r}")
    if not out.parent.is_dir():
        raise CalibrationError(f"folder {out.parent} does not exist")
    if suffix == ".pdf":
        info = {"title": title or out.stem, "subject": subject or "", "author": "shotjudge", "creator": "shotjudge"}
        write_atomic(out, lambda tmp: pages[0].save(tmp, "PDF", resolution=float(dpi), save_all=True,
                                                append_images=pages[1:], **info))
        return [out]
    text = PngInfo()
    for key, value in (("Title", title), ("Description", subject)):
        if value:
            text.add_itxt(key, value)
    paths = []
    with staged_files() as stage:  # every page or none
        for k, page in enumerate(pages):
            path = out if k == 0 else out.with_name(f"{out.stem}-{k + 1}{out.suffix}")
            paths.append(stage.file(path, lambda tmp, page=page: page.save(tmp, "PNG", dpi=(dpi, dpi), pnginfo=text)))
    return paths
