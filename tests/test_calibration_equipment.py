"""Equipment checks: pieces measured from the calibrated image to a fraction of a millimetre."""
import numpy as np
import pytest

from calibration import default_profile
from calibration.camera import Camera
from calibration.equipment import check_marble, check_pit, measure_disc
from calibration.errors import EquipmentError
from calibration.plane import fit_markers
from sim.synthetic_board import render_board

CAM = Camera.overhead(1280, 720, view_w_mm=1300, view_h_mm=1300, height_mm=1500, tilt_deg=10,
                      dist=(-0.12, 0.03, 0.0, 0.0, 0.0))


@pytest.fixture(scope="module")
def scene():
    prof = default_profile("novuss")
    pieces = [(250, 150, 32.0, 8.0, 40), (-300, 200, 36.0, 12.0, 90), (200, -300, 14.0, 0, 30),
              (0, 300, 9.0, 0, 30), (-200, -250, 16.8, 0, 120)]
    image = render_board(CAM, prof, discs=pieces)
    return image, fit_markers(image, prof, CAM.K, CAM.dist).plane


def test_pawn_and_bat_diameters_and_holes(scene):
    image, plane = scene
    pawn = measure_disc(image, plane, (246, 155))
    assert pawn.diameter_mm == pytest.approx(32.0, abs=0.3) and pawn.hole_mm == pytest.approx(8.0, abs=0.5)
    assert np.allclose(pawn.centre_mm, (250, 150), atol=0.3)
    bat = measure_disc(image, plane, (-300, 200))
    assert bat.diameter_mm == pytest.approx(36.0, abs=0.3) and bat.hole_mm == pytest.approx(12.0, abs=0.5)


def test_marbles_outside_the_allowed_sizes_are_refused(scene):
    image, plane = scene
    cv = default_profile("cvrnkana")
    ok = check_marble(measure_disc(image, plane, (200, -300)), cv)
    assert ok.diameter_mm == pytest.approx(14.0, abs=0.3) and ok.hole_mm is None
    with pytest.raises(EquipmentError, match=r"measures 8\.\d mm: allowed 10\.0-16\.5 mm"):
        check_marble(measure_disc(image, plane, (0, 300)), cv)
    with pytest.raises(EquipmentError, match=r"measures 16\.\d mm: allowed"):
        check_marble(measure_disc(image, plane, (-200, -250)), cv)
    with pytest.raises(EquipmentError, match="no piece found"):
        measure_disc(image, plane, (300, 300), search_radius_mm=20)


def test_pit_is_measured_against_the_rules_and_profile():
    prof = default_profile("cvrnkana")
    cam = Camera.overhead(1280, 720, view_w_mm=1200, view_h_mm=680, height_mm=1200, tilt_deg=5)
    image = render_board(cam, prof)
    plane = fit_markers(image, prof, cam.K, cam.dist).plane
    pit = check_pit(measure_disc(image, plane, (0, 0), search_radius_mm=90), prof)
    assert pit.diameter_mm == pytest.approx(100.0, abs=0.5)
    with pytest.raises(EquipmentError, match="the profile says 80 mm"):
        from calibration.profile import profile_from_dict
        data = prof.to_dict()
        data["geometry"]["pit_diameter_mm"] = 80.0
        check_pit(pit, profile_from_dict(data))
