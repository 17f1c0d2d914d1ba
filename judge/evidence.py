"""What a referee looks at to check a call: the key instants of a shot, where they happened, and when.

Vision reconstructs events between frames from fitted trajectories, so an instant is given as a time
with its uncertainty *and* as the two frames around it (``frame_before`` + ``sub_frame`` fraction). The
place is taken from the same fits (``Motion.fit_at(t).pos(t)``) when vision kept them, else from the
tracked positions of the neighbouring frames. Every size comes from the profile.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping

__all__ = ["KeyInstant", "key_instants", "positions_at", "radius_of", "contact_point"]


@dataclass(frozen=True)
class KeyInstant:
    """One instant of a shot worth a picture: a contact, a cushion, a pocket, the bat at rest..."""

    name: str  # file-name friendly: first_contact, bat_cushion, pocket_A3, bat_hole...
    kind: str  # the record's event kind, or "rest" for the bat's final position
    t_s: float
    t_err_s: float
    pieces: tuple[str, ...]
    at_mm: tuple[float, float]
    positions_mm: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    note: str = ""

    def frames(self, fps: float) -> tuple[int, int, float]:
        """(frame before, frame after, fraction of the frame interval past the earlier one)."""
        x = self.t_s * fps
        before = int(math.floor(x + 1e-9))
        frac = max(0.0, x - before)
        return before, before + (1 if frac > 1e-6 else 0), frac

    def to_dict(self, fps: float) -> dict:
        before, after, frac = self.frames(fps)
        out = {"name": self.name, "kind": self.kind, "t_s": round(self.t_s, 6), "t_err_s": round(self.t_err_s, 6),
               "frame_before": before, "frame_after": after, "sub_frame": round(frac, 4), "pieces": list(self.pieces),
               "at_mm": [round(self.at_mm[0], 2), round(self.at_mm[1], 2)],
               "positions_mm": {k: [round(v[0], 2), round(v[1], 2)] for k, v in sorted(self.positions_mm.items())}}
        if self.note:
            out["note"] = self.note
        return out


def radius_of(profile, piece: str) -> float:
    return profile.spec.radius_of(piece)


def positions_at(motions: Mapping[str, Any], log, t_s: float, pieces=None) -> dict[str, tuple[float, float]]:
    """Board-mm positions at ``t_s``: from vision's fitted stretches where it kept them (sub-frame exact),
    from the tracked positions of the frames around ``t_s`` for the rest."""
    out = dict(log.at(t_s)) if log is not None else {}
    for piece, motion in (motions or {}).items():
        if pieces is not None and piece not in pieces:
            continue
        try:
            fit = motion.fit_at(t_s)
            if fit.t_first - 0.05 <= t_s <= fit.t_last + 0.05:  # a fit is trusted near its own data only
                xy = fit.pos(t_s)
                out[piece] = (float(xy[0]), float(xy[1]))
        except (AttributeError, IndexError, TypeError, ValueError):
            continue
    return out if pieces is None else {k: v for k, v in out.items() if k in pieces}


def contact_point(a_xy, b_xy, r_a: float) -> tuple[float, float]:
    """Where two touching discs meet: ``r_a`` from a's centre towards b's."""
    dx, dy = b_xy[0] - a_xy[0], b_xy[1] - a_xy[1]
    d = math.hypot(dx, dy) or 1.0
    return a_xy[0] + r_a * dx / d, a_xy[1] + r_a * dy / d


def key_instants(record: Mapping[str, Any], profile, motions=None, log=None, ruling=None) -> list[KeyInstant]:
    """The instants a referee checks, in time order: the first contact (and a second one of the
    striker close behind it: the disputed ones), the striker's first cushion, every pocket, pit entry,
    touch or outside interference, and in Novuss the bat where it came to rest (its hole over a line?)."""
    events = list(record.get("events", []))
    striker = profile.spec.striker or _striker(record)
    out: list[KeyInstant] = []
    seen: set[str] = set()

    def add(name, ev, pieces, at=None, note=""):
        if name in seen:
            return
        seen.add(name)
        t = float(ev["t"])
        pos = positions_at(motions, log, t, set(pieces))
        if at is None:
            at = pos.get(pieces[0]) or tuple(record.get("after", {}).get(pieces[0]) or
                                             record.get("before", {}).get(pieces[0]) or (0.0, 0.0))
        out.append(KeyInstant(name, ev["kind"], t, float(ev.get("t_err", 0.0)), tuple(pieces), tuple(at), pos, note))

    contacts = [e for e in events if e["kind"] == "contact"]
    for k, ev in enumerate(contacts[:1]):
        a, b = ev["a"], ev["b"]
        pos = positions_at(motions, log, float(ev["t"]), {a, b})
        at = contact_point(pos[a], pos[b], radius_of(profile, a)) if a in pos and b in pos else None
        add("first_contact", ev, (a, b), at)
    mine = [e for e in contacts if striker in (e["a"], e["b"])]
    if len(mine) >= 2:
        first, second = mine[0], mine[1]
        gap = float(second["t"]) - float(first["t"])
        sigma = math.hypot(float(first.get("t_err", 0.0)), float(second.get("t_err", 0.0)))
        if gap <= max(0.02, 4 * sigma):
            a, b = second["a"], second["b"]
            pos = positions_at(motions, log, float(second["t"]), {a, b})
            at = contact_point(pos[a], pos[b], radius_of(profile, a)) if a in pos and b in pos else None
            add("second_contact", second, (a, b), at, note=f"{gap * 1000:.2f} ms after the first (1-sigma {sigma * 1000:.2f} ms)")
    for ev in events:
        kind = ev["kind"]
        if kind == "cushion" and ev.get("piece") == striker:
            add(f"{striker}_cushion", ev, (striker,), note=f"side {ev.get('side')}")
        elif kind in ("pocket", "pit", "off", "touch", "external", "lost"):
            add(f"{kind}_{ev['piece']}", ev, (ev["piece"],), note=ev.get("pocket") or ev.get("side") or ev.get("effect") or "")
    bat = profile.spec.striker  # Novuss: the bat at rest, its hole over a zone line or clear of it
    if bat is not None and bat in record.get("after", {}):
        xy = tuple(float(v) for v in record["after"][bat])
        note = ""
        try:
            from rules import engine_for

            player = (ruling or {}).get("player") or record.get("player") or "A"
            margin = engine_for(profile.game, profile.geometry).bat_zone_margin_mm(xy, player)
            note = f"hole {'over the zone line' if margin <= 0 else 'clear of the zone line'} ({margin:+.1f} mm)"
        except (ImportError, ValueError):
            pass
        t_end = float(record.get("t1", 0.0))
        out.append(KeyInstant(f"{bat}_hole", "rest", t_end, 0.0, (bat,), xy, {bat: xy}, note))
    out.sort(key=lambda k: k.t_s)
    return out


def _striker(record: Mapping[str, Any]) -> str:
    """Cvrnkaná: the flicked marble is the first to move (the first event that names a marble)."""
    for ev in record.get("events", []):
        for key in ("piece", "a"):
            if ev.get(key):
                return ev[key]
    return ""
