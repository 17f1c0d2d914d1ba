"""A Novuss match served to the spectators' page in the tests: its journal, the page's hub listening to it,
and the records judged."""
from __future__ import annotations

from calibration import default_profile
from judge.journal import Journal
from judge.match import Match
from judge.overlay import OverlayHub, board_for
from novuss_shots import novuss_engine
from rules import parse_record


def judged_match(path, records=()):
    """(journal, hub, match): a new journal at ``path``, the match judging ``records`` (raw dicts), the hub told."""
    journal = Journal.open(path, create=True, match={"game": "novuss"})
    hub = OverlayHub(board_for(default_profile("novuss")))
    match = Match(novuss_engine(), journal, listeners=[hub])
    for raw in records:
        match.judge(parse_record(raw))
    return journal, hub, match
