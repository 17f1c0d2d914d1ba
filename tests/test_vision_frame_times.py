"""Irregular frame times: a live stream's times jitter, frames are dropped, repeated and come at a drifting
rate. Vision must use the times it gets: the same shots and calls as with exact times (index / fps), or
a differing shot flagged for the referee, never a silently different call.

A simulated Novuss stretch (``sim``), seen through the bench's oracle detector (true centres plus noise and
blur, nothing rendered: fast), judged with the real pipeline and the one referee step."""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from bench.vision_clips import oracle_detections
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
    """Oracle detections of the frames ``take`` gives: (true capture time, reported time) pairs, in order;
    a reported time of None repeats the previous frame's detections (the same image again)."""
    rng = np.random.default_rng(seed)
    out: list[Detections] = []
    for k, (t_true, t_said) in enumerate(take):
        if t_true is None:
            last = out[-1]
            t = last.t_s if t_said is None else t_said
            out.append(Detections(k, t, tuple(replace(d, frame=k, t_s=t) for d in last.items)))
            continue
        fr = clip.states_at(t_true, k)
        dets = oracle_detections(fr, 0.3, rng, profile=PROFILE, clip=clip, exposure_s=0.5 / FPS)
        out.append(Detections(k, t_said, tuple(replace(d, frame=k, t_s=t_said) for d in dets.items)))
    return out


def exact(n):
    return [(k / FPS, k / FPS) for k in range(n)]


def jittered(n, ms, seed=2):
    """The frames taken at k / fps, their times stamped up to ``ms`` off (still increasing)."""
    rng = np.random.default_rng(seed)
    return [(k / FPS, k / FPS + (rng.uniform(-ms, ms) / 1000 if k else 0.0)) for k in range(n)]


def dropped(n, seed=3):
    """5 % of the frames lost at random, and a burst of 5 lost together; the first frames come late."""
    rng = np.random.default_rng(seed)
    keep = rng.random(n) > 0.05
    keep[n // 3:n // 3 + 5] = False
    keep[1:4] = False  # late first frames
    keep[0] = True
    return [(k / FPS, k / FPS) for k in range(n) if keep[k]]


def repeated(n, seed=4):
    """Every 17th frame comes twice: the same image again, at the same time or a few ms later; every 41st
    frame's time goes back a little (a stamp out of order)."""
    rng = np.random.default_rng(seed)
    out = []
    for k in range(n):
        out.append((k / FPS, k / FPS))
        if k and k % 17 == 0:
            out.append((None, None if k % 2 else k / FPS + rng.uniform(0.002, 0.006)))
        if k and k % 41 == 0:
            out.append(((k + 0.5) / FPS, (k - 0.3) / FPS))
    return out


def drifting(n, amp=0.10):
    """The rate drifts +-10 % (slowly, as a camera's clock or a stream's pacing), times true."""
    out, t = [], 0.0
    k = 0
    while len(out) < n:
        out.append((t, t))
        t += (1 + amp * math.sin(2 * math.pi * k / 90)) / FPS
        k += 1
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


def compare(base, got):
    """Shot by shot (paired by start time): (same calls, flagged, silently different, missed)."""
    same = flagged = silent = 0
    used = set()
    for t0, calls, nxt, review in base:
        j = next((j for j, g in enumerate(got) if j not in used and abs(g[0] - t0) < 0.5), None)
        if j is None:
            silent += 1  # a shot lost: its call changes the game silently
            continue
        used.add(j)
        g = got[j]
        if (g[1], g[2]) == (calls, nxt) and not (g[3] and not review):
            same += 1
        elif g[3]:
            flagged += 1
        else:
            silent += 1
    silent += sum(1 for j, g in enumerate(got) if j not in used and not g[3])  # an invented, unflagged shot
    return same, flagged, silent


@pytest.fixture(scope="module")
def baseline(stretch):
    clip = stretch[2]
    n = int(clip.t_end_s * FPS) + 1 + int(FPS)
    base = judge(stretch, frames(clip, exact(n)))
    return n, base


def test_the_stretch_is_judged_with_exact_times(stretch, baseline):
    n, base = baseline
    assert len(base) == len(stretch[0].shots) >= 6
    assert all(calls is not None for _, calls, _, _ in base)


@pytest.mark.parametrize("case", ["jitter1", "jitter3", "jitter6", "dropped", "repeated", "drift+10", "drift-10"])
def test_irregular_frame_times_give_the_same_calls_or_a_flag(stretch, baseline, case):
    n, base = baseline
    take = {"jitter1": lambda: jittered(n, 1.0), "jitter3": lambda: jittered(n, 3.0),
            "jitter6": lambda: jittered(n, 6.0), "dropped": lambda: dropped(n), "repeated": lambda: repeated(n),
            "drift+10": lambda: drifting(n, 0.10), "drift-10": lambda: drifting(n, -0.10)}[case]()
    got = judge(stretch, frames(stretch[2], take))
    same, flagged, silent = compare(base, got)
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


def test_a_repeated_or_backward_frame_makes_no_velocity_spike():
    cv = ConstantVelocity()
    pos, vel = np.array([0.0, 0.0]), np.array([3000.0, 0.0])
    for dt in (0.0, -0.004, 1e-7):
        p, v = cv.update(pos, vel, pos + np.array([0.3, 0.0]), dt)
        assert float(np.hypot(*v)) <= 3000.0 + 1.0


def test_the_pipeline_skips_a_frame_back_in_time_or_repeated_while_moving(stretch):
    clip = stretch[2]
    take = repeated(int(clip.t_end_s * FPS) + 1)
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
