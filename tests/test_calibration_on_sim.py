"""Calibration against the simulator's own camera renderer (not only its synthetic test board)."""
from dataclasses import replace

import numpy as np
import pytest

from calibration import default_profile
from calibration.landmarks import landmarks_mm
from calibration.plane import fit_markers
from sim.frames import SimFrame
from sim.render import Renderer
from sim.render_settings import RenderSettings, make_camera


@pytest.mark.parametrize("game,tilt", [("novuss", 0.0), ("novuss", 15.0), ("cvrnkana", 15.0)])
def test_markers_in_rendered_frames_give_landmarks_within_a_millimetre(game, tilt):
    profile = default_profile(game)
    settings = replace(RenderSettings(), camera_tilt_deg=tilt, camera_dist=(-0.12, 0.03, 0.0, 0.0, 0.0))
    camera = make_camera(profile, 1280, 720, settings)
    image = Renderer(camera, profile, settings).render(SimFrame(0, 0.0, (), ()))
    fit = fit_markers(image, profile, camera.K, camera.dist)
    assert len(fit.marker_ids) == 4
    truth = np.array(list(landmarks_mm(profile).values()))
    err = np.linalg.norm(fit.plane.to_board_mm(camera.project(truth)) - truth, axis=1)
    assert np.sqrt(np.mean(err ** 2)) < 1.0 and err.max() < 1.5
