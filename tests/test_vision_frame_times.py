"""Irregular frame times: a live stream's times jitter, frames are dropped, repeated and come at a drifting
rate. Vision must use the times it gets: the same shots and calls as with exact times (index / fps), or
a differing shot flagged for the referee, never a silently different call.

A simulated Novuss stretch (``sim``), seen through the bench's oracle detector (true centres plus noise and
blur, nothing rendered: fast), judged with the real pipeline and the one referee step."""
from __future__ import annotations

import numpy as np
import pytest

from bench import clocks
from bench.vision_clips import oracle_detections, restamp
from calibration import default_profile
from judge.referee import Referee
from rules import engine_for
from sim.policy import play_novuss_set
from sim.session import NovussSession
from vision.pipeline import Pipeline
from vision.segmenter import ShotSegmenter
from vision.tracker import ConstantVelocity
from vision.types import Detection, Detections

FPS = 30.0
PROFILE = default_profile("novuss")
START = {"A3": (-250.0, 280.0), "A5": (200.0, 150.0), "A7": (60.0, 320.0), "B2": (180.0, -300.0),
         "B6": (-120.0, -160.0), "B7": (-300.0, 0.0), "B4": (280.0, -60.0)}


@pytest.fixture(scope="module")
def stretch():
    s = NovussSession(PROFILE, 3)
    s.setup(START)
    start = s.state.to_dict()
    play_novuss_set(PROFILE, 3, max_shots=9, session=s)
    return s, start, s.rec.clip()


def frames(clip, take, seed: int = 1) -> list[Detections]:
    """Oracle detections of the frames ``take`` gives (a ``bench.clocks`` schedule: true capture time,
    reported time; a true time of None repeats the previous frame's detections, the same image again)."""
    rng = np.random.default_rng(seed)
    out: list[Detections] = []
    for k, (t_true, t_said) in enumerate(take):
        if t_true is None:
            last = out[-1]
            out.append(restamp(last, k, last.t_s if t_said is None else t_said))
            continue
        fr = clip.states_at(t_true, k)
        out.append(restamp(oracle_detections(fr, 0.3, rng, profile=PROFILE, clip=clip, exposure_s=0.5 / FPS), k, t_said))
    return out


def judge(stretch, dets):
    session, start, _ = stretch
    engine = engine_for("novuss", PROFILE.geometry)
    state = engine.state_from_dict(start)
    ref = Referee(engine)
    pipe = Pipeline(PROFILE)
    pipe.start(ref.hints(state), dets[0].frame, dets[0].t_s)
    out = []

    def take(seen):
        nonlocal state
        step = ref.step(state, seen.shot, 1)
        if step.judged:
            state = step.state
        pipe.tell(step.hints)
        calls = sorted(c.code for c in step.ruling.calls) if step.ruling else None
        out.append((seen.shot.t0, calls, step.ruling.next_player if step.ruling else None, step.review))

    for d in dets[1:]:
        seen = pipe.feed(d)
        if seen is not None:
            take(seen)
    last = pipe.finish()
    if last is not None:
        take(last)
    return out


@pytest.fixture(scope="module")
def baseline(stretch):
    clip = stretch[2]
    n = int(clip.t_end_s * FPS) + 1 + int(FPS)
    base = judge(stretch, frames(clip, clocks.exact(n, FPS)))
    return n, base


def test_the_stretch_is_judged_with_exact_times(stretch, baseline):
    n, base = baseline
    assert len(base) == len(stretch[0].shots) >= 6
    assert all(calls is not None for _, calls, _, _ in base)


@pytest.mark.parametrize("case", ["jitter1", "jitter3", "jitter6", "dropped", "repeated", "drift+10", "drift-10"])
def test_irregular_frame_times_give_the_same_calls_or_a_flag(stretch, baseline, case):
    n, base = baseline
    take = {"jitter1": lambda: clocks.jitter(clocks.exact(n, FPS), 1.0, seed=2),
            "jitter3": lambda: clocks.jitter(clocks.exact(n, FPS), 3.0, seed=2),
            "jitter6": lambda: clocks.jitter(clocks.exact(n, FPS), 6.0, seed=2),
            "dropped": lambda: clocks.drop(clocks.exact(n, FPS), 0.05, seed=3),  # 5 %, a burst of 5, late first frames
            "repeated": lambda: clocks.repeats(n, FPS, seed=4),
            "drift+10": lambda: clocks.drifting(n, FPS, 0.10), "drift-10": lambda: clocks.drifting(n, FPS, -0.10)}[case]()
    got = judge(stretch, frames(stretch[2], take))
    same, flagged, silent = clocks.compare(base, got)
    print(f"{case}: {len(got)} shots of {len(base)}, {same} same, {flagged} flagged, {silent} silently different")
    assert silent == 0, (base, got)
    assert same >= len(base) - 1


