"""bench/looks.py: one scenario under many render seeds, counted by what the referee would see."""
from __future__ import annotations

import subprocess
import sys

import pytest

from bench.looks import _seeds, outcome
from bench.scoring import new_stats


def test_render_seeds_are_ranges_and_lists():
    assert _seeds("1-11") == list(range(1, 12))
    assert _seeds("1,4,9") == [1, 4, 9]
    assert _seeds("3, 7-8") == [3, 7, 8]
    with pytest.raises(ValueError, match="'1-x' is not a seed"):
        _seeds("1-x")


def test_each_shot_counts_once_by_what_the_referee_sees():
    st = new_stats()
    st["rulings"] = [True, True, True, False, False, False]
    st["rulings_flagged"] = 2  # one right call flagged, one wrong call flagged
    st["rulings_wrong_flagged"], st["rulings_wrong_silent"], st["rulings_refused"] = 1, 1, 1
    assert outcome(st) == {"right": 2, "right, flagged": 1, "refused": 1, "wrong, flagged": 1, "wrong, silent": 1}


@pytest.mark.parametrize("args,says", [(["--scenario", "nope"], "no novuss scenario 'nope'"),
                                       (["--scenario", "opponent-off-direct", "--renderers", "foo"], "'foo' is neither"),
                                       (["--scenario", "opponent-off-direct", "--seeds", ""], "--seeds")])
def test_bad_options_are_one_line_errors_before_any_clip(args, says):
    out = subprocess.run([sys.executable, "bench/looks.py", *args], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and out.stdout == ""
    assert says in out.stderr.strip().splitlines()[-1]
