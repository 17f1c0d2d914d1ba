"""The harsher simulator's knobs (lamps and fall-off, ambient light, white-balance and exposure drift, colour
families, compression, rolling shutter, tilt) and the named strata, measured on rendered frames."""
from __future__ import annotations

import dataclasses

import cv2
import numpy as np
import pytest

from calibration.profile import default_profile
from sim.frames import PieceState, SimFrame
from sim.render import Renderer
from sim.render_geometry import apparent_point_mm
from sim.render_light import corners_mm, lamp_shadows
from sim.render_settings import RenderSettings, make_camera
from sim.render_strata import FAMILIES, STRATA, family_bgr, hsv_of, in_family, stratum, two_families

NOVUSS = default_profile("novuss")
CVRNKANA = default_profile("cvrnkana")
QUIET = dict(noise_sigma=0.0, flicker=0.0, flicker_jitter=0.0)


def frame(pieces=(), t_s=0.0, index=0):
    return SimFrame(index, t_s, tuple(pieces), ())


def pawn(pid, x, y, owner):
    return PieceState(pid, "pawn", owner, x, y, 0.0, 0.0, NOVUSS["pawn_diameter_mm"] / 2, True)


def marble(pid, x, y, owner):
    return PieceState(pid, "marble", owner, x, y, 0.0, 0.0, CVRNKANA["marble_diameter_mm"] / 2, True)


def families_of(bgr) -> list[str]:
    """The families whose ranges hold a BGR colour (allowing for the rounding of its HSV: coarse saturation
    when it is dark)."""
    hsv = hsv_of(bgr)
    return [f for f in FAMILIES if in_family(hsv, f, (1, 2 + 400 / max(hsv[2], 1.0), 2))]


def patch(img, px, half=3):
    u, v = (int(round(c)) for c in px)
    return img[v - half:v + half + 1, u - half:u + half + 1].reshape(-1, 3).astype(float)


@pytest.mark.parametrize("profile", [NOVUSS, CVRNKANA])
def test_dim_corners_are_forty_percent_darker_than_the_centre(profile):
    st = stratum("dim-corners", 1, **QUIET)
    ref = dataclasses.replace(st, lamps_mm=(), corner_falloff=None)
    cam = make_camera(profile, 640, 360, st)
    lit, plain = (Renderer(cam, profile, s).render(frame()).astype(float) for s in (st, ref))
    ratio = lit.mean(-1) / np.maximum(plain.mean(-1), 1.0)  # the light on the surface, whatever it shows

    def at(xy):
        u, v = (int(round(c)) for c in cam.project([xy])[0])
        return float(np.median(ratio[v - 2:v + 3, u - 2:u + 3]))

    centre = at((0.0, 0.0))
    corners = [at(c) for c in corners_mm(profile)]
    assert 1.0 - np.mean(corners) / centre == pytest.approx(0.40, abs=0.05)
    assert all(0.5 < c / centre < 0.7 for c in corners)


def test_ambient_scales_the_light_and_lamps_share_the_shadows():
    cam = make_camera(NOVUSS, 320, 180)
    full = Renderer(cam, NOVUSS, RenderSettings(seed=2, **QUIET)).render(frame()).astype(float)
    dim = Renderer(cam, NOVUSS, RenderSettings(seed=2, ambient=0.25, **QUIET)).render(frame()).astype(float)
    bright = full.mean(-1) > 80  # away from black, where the rounding of a quarter is coarse
    assert np.median(dim.mean(-1)[bright] / full.mean(-1)[bright]) == pytest.approx(0.25, abs=0.01)
    three = stratum("three-lamps", 4)
    assert len(three.lamps_mm) == 3
    shares = [share for _, _, share in lamp_shadows(three)]
    assert sum(shares) == pytest.approx(1.0) and all(0.1 < s < 0.8 for s in shares)


