"""The first thing a new user runs: a simulated Novuss set and Cvrnkaná game, filmed and judged.

No camera and no files are needed. For each game the simulator (``sim``) plays a short stretch with its
whole-game policies from a mid-game position (so it ends within seconds), the synthetic overhead camera
renders it to an MP4, and the judge replays that video exactly as ``shotjudge replay`` would: frames
from ``hardware``, the vision pipeline, the rule engine. The calls are compared with the simulator's
ground-truth rulings and every difference is shown, never hidden. Written to the output folder per
game: the video, the camera's calibration and empty-board picture, the start state, the judged overlay
video and the report, in a folder that appears complete or not at all (``sim.outdir.staged_dir``).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from rules.game import GAMES as GAME_CLASSES

from .i18n import _

__all__ = ["DemoGame", "simulate", "film", "judge_demo_game", "run_demo", "GAMES"]

GAMES = tuple(GAME_CLASSES)  # the games' names
#: what a game's folder holds; the video is moved in last
OUTPUT_NAMES = ("empty-board.png", "calibration.json", "start-state.json", "video.mp4", "judged.mp4", "report.json",
                "report_files")
MARKER = "video.mp4"

#: mid-game starts chosen so each ends in a few shots (checked by the tests): pieces, seed
NOVUSS_START = ({"A3": (-250.0, 280.0), "A5": (200.0, 150.0), "B2": (180.0, -300.0), "B6": (-120.0, -160.0),
                 "B7": (-300.0, 0.0)}, 3)
CVRNKANA_START = ({"A3": (-150.0, -250.0), "A4": (250.0, 100.0), "B2": (200.0, -150.0), "B5": (-300.0, 120.0)}, 1)


@dataclass
class DemoGame:
    game: str
    profile: Any
    session: Any  # sim.session.NovussSession | CvrnkanaSession, played
    start_state: dict  # the engine's state document before the first shot
    seed: int
    files: dict[str, Path] = field(default_factory=dict)
    times_s: dict[str, float] = field(default_factory=dict)

    @property
    def truth(self) -> list[dict]:
        return [dict(s.ruling) for s in self.session.shots]


def simulate(game: str, max_shots: int | None = None) -> DemoGame:
    """Play the short demo stretch of ``game`` with the simulator's policies (deterministic)."""
    from calibration.profile import default_profile
    from sim.policy import CvrnkanaPolicy, play_novuss_set
    from sim.scenarios_cvrnkana import mid_game_state
    from sim.session import CvrnkanaSession, NovussSession

    profile = default_profile(game)
    if profile.spec.striker:  # Novuss: the bat struck from a mid-game layout; else marbles flicked
        pawns, seed = NOVUSS_START
        s = NovussSession(profile, seed)
        s.setup(pawns)
        start = s.state.to_dict()
        play_novuss_set(profile, seed, max_shots=max_shots or 8, session=s)
    else:
        marbles, seed = CVRNKANA_START
        s = CvrnkanaSession(profile, seed)
        s.setup_state(mid_game_state(profile, marbles))
        start = s.state.to_dict()
        policy = CvrnkanaPolicy(profile.geometry, seed)
        while not s.over and len(s.shots) < (max_shots or 10):
            player = s.state.to_move
            marble, at, v = policy.choose(s, player)
            s.flick(player, marble, v, at=at)
    return DemoGame(game, profile, s, start, seed)


def film(demo: DemoGame, out_dir: Path, fps: float, size: tuple[int, int]) -> None:
    """Render the played stretch to ``video.mp4`` with the synthetic camera; write the camera's exact
    calibration, a picture of the empty board and the start state beside it (``sim.replay_inputs``)."""
    from sim.render import Renderer
    from sim.render_settings import RenderSettings, make_camera
    from sim.render_video import VIDEO_NAME, render_outputs
    from sim.replay_inputs import write_replay_inputs

    out_dir.mkdir(parents=True, exist_ok=True)
    settings = RenderSettings(seed=demo.seed)
    camera = make_camera(demo.profile, size[0], size[1], settings)
    renderer = Renderer(camera, demo.profile, settings)
    clip = demo.session.rec.clip()
    files = write_replay_inputs(out_dir, demo.profile, camera, renderer, clip, fps, demo.start_state)
    render_outputs(clip, camera, demo.profile, settings, fps, out_dir, renderer=renderer)
    demo.files.update(files, video=out_dir / VIDEO_NAME)


