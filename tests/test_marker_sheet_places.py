"""The marker sheet says where each marker goes, in words and the profile's own millimetres, under the marker
and in a numbered plan; the PDF's title is the sheet's, not its temporary file's."""
from __future__ import annotations

import math

import numpy as np
import pytest
from PIL import Image, ImageDraw, PdfParser

from calibration import default_profile
from calibration.marker_places import marker_places, spacing_text
from calibration.profile import profile_from_dict
from calibration.sheet_plan import Plan
from calibration.sheets import marker_pages, plan_box_mm
from judge.cli import main

DPI = 100


@pytest.fixture
def drawn(monkeypatch):
    """Every string drawn on a page while the fixture is used, with where (page px)."""
    texts: list[tuple[tuple[float, float], str]] = []
    real = ImageDraw.ImageDraw.text

    def spy(self, xy, text, *args, **kwargs):
        texts.append(((float(xy[0]), float(xy[1])), text))
        return real(self, xy, text, *args, **kwargs)

    monkeypatch.setattr(ImageDraw.ImageDraw, "text", spy)
    return texts


def _in_plan(drawn, page: int = 0) -> list[tuple[tuple[float, float], str]]:
    """The strings drawn inside the plan's box (page px at ``DPI``)."""
    x0, y0, x1, y1 = (c * DPI / 25.4 for c in plan_box_mm())
    return [(xy, text) for xy, text in drawn if x0 <= xy[0] <= x1 and y0 <= xy[1] <= y1]


def _novuss_numbers(profile, x: float, y: float) -> tuple[float, float]:
    """(centre beyond the cushion line, centre inside the frame's outer edge) of a corner marker, from the profile."""
    g = profile.geometry
    return abs(x) - g["surface_mm"] / 2, g["frame_mm"] / 2 - abs(x)


def test_novuss_markers_are_placed_from_the_cushion_lines_and_the_frame_edge():
    profile = default_profile("novuss")
    centres = profile.markers["centres_mm"]
    places = marker_places(profile)
    assert [p.id for p in places] == [0, 1, 2, 3]
    for place in places:
        x, y = centres[str(place.id)]
        out, inside = _novuss_numbers(profile, x, y)
        ns, ew = ("N" if y > 0 else "S"), ("E" if x > 0 else "W")
        assert (out, inside) == (60.0, 40.0)  # the default table's numbers, as the profile gives them
        assert place.text.startswith(f"marker {place.id}: outside the {ns}{ew} corner (")
        assert (f"its centre {out:g} mm out from both the {ns} and the {ew} cushion line, {inside:g} mm in from the "
                f"frame's outer edge on both sides (x = {x:+g} mm, y = {y:+g} mm from the board centre)") in place.text
    assert places[2].text == ("marker 2: outside the NE corner (player B's end, on A's right); its centre 60 mm out from "
                              "both the N and the E cushion line, 40 mm in from the frame's outer edge on both sides "
                              "(x = +560 mm, y = +560 mm from the board centre)")
    assert spacing_text(profile) == ("Check with a tape, centre to centre: 0-1 1120 mm, 1-2 1120 mm, 2-3 1120 mm, "
                                     "3-0 1120 mm; diagonals 0-2 1584 mm, 1-3 1584 mm.")


def test_cvrnkana_markers_are_placed_from_the_pit_centre():
    profile = default_profile("cvrnkana")
    for place in marker_places(profile):
        x, y = profile.markers["centres_mm"][str(place.id)]
        hand, way = ("right" if x > 0 else "left"), ("away from" if y > 0 else "towards")
        assert (f"marker {place.id}: " + ("beyond the pit (away from the start lines)" if y > 0 else
                                          "between the pit and the start lines") + f", on A's {hand}; its centre "
                f"{abs(x):g} mm to the {hand} of the pit centre and {abs(y):g} mm {way} the start lines, "
                f"{math.hypot(x, y):.0f} mm from the pit centre in a straight line (x = {x:+g} mm, y = {y:+g} mm from "
                f"the pit centre)") == place.text
    assert marker_places(profile)[0].text == (
        "marker 10: between the pit and the start lines, on A's left; its centre 520 mm to the left of the pit centre "
        "and 270 mm towards the start lines, 586 mm from the pit centre in a straight line (x = -520 mm, y = -270 mm "
        "from the pit centre)")