# -- the stages on their own -------------------------------------------------------------------------------
def test_segmenter_ends_a_shot_with_jittered_times():
    seg = ShotSegmenter("novuss")
    seg.seed({"bat": (0.0, -400.0), "A1": (0.0, 0.0)})
    rng = np.random.default_rng(0)
    out = None
    for k in range(1, 60):
        t = k / FPS + rng.uniform(-0.001, 0.001)
        y = -400.0 + min(k, 10) * 30.0  # the bat moves for 10 frames, then rests
        items = (Detection("bat", (0.0, y), 18.0, piece="bat"), Detection("pawn", (0.0, 0.0), 16.0, "A", piece="A1"))
        out = seg.update(Detections(k, t, items)) or out
    assert out is not None and not out.timed_out


def _jittered_line(turn_deg: float, stamp_ms: float = 3.0, fps: float = 60.0, speed_mm_s: float = 2000.0, seed: int = 7):
    """A bat at ``speed_mm_s`` along x that turns by ``turn_deg`` at 0.25 s (a graze), seen at 60 fps with
    0.3 mm noise, each frame stamped up to ``stamp_ms`` off its capture time."""
    rng = np.random.default_rng(seed)
    t_true = np.arange(30) / fps
    turn = np.radians(turn_deg)
    d = np.where(t_true[:, None] < 0.25, [[1.0, 0.0]], [[np.cos(turn), np.sin(turn)]])
    seg = np.minimum(t_true, 0.25)[:, None] * [[1.0, 0.0]] + np.maximum(t_true - 0.25, 0.0)[:, None] * d
    xy = seg * speed_mm_s + rng.normal(0.0, 0.3, (30, 2))
    stamps = t_true + rng.uniform(-stamp_ms, stamp_ms, 30) / 1000.0
    return stamps, xy


def test_jittered_stamps_do_not_cut_a_fast_line_but_a_graze_still_does():
    """A frame stamped off puts a moving piece ahead of or behind its place on the line, never beside it:
    the split's tolerance takes the stamp scatter in along the motion only. A straight 2 m/s line with
    3 ms stamps stays one stretch; a 4 degree turn (a graze: 4.6 mm sideways a frame later) is cut there."""
    from vision.fit import split_track
    stamp_s = 3.0e-3 / np.sqrt(3.0)  # uniform +-3 ms
    t, xy = _jittered_line(0.0)
    assert len(split_track(t, xy, 0.3)) > 1  # unaware of the scatter, the stamps cut it
    assert len(split_track(t, xy, 0.3, stamp_s=stamp_s)) == 1
    t, xy = _jittered_line(4.0)
    fits = split_track(t, xy, 0.3, stamp_s=stamp_s)
    assert len(fits) == 2 and abs(fits[0].t_last - 0.25) <= 1.5 / 60.0
    assert abs(np.degrees(np.arctan2(*fits[1].v[::-1]))) == pytest.approx(4.0, abs=1.0)


def test_a_repeated_or_backward_frame_makes_no_velocity_spike():
    cv = ConstantVelocity()
    pos, vel = np.array([0.0, 0.0]), np.array([3000.0, 0.0])
    for dt in (0.0, -0.004, 1e-7):
        p, v = cv.update(pos, vel, pos + np.array([0.3, 0.0]), dt)
        assert float(np.hypot(*v)) <= 3000.0 + 1.0


def test_the_pipeline_skips_a_frame_back_in_time_or_repeated_while_moving(stretch):
    clip = stretch[2]
    take = clocks.repeats(int(clip.t_end_s * FPS) + 1, FPS, seed=4)
    dets = frames(clip, take)
    pipe = Pipeline(PROFILE)
    engine = engine_for("novuss", PROFILE.geometry)
    pipe.start(Referee(engine).hints(engine.state_from_dict(stretch[1])), dets[0].frame, dets[0].t_s)
    for d in dets[1:]:
        pipe.feed(d)
    back = sum(1 for a, b in zip(dets, dets[1:]) if b.t_s < a.t_s)
    assert pipe.skipped["backwards"] == back > 0
    assert pipe.skipped["repeated"] >= 1  # the same time again; the same sightings again while moving


def test_live_drops_a_frame_whose_time_goes_back_with_a_note():
    from hardware.frame import Frame
    from judge.live import run_live

    class Source:
        fps, live, name = 30.0, False, "test"

        def __init__(self, times):
            self.frames = [Frame(np.zeros((4, 4, 3), np.uint8), k, t, "test") for k, t in enumerate(times)]

        def read(self):
            return self.frames.pop(0) if self.frames else None

    class Vision:
        in_shot = False

        def __init__(self):
            self.times = []

        def start(self, hints, frame, t_s):
            self.times.append(t_s)

        def feed(self, frame):
            self.times.append(frame.t_s)

        def tell(self, hints):
            pass

        def finish(self, t_s=None):
            return None

        def positions(self):
            return {}

        def prepare(self, image):
            return None  # nothing to work out ahead of feed

    class Match:
        def __init__(self):
            self.notes = []

        def changed_since(self, revision):
            return None if revision == 0 else (0, None, None)

        def note_gap(self, gap):
            self.notes.append(gap)

        def note(self, text, **_):
            pass

    vision, match = Vision(), Match()
    result = run_live(Source([0.0, 0.033, 0.066, 0.060, 0.066, 0.100, 0.133]), vision, match)
    assert vision.times == [0.0, 0.0, 0.033, 0.066, 0.100, 0.133]
    assert [g.reason for g in result.gaps] == ["time went back", "repeated time"]
    assert result.error is None
