"""Builders for hand-written Novuss shot records used by the rule tests."""
from __future__ import annotations

from calibration import default_profile
from rules import engine_for, parse_record

GEOMETRY = default_profile("novuss").geometry


def engine(name: str = "novuss", **options):
    return engine_for(name, GEOMETRY, **options)


def contact(t, a, b, **kw):
    return {"t": t, "kind": "contact", "a": a, "b": b, **kw}


def cushion(t, piece, side):
    return {"t": t, "kind": "cushion", "piece": piece, "side": side}


def pocket(t, piece, where="NE"):
    return {"t": t, "kind": "pocket", "piece": piece, "pocket": where}


def off(t, piece, side=None):
    ev = {"t": t, "kind": "off", "piece": piece}
    if side:
        ev["side"] = side
    return ev


def record(before=None, after=None, events=(), player=None, bat=(0.0, -440.0), bat_after=(0.0, 100.0), referee=None):
    """A stroke by ``player``: ``before``/``after`` list only the pieces that matter (the rest stay
    where the game state has them). The bat starts at ``bat``; ``bat_after=None`` means it left the board."""
    rec = {"game": "novuss", "t0": 0.0, "t1": 2.0, "before": {"bat": list(bat)}, "after": {}, "events": list(events)}
    for k, v in (before or {}).items():
        rec["before"][k] = list(v)
    for k, v in (after or {}).items():
        rec["after"][k] = list(v)
    if bat_after is not None:
        rec["after"]["bat"] = list(bat_after)
    if player:
        rec["player"] = player
    if referee:
        rec["referee"] = referee
    return parse_record(rec)
