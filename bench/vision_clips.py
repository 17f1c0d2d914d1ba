"""Simulator clips for the vision benchmarks and tests: ground-truth detections ("oracle", with noise
and drop-outs), occluder outlines, and the comparisons (records vs truth) the accuracy table is made of."""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from vision.types import Detection, Detections


def occluder_outline(o) -> tuple[tuple[float, float], ...]:
    """Board-plane polygon of a simulated hand or cue (what it hides)."""
    u = np.array([math.cos(o.direction_rad), math.sin(o.direction_rad)])
    n = np.array([-u[1], u[0]])
    tip = np.array([o.x_mm, o.y_mm])
    if o.kind == "cue":
        butt = tip - u * o.length_mm
        w = max(o.width_mm, 8.0)
        pts = [tip + n * w / 2, tip - n * w / 2, butt - n * w, butt + n * w]
    else:
        r = o.radius_mm
        arc = [tip + r * np.array([math.cos(a), math.sin(a)]) for a in
               np.linspace(o.direction_rad - math.pi / 2, o.direction_rad + math.pi / 2, 9)]
        pts = arc + [tip + n * r * 0.8 - u * 900.0, tip - n * r * 0.8 - u * 900.0]
    return tuple((float(p[0]), float(p[1])) for p in pts)


def on_surface(surface, p, airborne_mm: float = 2.0) -> bool:
    """Whether a simulated piece lies on the playing surface, where a detector must find it: visible,
    not in the air (a pawn flying over the cushion) and its centre not over a pocket or the pit (a piece
    whose centre is over the hole is falling in: it has left the game, as the rules and the tracker
    count it)."""
    if not p.visible or p.z_mm > airborne_mm or p.z_mm < -20.0:
        return False
    xy = (p.x_mm, p.y_mm)
    return not (surface.pocket_at(xy) or (surface.pit_radius_mm and surface.in_pit(xy)))


def in_view(profile, x_mm: float, y_mm: float) -> bool:
    """Whether the overhead camera sees a point: the frame around the Novuss board, the Cvrnkaná view."""
    spec = profile.spec
    if spec.sees_whole_field:  # the frame round the board
        hx = hy = spec.geometry.frame_mm / 2
    else:
        hx, hy = spec.bounds_mm
    return abs(x_mm) <= hx and abs(y_mm) <= hy


def oracle_detections(frame, noise_mm: float, rng: np.random.Generator, miss_rate: float = 0.0, profile=None,
                      clip=None, exposure_s: float = 0.0, blur_frac: float = 0.02) -> Detections:
    """What a good detector would report for a SimFrame: the true centres plus ``noise_mm`` (1 sigma per
    axis), nothing under a hand or the cue (centre covered by more than half a radius), nothing outside the
    camera's view (``profile``), and for a moving piece blur-like noise along its motion: ``blur_frac`` of
    the streak it draws in ``exposure_s`` (velocity from ``clip``), as the centre of a smeared blob is."""
    items = []
    occ = tuple(Detection(o.kind, (o.x_mm, o.y_mm), max(o.radius_mm, 10.0), None, 1.0, None, frame.index, frame.t_s,
                          outline_mm=occluder_outline(o)) for o in frame.occluders)
    probe = Detections(frame.index, frame.t_s, occ)
    moving = {}
    if clip is not None and exposure_s > 0:
        h = 5e-4
        ahead = clip.states_at(frame.t_s + h)
        moving = {p.id: ((q.x_mm - p.x_mm) / h, (q.y_mm - p.y_mm) / h) for p, q in zip(frame.pieces, ahead.pieces)
                  if p.visible and q.visible}
    for p in frame.pieces:
        if not p.visible or p.z_mm < -20.0:
            continue
        if profile is not None and not in_view(profile, p.x_mm, p.y_mm):
            continue
        if probe.occluded((p.x_mm, p.y_mm), -p.radius_mm * 0.5):
            continue  # hidden under a hand or the cue
        if miss_rate and rng.random() < miss_rate:
            continue
        z = np.array([p.x_mm, p.y_mm]) + rng.normal(0.0, noise_mm, 2)
        v = np.asarray(moving.get(p.id, (0.0, 0.0)), float)
        speed = float(np.hypot(*v))
        if speed > 1.0 and speed < 2e4:
            z = z + v / speed * rng.normal(0.0, blur_frac * speed * exposure_s)
        items.append(Detection(p.kind, (float(z[0]), float(z[1])), p.radius_mm, p.owner, 1.0, None, frame.index,
                               frame.t_s))
    order = rng.permutation(len(items))
    return Detections(frame.index, frame.t_s, tuple(items[i] for i in order) + occ)


