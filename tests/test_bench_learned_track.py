"""The identity counters of bench/learned_track.py on hand-made frames: they count exactly what they say."""
from bench.learned_track import IdentityScore, match

R = 15.0  # pawn radius, mm
TRUTH = {"A1": (0.0, 0.0, R), "A2": (40.0, 0.0, R), "bat": (200.0, 0.0, 18.0)}


def test_match_is_one_to_one_nearest_first_within_a_diameter():
    got = [("x", (38.0, 1.0)), ("y", (3.0, 0.0)), ("z", (25.0, 0.0)), ("far", (200.0, 40.0))]
    # z is 15 mm from A2 and 25 mm from A1: A2 goes to x (2.2 mm), A1 to y (3 mm), z is left over;
    # 'far' is 40 mm from the bat, more than its 36 mm diameter
    assert sorted(match(got, TRUTH)) == [("x", "A2"), ("y", "A1")]
    assert match([("z", (25.0, 0.0))], TRUTH) == [("z", "A2")]
    assert match([], TRUTH) == [] and match(got, {}) == []


def test_named_labels_count_a_swap_and_its_repair_and_unnamed_detections():
    s = IdentityScore(named=True)
    s.add([("A1", "A1"), ("A2", "A2")])
    s.add([("A1", "A2"), ("A2", "A1")])  # names swapped: two switches
    s.add([("A1", "A2"), ("A2", "A1")])  # still swapped: nothing new
    s.add([("A1", "A1"), ("A2", "A2")])  # swapped back: two more
    s.add([(None, "A1"), ("A2", "A2")])  # an unnamed detection: the frame is not all right, no switch
    s.add([])  # nothing matched: not counted
    assert (s.switches, s.frames, s.frames_right) == (4, 5, 2)
    assert s.fragmented == 2  # A1 and A2 each carried both names
    # a name that first appears on another piece is a switch at once
    t = IdentityScore(named=True)
    t.add([("A2", "A1")])
    assert (t.switches, t.frames_right) == (1, 0)


def test_track_ids_stand_for_their_first_piece_and_bat_breaks_count_label_changes_while_struck():
    s = IdentityScore(named=False)
    s.add([(7, "bat"), (3, "A1")], bat_struck=True)
    s.add([(3, "A1")], bat_struck=True)  # bat not found: no break, one frame short
    s.add([(7, "bat"), (3, "A1")], bat_struck=True)  # same id back: no break
    s.add([(9, "bat"), (7, "A1")], bat_struck=True)  # a new id on the bat (break), 7 jumps to A1 (switch)
    s.add([(9, "bat"), (3, "A1")], bat_struck=False)  # not struck: not a bat frame
    assert (s.bat_frames, s.bat_found, s.bat_breaks) == (4, 3, 1)
    assert s.switches == 1 and s.frames_right == 4 and s.frames == 5
    assert s.fragmented == 2  # bat carried 7 and 9, A1 carried 3 and 7
    both = s.merged(s)
    assert (both.switches, both.bat_breaks, both.fragmented, both.frames) == (2, 2, 4, 10)
