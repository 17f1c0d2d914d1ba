"""Pieces smeared by their motion during the exposure (``vision.streak``), on frames of the simulator's camera.

The frames are rendered with motion blur (sub-frame states across the 8 ms exposure, centred on the frame's
instant), so a piece's true mid-exposure position is known exactly.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from calibration import default_profile
from calibration.plane import PlaneMap
from sim.frames import Occluder, PieceState, SimFrame
from sim.render import Renderer
from sim.render_settings import RenderSettings, make_camera
from vision.detect_classical import STREAK_SCORE, ClassicalDetector

T_S = 2.0  # the frame's instant: the middle of its exposure


def _scene(game: str, blur_samples: int, seed: int = 3):
    profile = default_profile(game)
    st = RenderSettings(seed=seed, blur_samples=blur_samples)
    cam = make_camera(profile, 1280, 720, st)
    renderer = Renderer(cam, profile, st)
    plane = PlaneMap((cam.width, cam.height), cam.K, np.array(cam.dist), np.linalg.inv(cam.board_to_undistorted()))
    det = ClassicalDetector(plane, profile)  # piece colours: the profile's, white-balanced by the board
    det.learn_background([renderer.render(SimFrame(0, 0.0, (), ()))])
    if profile.spec.striker:  # the bat's colour is learnt where it is put down: lying still in A's zone
        bat = _piece("bat", "bat", None, (0.0, -profile.geometry["surface_mm"] / 2 + 55.0),
                     profile.geometry["bat_diameter_mm"] / 2)
        for k in (0, 1):
            det.detect(renderer.render(SimFrame(k, k / 60, (bat,), ())), k, k / 60)
        assert det.colour_source[("bat", None)] == "put down"
    return profile, renderer, det


@pytest.fixture(scope="module")
def novuss():
    return _scene("novuss", 8)


def _piece(pid, kind, owner, xy, r):
    return PieceState(pid, kind, owner, float(xy[0]), float(xy[1]), 0.0, 0.0, r, True)


def _clip(moving: PieceState, velocity_mm_s, resting=(), occluders=()):
    """``states_at(t)``: ``moving`` slides at ``velocity_mm_s`` and is at its given place at ``T_S``."""
    def at(t):
        dt = t - T_S
        p = dataclasses.replace(moving, x_mm=moving.x_mm + velocity_mm_s[0] * dt,
                                y_mm=moving.y_mm + velocity_mm_s[1] * dt)
        return SimFrame(7, t, (p,) + tuple(resting), tuple(occluders))
    return at


def _detect(renderer, det, states_at, frame=7):
    f = states_at(T_S)
    det._cache = {}  # each case on its own
    return det.detect(renderer.render(f, states_at), frame, T_S)


def _spy(det, monkeypatch):
    calls = []
    find = det.streaks.find
    monkeypatch.setattr(det.streaks, "find", lambda *a, **k: calls.append(find(*a, **k)) or calls[-1])
    return calls


@pytest.mark.parametrize("centre,heading_deg", [((60.0, -150.0), 90.0), ((-220.0, 180.0), 35.0),
                                                ((310.0, -40.0), 160.0)])
def test_bat_at_strike_speed_is_found_at_its_mid_exposure_position(novuss, monkeypatch, centre, heading_deg):
    profile, renderer, det = novuss
    calls = _spy(det, monkeypatch)
    r_bat = profile.geometry["bat_diameter_mm"] / 2
    r_pawn = profile.geometry["pawn_diameter_mm"] / 2
    a = math.radians(heading_deg)
    v = (4000.0 * math.cos(a), 4000.0 * math.sin(a))  # 4 m/s: 32 mm during the 8 ms exposure
    pawn = _piece("A3", "pawn", "A", (-350.0, -380.0), r_pawn)
    dets = _detect(renderer, det, _clip(_piece("bat", "bat", None, centre, r_bat), v, (pawn,)))
    pieces = dets.pieces()
    assert [(d.kind, d.owner) for d in sorted(pieces, key=lambda d: d.kind)] == [("bat", None), ("pawn", "A")]
    bat = next(d for d in pieces if d.kind == "bat")
    assert math.dist(bat.centre_mm, centre) <= 2.0
    assert bat.radius_mm == r_bat
    assert bat.score == STREAK_SCORE and len(calls) == 1 and calls[0] is not None  # measured as a streak
    sharp = next(d for d in pieces if d.kind == "pawn")
    assert sharp.score > STREAK_SCORE and math.dist(sharp.centre_mm, (pawn.x_mm, pawn.y_mm)) <= 1.0
    assert dets.occluders() == []  # the smear is no longer taken for a hand


def test_slow_bat_keeps_the_disc_fit(novuss, monkeypatch):
    """At 1 m/s the smear (8 mm) still fits a disc: the streak path is not even consulted."""
    profile, renderer, det = novuss
    calls = _spy(det, monkeypatch)
    dets = _detect(renderer, det, _clip(_piece("bat", "bat", None, (40.0, 60.0), 18.0), (0.0, 1000.0)))
    (bat,) = dets.pieces()
    assert bat.kind == "bat" and bat.score > STREAK_SCORE and math.dist(bat.centre_mm, (40.0, 60.0)) <= 1.0
    assert calls == []


@pytest.mark.parametrize("occluders", [
    (Occluder("hand", 100.0, -560.0, math.pi / 2, 20.0, radius_mm=45.0),),  # reaching in over the S cushion
    (Occluder("hand", 100.0, -590.0, 1.0, 50.0, radius_mm=45.0),),
    (Occluder("hand", -200.0, 565.0, -math.pi / 2, 30.0, radius_mm=45.0),),
    (Occluder("cue", 60.0, -433.0, math.pi / 2, 20.0, length_mm=1300.0, width_mm=12.0),),
    (Occluder("cue", -200.0, -470.0, 1.2, 20.0, length_mm=1300.0, width_mm=12.0),),
    (Occluder("cue", 30.0, -200.0, math.pi / 2, 20.0, length_mm=1300.0, width_mm=12.0),
     Occluder("hand", 30.0, -690.0, math.pi / 2, 60.0, radius_mm=45.0)),
])
def test_hands_and_the_cue_are_never_streak_pieces(novuss, monkeypatch, occluders):
    """Each of these leaves a blob part that no disc explains, and the streak step weighs it (too wide or
    round for a streak: not even measured; a cue's narrow end or a hand's edge: measured and refused)."""
    profile, renderer, det = novuss
    calls = _spy(det, monkeypatch)
    weighed = []
    could_be = det.streaks.could_be
    monkeypatch.setattr(det.streaks, "could_be", lambda *a: weighed.append(could_be(*a)) or weighed[-1])
    hidden = _piece("bat", "bat", None, (0.0, 0.0), 18.0)
    f = SimFrame(7, T_S, (dataclasses.replace(hidden, visible=False),), tuple(occluders))
    det._cache = {}
    dets = det.detect(renderer.render(f), 7, T_S)
    assert dets.pieces() == []
    assert len(dets.occluders()) >= 1
    assert len(weighed) >= 1 and all(c is None for c in calls)


def test_fast_marble_is_found_by_its_player_colour(monkeypatch):
    profile, renderer, det = _scene("cvrnkana", 4)
    calls = _spy(det, monkeypatch)
    r = profile.geometry["marble_diameter_mm"] / 2
    v = (900.0, 2400.0)  # 2.6 m/s: a 21 mm smear of a 14 mm marble
    still = _piece("B4", "marble", "B", (250.0, 200.0), r)
    dets = _detect(renderer, det, _clip(_piece("A1", "marble", "A", (-40.0, -170.0), r), v, (still,)))
    got = sorted(((d.owner, d.score == STREAK_SCORE, d.centre_mm) for d in dets.pieces()), key=lambda g: g[0])
    assert [g[:2] for g in got] == [("A", True), ("B", False)]
    assert math.dist(got[0][2], (-40.0, -170.0)) <= 2.0 and math.dist(got[1][2], (250.0, 200.0)) <= 1.0
    assert len(calls) == 1
