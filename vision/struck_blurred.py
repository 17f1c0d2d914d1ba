"""A piece struck off at speed, its colour blurred towards the other player's: still that piece.

A head-on hit hands the striking piece's speed to the one it strikes: the striker stops where it touched it, the
struck piece flies on. At speed the struck piece's disc is smeared over the board's colour and can be classed the
other player's; matched within a class, the striker's track (predicted onwards at speed) takes that disc, the
striker itself, stopped, is a newcomer with a spare name, and the record is refused (#16: on the independent
renderer, three of eleven looks of opponent-off-direct at 60 frames/s: B1 struck by A1 was classed A's pawn on the
two frames before it left over the cushion, 'A2 appears but was not on the board').

The tracker (``vision.tracker``) matches within a class, then hands this module the assignment. Shape and
continuity first, colour to tell the players apart: a disc of the striker's colour at touching distance behind
the struck piece's place is the striker, stopped (nothing else can appear there without a hand), and the disc it
took is the struck piece; once so, a struck piece still flying on takes a disc of the other colour that no piece of
that colour can take.
"""
from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np

__all__ = ["struck_blurred", "unclaimed"]


def unclaimed(d, lives: Sequence, preds: Sequence[np.ndarray], gates: Sequence[float], matched,
              distance: Callable) -> bool:
    """Whether no track left unmatched (not in ``matched``) of ``d``'s own class could take ``d`` (within its gate
    of its prediction): only then may a track of another class take it, its colour blurred."""
    return not any(k not in matched and m.cls == d.cls and distance(preds[k], d) <= gates[k]
                   for k, m in enumerate(lives))


def struck_blurred(lives: Sequence, preds: Sequence[np.ndarray], pieces: Sequence, pairs: dict[int, int],
                   gates: Sequence[float], kind: str | None, rest_speed_mm_s: float,
                   reach_mm: Callable[[object], float], hand_near: Callable[[Sequence[float], float], bool],
                   distance: Callable) -> dict[int, int]:
    """The assignment ``pairs`` (track index -> detection index) with the struck pieces of ``kind`` named across
    classes. ``lives``: the tracks (``pos``, ``vel``, ``radius_mm``, ``cls``, ``kind``, ``own``, ``t_obs_s``);
    ``preds``/``gates``: where each is predicted and how far from there (by ``distance(pred, detection)``, the
    tracker's) it may be seen; ``reach_mm(track)``: how far a track can have got since it was last seen;
    ``hand_near(centre_mm, radius_mm)``: a hand over that place (a piece put down there by hand may be new)."""
    out = dict(pairs)
    used = set(out.values())

    def free(j: int) -> bool:  # a disc no track has, that no unmatched track of its own class could take
        return j not in used and unclaimed(pieces[j], lives, preds, gates, out, distance)

    for k, m in enumerate(lives):
        if k in out or kind is None or m.kind != kind:
            continue
        hit = _stopped_behind(k, m, lives, preds, pieces, out, gates, rest_speed_mm_s, reach_mm, hand_near, free,
                              distance)
        if hit is not None:
            i, u = hit
            out[k], out[i] = out[i], u
            used.add(u)
            continue
        if m.own is None or m.own[1] >= m.t_obs_s or float(np.hypot(*m.vel)) <= rest_speed_mm_s:
            continue  # only a piece already seen flying on in the other colour keeps taking it
        near = [(far, j) for j, d in enumerate(pieces) if d.kind == m.kind and d.cls != m.cls
                and (far := distance(preds[k], d)) <= gates[k] and free(j)]
        if near:
            out[k] = min(near)[1]
            used.add(out[k])
    return out


def _stopped_behind(k, m, lives, preds, pieces, out, gates, rest_speed_mm_s, reach_mm, hand_near, free, distance):
    """(i, u): track ``i`` of the other colour, moving, took a disc that ``m`` (unmatched) can have got to, flying
    away from a disc ``u`` of ``i``'s colour that no track has, at touching distance behind ``m``'s place, where
    ``i`` can have got: ``i`` stopped at ``u`` as it struck ``m``."""
    best = None
    for i, l in enumerate(lives):
        if i not in out or l.kind != m.kind or l.cls == m.cls or float(np.hypot(*l.vel)) <= rest_speed_mm_s:
            continue
        d = pieces[out[i]]
        if d.cls != l.cls or distance(preds[k], d) > gates[k]:
            continue
        touch = l.radius_mm + m.radius_mm
        away = np.asarray(d.centre_mm, float) - m.pos
        for j, u in enumerate(pieces):
            if u.cls != l.cls or distance(preds[i], u) > gates[i] or math.dist(l.pos, u.centre_mm) > reach_mm(l):
                continue
            behind = m.pos - np.asarray(u.centre_mm, float)
            gap = float(np.hypot(*behind))
            if abs(gap - touch) > m.radius_mm or float(np.dot(away, behind)) <= 0.0:
                continue
            if (best is None or abs(gap - touch) < best[0]) and free(j) and not hand_near(u.centre_mm, u.radius_mm):
                best = (abs(gap - touch), i, j)
    return None if best is None else best[1:]
