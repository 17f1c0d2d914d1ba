"""Simulator frames of a referee putting a Novuss penalty pawn down: the board after A's foul (A3, pocketed
before, goes on the centre line by B's cushion, II.1), rendered by the simulator's camera and fed through
the real vision pipeline (classical detector) the way the live loop does: vision started from the state
before the shot, told the ruling's hints after it, then every frame, each followed by the placement
assistant. The pawn is put down ``OFF_MM`` off its spot, then moved to ``NEAR_MM`` off."""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from calibration import default_profile

SPOT_MM = (0.0, 484.0)
OFF_AT_MM = (3.0, 480.0)  # 5.0 mm off: 4 mm short of B's cushion, 3 mm to A's right of the spot
NEAR_AT_MM = (0.6, 483.2)  # 1.0 mm off
FPS = 30.0
SIZE = (1280, 720)
XS = (-200.0, -100.0, 100.0, 200.0)
MID = {**{f"A{i + 1}": (XS[i % 4], 200.0 + 100 * (i // 4)) for i in range(8)},
       **{f"B{i + 1}": (XS[i % 4], -200.0 - 100 * (i // 4)) for i in range(8)}}
OFF_MM = math.dist(SPOT_MM, OFF_AT_MM)
NEAR_MM = math.dist(SPOT_MM, NEAR_AT_MM)


@dataclass(frozen=True)
class Filmed:
    profile: object
    calibration: object
    ruling: dict
    hints_before: object  # vision's start: A3 pocketed
    hints_after: object  # what the judge tells vision after the shot (the placement expected)
    background: object
    rest: tuple  # frames before the pawn is put down
    off: tuple  # the pawn OFF_MM off its spot
    near: tuple  # the pawn NEAR_MM off


@lru_cache(maxsize=1)
def filmed(rest_s: float = 0.3, off_s: float = 0.6, near_s: float = 0.6) -> Filmed:
    from hardware.frame import Frame
    from rules import engine_for
    from sim.frames import PieceState, SimFrame
    from sim.render import Renderer
    from sim.render_settings import RenderSettings, make_camera
    from sim.replay_inputs import exact_calibration
    from tests.novuss_records import record

    profile = default_profile("novuss")
    eng = engine_for("novuss", profile.geometry)
    pos = {k: v for k, v in MID.items() if k != "A3"}
    before = eng.initial(positions=pos).__class__(positions=tuple(sorted(pos.items())), pocketed=("A3",))
    after, ruling = eng.apply(before, record(events=[]))
    settings = RenderSettings(seed=3)
    camera = make_camera(profile, SIZE[0], SIZE[1], settings)
    renderer = Renderer(camera, profile, settings)
    spec = profile.spec

    def shot(layout, index):
        pieces = tuple(PieceState(p, "pawn", p[0], float(x), float(y), 0.0, 0.3 * k, spec.radius_of(p), True)
                       for k, (p, (x, y)) in enumerate(sorted(layout.items())))
        sim = SimFrame(index, index / FPS, pieces, ())
        return Frame(renderer.render(sim), index, sim.t_s, "sim")

    frames, index = {}, 0
    for name, extra, seconds in (("rest", {}, rest_s), ("off", {"A3": OFF_AT_MM}, off_s),
                                 ("near", {"A3": NEAR_AT_MM}, near_s)):
        out = []
        for _ in range(int(round(seconds * FPS))):
            out.append(shot({**pos, **extra}, index))
            index += 1
        frames[name] = tuple(out)
    background = renderer.render(SimFrame(0, 0.0, (), ()))
    return Filmed(profile, exact_calibration(profile, camera), ruling.to_dict(), eng.hints(before),
                  eng.hints(after, ruling), background, frames["rest"], frames["off"], frames["near"])


def vision_for(film: Filmed):
    """The live judge's vision on the filmed camera, started from the state before the shot."""
    from judge.setup import make_vision

    vision = make_vision(film.calibration, [film.background], purpose="test")
    vision.start(film.hints_before, 0, 0.0)
    return vision


def play(film: Filmed, vision, assistant, frames, on_each=None) -> list:
    """Each frame as ``run_live`` takes it: vision fed, then the assistant; returns the assistant's statuses."""
    out = []
    for frame in frames:
        vision.feed(frame)
        assistant.on_frame(frame)
        out.append(assistant.shown)
        if on_each is not None:
            on_each(frame)
    return out
