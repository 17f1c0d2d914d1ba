"""``bench.scoring``: a shot the camera never told counts against every share of rulings, that over the shots
the camera can tell included (Cvrnkaná *everything* printed "100 of 3" where 3 of its 5 shots were right:
its two missed shots were left out of the share)."""
from __future__ import annotations

from bench import scoring
from calibration import default_profile
from sim.scenarios_cvrnkana import SCENARIOS as CVRNKANA


def test_a_missed_and_an_invented_shot_count_against_the_share_the_camera_can_tell():
    profile = default_profile("cvrnkana")
    ep = CVRNKANA["pit-entry"][0](profile, 1)
    truths = [sh.record for sh in ep.shots]
    invented = {"t0": truths[-1]["t1"] + 5.0, "t1": truths[-1]["t1"] + 5.5, "events": []}
    stats = scoring.new_stats()
    scoring._score_shots(profile, ep, truths, [invented], stats, {})
    assert (stats["seg_missed"], stats["seg_extra"]) == (1, 1)
    assert stats["rulings"] == [False, False] and stats["rulings_decidable"] == [False, False]
    s = scoring.summary(stats)
    assert (s["rulings_decidable_same"], s["rulings_decidable_n"]) == (0.0, 2)