def judge_demo_game(demo: DemoGame, out_dir: Path, lang: str, progress=None, final_dir: Path | None = None):
    """Replay the demo video through vision and the rules; write the report and the overlay video. The
    report names the files as they will be called in ``final_dir`` (default ``out_dir``)."""
    import cv2

    from .replay import judge_video
    from .report import write_outputs

    background = cv2.imread(str(demo.files["background"]), cv2.IMREAD_COLOR)
    result = judge_video(demo.files["video"], demo.game, demo.files["calibration"], background=[background],
                         state=demo.files["state"], lang=lang, progress=progress)
    if result.error is not None:
        raise RuntimeError(f"demo video unreadable: {result.error}")
    demo.files["report"], demo.files["overlay"] = out_dir / "report.json", out_dir / "judged.mp4"
    final = Path(final_dir or out_dir)
    doc = write_outputs(result, report=str(demo.files["report"]), overlay=str(demo.files["overlay"]), lang=lang,
                        calibration_path=str(final / demo.files["calibration"].name),
                        start_from=str(final / demo.files["state"].name), video_as=str(final / demo.files["video"].name))
    return result, doc


def run_demo(out: str | Path, *, fps: float = 60.0, size: tuple[int, int] = (960, 540), games=GAMES, lang: str = "en",
             max_shots: int | None = None, console=None, progress: Callable[[str], Any] | None = None) -> dict:
    """Simulate, film and judge each game; print the calls against the ground truth. Returns a summary:
    per game the number of shots simulated and judged, how many rulings match, the review flags, timings."""
    from sim.outdir import check_target, staged_dir

    from .cmd_replay import print_calls, same_ruling

    out = Path(out)
    summary: dict[str, Any] = {"out": str(out), "games": {}}
    for game in games:
        check_target(out / game, OUTPUT_NAMES, MARKER)  # before any work: a folder of someone else's is refused
    for game in games:
        folder = out / game
        with staged_dir(folder, OUTPUT_NAMES, MARKER) as tmp:
            demo, judged = _demo_game(game, tmp, folder, fps, size, lang, max_shots, progress,
                                      say=console.print if console is not None else None)
        demo.files = {k: folder / v.relative_to(tmp) for k, v in demo.files.items()}
        if not isinstance(judged, tuple):
            if console is not None:
                from rich.markup import escape

                calls = "; ".join(", ".join(c["code"] for c in w["calls"]) for w in demo.truth)
                console.print("[red]" + escape(_("{game}: judging the video failed ({error}); the simulator's calls "
                                                 "were: {calls}").format(game=game, error=judged, calls=calls)) + "[/]")
            summary["games"][game] = {"shots_simulated": len(demo.truth), "shots_judged": 0, "rulings_same": 0,
                                      "review": [], "failed": judged, "files": {k: str(v) for k, v in demo.files.items()},
                                      "times_s": {k: round(v, 2) for k, v in demo.times_s.items()}}
            continue
        result, doc = judged
        truth = demo.truth
        if console is not None:
            print_calls(console, result, truth, title=_("{game}: {shots} simulated shot(s), judged from the video").format(
                game=game, shots=len(truth)))
            for note in result.notes:
                console.print(f"[yellow]{note}[/]")
        same = sum(same_ruling(s.ruling, w) for s, w in zip(result.shots, truth))
        summary["games"][game] = {
            "shots_simulated": len(truth), "shots_judged": len(result.shots), "rulings_same": same,
            "review": [s.no for s in result.shots if s.review], "frames": result.frames,
            "video_s": round(result.duration_s, 2), "times_s": {k: round(v, 2) for k, v in demo.times_s.items()},
            "files": {k: str(v) for k, v in demo.files.items()},
        }
    return summary


def _demo_game(game: str, tmp: Path, folder: Path, fps: float, size: tuple[int, int], lang: str, max_shots: int | None,
               progress, say: Callable[[str], Any] | None = None) -> tuple[DemoGame, tuple | str]:
    """Simulate, film and judge one game into ``tmp`` (to become ``folder``): the game and (result, report), or
    why judging failed. A bad input or a disk that refuses a write is raised: nothing of the game is kept.
    ``say`` hears a line as each stage starts (the whole demo takes a minute or more: never in silence)."""
    from .errors import is_user_error

    say = say or (lambda line: None)
    t = time.perf_counter()
    say(_("{game}: simulating the play…").format(game=game))
    demo = simulate(game, max_shots)
    demo.times_s["simulate"] = time.perf_counter() - t
    t = time.perf_counter()
    say(_("{game}: filming {shots} shot(s) with the synthetic camera…").format(game=game, shots=len(demo.session.shots)))
    film(demo, tmp, fps, size)
    demo.times_s["render"] = time.perf_counter() - t
    t = time.perf_counter()
    say(_("{game}: judging the video (vision and rules)…").format(game=game))
    try:
        judged = judge_demo_game(demo, tmp, lang, progress(f"judging {game}") if progress else None, final_dir=folder)
    except Exception as exc:  # noqa: BLE001 - a failing stage is shown as such, never as an empty result
        if is_user_error(exc) or isinstance(exc, OSError):
            raise
        return demo, f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    demo.times_s["judge"] = time.perf_counter() - t
    return demo, judged
