"""A rolling shutter: each sighting dated by when its row was read (``vision.rows``)."""
from __future__ import annotations

import numpy as np
import pytest

from calibration import default_profile
from vision.pipeline import Pipeline, hints_for
from vision.rows import RowClock
from vision.types import Detection, Detections, VisionError

READOUT_S, HEIGHT = 0.015, 721  # 721 rows: the middle row is row 360, read at the frame's time


def test_a_sighting_is_dated_by_its_row_and_an_occluder_or_a_global_shutter_is_not():
    clock = RowClock(READOUT_S, HEIGHT)
    top = Detection("pawn", (0.0, 0.0), 13.0, "A", centre_px=(100.0, 0.0), t_s=2.0)
    middle = Detection("pawn", (0.0, 0.0), 13.0, "B", centre_px=(100.0, 360.0), t_s=2.0)
    bottom = Detection("bat", (0.0, 0.0), 25.0, centre_px=(900.0, 720.0), t_s=2.0)
    hand = Detection("hand", (0.0, 0.0), 0.0, centre_px=(100.0, 720.0), t_s=2.0)
    unplaced = Detection("pawn", (0.0, 0.0), 13.0, "A", t_s=2.0)  # no pixel (an oracle's): its frame's time
    got = clock(Detections(7, 2.0, (top, middle, bottom, hand, unplaced)))
    assert (got.frame, got.t_s) == (7, 2.0)
    assert [d.row_after_s for d in got] == pytest.approx([-0.0075, 0.0, 0.0075, 0.0, 0.0], abs=1e-12)
    assert [d.t_s for d in got] == [2.0] * 5  # the frame's time stays the frame's
    plain = Detections(7, 2.0, (top, bottom))
    assert RowClock(0.0, HEIGHT)(plain) is plain
    with pytest.raises(VisionError, match="readout time must be under a second, got 1.5 s"):
        RowClock(1.5, HEIGHT)
    with pytest.raises(VisionError, match="at least 2 rows high, got 1"):
        RowClock(0.01, 1)


def _pawn_sliding_down(rows: RowClock | None) -> list[tuple[float, tuple[float, float]]]:
    """A1 slides towards the bottom of the picture at 2 m/s from 0.1 s, filmed at 60 frames/s through a 15 ms
    rolling shutter by a camera whose picture rows run with board y (row = 360 + y / 2): the times and places
    its track records when vision is told the shutter (``rows``) and when it is not."""
    profile = default_profile("novuss")
    pipe = Pipeline(profile, rows=rows)
    x0, y0 = -31.0, 251.0

    def at(t):
        return y0 + 2000.0 * max(t - 0.1, 0.0)

    pipe.start(hints_for({"A1": (x0, y0)}), 0, 0.0)
    for k in range(1, 13):
        t = k / 60.0
        y = at(t)
        for _ in range(30):  # the row it shows on was read when it was there
            y = at(t + READOUT_S * ((360.0 + y / 2.0) / (HEIGHT - 1) - 0.5))
        d = Detection("pawn", (x0, y), 13.0, "A", centre_px=(600.0, 360.0 + y / 2.0), frame=k, t_s=t)
        pipe.feed(Detections(k, t, (d,)))
    return [(s.t_s, s.centre_mm) for s in pipe.tracker.tracks["A1"].observed()]


def test_the_track_keeps_each_sightings_row_time_so_a_piece_moves_at_its_true_speed():
    dated = _pawn_sliding_down(RowClock(READOUT_S, HEIGHT))
    moving = [(t, y) for t, (_, y) in dated if y > 251.5]
    speeds = [(y1 - y0) / (t1 - t0) for (t0, y0), (t1, y1) in zip(moving, moving[1:])]
    assert len(speeds) >= 4 and speeds == pytest.approx([2000.0] * len(speeds), rel=1e-6)
    for k, (t, (_, y)) in enumerate(dated[1:], start=1):  # each sighting: its frame's time plus its row's delay
        assert t == pytest.approx(k / 60.0 + READOUT_S * ((360.0 + y / 2.0) / (HEIGHT - 1) - 0.5), abs=1e-9)
    framed = _pawn_sliding_down(None)  # the same pictures dated by the frame alone: the speed comes out wrong
    moving = [(t, y) for t, (_, y) in framed if y > 251.5]
    assert (moving[-1][1] - moving[0][1]) / (moving[-1][0] - moving[0][0]) > 2030.0


