"""Physics of the simulator against closed-form kinematics: friction, contact instants, restitution,
pockets, cushions, pieces leaving the board, the pit's capture speed, and the frame stream."""
import math

import numpy as np
import pytest

from calibration.profile import default_profile
from rules.record import parse_record
from sim.frames import ClipRecorder
from sim.physics_cvrnkana import CvrnkanaPhysics, Field, marble_pieces
from sim.physics_novuss import G_MM_S2, NovussPhysics, NovussTable, novuss_pieces
from sim.session import to_record

NOVUSS = default_profile("novuss")
CVRNKANA = default_profile("cvrnkana")
A = NovussPhysics().slide_mu * G_MM_S2


def strike(pieces, v, piece="bat", physics=NovussPhysics(), seed=0, record=False):
    table = NovussTable(NOVUSS.geometry, physics, seed)
    table.place(pieces)
    rec = ClipRecorder(novuss_pieces(NOVUSS.geometry)) if record else None
    res = table.strike(piece, v, 0.0, rec)
    return (res, rec.clip()) if record else res


def time_to_travel(d, v0, a):
    """t with d = v0 t - a t^2 / 2."""
    return (v0 - math.sqrt(v0 * v0 - 2 * a * d)) / a


def test_sliding_piece_stops_where_coulomb_friction_says():
    res = strike({"A1": (-400.0, 0.0)}, (1000.0, 0.0), piece="A1")
    assert res.events == ()
    assert res.after["A1"][0] == pytest.approx(-400.0 + 1000.0 ** 2 / (2 * A), abs=0.5)
    assert res.after["A1"][1] == pytest.approx(0.0, abs=1e-6)
    assert res.t1_s == pytest.approx(1000.0 / A, abs=0.001)


def test_contact_instant_is_interpolated_inside_the_step():
    r = NOVUSS["bat_diameter_mm"] / 2 + NOVUSS["pawn_diameter_mm"] / 2
    for v0 in (1733.0, 2000.0, 3917.0):
        res = strike({"bat": (0.0, -400.0), "A1": (0.0, 0.0)}, (0.0, v0))
        contact = res.events[0]
        assert (contact["kind"], contact["a"], contact["b"]) == ("contact", "bat", "A1")
        assert contact["t"] == pytest.approx(time_to_travel(400.0 - r, v0, A), abs=2e-5)


def outgoing(clip, piece, t_c, start=0.002, stop=0.012):
    """The straight line a piece runs along after ``t_c`` as position(t): the direction fitted to the
    clip's 1 ms samples, the distance along it with the known Coulomb deceleration (s + A t^2 / 2 is
    linear in t)."""
    ts = np.arange(math.ceil((t_c + start) * 1000), math.floor((t_c + stop) * 1000) + 1) / 1000.0
    xy = np.array([[clip.states_at(t).piece(piece).x_mm, clip.states_at(t).piece(piece).y_mm] for t in ts])
    centre = xy.mean(axis=0)
    u = np.linalg.svd(xy - centre)[2][0]
    s = (xy - centre) @ u
    if s[-1] < s[0]:
        u, s = -u, -s
    b, c = np.polyfit(ts - t_c, s + A / 2 * (ts - t_c) ** 2, 1)
    return lambda t: centre + u * (b * (t - t_c) + c - A / 2 * (t - t_c) ** 2)


@pytest.mark.parametrize("offset_mm", [0.0, 15.0])
def test_outgoing_lines_run_back_to_the_reported_contact(offset_mm):
    """The velocities change at the reported instant, not at the end of the 0.5 ms step: extrapolated
    back to the contact time, the struck pawn's outgoing line is at the spot it was struck on and the
    bat's where the bat touched it (head-on and a cut), to within 0.05 ms of their motion."""
    r = NOVUSS["bat_diameter_mm"] / 2 + NOVUSS["pawn_diameter_mm"] / 2
    for v0 in (1733.0, 2000.0, 3000.0, 3917.0):
        res, clip = strike({"bat": (0.0, -400.0), "A1": (offset_mm, 0.0)}, (0.0, v0), record=True)
        contact = res.events[0]
        assert (contact["kind"], contact["a"], contact["b"]) == ("contact", "bat", "A1")
        t_c = contact["t"]
        at_contact = {"A1": (offset_mm, 0.0), "bat": (0.0, -math.sqrt(r * r - offset_mm ** 2))}
        for piece, xy in at_contact.items():
            pos = outgoing(clip, piece, t_c)
            speed = np.hypot(*(pos(t_c + 1e-3) - pos(t_c))) / 1e-3
            assert speed > 300.0
            miss_s = np.hypot(*(pos(t_c) - np.array(xy))) / speed
            assert miss_s < 5e-5, (v0, piece, miss_s)


