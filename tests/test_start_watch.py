"""A video that begins during a shot (#16 item 5, the part done): the referee is told, with the pieces that
moved, instead of the shot being lost without a word; a video that begins at rest gets no such note."""
from __future__ import annotations

import math

import pytest

from judge.replay import judge_video
from judge.start_watch import StartWatch
from replay_helpers import filmed_scenario

LAYOUT = {"A1": (100.0, 200.0), "B1": (-50.0, -300.0)}


def test_pieces_within_the_tracker_s_noise_are_no_note_and_a_shot_seen_ends_the_watch():
    watch = StartWatch()
    watch.begin(LAYOUT)
    assert watch.check({"A1": (100.6, 199.5), "B1": (-50.2, -300.4)}, False, 0.1) is None
    assert watch.check({"A1": (100.0, 200.0)}, True, 0.2) is None  # vision saw a stroke begin
    assert watch.check({"A1": (180.0, 260.0)}, False, 0.9) is None  # from then on a move is vision's to judge


def test_a_piece_well_away_from_the_state_with_no_shot_seen_is_said_once():
    watch = StartWatch()
    watch.begin(LAYOUT)
    watch.begin({"A1": (0.0, 0.0)})  # the layout is the one the match started from, not a later one
    note = watch.check({"A1": (112.0, 205.0), "B1": (-50.0, -300.0), "bat": (0.0, -400.0)}, False, 0.283)
    assert note == ("at 0.28 s of the video pieces had moved with no shot seen (A1 13 mm): the video began during a "
                    "shot (or the start state is not the board's); that shot is not judged, the referee decides it")
    assert watch.check({"A1": (150.0, 250.0)}, False, 0.4) is None


@pytest.mark.slow
def test_a_clip_cut_on_the_stroke_says_so_and_the_whole_clip_does_not(tmp_path):
    import av

    filmed_scenario(tmp_path, "novuss", "two-pocketed", seed=1, fps=60.0, size=(960, 540))
    files = {"calibration": tmp_path / "calibration.json", "background": tmp_path / "empty-board.png",
             "state": tmp_path / "start-state.json"}
    whole = judge_video(tmp_path / "video.mp4", "novuss", files["calibration"], background=files["background"],
                        state=files["state"])
    assert len(whole.shots) == 1 and not [n for n in whole.notes if "began during a shot" in n]
    first = math.ceil((float(whole.shots[0].record["t0"]) + 0.05) * 60)  # the bat already moving
    cut = tmp_path / "cut.mp4"
    with av.open(str(tmp_path / "video.mp4")) as src, av.open(str(cut), "w") as out:
        stream = out.add_stream("libx264", rate=60)
        stream.width, stream.height, stream.pix_fmt = 960, 540, "yuv420p"
        for i, frame in enumerate(src.decode(video=0)):
            if i >= first:
                for packet in stream.encode(av.VideoFrame.from_ndarray(frame.to_ndarray(format="bgr24"), format="bgr24")):
                    out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    part = judge_video(cut, "novuss", files["calibration"], background=files["background"], state=files["state"])
    assert part.shots == []
    (note,) = [n for n in part.notes if "began during a shot" in n]
    assert "A1" in note and "A2" in note
