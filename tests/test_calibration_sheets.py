"""Printable markers: true scale, ruler, and detectable from a photo of the sheet taken at an angle."""
import cv2
import numpy as np
import pytest
from PIL import Image

from calibration import default_profile
from calibration.markers import MarkerDetector
from calibration.sheets import marker_pages
from judge.cli import main


def test_novuss_sheet_is_true_scale_and_markers_survive_a_slanted_photo():
    profile = default_profile("novuss")
    dpi = 150
    (page,) = marker_pages(profile, dpi)
    assert page.size == (round(210 / 25.4 * dpi), round(297 / 25.4 * dpi))
    gray = np.asarray(page)
    # each marker's black square is size_mm wide at the page resolution
    found = MarkerDetector.for_profile(profile)(gray)
    assert found.ids == (0, 1, 2, 3)
    side_px = np.linalg.norm(found.corners_px[:, 1] - found.corners_px[:, 0], axis=1)
    np.testing.assert_allclose(side_px, 50.0 / 25.4 * dpi, atol=1.0)
    # photograph it at an angle: strong perspective, smaller, some blur and noise
    h, w = gray.shape
    src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    dst = np.float32([[220, 60], [1010, 140], [1120, 900], [90, 840]])
    photo = cv2.warpPerspective(gray, cv2.getPerspectiveTransform(src, dst), (1280, 960), flags=cv2.INTER_AREA,
                                borderValue=90)
    photo = cv2.GaussianBlur(photo, (3, 3), 0.8)
    photo = np.clip(photo + np.random.default_rng(0).normal(0, 3, photo.shape), 0, 255).astype(np.uint8)
    assert MarkerDetector.for_profile(profile)(photo).ids == (0, 1, 2, 3)


def test_ruler_is_100_mm_long():
    dpi = 200
    (page,) = marker_pages(default_profile("novuss"), dpi)
    gray = np.asarray(page)
    # the ruler's baseline is the longest horizontal dark run on the page
    dark = gray < 128
    rows = [(np.count_nonzero(r), i) for i, r in enumerate(dark)]
    row = gray[max(rows)[1]] < 128
    xs = np.nonzero(row)[0]
    assert (xs.max() - xs.min() + 1) / dpi * 25.4 == pytest.approx(100.0, abs=0.5)


def test_markers_command_writes_pdf_and_png_with_resolution(tmp_path, capsys):
    assert main(["markers", "--game", "novuss", "--out", str(tmp_path / "m.pdf"), "--dpi", "100"]) == 0
    assert (tmp_path / "m.pdf").read_bytes().startswith(b"%PDF")
    assert main(["markers", "--game", "cvrnkana", "--out", str(tmp_path / "m.png"), "--dpi", "100"]) == 0
    with Image.open(tmp_path / "m.png") as im:
        assert round(im.info["dpi"][0]) == 100 and im.size == (827, 1169)
    assert main(["markers", "--game", "novuss", "--charuco", "--out", str(tmp_path / "c.png"), "--dpi", "100"]) == 0
    assert "check the ruler" in capsys.readouterr().out
    assert main(["markers", "--game", "novuss", "--out", str(tmp_path / "m.svg")]) == 2
    assert "written as .pdf or .png" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.png", "m.pdf", "m.png"]