class _FilmedOnce:
    """A renderer factory (``bench.scoring.run_clip``'s ``renderer_factory``) whose first renderer keeps every
    picture it films, in order, and whose later ones give the same pictures back in the same order: one clip
    watched twice (rows, frame times) for the cost of filming it once."""

    def __init__(self):
        self.pictures: list | None = None

    def __call__(self, camera, profile, settings):
        from sim.render import Renderer

        renderer = Renderer(camera, profile, settings)
        kept = self.pictures
        if kept is None:
            kept = self.pictures = []
            film = renderer.render

            def render(frame, states_at=None):
                picture = film(frame, states_at)
                kept.append((frame.t_s, picture.copy()))  # (the renderer may reuse its buffer)
                return picture
        else:
            again = iter(kept)

            def render(frame, states_at=None):
                t_s, picture = next(again)
                assert t_s == frame.t_s, (t_s, frame.t_s)  # the same clip, watched in the same order
                return picture
        renderer.render = render
        return renderer


def _clip(name: str, fps: int, row_times: bool = True, filmed=None) -> tuple[dict, list]:
    """A scripted Novuss scenario in the rolling-shutter stratum, as bench/strata.py films it: (the
    ``bench.scoring`` statistics, the vision records). ``filmed``: a ``_FilmedOnce`` to film with."""
    import cv2

    from bench import scoring, strata
    from sim.render_strata import stratum as look

    cv2.setNumThreads(1)
    profile = default_profile("novuss")
    names = [n for n, _ in strata.scenarios("novuss", False)]
    j = names.index(name)
    ep = strata.scenarios("novuss", False)[j][1](profile, 1)
    s = scoring.new_stats()
    recs = scoring.run_clip(profile, ep, fps, "classical", 1, s, row_times=row_times, renderer_factory=filmed,
                            settings=look("rolling-shutter-15ms", j + 1, codec_fps=float(fps)))
    return s, recs




def test_contacts_and_cushions_filmed_by_a_rolling_shutter_are_timed_to_their_instant():
    """ricochet, the Pi Camera Module 3's 15 ms readout (bench/strata.py rolling-shutter-15ms, 60 frames/s):
    dated by their frames, its bat-pawn contact and cushions came out 0.8, 5.8 and 6.1 ms late (a cushion at
    the bottom of the picture is read 7.5 ms after the frame's time); dated by their rows, within 0.4 ms."""
    filmed = _FilmedOnce()
    rows = _clip("ricochet", 60, True, filmed)[0]
    assert rows["rulings"] == [True] and rows["rulings_flagged"] == 0
    assert len(rows["t_err_ms"]) == 3 and max(rows["t_err_ms"]) < 0.6
    frames = _clip("ricochet", 60, False, filmed)[0]  # the same pictures, every sighting at its frame's time
    assert len(frames["t_err_ms"]) == 3 and float(np.median(frames["t_err_ms"])) > 4.0


def test_the_judge_dates_sightings_by_the_readout_its_calibration_records():
    from dataclasses import replace

    from calibration.calfile import CameraSettings
    from judge.setup import make_vision
    from sim.frames import SimFrame
    from sim.render import Renderer
    from sim.render_settings import RenderSettings, make_camera
    from sim.replay_inputs import exact_calibration

    profile = default_profile("novuss")
    settings = RenderSettings(seed=1)
    camera = make_camera(profile, 640, 360, settings)
    empty = [Renderer(camera, profile, settings).render(SimFrame(0, 0.0, (), ()))]
    cal = exact_calibration(profile, camera)
    assert make_vision(cal, empty).rows is None  # no camera block: nothing known of the shutter
    usb = replace(cal, camera=CameraSettings("usb", (640, 360), 30.0))
    assert make_vision(usb, empty).rows is None  # a webcam's readout is in no driver's report
    picam = replace(cal, camera=CameraSettings("picam", (640, 360), 60.0, readout_s=0.008))
    rows = make_vision(picam, empty).rows
    assert (rows.readout_s, rows.height_px) == (0.008, 360)



def test_sightings_of_one_frame_dated_by_their_rows_are_still_one_frame_to_the_event_solver():
    """opponent-first at 30 frames/s through the 15 ms readout: B1 and A1 set off in the frame where the bat's
    change was seen, 0.2 ms apart by their rows; the solver took the changes for different frame intervals,
    lost each pawn's kink estimate and flagged a 3 ms first contact it had timed right (t_err 1.0-1.3 ms,
    0.5-0.6 ms with the kinks)."""
    s, (rec,) = _clip("opponent-first", 30)
    assert s["rulings"] == [True] and s["rulings_flagged"] == 0, s["flag_notes"]
    bat = {e["b"] if e["a"] == "bat" else e["a"]: e for e in rec["events"] if e["kind"] == "contact"
           and "bat" in (e["a"], e["b"])}
    assert set(bat) == {"A1", "B1"} and bat["A1"]["t"] - bat["B1"]["t"] == pytest.approx(0.003, abs=0.0005)
    assert max(e["t_err"] for e in bat.values()) < 0.0008

