"""A pawn struck off its rest and seen once on its fast line before it struck another (``vision.lone_launch``).

The harsher simulator's opponent-off-direct at 30 frames/s (six looks) and the independent renderer's at 60: the
bat set A1 off at 5.6 m/s, A1 was seen once on that line, struck B1 30 ms later and went on at 0.17 m/s; B1
crossed the cushion before the next frame. The one sighting was dropped as a blend of rest and motion, the
contact with B1 was never solved, and B1 was 'lost from sight': the penalty for sending an opponent's pawn off
the board went to the referee instead of being called."""
from __future__ import annotations

import pytest

from calibration import default_profile
from vision.pipeline import Pipeline, hints_for
from vision.types import Detection, Detections
from vision_synth import shot_records

PROFILE = default_profile("novuss")
FPS = 30.0
R_PAWN, R_BAT = 16.0, 18.0
BAT0, A1, B1 = -445.0, 120.4, 330.2  # resting places on the board's centre line (y, mm), the bat's in A's zone
DECEL = 1500.0  # every sliding piece slows at this (mm/s^2)
T_BAT = 1.95  # the bat sets off at 5 m/s


def _slide(v0: float, tau: float) -> float:
    """How far a piece set off at ``v0`` has slid after ``tau`` s (it stops where friction has taken v0)."""
    tau = min(max(tau, 0.0), v0 / DECEL)
    return v0 * tau - 0.5 * DECEL * tau * tau


def _when(v0: float, d: float) -> float:
    """When a piece set off at ``v0`` has slid ``d``."""
    return (v0 - (v0 * v0 - 2 * DECEL * d) ** 0.5) / DECEL


T_HIT = T_BAT + _when(5000.0, A1 - R_BAT - R_PAWN - BAT0)  # the bat meets A1 (between frames 61 and 62)
V_A1 = 5600.0
T_B1 = T_HIT + _when(V_A1, B1 - 2 * R_PAWN - A1)  # A1 meets B1 (between frames 62 and 63)


def _a1(t: float, slow_mm_s: float) -> float:
    if t <= T_B1:
        return A1 + _slide(V_A1, t - T_HIT)
    return B1 - 2 * R_PAWN + _slide(slow_mm_s, t - T_B1)


def _bat(t: float) -> float:
    if t <= T_HIT:
        return BAT0 + _slide(5000.0, t - T_BAT)
    return A1 - R_BAT - R_PAWN + _slide(700.0, t - T_HIT)  # slows to a stop well short of A1


def _record(slow_mm_s: float, fast_seen: bool = True):
    pipe = Pipeline(PROFILE)
    pipe.start(hints_for({"bat": (0.0, BAT0), "A1": (0.0, A1), "B1": (0.0, B1), "B5": (-300.0, -100.0)}), 0, 0.0)
    frames = []
    for k in range(1, 150):
        t = k / FPS
        items = [Detection("bat", (0.0, _bat(t)), R_BAT, frame=k, t_s=t),
                 Detection("pawn", (-300.0, -100.0), R_PAWN, "B", frame=k, t_s=t)]
        if fast_seen or not T_HIT < t < T_B1:  # (not seen on its fast line: a codec's smear)
            items.append(Detection("pawn", (0.0, _a1(t, slow_mm_s)), R_PAWN, "A", frame=k, t_s=t))
        if t < T_B1:  # B1 is gone (over the cushion) by the next frame
            items.append(Detection("pawn", (0.0, B1), R_PAWN, "B", frame=k, t_s=t))
        frames.append(Detections(k, t, tuple(items)))
    recs = shot_records(pipe, frames)
    assert len(recs) == 1
    return recs[0]


def test_a_pawn_seen_once_on_its_fast_line_strikes_the_pawn_it_sent_over_the_cushion():
    rec = _record(170.0)
    got = [(e["kind"], e.get("piece") or f"{e['a']}-{e['b']}", e.get("side")) for e in rec["events"]]
    assert got == [("contact", "bat-A1", None), ("contact", "A1-B1", None), ("off", "B1", "N")]
    assert rec["events"][1]["t"] == pytest.approx(T_B1, abs=1e-3)
    assert rec["events"][0]["t"] == pytest.approx(T_HIT, abs=1e-3)
    assert "review" not in rec["meta"] and "B1" not in rec["after"]


def test_a_pawn_never_seen_on_its_fast_line_struck_the_pawn_its_next_line_run_back_touches():
    """compressed-2mbit at 60 fps: A1 was not found on its fast line at all. The line it was next seen on, run
    back, touches B1's resting place between the bat's contact and that sighting: the contact that slowed it
    (when, within the unseen span only: a quarter of it as its error, half confidence), and B1 went over."""
    rec = _record(170.0, fast_seen=False)
    got = [(e["kind"], e.get("piece") or f"{e['a']}-{e['b']}", e.get("side")) for e in rec["events"]]
    assert got == [("contact", "bat-A1", None), ("contact", "A1-B1", None), ("off", "B1", "N")]
    hit = rec["events"][1]
    assert hit["confidence"] == 0.5 and abs(hit["t"] - T_B1) <= hit["t_err"]
    assert hit["t_err"] == pytest.approx((2 / FPS - (T_HIT - 61 / FPS)) / 4, abs=2e-3)
    assert "review" not in rec["meta"] and "B1" not in rec["after"]


def test_a_sighting_exposed_as_the_pawn_set_off_is_still_a_blend_of_rest_and_motion():
    """A1 set off at 2.5 m/s with nothing in its way; the frame exposed as it left shows it between its rest and
    its line. That line, run back, leaves the rest after the last resting sighting: the sighting is a blend,
    dropped as before, and A1's launch is timed from the line (no lone line anchored at the contact)."""
    pipe = Pipeline(PROFILE)
    pipe.start(hints_for({"bat": (0.0, BAT0), "A1": (0.0, A1), "B5": (-300.0, -100.0)}), 0, 0.0)
    frames = []
    for k in range(1, 150):
        t = k / FPS
        a1 = A1 + _slide(2500.0, t - T_HIT)
        if k == 62:  # exposed from before the bat met it: the blur of rest and motion
            a1 = A1 + 0.4 * _slide(2500.0, t - T_HIT)
        frames.append(Detections(k, t, (Detection("bat", (0.0, _bat(t)), R_BAT, frame=k, t_s=t),
                                        Detection("pawn", (0.0, a1), R_PAWN, "A", frame=k, t_s=t),
                                        Detection("pawn", (-300.0, -100.0), R_PAWN, "B", frame=k, t_s=t))))
    recs = shot_records(pipe, frames)
    assert len(recs) == 1
    events = recs[0]["events"]
    assert [(e["kind"], e["a"], e["b"]) for e in events if e["kind"] == "contact"] == [("contact", "bat", "A1")]
    assert events[0]["t"] == pytest.approx(T_HIT, abs=1e-3)
