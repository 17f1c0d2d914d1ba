"""The placement assistant on simulator frames through the real vision pipeline (classical detector): a
penalty pawn put down 5 mm off its spot is reported off, by about that much and the right way; moved to
1 mm off, it is confirmed placed, and play may go on."""
import numpy as np
import pytest

from judge.placement_live import CLEAR, PlacementAssistant
from judge.placement_view import COLOURS, PlacementView
from tests.placement_frames import NEAR_MM, OFF_MM, SPOT_MM, filmed, play, vision_for


class Hub:
    def __init__(self):
        self.messages = []

    def __call__(self, message):
        self.messages.append(message)


@pytest.fixture(scope="module")
def run():
    film = filmed()
    vision = vision_for(film)
    hub, said, notes = Hub(), [], []
    view = PlacementView(film.calibration)
    assistant = PlacementAssistant(film.profile, vision, hub, view, say=said.append, note=notes.append)
    rest = play(film, vision, assistant, film.rest)
    assistant({"type": "call", "game_no": 1, "shot_no": 1, "ruling": film.ruling})  # the judged foul
    vision.tell(film.hints_after)  # as run_live does before the next frame
    drawn = []
    off = play(film, vision, assistant, film.off, lambda f: drawn.append(assistant.draw(f)))
    near = play(film, vision, assistant, film.near)
    return film, vision, assistant, hub, said, notes, rest, off, near, drawn


def test_the_pawn_put_down_5_mm_off_is_reported_off_by_that_much_and_which_way(run):
    film, vision, assistant, hub, said, notes, rest, off, near, drawn = run
    assert rest == [None] * len(film.rest)  # nothing to place before the call
    assert OFF_MM == pytest.approx(5.0)
    a3 = [s.of("A3") for s in off]
    assert {p.state for p in a3} == {"off"}  # seen from its first frame there: the tracker gave it its id
    assert vision.positions()["A3"] is not None
    for p in a3:
        assert p.off_mm == pytest.approx(OFF_MM, abs=1.0)
        # the pawn lies 4 mm short of B's cushion and 3 mm to A's right: back 4 mm towards B and 3 mm left
        assert p.move_mm[1] == pytest.approx(4.0, abs=1.0) and p.move_mm[0] == pytest.approx(-3.0, abs=1.0)
        assert "mm towards B's cushion and " in p.text and "mm to the left (as seen from A's side)" in p.text
    assert a3[-1].text.startswith(f"A3: {a3[-1].off_mm:.1f} mm off — move it ")


def test_moved_to_1_mm_off_it_is_confirmed_placed_and_play_goes_on(run):
    film, vision, assistant, hub, said, notes, rest, off, near, drawn = run
    states = [s.of("A3").state for s in near]
    first = states.index("placed")
    assert set(states[:first]) == {"off"} and set(states[first:]) == {"placed"}
    # settled: 0.3 s within 2 mm, after the median of the last 5 sightings came within (3 frames at 30 fps)
    assert 0.3 <= (first - 2) / 30.0 <= 0.4
    last = near[-1]
    assert last.done and last.text == "All pieces placed: play on"
    assert last.of("A3").off_mm == pytest.approx(NEAR_MM, abs=1.0) and last.of("A3").off_mm <= 2.0
    assert assistant.check is None and notes == []  # done: nothing left for the referee to note
    assert said[0].startswith("A3: ") and said[-2:] == [f"A3 placed ({last.of('A3').off_mm:.1f} mm)",
                                                       "All pieces placed: play on"]


def test_the_page_gets_the_status_as_it_changes_and_the_video_shows_the_spot(run):
    film, vision, assistant, hub, said, notes, rest, off, near, drawn = run
    placements = [m for m in hub.messages if m["type"] == "placement"]
    assert placements and all(m["active"] for m in placements)
    assert placements[0]["pieces"][0]["at_mm"] == list(SPOT_MM) and placements[0]["pieces"][0]["state"] == "off"
    assert placements[-1]["done"] and placements[-1]["pieces"][0]["state"] == "placed"
    assert len(placements) <= 1 + len(film.off + film.near) // 6 + 3  # distances refreshed 5 times a second
    # the ring around the spot in the status's colour on the video (the frame itself is left alone)
    centre = assistant.view.board.px([SPOT_MM])[0]
    r_px = 16.0 * assistant.view.board.px_per_mm(SPOT_MM)
    ring = [(int(round(centre[0] + r_px * np.cos(a))), int(round(centre[1] + r_px * np.sin(a))))
            for a in np.linspace(0, 2 * np.pi, 24, endpoint=False)]
    hits = sum(tuple(int(v) for v in drawn[-1][y, x]) == COLOURS["off"] for x, y in ring)
    assert hits >= 12
    assert not any(tuple(int(v) for v in film.off[-1].image[y, x]) == COLOURS["off"] for x, y in ring)


def test_after_play_on_the_spots_leave_the_page(run):
    film, vision, assistant, hub, *_ = run
    from hardware.frame import Frame
    late = film.near[-1]
    assistant.on_frame(Frame(late.image, late.index + 1, late.t_s + 3.5, "sim"))
    assert hub.messages[-1] == CLEAR and assistant.shown is None
