"""Scripted Cvrnkaná flicks, aimed through the seeded uneven ground by short trial runs, then verified."""
from __future__ import annotations

import math
import random

from .frames import ClipRecorder
from .physics_cvrnkana import Field, marble_pieces, start_lines_mm
from .session import CvrnkanaSession, Episode, check

__all__ = ["SCENARIOS", "aim_flick", "mid_game_state"]

G_MM_S2 = 9810.0


def mid_game_state(profile, field: dict, to_move: str = "A", toss_winner: str = "A") -> dict:
    """An engine state document with ``field`` marbles on the field, all other marbles in the pit."""
    n = int(profile.geometry["marbles_per_player"])
    everyone = [f"{p}{i}" for p in "AB" for i in range(1, n + 1)]
    return {"game": "cvrnkana", "game_number": 1, "toss_winner": toss_winner, "to_move": to_move,
            "marbles": {"A": n, "B": n}, "field": {k: list(v) for k, v in field.items()},
            "pit": [m for m in everyone if m not in field], "behind": [], "flicks": {"A": n + 5, "B": n + 5 - (to_move == "A")},
            "shot": 2 * n + 10, "outcome": None, "final_flick": False}


def aim_flick(field: Field, marble: str, target: tuple[float, float], speed: float, iters: int = 4) -> tuple[float, float]:
    """Velocity that sends ``marble`` (from where it lies on ``field``) through ``target`` despite the
    ground's slope: trial runs alone on the same ground, rotating the aim by the angle it missed by."""
    x0, y0 = field.on_field[marble]
    dist = math.hypot(target[0] - x0, target[1] - y0)
    angle = math.atan2(target[1] - y0, target[0] - x0)
    for _ in range(iters):
        trial = Field(field.geometry, field.physics, field.seed)
        trial.pit_r = 0.0  # no pit: follow the whole path
        trial.place({marble: (x0, y0)})
        rec = ClipRecorder(marble_pieces(field.geometry))
        trial.flick({marble: (speed * math.cos(angle), speed * math.sin(angle))}, 0.0, rec, touch=False)
        clip = rec.clip()
        k = [p.id for p in clip.pieces].index(marble)
        ux, uy = math.cos(angle), math.sin(angle)
        best = None
        for x, y in clip.xyza[:, k, :2]:
            along = (x - x0) * ux + (y - y0) * uy
            if along <= dist:
                best = (x, y)
        if best is None:
            break
        missed = math.atan2(best[1] - y0, best[0] - x0) - math.atan2(target[1] - y0, target[0] - x0)
        if abs(missed) < 1e-4:
            break
        angle -= missed
    return speed * math.cos(angle), speed * math.sin(angle)


def _speed_to_arrive(field: Field, d_mm: float, v_end: float) -> float:
    return math.sqrt(v_end ** 2 + 2 * field.physics.roll_mu * G_MM_S2 * d_mm)


def opening(profile, seed):
    rng = random.Random(seed)
    s = CvrnkanaSession(profile, seed)
    (x0, y), (x1, _) = start_lines_mm(profile.geometry)["A"]
    at = (rng.uniform(x0 + 50, x1 - 50), y - s.field.r - 1.0)
    v = _speed_to_arrive(s.field, math.hypot(*at), 0.0) * rng.uniform(0.9, 1.1)
    a = math.atan2(-at[1], -at[0]) + math.radians(rng.gauss(0, 1.0))
    sh = s.flick("A", "A1", (v * math.cos(a), v * math.sin(a)), at=at)
    check(sh.record["events"][0] == {"t": sh.record["t0"], "kind": "touch", "piece": "A1"}, "opening: no touch of A1")
    return Episode("cvrnkana", "opening", seed, s, {"flicked": "A1"})


def _mid(profile, seed, field, to_move="A"):
    s = CvrnkanaSession(profile, seed)
    s.setup_state(mid_game_state(profile, field, to_move))
    return s


FIELD = {"A1": (-120.0, -520.0), "A2": (300.0, -250.0), "B1": (250.0, 200.0), "B2": (-350.0, 120.0)}


