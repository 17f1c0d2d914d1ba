"""Shot records from tracks: the documented schema (``rules.record``), ready for the rule engine.

``ShotAssembler.assemble`` turns one shot's tracks into a record: resting positions before and after
(means over the resting frames, so each is good to a fraction of the detection noise), the events from
``vision.events`` and, for what no contact explains, the events the rules ask for: in Cvrnkaná a marble
that set off without being hit was touched (rule 7d), in Novuss a pawn that did is an outside
interference (``external``). A piece whose track ended with no departure event (lost from sight, taken
by a hand) never silently disappears: it stays in ``after`` at its last reliable place and the record
carries ``meta.review`` (one item per such piece) for the judge to show. The record is validated with
``rules.record.parse_record`` before it leaves.
"""
from __future__ import annotations

import math
from typing import Mapping

import numpy as np

from rules.record import parse_record

from .board import Surface
from .events import EventExtractor, Motion
from .segmenter import ShotWindow
from .types import Event, Track

__all__ = ["ShotAssembler"]


class ShotAssembler:
    def __init__(self, profile, extractor: EventExtractor | None = None, explain_s: float = 0.004,
                 calibration_rms_mm: float = 0.5, launch_mm: float = 3.0):
        """``launch_mm``: how far from its rest a piece must get for its setting off to count (a fit
        nudged off centre by a hand reaching past is not a launch)."""
        self.profile = profile
        self.game = profile.game
        self.surface = Surface.from_profile(profile)
        self.extractor = extractor or EventExtractor(self.surface)
        self.explain_s = explain_s
        self.calibration_rms_mm = calibration_rms_mm
        self.launch_mm = launch_mm
        self.off_view: dict[str, tuple[float, float]] = {}  # known places outside the camera's view

    def assemble(self, window: ShotWindow, tracks: Mapping[str, Track], player: str | None = None) -> dict:
        tracks = {p: tr for p, tr in tracks.items() if tr.observed()}
        events = self.extractor.extract(tracks)
        motions = self.extractor.last_motions
        launches = self._launches(motions)
        t0 = launches.get(window.starter, (window.t0_s, 0.0))[0]
        t0 = min(t0, window.t0_s + 1.0) if window.starter in launches else window.t0_s
        events += self._unexplained(launches, events, window, motions)
        if self.game == "cvrnkana":  # rolled out of the camera's view: on the field, place unknown
            events += [Event("off", float(m.t[-1]), 0.0, 0.9, piece=p, side=m.track.left_where,
                             note="left the camera's view") for p, m in motions.items() if m.track.left == "view"]
        events = sorted((e for e in events if e.t_s >= t0 - 0.05), key=lambda e: e.t_s)
        t0 = min([t0] + [e.t_s for e in events])
        t1 = max([window.t1_s] + [e.t_s for e in events])
        gone = {e.piece for e in events if e.kind in ("pocket", "off", "pit")}
        entered = {e.piece for e in events if e.note == "entered the view"}
        before = {}
        after = {}
        for p, m in motions.items():
            first, last = m.fits[0], m.fits[-1]
            if p in entered:
                if p in self.off_view:  # it lay outside the view: the game state knows where
                    before[p] = tuple(float(v) for v in self.off_view[p])
            elif first.t_first <= t0 + 1e-9 and first.rest:
                before[p] = tuple(float(v) for v in first.p)
            elif first.t_first <= t0 + 1e-9:
                before[p] = tuple(float(v) for v in m.xy[0])
            if p not in gone and m.track.left is None:
                after[p] = tuple(float(v) for v in (last.p if last.rest else m.xy[-1]))
        # a piece the tracker lost sight of without seeing it leave (no pocket, off or pit event) has not
        # left the surface as far as anyone knows: it stays where it was last seen, and the referee is asked
        unseen = self._unseen(motions, gone, before)
        for p, item in unseen.items():
            after[p] = tuple(item["at"])
        sigma_after = {p: math.sqrt(m.fits[-1].pos_var(m.fits[-1].t_ref) + self.calibration_rms_mm ** 2)
                       for p, m in motions.items() if p in after}
        rec = {
            "game": self.game, "t0": round(t0, 6), "t1": round(t1, 6),
            "before": {p: [round(x, 2), round(y, 2)] for p, (x, y) in sorted(before.items())},
            "after": {p: [round(x, 2), round(y, 2)] for p, (x, y) in sorted(after.items())},
            "events": [e.to_record() for e in events],
            "meta": {"source": "vision", "frames": [window.frame0, window.frame1],
                     "sigma_mm": round(self.extractor.used_sigma_mm, 3),
                     "event_notes": [e.note for e in events],
                     # 1-sigma error of each resting place after the shot (fit + calibration), and the
                     # margin within which a call on a position is a close call (2 sigma of the worst)
                     "position_sigma_mm": {p: round(v, 3) for p, v in sorted(sigma_after.items())},
                     "position_tolerance_mm": round(2.0 * max(sigma_after.values(), default=self.calibration_rms_mm), 3)},
        }
        # pieces that rolled out of the camera's view during the shot: where they stopped is unknown, so
        # they are in neither ``after`` nor any event; the referee (or the game state) must place them
        left_view = sorted(p for p, m in motions.items() if m.track.left == "view")
        if left_view:
            rec["meta"]["left_view"] = left_view
        unseen.update({p: {"code": "pit_unseen", "piece": p, "t": round(float(m.t[-1]), 6),
                           "reason": "went under the hand and was not seen again: taken to be in the pit"}
                       for p, m in motions.items() if p in gone and m.track.pit_unseen})
        if unseen:
            rec["meta"]["review"] = [unseen[p] for p in sorted(unseen)]
        if player:
            rec["player"] = player
        for e in rec["events"]:
            e["t"] = min(max(e["t"], rec["t0"]), rec["t1"])
        parse_record(rec, "vision shot", self.game)
        return rec

    @staticmethod
    def _unseen(motions: Mapping[str, Motion], gone: set, before: Mapping) -> dict[str, dict]:
        """Pieces that were on the surface before the shot and whose track ended without a departure
        (lost, or taken by a hand): each with its last reliable place (the last resting stretch's fit, or
        the last sighting) and why it needs the referee."""
        out = {}
        for p, m in motions.items():
            why = m.track.left
            if why not in ("lost", "pickup") or p in gone or p not in before:
                continue
            last = m.fits[-1]
            at = last.p if last.rest else m.xy[-1]
            out[p] = {"code": "piece_unseen", "piece": p, "at": [round(float(at[0]), 2), round(float(at[1]), 2)],
                      "t": round(float(m.t[-1]), 6), "moving": not last.rest,
                      "reason": "taken by a hand" if why == "pickup" else "lost from sight"}
        return out

    def _launches(self, motions: Mapping[str, Motion]) -> dict[str, tuple[float, float]]:
        """Pieces that were resting and set off: (instant, 1-sigma) where the outgoing line leaves the rest."""
        out = {}
        for p, m in motions.items():
            if len(m.fits) < 2 or not m.fits[0].rest or not self._went(m):
                continue
            rest, go = m.fits[0], m.fits[1]
            # solve |go.pos(t) - rest.p| minimal along the outgoing direction
            ts = np.linspace(rest.t_last, go.t_first, 50)
            gaps = np.hypot(*(go.pos(ts) - rest.p).T)
            t = float(ts[int(np.argmin(gaps))])
            speed = max(float(np.hypot(*go.vel(t))), 1.0)
            out[p] = (t, math.sqrt(go.pos_var(t) + rest.pos_var(t)) / speed + 1e-4)
        return out

    @staticmethod
    def _newcomer(p: str, t: float, motions, share: float = 0.5) -> str | None:
        """A marble that came into view moving, first seen within two frames after ``p`` set off at ``t``,
        whose first line run back to ``t`` meets ``p``'s resting place (touching it, within ``share`` of
        the radii): the two met as it came in (at 30 frames/s a fast opening flick can enter the view and
        strike within one frame interval, so the meeting itself is never seen)."""
        m = motions[p]
        here = np.asarray(m.fits[0].p)
        dt = _frame_dt(m)
        best = None
        for q, mq in motions.items():
            if q == p or mq.fits[0].rest or not t - dt / 2 <= mq.t[0] <= t + 2 * dt:
                continue
            gap = abs(float(np.hypot(*(mq.fits[0].pos(t) - here))) - m.radius - mq.radius)
            if gap <= share * (m.radius + mq.radius) and (best is None or gap < best[0]):
                best = (gap, q)
        return best[1] if best else None

    def _went(self, m: Motion) -> bool:
        """The piece left its first rest: got farther than ``launch_mm`` from it, or left the surface."""
        if m.track.left in ("pit", "off", "view", "pocket"):
            return True
        gaps = np.hypot(*(m.xy - np.asarray(m.fits[0].p)).T)
        return bool(len(gaps) and float(gaps.max()) > self.launch_mm)

    @staticmethod
    def _neighbour(p: str, t: float, motions, tol_mm: float = 3.0) -> str | None:
        """The nearest piece touching ``p``'s resting place at ``t`` (a chain push), if any."""
        m = motions[p]
        here = m.fits[0].p
        best = None
        for q, mq in motions.items():
            if q == p or mq.t[0] > t or mq.t[-1] < t - 0.1:
                continue
            gap = float(np.hypot(*(mq.fit_at(t).pos(t) - here))) - m.radius - mq.radius
            if gap <= tol_mm and (best is None or gap < best[0]):
                best = (gap, q)
        return best[1] if best else None

    def _unexplained(self, launches, events: list[Event], window: ShotWindow, motions) -> list[Event]:
        out = []
        for p, (t, err) in launches.items():
            if p == window.starter and self.game == "novuss":
                continue
            # only a contact sets a resting piece off (its leaving the surface at once is no cause)
            cause = [e for e in events if e.kind == "contact" and p in e.pieces() and abs(e.t_s - t) <= self.explain_s + 3 * err]
            if cause:
                continue
            mate = self._neighbour(p, t, motions)
            newcomer = self._newcomer(p, t, motions) if self.game == "cvrnkana" and mate is None else None
            if newcomer is not None:  # struck by a marble first seen just after, already on its way out
                a, b = sorted((p, newcomer))
                out.append(Event("contact", t, err, 0.5, a=a, b=b, note="struck as it came into view"))
            elif mate is not None and (self.game == "novuss" or mate in launches or not motions[mate].fits[0].rest):
                # set off inside a cluster: pushed by a neighbour within the frame interval; order unknown
                a, b = sorted((p, mate))
                out.append(Event("contact", t, max(err, _frame_dt(motions[p]) / 4), 0.5, a=a, b=b, note="cluster launch"))
            elif self.game == "cvrnkana":
                out.append(Event("touch", t, err, 0.9, piece=p, note="launch without contact"))
            elif p != "bat":
                out.append(Event("external", t, err, 0.7, piece=p, effect="moved", note="launch without contact"))
        if self.game == "cvrnkana":
            for p, m in motions.items():
                if p not in launches and m.fits[0].rest and self._went(m) and \
                        not any(p in e.pieces() for e in events + out if e.kind not in ("pit", "off")):
                    # set off where the camera did not see it go (under the hand): touched all the same (7d)
                    out.append(Event("touch", float(m.fits[0].t_last), 0.0, 0.5, piece=p, note="set off unseen"))
                if p in launches or m.fits[0].rest:
                    continue
                # rolled into view mid-shot: an opening flick from the start line
                out.append(Event("touch", window.t0_s, 0.0, 0.8, piece=p, note="entered the view"))
        return out


def _frame_dt(m: Motion) -> float:
    """The frame interval of a piece's sightings."""
    return float(np.median(np.diff(m.t))) if len(m.t) > 1 else 1 / 60