def test_head_on_restitution_between_pieces():
    g = NOVUSS.geometry
    mb, mp, e = g["bat_mass_g"], g["pawn_mass_g"], NovussPhysics().restitution_pieces
    r = g["bat_diameter_mm"] / 2 + g["pawn_diameter_mm"] / 2
    res = strike({"bat": (0.0, -250.0), "A1": (0.0, -250.0 + r + 20.0)}, (0.0, 1000.0))
    v_c = math.sqrt(1000.0 ** 2 - 2 * A * 20.0)
    v_pawn = (1 + e) * mb / (mb + mp) * v_c
    travelled = res.after["A1"][1] - res.before["A1"][1]
    assert travelled == pytest.approx(v_pawn ** 2 / (2 * A), rel=0.01)


def test_cushion_rebound_keeps_its_restitution_share_of_speed():
    h, r = NOVUSS["surface_mm"] / 2, NOVUSS["pawn_diameter_mm"] / 2
    res = strike({"A1": (0.0, -300.0)}, (0.0, -1500.0), piece="A1")
    [cushion] = res.events
    assert (cushion["kind"], cushion["piece"], cushion["side"]) == ("cushion", "A1", "S")
    d_in = (h - r) - 300.0
    v_in = math.sqrt(1500.0 ** 2 - 2 * A * d_in)
    assert cushion["t"] == pytest.approx(time_to_travel(d_in, 1500.0, A), abs=2e-5)
    v_out = NovussPhysics().restitution_cushion * v_in
    assert res.after["A1"][1] == pytest.approx(-(h - r) + v_out ** 2 / (2 * A), abs=1.0)


def test_pocket_captures_a_piece_whose_centre_enters_the_circle():
    h, pr = NOVUSS["surface_mm"] / 2, NOVUSS["pocket_radius_mm"]
    v0 = 2000.0
    u = 1 / math.sqrt(2)
    res, clip = strike({"A1": (100.0, 100.0)}, (v0 * u, v0 * u), piece="A1", record=True)
    [pocket] = [e for e in res.events if e["kind"] == "pocket"]
    assert (pocket["piece"], pocket["pocket"]) == ("A1", "NE")
    assert "A1" not in res.after and res.gone == {"A1": "pocket"}
    d = math.hypot(h - 100.0, h - 100.0) - pr
    assert pocket["t"] == pytest.approx(time_to_travel(d, v0, A), abs=2e-5)
    last = clip.states_at(clip.t_end_s).piece("A1")
    assert not last.visible and last.z_mm < 0
    parse_record(to_record("novuss", "A", res))  # the record of a pocketing is valid


def test_piece_that_stops_short_of_the_pocket_stays():
    res = strike({"A1": (300.0, 300.0)}, (300.0, 300.0), piece="A1")
    assert "A1" in res.after and not [e for e in res.events if e["kind"] == "pocket"]


def test_off_board_only_above_the_speed_and_with_the_seeded_chance():
    fast, slow = (0.0, 4500.0), (0.0, 1800.0)
    sure = NovussPhysics(off_chance=1.0, off_speed_mm_s=3000.0)
    res = strike({"A1": (0.0, 0.0)}, fast, piece="A1", physics=sure)
    assert [(e["kind"], e["piece"], e["side"]) for e in res.events] == [("off", "A1", "N")]
    assert res.gone == {"A1": "off"} and "A1" not in res.after
    res = strike({"A1": (0.0, 0.0)}, slow, piece="A1", physics=sure)
    assert [e["kind"] for e in res.events] == ["cushion"]
    never = strike({"A1": (0.0, 0.0)}, fast, piece="A1", physics=NovussPhysics(off_chance=0.0))
    assert "off" not in [e["kind"] for e in never.events]
    half = NovussPhysics(off_chance=0.5)
    outcomes = [bool(strike({"A1": (0.0, 0.0)}, fast, piece="A1", physics=half, seed=s).gone) for s in range(40)]
    assert 10 <= sum(outcomes) <= 30
    again = [bool(strike({"A1": (0.0, 0.0)}, fast, piece="A1", physics=half, seed=s).gone) for s in range(40)]
    assert outcomes == again