def test_exposure_and_white_balance_drift_by_the_set_amount_over_the_clip():
    cam = make_camera(NOVUSS, 320, 180)
    st = RenderSettings(seed=3, exposure_drift=-0.25, wb_drift_bgr=(0.12, 0.0, -0.12), drift_start_s=0.5,
                        drift_s=2.0, **QUIET)
    r = Renderer(cam, NOVUSS, st)
    before, middle, after = (r.render(frame(t_s=t)).reshape(-1, 3).astype(float) for t in (0.4, 1.5, 2.6))
    ok = (before.max(1) < 200) & (before.min(1) > 40)  # neither clipped nor near black
    gain = lambda img: np.median(img[ok] / before[ok], axis=0)  # noqa: E731 - per channel B, G, R
    assert gain(after) == pytest.approx([0.75 * 1.12, 0.75, 0.75 * 0.88], abs=0.01)
    assert gain(middle) == pytest.approx([0.875 * 1.06, 0.875, 0.875 * 0.94], abs=0.01)  # half way on the ramp
    assert abs(stratum("exposure-drift", 1).exposure_drift) == 0.25
    assert sorted(map(abs, stratum("wb-drift", 1).wb_drift_bgr)) == [0.0, 0.12, 0.12]


@pytest.mark.parametrize("family", list(FAMILIES))
def test_a_colour_family_gives_pawns_and_marbles_of_that_family(family):
    rng = np.random.default_rng(7)
    bgr = family_bgr(family, rng)
    assert families_of(bgr) == [family]  # the families do not overlap
    # rendered under the standard light: the top face still reads as the family
    st = RenderSettings(seed=1, pawn_b_bgr=bgr, **QUIET)
    cam = make_camera(NOVUSS, 1280, 720, st)
    p = pawn("B1", 150.0, 120.0, "B")
    img = Renderer(cam, NOVUSS, st).render(frame([p]))
    top = apparent_point_mm(NOVUSS, p)
    ring = [(top[0] + 10.0 * np.cos(a), top[1] + 10.0 * np.sin(a), top[2]) for a in np.linspace(0, 2 * np.pi, 24, endpoint=False)]
    px = np.round(cam.project(ring)).astype(int)
    seen = np.median(img[px[:, 1], px[:, 0]].astype(float), axis=0)
    assert in_family(hsv_of(np.round(seen).astype(int)), family, (6, 40, 45))
    # marbles: the glass body takes the family's hue (each marble +-6), saturation and value
    if family in ("blue", "green", "dark-red"):
        hue, sv = rng.uniform(*FAMILIES[family][0]) % 180, (170.0, 150.0)
        st = RenderSettings(seed=1, marble_a_hue=hue, marble_a_sv=sv, **QUIET)
        cam = make_camera(CVRNKANA, 1280, 720, st)
        m = marble("A1", -200.0, 100.0, "A")
        img = Renderer(cam, CVRNKANA, st).render(frame([m]))
        c = cam.project([apparent_point_mm(CVRNKANA, m)])[0]
        h = cv2.cvtColor(patch(img, c, 2).astype(np.uint8)[None], cv2.COLOR_BGR2HSV)[0, :, 0].astype(float)
        d = np.abs((h - hue + 90) % 180 - 90)
        assert np.median(d) < 12


def test_players_never_share_a_family_and_the_bat_takes_any_colour():
    rng = np.random.default_rng(0)
    pairs = [two_families(rng) for _ in range(300)]
    assert all(a != b for a, b in pairs) and {a for a, _ in pairs} == set(FAMILIES)
    for seed in range(20):
        st = stratum("everything", seed)
        fam = [families_of(c) for c in (st.pawn_a_bgr, st.pawn_b_bgr)]
        assert len(fam[0]) == len(fam[1]) == 1 and fam[0] != fam[1]
        assert st.marble_a_sv is not None and st.marble_b_sv is not None
    hues = {round(hsv_of(stratum("bat-any-colour", s).bat_bgr)[0] / 30) for s in range(30)}
    assert len(hues) >= 5  # bats all round the colour wheel


def _moving(n=8):
    def at(t, i=0):
        return SimFrame(i, t, (pawn("A1", -200.0 + 3000.0 * t, 60.0, "A"),), ())
    return [at(i / 30.0, i) for i in range(n)], at


