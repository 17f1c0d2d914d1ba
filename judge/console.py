"""The referee's console queue: the shots the referee must look at, with their evidence and the choices.

A shot is on the queue while it is flagged (a call asks for review, or vision flagged what it could not
see or time) and the referee has not acted on it: confirming it (the call stands), deciding the doubtful
call (``engine.DECISIONS``: the rules then follow the decision), overriding it with a foul the referee
saw, or undoing it. Shots the engine refused are on it too (``Match.open_reviews``), until settled or a
state is set. Evidence is what the dispute report shows: the key instants with their uncertainty and,
where the shot's clip was kept, the crop around each (as data URIs: the page needs the token to ask for
the queue, and an ``<img>`` could not send it).
"""
from __future__ import annotations

import base64
from typing import Any, Callable

from .i18n import _
from .live import review_reasons
from .match import DECISION_LABELS

__all__ = ["review_queue"]

#: which flagged call each decision settles
DECIDES = {"review_first_contact": "first_contact", "review_bat_zone": "bat_zone"}

Evidence = Callable[[int, int | None, Any, Any], list]  # (game_no, shot_no, record dict, ruling dict) -> Instants


def review_queue(match, evidence: Evidence | None = None) -> list[dict[str, Any]]:
    """The queue, oldest first: the flagged shots of the current game the referee has not acted on, then
    the refused shots still open."""
    acted = _acted_on(match)
    out = []
    game_no, shots = match.current_shots()
    lang = match.lang
    for shot_no, record, ruling in shots:
        rd = ruling.to_dict(lang)
        reasons = review_reasons(rd, [dict(i) for i in record.review], match.unsettled.get((game_no, shot_no), ()))
        if not reasons or (game_no, shot_no) in acted:
            continue
        decisions = [{"code": DECIDES[c["code"]], "value": v, "label": _(DECISION_LABELS.get((DECIDES[c["code"]], v), v))}
                     for c in rd["calls"] if c.get("review") and c["code"] in DECIDES
                     for v in match.engine.DECISIONS.get(DECIDES[c["code"]], ())]
        out.append({"kind": "call", "game_no": game_no, "shot_no": shot_no, "player": rd["player"], "calls": rd["calls"],
                    "reasons": reasons, "decisions": decisions, "last": shot_no == shots[-1][0],
                    "instants": _instants(evidence, game_no, shot_no, record.to_dict(), rd)})
    for item in match.open_reviews():
        out.append({"kind": "refused", "game_no": item["game_no"], "review": item["review"], "shot_no": None,
                    "player": item["record"].get("player"), "calls": [], "reasons": [item["error"]], "decisions": [],
                    "last": False, "instants": _instants(evidence, item["game_no"], None, item["record"], None)})
    return out


def _acted_on(match) -> set[tuple[int, int]]:
    """The shots the referee confirmed, decided or overrode (journal ``settle`` of a shot, ``override``)."""
    out = set()
    for e in match.journal.entries():
        if e["shot_no"] is not None and (e["kind"] == "override" or e["kind"] == "settle" and "shot" in e["payload"]):
            out.add((e["game_no"], e["shot_no"]))
    return out


def _instants(evidence: Evidence | None, game_no: int, shot_no: int | None, record, ruling) -> list[dict[str, Any]]:
    if evidence is None:
        return []
    from .dispute_page import instant_label

    out = []
    for k in evidence(game_no, shot_no, record, ruling):
        out.append({"name": k.name, "label": instant_label(k, _), "kind": k.kind, "t_s": round(k.t_s, 6), "t_err_s": round(k.t_err_s, 6),
                    "timed": k.timed, "pieces": list(k.pieces), "at_mm": [round(k.at_mm[0], 1), round(k.at_mm[1], 1)],
                    "note": k.note, "png": base64.b64encode(k.png).decode() if k.png else None,
                    "no_picture": _(k.no_picture) if k.no_picture else ""})
    return out
