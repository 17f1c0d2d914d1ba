"""Short simulated clips for the replay and demo tests: a scenario filmed to a video with its camera's
calibration and empty-board picture; the scripted vision stage that reports the simulator's own shot
records (to test the judge's side of replay apart from vision's accuracy) is ``sim.scripted_vision``."""
from __future__ import annotations

from pathlib import Path

from calibration import default_profile
from judge.demo import DemoGame, film
from sim.scenarios import build
from sim.scripted_vision import ScriptedVision, shot_spans  # noqa: F401 - the replay tests' helpers


def filmed_scenario(tmp: Path, game: str, scenario: str, seed: int = 1, fps: float = 30.0, size=(640, 360)) -> DemoGame:
    """Simulate ``scenario`` and film it into ``tmp`` (video.mp4, calibration.json, empty-board.png, start-state.json)."""
    profile = default_profile(game)
    ep = build(game, scenario, profile, seed)
    engine = ep.session.engine
    first = ep.shots[0].record
    if game == "novuss":
        start = engine.initial(first=first.get("player", "A"),
                               positions={k: tuple(v) for k, v in first["before"].items() if k != "bat"}).to_dict()
    else:
        start = None
    demo = DemoGame(game, profile, ep.session, start, seed)
    film(demo, Path(tmp), fps, size)
    return demo