def restamp(dets: Detections, frame: int, t_s: float) -> Detections:
    """``dets`` as frame ``frame`` reported at ``t_s`` (the frame's and every sighting's time): what a stream
    whose clock is off (jitter, a repeated frame under a new time) hands vision (``bench.clocks``)."""
    return Detections(frame, t_s, tuple(replace(d, frame=frame, t_s=t_s) for d in dets.items))


@dataclass
class Compared:
    contacts_true: int = 0
    contacts_found: int = 0
    contacts_matched: int = 0
    timing_err_ms: list = None

    def __post_init__(self):
        self.timing_err_ms = [] if self.timing_err_ms is None else self.timing_err_ms


def match_events(truth: list[dict], got: list[dict], tol_s: float = 0.01):
    """Pair true and reconstructed events of the same kind and pieces; returns (pairs, missed, extra)."""
    def key(e):
        if e["kind"] == "contact":
            return ("contact", tuple(sorted((e["a"], e["b"]))))
        return (e["kind"], e.get("piece"))
    used = set()
    pairs, missed = [], []
    for te in truth:
        best = None
        for j, ge in enumerate(got):
            if j in used or key(ge) != key(te):
                continue
            dt = abs(ge["t"] - te["t"])
            if dt <= tol_s and (best is None or dt < best[0]):
                best = (dt, j)
        if best is None:
            missed.append(te)
        else:
            used.add(best[1])
            pairs.append((te, got[best[1]]))
    extra = [ge for j, ge in enumerate(got) if j not in used]
    return pairs, missed, extra


def _named(events) -> list[str]:
    """The pieces ``events`` name, in the order first named."""
    out: list[str] = []
    for e in events:
        for k in ("piece", "a", "b"):
            v = e.get(k)
            if isinstance(v, str) and v not in out:
                out.append(v)
    return out


def same_player_names(rec: dict, before_true: dict, within_mm: float = 20.0, events_true=()) -> dict:
    """``rec`` with its pawns/marbles renamed to the true names of the pieces they stood on at the start.

    The rules never tell one player's pawns (or marbles) apart, only whose they are, and the judge folds
    its own records, so a name that passed between two of a player's pieces changes no call. Renaming
    by the ``before`` positions, within each player only, lets a record be judged on the *true* game
    state; a piece given the other player's colour, or an event the pieces did not make, still counts.
    A piece with no place before the shot (a marble rolling in from outside the view, whose place the
    judge did not know) takes the name of a piece of the same player in ``events_true`` (the true
    record's events) that no other piece took, in the order the two records first name them.
    """
    from rules.record import owner

    ids = set(rec.get("before", {})) | set(rec.get("after", {}))
    ids |= set(_named(rec.get("events", ())))
    mapping: dict[str, str] = {}
    for who in ("A", "B"):
        mine = sorted(p for p in ids if owner(p) == who)
        truth = {p: xy for p, xy in before_true.items() if owner(p) == who}
        pairs = sorted((math.dist(xy, truth[q]), p, q) for p, xy in rec.get("before", {}).items()
                       if owner(p) == who for q in truth)
        used = set()
        for d, p, q in pairs:
            if d <= within_mm and p not in mapping and q not in used:
                mapping[p], _ = q, used.add(q)
        moved = [q for q in _named(events_true) if owner(q) == who]
        order = _named(rec.get("events", ()))
        first = lambda p: (p not in order, order.index(p) if p in order else 0, p)  # noqa: E731
        for p in sorted((p for p in mine if p not in mapping), key=first):
            free = [q for q in moved if q not in used] if p not in rec.get("before", {}) else []
            q = free[0] if free else p if p not in used else next(f"{who}{k}" for k in range(1, 100) if f"{who}{k}" not in used)
            mapping[p], _ = q, used.add(q)
    name = lambda p: mapping.get(p, p)  # noqa: E731
    out = dict(rec)
    out["before"] = {name(p): xy for p, xy in rec.get("before", {}).items()}
    out["after"] = {name(p): xy for p, xy in rec.get("after", {}).items()}
    out["events"] = [{k: (name(v) if k in ("a", "b", "piece") and isinstance(v, str) else v) for k, v in e.items()}
                     for e in rec.get("events", ())]
    return out