def _psnr(a, b):
    mse = float(np.mean((a.astype(float) - b.astype(float)) ** 2))
    return 10 * np.log10(255.0 ** 2 / max(mse, 1e-9))


def test_compression_degrades_frames_by_bitrate_and_stays_deterministic():
    frames, at = _moving()
    st = RenderSettings(seed=5, blur_samples=2)
    cam = make_camera(NOVUSS, 640, 360, st)
    raw = [Renderer(cam, NOVUSS, st).render(f, at) for f in frames]
    got = {}
    for name, changes in (("2", dict(compression="h264", bitrate_mbps=2.0)), ("8", dict(compression="h264", bitrate_mbps=8.0)),
                          ("jpeg", dict(compression="jpeg", jpeg_quality=35))):
        r = Renderer(cam, NOVUSS, dataclasses.replace(st, **changes))
        out = [r.render(f, at) for f in frames]
        got[name] = np.mean([_psnr(a, b) for a, b in zip(raw[2:], out[2:])])
        if name == "2":
            assert r._codec.bytes * 8 / r._codec.frames < 1.6 * 2e6 / 30  # the stream keeps to its bitrate
            again = Renderer(cam, NOVUSS, dataclasses.replace(st, **changes))
            assert all(a.tobytes() == again.render(f, at).tobytes() for a, f in zip(out, frames))
    assert 25.0 < got["2"] < got["8"] < 50.0
    assert 25.0 < got["jpeg"] < 50.0


def test_rolling_shutter_and_tilt_strata():
    st = stratum("rolling-shutter-15ms", 1)
    cam = make_camera(NOVUSS, 1280, 720, st)
    times = Renderer(cam, NOVUSS, st).band_times(1.0)
    first, last = times[0][0], times[-1][-1]
    assert (times[-1][0] - times[0][0]) == pytest.approx(0.015 * 47 / 48)  # row bands read over 15 ms
    assert last > first and np.mean([np.mean(b) for b in times]) == pytest.approx(1.0)
    bat_rows = NOVUSS["bat_diameter_mm"] * cam.height / (NOVUSS["frame_mm"] + 20.0)
    assert bat_rows > 720 / st.rolling_bands  # a bat spans more than one band: it leans, it does not jump
    tilt = stratum("tilt-10", 2)
    cam = make_camera(NOVUSS, 1280, 720, tilt)
    assert tilt.camera_tilt_deg == 10.0
    corners = np.array([c for xy in NOVUSS.markers["centres_mm"].values() for c in
                        [(xy[0] + dx, xy[1] + dy) for dx in (-25, 25) for dy in (-25, 25)]])
    px = cam.project(corners)
    assert (px[:, 0] > 0).all() and (px[:, 0] < 1280).all() and (px[:, 1] > 0).all() and (px[:, 1] < 720).all()


def test_strata_are_reproducible_from_name_and_seed():
    for name in STRATA:
        assert stratum(name, 3) == stratum(name, 3)
    assert stratum("base", 3) == RenderSettings(seed=3, blur_samples=4)
    assert stratum("everything", 3) != stratum("everything", 4)
    frames, at = _moving(3)
    st = stratum("everything", 3, camera_tilt_deg=4.0)
    cam = make_camera(NOVUSS, 320, 180, st)
    a = [Renderer(cam, NOVUSS, st).render(f, at) for f in frames[:1]]
    b = [Renderer(cam, NOVUSS, st).render(f, at) for f in frames[:1]]
    assert a[0].tobytes() == b[0].tobytes()
    other = stratum("everything", 4, camera_tilt_deg=4.0)
    assert Renderer(cam, NOVUSS, other).render(frames[0], at).tobytes() != a[0].tobytes()
    with pytest.raises(ValueError, match="unknown stratum"):
        stratum("fog", 1)
    with pytest.raises(ValueError, match="compression"):
        RenderSettings(compression="mpeg2")
    with pytest.raises(ValueError, match="corner_falloff"):
        RenderSettings(corner_falloff=0.95)