def pit_entry(profile, seed, fast: bool):
    """A1 rolls at the pit centre, arriving slowly (drops in) or fast (skips over)."""
    s = _mid(profile, seed, FIELD)
    x0, y0 = FIELD["A1"]
    d = math.hypot(x0, y0)
    cap = s.field.capture_speed_mm_s(profile.geometry["pit_diameter_mm"])
    arrive = 1.4 * cap if fast else 0.3 * cap
    v = aim_flick(s.field, "A1", (0.0, 0.0), _speed_to_arrive(s.field, d, arrive))
    sh = s.flick("A", "A1", v)
    pits = [e["piece"] for e in sh.record["events"] if e["kind"] == "pit"]
    name = "pit-skip" if fast else "pit-entry"
    if fast:
        clip = s.rec.clip()
        k = [p.id for p in clip.pieces].index("A1")
        closest = min(math.hypot(x, y) for x, y in clip.xyza[:, k, :2])
        check(pits == [] and closest < s.field.pit_r - s.field.r, f"{name}: pit events {pits}, closest {closest:.1f} mm")
        check(math.hypot(*sh.record["after"]["A1"]) > s.field.pit_r, f"{name}: A1 stopped over the pit")
        return Episode("cvrnkana", name, seed, s, {"skipped": "A1", "closest_mm": round(closest, 2), "capture_speed_mm_s": round(cap, 1)})
    check(pits == ["A1"], f"{name}: pit events {pits}")
    return Episode("cvrnkana", name, seed, s, {"pit": "A1", "capture_speed_mm_s": round(cap, 1)})


def hand_nudge(profile, seed):
    """A flicks A1 while the hand brushes B1, which moves (7a: everything moved goes back). Both lie in the
    camera's view, so the foul is one the camera can see."""
    field = {**FIELD, "A1": (-150.0, -250.0), "B1": (-110.0, -280.0)}
    s = _mid(profile, seed, field)
    v = aim_flick(s.field, "A1", (0.0, 0.0), _speed_to_arrive(s.field, math.hypot(*field["A1"]), 300.0))
    sh = s.flick("A", "A1", v, nudges={"B1": (60.0, -140.0)})
    touches = [e["piece"] for e in sh.record["events"] if e["kind"] == "touch"]
    moved = math.dist(sh.record["before"]["B1"], sh.record["after"]["B1"])
    check(touches == ["A1", "B1"] and moved > profile.geometry["moved_tolerance_mm"],
          f"hand-nudge: touches {touches}, B1 moved {moved:.1f} mm")
    return Episode("cvrnkana", "hand-nudge", seed, s, {"nudged": "B1", "moved_mm": round(moved, 2)})


def last_flick_draw(profile, seed):
    """Each player has one marble left; B's last flick knocks A's into the pit and follows it in."""
    n = int(profile.geometry["marbles_per_player"])
    a, b = f"A{n}", f"B{n}"
    field = {a: (0.0, -75.0), b: (30.0, -420.0)}
    for arrive in (1300.0, 1100.0, 1500.0, 900.0, 1700.0):
        s = _mid(profile, seed, field, to_move="B")
        d = math.dist(field[b], field[a]) - 2 * s.field.r
        v = aim_flick(s.field, b, field[a], _speed_to_arrive(s.field, d, arrive))
        trial = _mid(profile, seed, field, to_move="B")
        res = trial.field.flick({b: v}, 0.0, max_s=6.0)
        if sorted(e["piece"] for e in res.events if e["kind"] == "pit") == sorted([a, b]):
            sh = s.flick("B", b, v)
            pits = [e["piece"] for e in sh.record["events"] if e["kind"] == "pit"]
            check(sorted(pits) == sorted([a, b]), f"last-flick-draw: pit events {pits}")
            return Episode("cvrnkana", "last-flick-draw", seed, s, {"pit": pits})
    check(False, "last-flick-draw: no flick put both last marbles in the pit")


SCENARIOS = {
    "opening": (opening, "A's first opening flick from the start line towards the pit"),
    "pit-entry": (lambda p, s: pit_entry(p, s, False), "a marble rolls slowly into the pit"),
    "pit-skip": (lambda p, s: pit_entry(p, s, True), "a fast marble rolls over the pit and out again"),
    "hand-nudge": (hand_nudge, "A's hand nudges B's marble during the flick (7a)"),
    "last-flick-draw": (last_flick_draw, "the last flick puts both players' last marbles in the pit (draw)"),
}