@pytest.mark.parametrize("game", ["novuss", "cvrnkana"])
def test_each_page_prints_every_placement_and_a_numbered_plan(game, drawn):
    profile = default_profile(game)
    (page,) = marker_pages(profile, DPI)
    said = " ".join(text for _, text in drawn)
    mm_px = DPI / 25.4
    plan = Plan.fit(profile, plan_box_mm())
    gray = np.asarray(page)
    for place in marker_places(profile):
        assert f"marker {place.id} (DICT_4X4_50, 50 mm)" in said  # the label over the marker
        assert place.text in said  # the placement under it, every number in it
        # the plan: a black square where the marker goes, its number beside it on the outer (board) or inner side
        u, v = (c * mm_px for c in plan.to_page(place.x_mm, place.y_mm))
        assert gray[round(v), round(u)] == 0
        (lx, ly), = [xy for xy, text in _in_plan(drawn) if text == str(place.id)]
        outward = 1 if game == "novuss" else -1
        assert np.sign(lx - u) == outward * np.sign(place.x_mm) and np.sign(ly - v) == -outward * np.sign(place.y_mm)
    assert spacing_text(profile) in said
    assert f"(plan at 1:{plan.scale})" in said and plan.scale == {"novuss": 30, "cvrnkana": 25}[game]


def test_a_profile_with_six_markers_prints_two_pages_each_with_the_whole_plan(drawn):
    doc = default_profile("novuss").to_dict()
    doc["markers"]["centres_mm"].update({"4": [0.0, -560.0], "5": [575.0, 0.0]})
    profile = profile_from_dict(doc)
    pages = marker_pages(profile, DPI)
    assert len(pages) == 2
    said = " ".join(text for _, text in drawn)
    assert ("marker 4: beyond the S cushion (player A's end); its centre 60 mm out from the S cushion line (40 mm in "
            "from the frame's outer edge) and on the centre line (x = 0 mm, y = -560 mm from the board centre)") in said
    assert ("marker 5: beyond the E cushion (on A's right); its centre 75 mm out from the E cushion line (25 mm in from "
            "the frame's outer edge) and level with the middle of the board (x = +575 mm, y = 0 mm from the board "
            "centre)") in said
    assert "page 1 of 2)" in said and "page 2 of 2)" in said
    numbers = [text for _, text in _in_plan(drawn) if text.isdigit()]
    assert numbers == [str(i) for i in range(6)] * 2  # each page's plan numbers all six


def _pdf_info(path, key: str) -> str:
    pdf = PdfParser.PdfParser(str(path))
    try:
        value = pdf.info[PdfParser.PdfName(key)]
    finally:
        pdf.close()
    return PdfParser.decode_text(value) if isinstance(value, bytes) else value


def test_the_pdf_and_png_carry_the_sheets_title_and_the_placements(tmp_path, capsys):
    assert main(["markers", "--game", "novuss", "--out", str(tmp_path / "m.pdf"), "--dpi", "72"]) == 0
    printed = capsys.readouterr().out
    places = marker_places(default_profile("novuss"))
    assert all(p.text in printed.splitlines() for p in places)
    assert _pdf_info(tmp_path / "m.pdf", "Title") == "shotjudge markers — Novuss (novuss-default)"
    assert _pdf_info(tmp_path / "m.pdf", "Subject") == " / ".join(p.text for p in places)
    assert main(["markers", "--game", "cvrnkana", "--out", str(tmp_path / "c.png"), "--dpi", "72"]) == 0
    with Image.open(tmp_path / "c.png") as im:
        assert im.info["Title"] == "shotjudge markers — Cvrnkaná (cvrnkana-default)"
        assert im.info["Description"].startswith("marker 10: between the pit and the start lines")
    assert main(["markers", "--game", "novuss", "--charuco", "--out", str(tmp_path / "lens.pdf"), "--dpi", "72"]) == 0
    assert _pdf_info(tmp_path / "lens.pdf", "Title") == "shotjudge ChArUco board (lens calibration)"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.png", "lens.pdf", "m.pdf"]
