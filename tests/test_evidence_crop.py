"""Evidence crops at or beyond the image edge are clipped (black where the image ends), never a crash:
a piece that flew off the board, or a place outside the camera's view, still gets its crop in the report."""
import numpy as np
import pytest

from calibration.calfile import load_calibration
from judge.replay_draw import Board
from test_live import write_calibration

SIZE = (96, 64)


@pytest.fixture
def board(tmp_path):
    write_calibration(tmp_path / "cal.json", SIZE)
    return Board(load_calibration(tmp_path / "cal.json", expected_image_size=SIZE))


def test_a_crop_inside_the_image_is_the_image_there(board):
    image = np.arange(SIZE[0] * SIZE[1] * 3, dtype=np.uint8).reshape(SIZE[1], SIZE[0], 3)
    crop, (x0, y0, scale) = board.crop(image, (0.0, 0.0), 40.0, 32)
    assert crop.shape == (32, 32, 3) and x0 >= 0 and y0 >= 0 and scale > 0
    half = round(32 / scale / 2)
    assert np.array_equal(board.crop(image, (0.0, 0.0), 40.0, 2 * half)[0], image[y0:y0 + 2 * half, x0:x0 + 2 * half])


@pytest.mark.parametrize("at_mm", [(480.0, 480.0), (500.0, -500.0), (5000.0, 0.0), (-1e6, 3e6), (float("nan"), 0.0)])
def test_a_crop_at_or_beyond_the_edge_is_clipped_not_a_crash(board, at_mm):
    image = np.full((SIZE[1], SIZE[0], 3), 200, np.uint8)
    crop, (_, _, scale) = board.crop(image, at_mm, 40.0, 48)
    assert crop.shape == (48, 48, 3) and scale > 0
    inside = abs(at_mm[0]) <= 500 and abs(at_mm[1]) <= 500
    if inside:  # the corner of the image, and black beyond its edge (not stretched)
        assert (crop >= 190).any() and (crop == 0).any()
    else:  # far beyond the image, or a place it cannot map: all black
        assert crop.max() == 0
