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
    off = {"A1": (112.0, 205.0), "B1": (-50.0, -300.0), "bat": (0.0, -400.0)}
    assert watch.check(off, False, 0.283) is None  # vision may yet open a shot for pieces on their way
    assert watch.check({"A1": (100.0, 200.0)}, False, 0.30) is None  # back within the noise: no longer off
    assert watch.check(off, False, 0.283 + 0.05) is None
    note = watch.check(off, False, 0.283 + 0.05 + 0.15)
    assert note == ("at 0.33 s of the video pieces had moved with no shot seen (A1 13 mm): the video began during a "
                    "shot (or the start state is not the board's); that shot is not judged, the referee decides it")
    assert watch.check({"A1": (150.0, 250.0)}, False, 0.4) is None


def _cut(src_path, dst_path, first: int, fps: int, size) -> None:
    """The video from frame ``first`` on, encoded again (a clip cut for a dispute)."""
    import av

    with av.open(str(src_path)) as src, av.open(str(dst_path), "w") as out:
        stream = out.add_stream("libx264", rate=fps)
        stream.width, stream.height, stream.pix_fmt = size[0], size[1], "yuv420p"
        for i, frame in enumerate(src.decode(video=0)):
            if i >= first:
                for packet in stream.encode(av.VideoFrame.from_ndarray(frame.to_ndarray(format="bgr24"), format="bgr24")):
                    out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)


@pytest.mark.slow
@pytest.mark.parametrize("fps,size", [(60, (960, 540)), (30, (640, 360))])
def test_a_clip_cut_on_the_stroke_gives_its_shot_flagged_and_the_whole_clip_does_not(tmp_path, fps, size):
    """Cut while the bat is on its way (the bat never seen at rest, its colour never learnt): the pawns it sets
    off still make the shot, which says the stroke was not seen, and the referee is asked to rule on it."""
    filmed_scenario(tmp_path, "novuss", "two-pocketed", seed=1, fps=float(fps), size=size)
    files = {"calibration": tmp_path / "calibration.json", "background": tmp_path / "empty-board.png",
             "state": tmp_path / "start-state.json"}
    whole = judge_video(tmp_path / "video.mp4", "novuss", files["calibration"], background=files["background"],
                        state=files["state"])
    assert len(whole.shots) == 1 and whole.shots[0].ruling is not None
    assert not (whole.shots[0].record.get("meta") or {}).get("review")
    assert not [n for n in whole.notes if "began during a shot" in n]
    first = math.ceil((float(whole.shots[0].record["t0"]) + 0.05) * fps)  # the bat already moving
    _cut(tmp_path / "video.mp4", tmp_path / "cut.mp4", first, fps, size)
    part = judge_video(tmp_path / "cut.mp4", "novuss", files["calibration"], background=files["background"],
                       state=files["state"])
    (shot,) = part.shots
    assert shot.ruling is None and shot.review  # not ruled on: the referee decides, with vision's reason
    assert [(r["code"], r["piece"]) for r in shot.record["meta"]["review"]] == [("stroke_unseen", "A2")]
    assert any("A2 set off with no stroke seen" in n for n in part.notes)
    assert not [n for n in part.notes if "began during a shot" in n]
    # the pawns' own part of the shot is there: A2 into a pocket
    assert [e["piece"] for e in shot.record["events"] if e["kind"] == "pocket"][:1] == ["A2"]