def test_frame_stream_interpolates_and_hides_pocketed_pieces():
    res, clip = strike({"A1": (-400.0, 0.0)}, (1000.0, 0.0), piece="A1", record=True)
    t = 0.1234
    s = clip.states_at(t).piece("A1")
    assert s.x_mm == pytest.approx(-400.0 + 1000.0 * t - A * t * t / 2, abs=0.05)
    assert s.visible and s.kind == "pawn" and s.owner == "A" and s.radius_mm == NOVUSS["pawn_diameter_mm"] / 2
    assert clip.n_frames(60) == int(clip.t_end_s * 60) + 1
    assert [f.index for f in clip.frames(60)][:3] == [0, 1, 2]
    assert not clip.states_at(0.5).piece("A2").visible  # never on the board in this shot


def flat_field(**kw):
    return Field(CVRNKANA.geometry, CvrnkanaPhysics(slope_amplitude_mm=0.0, **kw), seed=0)


def roll(field, start, v, record=False):
    field.place({"A1": start})
    rec = ClipRecorder(marble_pieces(CVRNKANA.geometry)) if record else None
    res = field.flick({"A1": v}, 0.0, rec)
    return (res, rec.clip()) if record else res


@pytest.mark.parametrize("arrive_frac, captured", [(0.3, True), (0.9, True), (1.1, False), (1.6, False)])
def test_pit_captures_below_the_capture_speed_and_lets_faster_marbles_skip(arrive_frac, captured):
    field = flat_field()
    a = field.physics.roll_mu * 9810.0
    cap = field.capture_speed_mm_s(CVRNKANA["pit_diameter_mm"])
    assert cap == pytest.approx(CVRNKANA["pit_diameter_mm"] / math.sqrt(2 * CVRNKANA["marble_diameter_mm"] / 9810.0))
    d = 400.0 - field.pit_r
    v0 = math.sqrt((arrive_frac * cap) ** 2 + 2 * a * d)
    res, clip = roll(field, (0.0, -400.0), (0.0, v0), record=True)
    pits = [e for e in res.events if e["kind"] == "pit"]
    if captured:
        assert [e["piece"] for e in pits] == ["A1"] and "A1" not in res.after
        assert pits[0]["t"] == pytest.approx(time_to_travel(d, v0, a), abs=1e-4)
        assert clip.states_at(clip.t_end_s).piece("A1").z_mm < -20.0  # lying at the bottom, in view
    else:
        assert pits == [] and res.after["A1"][1] > field.pit_r
        assert res.after["A1"][0] == pytest.approx(0.0, abs=1e-6)


def test_uneven_ground_bends_a_roll_reproducibly():
    bent = [Field(CVRNKANA.geometry, CvrnkanaPhysics(), seed=s) for s in (3, 3, 4)]
    ends = [roll(f, (-600.0, -1500.0), (0.0, 1500.0)).after["A1"] for f in bent]
    assert ends[0] == ends[1] and ends[0] != ends[2]
    assert abs(ends[0][0] + 600.0) > 0.5  # the slope pushed it sideways
    straight = roll(flat_field(), (-600.0, -1500.0), (0.0, 1500.0)).after["A1"]
    assert straight[0] == pytest.approx(-600.0, abs=1e-9)


def test_rolling_marble_follows_through_after_a_head_on_hit():
    field = flat_field()
    field.place({"A1": (0.0, -600.0), "B1": (0.0, -400.0)})
    res = field.flick({"A1": (0.0, 900.0)}, 0.0)
    assert [e["kind"] for e in res.events] == ["touch", "contact"]
    striker = res.after["A1"][1] - (-400.0 - 14.0)
    assert striker > 20.0  # keeps rolling on (spin), not the 5 % a sliding disc would keep
    assert res.after["B1"][1] > res.after["A1"][1]
