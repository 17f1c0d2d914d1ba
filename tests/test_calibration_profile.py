"""Profiles: marker section validation, marker corner convention, landmarks, measured profile round trip."""
import copy
import json

import numpy as np
import pytest

from calibration import default_profile, load_profile
from calibration.errors import CalibrationError, EquipmentError
from calibration.equipment import updated_profile
from calibration.landmarks import drawing_mm, landmarks_mm
from calibration.markers import marker_corners_mm
from calibration.profile import ProfileError, profile_from_dict, save_profile


def _novuss_dict():
    return copy.deepcopy(default_profile("novuss").to_dict())


def test_marker_corners_follow_aruco_order_with_board_y_up():
    corners = marker_corners_mm(default_profile("novuss"))
    assert sorted(corners) == [0, 1, 2, 3]
    np.testing.assert_allclose(corners[0], [[-585, -535], [-535, -535], [-535, -585], [-585, -585]])
    # TL has the largest y and smallest x; order runs clockwise on the image
    for c in corners.values():
        assert c[0, 0] < c[1, 0] and c[0, 1] == c[1, 1] and c[2, 1] < c[1, 1]


@pytest.mark.parametrize("edit, message", [
    (lambda m: m.update(dictionary="DICT_9X9_7"), "markers.dictionary"),
    (lambda m: m.update(size_mm=-5), "markers.size_mm"),
    (lambda m: m["centres_mm"].update({"50": [0, 0]}), "not an id of DICT_4X4_50"),
    (lambda m: m["centres_mm"].update({"7": [0, "x"]}), r"centres_mm\[7\] must be"),
    (lambda m: m["centres_mm"].update({"7": [-540, -560]}), "overlap"),
])
def test_bad_marker_sections_are_refused(edit, message):
    data = _novuss_dict()
    edit(data["markers"])
    with pytest.raises(ProfileError, match=message):
        profile_from_dict(data, "club.json")


def test_a_club_profile_file_loads_and_names_itself(tmp_path):
    data = _novuss_dict()
    data["name"] = "riga-club"
    data["geometry"]["surface_mm"] = 980.0
    path = tmp_path / "riga.json"
    path.write_text(json.dumps(data))
    prof = load_profile(str(path))
    assert prof.name == "riga-club" and prof["surface_mm"] == 980.0
    assert landmarks_mm(prof)["pocket_NE"] == (490.0, 490.0)


def test_landmarks_and_drawing_come_from_the_profile():
    prof = default_profile("novuss")
    lm = landmarks_mm(prof)
    assert lm["zone_S_W_inner"] == (-340.0, -390.0)
    assert lm["centre_line_N"] == (0.0, 500.0)
    assert np.hypot(*lm["circle_90"]) == pytest.approx(110.0)
    kinds = [k for k, _, _ in drawing_mm(prof)]
    assert kinds.count("zone") == 2 and kinds.count("pocket") == 4 and kinds.count("marker") == 4
    cv = landmarks_mm(default_profile("cvrnkana"))
    assert cv["start_left_inner"] == (-250.0, -3000.0) and cv["start_right_outer"] == (1250.0, -3000.0)


def test_measured_sizes_give_a_valid_updated_profile(tmp_path):
    prof = default_profile("novuss")
    new, changes = updated_profile(prof, pawn_diameter_mm=31.42, pawn_hole_mm=8.1, bat_diameter_mm=37.4)
    assert new.name == "novuss-default-measured"
    assert new["pawn_diameter_mm"] == 31.4 and new["bat_diameter_mm"] == 37.4
    assert new["pawn_hole_mm"] == 8.0  # within tolerance: unchanged
    assert changes == ["pawn_diameter_mm: 32 -> 31.4 mm (measured)", "bat_diameter_mm: 36 -> 37.4 mm (measured)"]
    path = save_profile(new, tmp_path / "measured.json")
    assert load_profile(str(path)).geometry == new.geometry
    with pytest.raises(EquipmentError, match="no geometry.pit_diameter_mm"):
        updated_profile(prof, pit_diameter_mm=90.0)
    with pytest.raises(ProfileError, match="hole must be smaller"):
        updated_profile(prof, pawn_hole_mm=40.0)


def test_profile_without_markers_cannot_place_them():
    data = _novuss_dict()
    data["markers"] = {}
    with pytest.raises(CalibrationError, match="places no ArUco markers"):
        marker_corners_mm(profile_from_dict(data))
