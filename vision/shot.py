"""Shots from tracks: a ``rules.Shot``, built here and validated by its constructor.

``ShotAssembler.assemble`` turns one shot's tracks into a ``VisionShot``: the shot (resting positions
before and after, means over the resting frames, so each is good to a fraction of the detection noise;
the events from ``vision.events`` and, for what no contact explains, the events the rules ask for: a
piece that set off without being hit was touched (Cvrnkaná rule 7d) or moved by outside interference
(Novuss, ``external``), as the game's ``unexplained_launch`` says), the motions the events were solved
from, and the review items. A piece whose track ended with no departure event (lost from sight, taken
by a hand) never silently disappears: it stays in ``after`` at its last reliable place and the shot
carries a review item (``meta.review``) for the judge to show; so does, in Novuss, a piece that set off
with no contact seen (``external``: the rules have no call for it, and it is most often a contact lost in
a burst of dropped frames).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Mapping

import numpy as np

from rules.record import Event, Kind, Shot

from .board import Surface
from .departure import lost_before_shot, pocket_in_reach, struck_off
from .events import EventExtractor, Motion
from .launch import came_back, rest_left, slid
from .segmenter import ShotWindow
from .types import Track

__all__ = ["ShotAssembler", "VisionShot"]


@dataclass(frozen=True, eq=False)
class VisionShot:
    """What vision hands the judge for one shot: the shot, the fitted motions its events were solved from
    (piece -> ``Motion``, for the dispute view) and what it asks the referee to check."""

    shot: Shot
    motions: Mapping[str, Motion]

    @property
    def review(self) -> tuple[Mapping[str, Any], ...]:
        return self.shot.review


class ShotAssembler:
    def __init__(self, profile, extractor: EventExtractor | None = None, explain_s: float = 0.004,
                 calibration_rms_mm: float = 0.5, launch_mm: float = 3.0):
        """``launch_mm``: how far from its rest a piece must get for its setting off to count (a fit
        nudged off centre by a hand reaching past is not a launch)."""
        self.profile = profile
        self.game = profile.game
        self.spec = profile.spec
        self.surface = Surface.from_profile(profile)
        self.extractor = extractor or EventExtractor(self.surface)
        self.explain_s = explain_s
        self.calibration_rms_mm = calibration_rms_mm
        self.launch_mm = launch_mm
        self.off_view: dict[str, tuple[float, float]] = {}  # known places outside the camera's view

    def assemble(self, window: ShotWindow, tracks: Mapping[str, Track], player: str | None = None) -> VisionShot:
        tracks = {p: self._dropped(tr) for p, tr in tracks.items() if tr.observed()}
        extraction = self.extractor.extract(tracks)
        motions = extraction.motions
        events = list(extraction.events)
        launches = self._launches(motions)
        t0 = launches.get(window.starter, (window.t0_s, 0.0))[0]
        t0 = min(t0, window.t0_s + 1.0) if window.starter in launches else window.t0_s
        unexplained = self._unexplained(launches, events, window, motions)
        events = _one_per_meeting(events + unexplained + self._struck_off(events, motions), motions)
        # a cushion "touched" by a piece that never left its rest is its fit flickering against the cushion (put
        # back on the cushion line by the tracker while at rest), not a contact
        events = [e for e in events if e.kind != Kind.CUSHION or e.piece not in motions or self._went(motions[e.piece])]
        if not self.spec.sees_whole_field:  # rolled out of the camera's view: on the field, place unknown
            events += [Event(float(m.t[-1]), Kind.OFF, piece=p, side=m.track.left_where, confidence=0.9,
                             note="left the camera's view") for p, m in motions.items() if m.track.left == "view"]
        events = sorted((e for e in events if e.t >= t0 - 0.05), key=lambda e: e.t)
        t0 = min([t0] + [e.t for e in events])
        t1 = max([window.t1_s] + [e.t for e in events])
        gone = {e.piece for e in events if e.kind in ("pocket", "off", "pit")}
        entered = {e.piece for e in events if e.note == "entered the view"}
        before = {}
        after = {}
        for p, m in motions.items():
            first, last = m.fits[0], m.fits[-1]
            if p in entered:
                if p in self.off_view:  # it lay outside the view: the game state knows where
                    before[p] = tuple(float(v) for v in self.off_view[p])
            elif _first_stamp(m) <= t0 + 1e-9:  # seen from the shot's start: where it lay then
                before[p] = tuple(float(v) for v in (first.p if first.rest else m.xy[0]))
            if p not in gone and m.track.left is None:
                after[p] = tuple(float(v) for v in (last.p if last.rest else m.xy[-1]))
        # a piece the tracker lost sight of without seeing it leave (no pocket, off or pit event) has not
        # left the surface as far as anyone knows: it stays where it was last seen, and the referee is asked
        unseen = self._unseen(motions, gone, before)
        for p, item in unseen.items():
            after[p] = tuple(item["at"])
        # one the detector lost at rest before the shot, which nothing could have moved, lies where it lay:
        # no call depends on it, so the referee is not asked (departure.lost_before_shot)
        seen_tracks = [m.track for m in motions.values()]
        for p in [p for p in unseen if lost_before_shot(motions[p].track, seen_tracks, self.surface, window.t0_s,
                                                        window.t1_s)]:
            del unseen[p]
        sigma_after = {p: math.sqrt(m.fits[-1].pos_var(m.fits[-1].t_ref) + self.calibration_rms_mm ** 2)
                       for p, m in motions.items() if p in after}
        t0, t1 = round(t0, 6), round(t1, 6)
        meta: dict[str, Any] = {
            "source": "vision", "frames": [window.frame0, window.frame1],
            "sigma_mm": round(extraction.sigma_mm, 3),
            "event_notes": [e.note for e in events],
            # 1-sigma error of each resting place after the shot (fit + calibration), and the margin
            # within which a call on a position is a close call (2 sigma of the worst)
            "position_sigma_mm": {p: round(v, 3) for p, v in sorted(sigma_after.items())},
            "position_tolerance_mm": round(2.0 * max(sigma_after.values(), default=self.calibration_rms_mm), 3)}
        if extraction.clock_err_s > 0:  # the events' times are on the clock fitted through the stamps: each
            meta["clock_err_s"] = round(extraction.clock_err_s, 6)  # t_err is relative to it, this its own error
        # pieces that rolled out of the camera's view during the shot: where they stopped is unknown, so
        # they are in neither ``after`` nor any event; the referee (or the game state) must place them
        left_view = sorted(p for p, m in motions.items() if m.track.left == "view")
        if left_view:
            meta["left_view"] = left_view
        unseen.update({p: {"code": "pit_unseen", "piece": p, "t": round(float(m.t[-1]), 6),
                           "reason": "went under the hand and was not seen again: taken to be in the pit"}
                       for p, m in motions.items() if p in gone and m.track.pit_unseen})
        review = ([unseen[p] for p in sorted(unseen)] + self._unexplained_review(events, motions)
                  + self._touch_review(events, motions, window)
                  + self._gap_review(unexplained, window) + self._corner_review(events, motions)
                  + self._hidden_contact_review(events, motions) + self._unseen_rebound_review(events, motions)
                  + self._stroke_review(window, t0))
        review += self._strike_unseen_review(events, launches, window, review)
        if review:
            meta["review"] = review
        shot = Shot(self.game, t0, t1, _rounded(before), _rounded(after), tuple(_in_shot(e, t0, t1) for e in events),
                    player or None, meta=meta, where="vision shot")
        return VisionShot(shot, motions)

    def _struck_off(self, events: list[Event], motions: Mapping[str, Motion]) -> list[Event]:
        """Pieces struck at rest and never seen again (lost, no hand over them), sent over a cushion by the
        contact before the camera saw them move (``departure.struck_off``): their speed is what the contact
        took from the partner, whose own line is seen to change there (momentum, by the profile's masses)."""
        geo = self.profile.geometry
        if not self.surface.walls:
            return []
        out = []
        for p, m in motions.items():
            tr, last = m.track, m.fits[-1]
            if tr.left != "lost" or tr.left_hidden_by is not None or not last.rest or f"{tr.kind}_mass_g" not in geo:
                continue
            dt = m.frame_dt()
            e = min((e for e in events if e.kind == Kind.CONTACT and p in e.pieces() and e.t >= float(m.t[-1]) - 0.5 * dt),
                    key=lambda e: e.t, default=None)  # the first contact since it was last seen
            if e is None:
                continue
            q = e.b if e.a == p else e.a
            mq = motions.get(q)
            k = mq.change_near(e.t, dt) if mq is not None else None
            if k is None or f"{mq.track.kind}_mass_g" not in geo:
                continue
            push = mq.fits[k].vel(e.t) - mq.fits[k + 1].vel(e.t)
            v = push * (float(geo[f"{mq.track.kind}_mass_g"]) / float(geo[f"{tr.kind}_mass_g"]))
            gone = struck_off(last.p, m.radius, v, self.extractor.used_decel_mm_s2 or 0.0, self.surface)
            if gone is not None:
                side, t = gone
                out.append(Event(e.t + t, Kind.OFF, piece=p, side=side, t_err=max(e.t_err, 0.25 * t), confidence=0.8,
                                 note=f"struck by {q} at {float(np.hypot(*v)) / 1000:.1f} m/s and not seen again: "
                                      f"over the {side} cushion"))
        return out

    def _unexplained_review(self, events: list[Event], motions: Mapping[str, Motion]) -> list[dict]:
        """Where the game has no call for a launch no contact explains (Novuss: outside interference, which
        the rules leave to the referee), the referee is asked when the piece has no contact at all near
        its launch (within two frame intervals, the longest gap in its sightings there): most often a
        contact the frames did not show (a burst of frames lost over the stroke), which would change the
        first-contact call. A contact a few ms off the launch (a pawn struck against a cushion, whose
        outgoing line run back misses its rest) explains it."""
        if self.spec.unexplained_launch != Kind.EXTERNAL:
            return []
        out = []
        for e in events:
            if e.kind != Kind.EXTERNAL or e.piece not in motions:
                continue
            t = motions[e.piece].t
            i = int(np.searchsorted(t, e.t))
            dt = max(motions[e.piece].frame_dt(), float(t[min(i, len(t) - 1)] - t[max(i - 1, 0)]))
            if any(c.kind == Kind.CONTACT and e.piece in c.pieces() and abs(c.t - e.t) <= 2.0 * dt + 3.0 * c.t_err
                   and not _struck_by_it(e, c, motions, dt) for c in events):
                continue
            out.append(_launch_review(e))
        return out

    def _touch_review(self, events: list[Event], motions: Mapping[str, Motion], window: ShotWindow,
                      before_s: float = 0.3, margin_mm: float = 30.0) -> list[dict]:
        """Where an unexplained launch is a touch (Cvrnkaná: the flicking hand moves marbles), a touch no hand was
        seen to make is the referee's: a marble that left its rest unseen with no hand ever over it (else it is
        taken to have gone under the hand), or one seen setting off with no hand within ``margin_mm`` of it in
        the ``before_s`` up to its launch. Nothing seen moved it (most often a marble the camera did not find
        struck it), and the touch, which can make the call a 7a foul, is asked about (#16: under blue and green
        marbles at 30 frames/s, and under dark ones at 60, the flicked B10 was never found, and the A10 it knocked
        into the pit was called touched by B's hand, a confident 7a foul on a clean flick)."""
        if self.spec.unexplained_launch != Kind.TOUCH:
            return []
        out = []
        for e in events:
            if e.kind != Kind.TOUCH or e.piece not in motions:
                continue
            m = motions[e.piece]
            if e.note == "set off unseen":
                track = m.track
                by_hand = track.left_hidden_by == "hand" or track.pit_unseen or \
                    any(s.occluded == "hand" for s in track.states)
            elif e.note == "launch without contact":
                by_hand = window.hand_near(m.fit_at(e.t).pos(e.t), e.t, m.radius + margin_mm, before_s,
                                           2.0 * m.frame_dt())
            else:
                continue
            if not by_hand:
                out.append(_launch_review(e))
        return out

    def _strike_unseen_review(self, events: list[Event], launches, window: ShotWindow, asked: list[dict]) -> list[dict]:
        """Pieces set off in a stroke whose striker touched nothing the camera saw: only the striker, or a piece
        it set moving, sets a resting pawn off, so its contact was missed, and the calls that rest on it (first
        contact, no own pawn touched) are the referee's; the first piece to set off is named (#16: in the harsher
        simulator's 2 Mbit/s H.264 at 30 frames/s the bat broke the opening cluster between two frames, the
        pawns' launches were read as pushes inside the cluster, and 'no own pawn touched' was called, unflagged)."""
        s = self.spec.striker
        if s is None or window.starter != s or any(e.kind == Kind.CONTACT and s in e.pieces() for e in events):
            return []
        stroke = launches[s][0] if s in launches else -math.inf
        named = {r.get("piece") for r in asked}
        moved = sorted((t, p) for p, (t, _) in launches.items() if p != s and t >= stroke and p not in named)
        if not moved or any(r["code"] == "launch_unexplained" for r in asked):
            return []
        t, p = moved[0]
        return [_launch_review(Event(t, Kind.TOUCH, piece=p))]

    def _stroke_review(self, window: ShotWindow, t0: float) -> list[dict]:
        """A shot of a game with a striker that began with another piece setting off (``ShotSegmenter``): the
        stroke itself was not seen (the video began during it, or the striker was not recognised), so the
        calls that depend on it (first contact, the striking zone) are the referee's."""
        if self.spec.striker is None or window.starter == self.spec.striker:
            return []
        return [{"code": "stroke_unseen", "piece": window.starter, "t": round(t0, 6),
                 "reason": "set off with no stroke seen (the video began during the stroke, or the bat was not "
                           "recognised): the calls that depend on the stroke are the referee's"}]

    @staticmethod
    def _gap_review(unexplained: list[Event], window: ShotWindow) -> list[dict]:
        """A piece set off with no contact seen (a touch, outside interference, a push in a cluster) inside a
        span of missing frames (``ShotWindow.gaps``: lost, or a stalled stream): what set it off happened
        where the camera saw nothing, so the call the rules make of it is the referee's to confirm."""
        out = []
        for e in unexplained:
            gap = next(((a, b) for a, b in window.gaps if a - 1e-6 <= e.t <= b + 1e-6), None)
            if gap is None or e.note == "entered the view":
                continue
            out.append({"code": "frames_missing", "piece": e.piece or "+".join(e.pieces()), "t": round(e.t, 6),
                        "reason": f"set off while frames were missing ({(gap[1] - gap[0]) * 1000:.0f} ms): "
                                  "what set it off was not seen"})
        return out

    @staticmethod
    def _hidden_contact_review(events: list[Event], motions: Mapping[str, Motion], frames: float = 2.5) -> list[dict]:
        """A contact solved for an instant at which one of its pieces was under the hand or the cue (unseen for
        over ``frames`` frame intervals around it): the meeting is the lines run back into the dark, and the
        hand that hid the piece may as well have set it off (Cvrnkaná: a touch counts as the flick, 7d, where a
        contact makes it the struck marble), so the referee is asked."""
        out = []
        for e in events:
            if e.kind != Kind.CONTACT:
                continue
            for p in e.pieces():
                m = motions.get(p)
                if m is None or len(m.t) < 2:
                    continue
                i = int(np.searchsorted(m.t, e.t))
                if not 0 < i < len(m.t) or m.t[i] - m.t[i - 1] <= frames * m.frame_dt():
                    continue
                a, b = float(m.t[i - 1]), float(m.t[i])
                under = next((st.occluded for st in m.track.states
                              if not st.observed and st.occluded and a < st.t_s < b), None)
                if under is None:
                    continue
                other = next((q for q in e.pieces() if q != p), "the cushion")
                out.append({"code": "contact_unseen", "piece": p, "t": round(e.t, 6),
                            "reason": f"met {other} while under the {under}, unseen for {(b - a) * 1000:.0f} ms: "
                                      f"struck by it or set off by the {under}, the camera cannot tell"})
                break
        return out

    def _unseen_rebound_review(self, events: list[Event], motions: Mapping[str, Motion], slack: float = 1.25) -> list[dict]:
        """The striker unseen, between its launch and its first contact, for long enough to have touched a
        cushion on the way (the path from its sighting before the gap to the one after, by way of a cushion
        line, is no longer than its speed carries it in that time, with ``slack``): whether the stroke was
        direct or a ricochet (Novuss: the first contact's call depends on it) the camera cannot tell, so the
        referee is asked (#16: on the independent renderer at 30 frames/s a bat's rebound off the far cushion
        fell in such a gap and the ricochet was called a direct stroke, unflagged)."""
        striker, s = self.spec.striker, self.surface
        m = motions.get(striker) if striker else None
        if m is None or not s.walls or len(m.t) < 3:
            return []
        firsts = [e.t for e in events if e.kind == Kind.CONTACT and striker in e.pieces()]
        if not firsts or any(e.kind == Kind.CUSHION and e.piece == striker and e.t < min(firsts) for e in events):
            return []
        t_c, dt_frame, r = min(firsts), m.frame_dt(), m.radius
        lines = s.cushion_lines(r).values()
        for i in range(1, len(m.t) - 1):
            a, b = float(m.t[i]), float(m.t[i + 1])
            if a >= t_c or b - a <= 1.5 * dt_frame:
                continue
            pa, pb, prev = m.xy[i], m.xy[i + 1], m.xy[i - 1]
            reach = slack * float(np.hypot(*(pa - prev))) / max(a - float(m.t[i - 1]), 1e-6) * (b - a)
            for axis, line in lines:
                mirrored = pb.copy()
                mirrored[axis] = 2 * line - pb[axis]
                if float(np.hypot(*(pa - mirrored))) <= reach:
                    return [{"code": "rebound_unseen", "piece": striker, "t": round(a, 6),
                             "reason": f"unseen for {(b - a) * 1000:.0f} ms before its first contact, long enough to "
                                       f"have touched a cushion: a direct stroke or a ricochet, the camera cannot tell"}]
        return []

    def _corner_review(self, events: list[Event], motions: Mapping[str, Motion], ahead_s: float = 0.25,
                       step_s: float = 0.002) -> list[dict]:
        """A piece that left the board beside a pocket, where the camera cannot tell a drop into it from a
        jump over the cushion next to it (Novuss: a pawn in the pocket is pocketed, one over the cushion is
        off the board, and the calls differ): its straight path from where it was last seen, run ahead
        ``ahead_s``. Called off, it passes within a piece's radius of a pocket's mouth; called pocketed
        (never seen over the mouth), its centre crosses a cushion line first. Either way the referee is
        asked. Seen over the mouth, it dropped: no doubt."""
        s = self.surface
        if not s.pockets or not s.walls:
            return []
        out = []
        for e in events:
            if e.kind not in (Kind.POCKET, Kind.OFF) or e.piece not in motions:
                continue
            m = motions[e.piece]
            if e.kind == Kind.POCKET and any(s.pocket_at((float(x), float(y))) for x, y in m.xy[-3:]):
                continue
            t = float(m.t[-1])
            xy, v = np.asarray(m.xy[-1], float), np.asarray(m.fits[-1].vel(t), float)
            path = [tuple(float(c) for c in xy + v * k * step_s) for k in range(int(ahead_s / step_s) + 1)]
            over = next((i for i, q in enumerate(path) if s.outside_side(q, 0.0)), len(path))
            if e.kind == Kind.OFF and over == len(path):
                # its last line does not leave the board (the tracker's call came from its filtered velocity): off
                # beside a pocket is not what the camera saw (#16: on the independent renderer at 30 frames/s a pawn
                # off the cushion by the NE pocket, its last sighting fitted 12 mm off, was called off the board; it
                # dropped into the pocket)
                near = s.pocket_at(tuple(xy), s.pocket_radius_mm + 3.0 * m.radius)
            elif e.kind == Kind.OFF:
                near = next((s.pocket_at(q, m.radius) for q in path[:over + 1] if s.pocket_at(q, m.radius)), None)
            else:
                mouth = next((i for i, q in enumerate(path) if s.pocket_at(q)), len(path))
                near = e.pocket if over < mouth else None
            if near:
                out.append({"code": "pocket_or_off", "piece": e.piece, "t": round(e.t, 6),
                            "reason": f"left the board beside the {near} pocket: pocketed or over the cushion, "
                                      f"the camera cannot tell"})
        return out

    def _dropped(self, tr: Track) -> Track:
        """A track that ended lost as it was entering a pocket (``departure.pocket_in_reach``) ended in it: a
        piece that vanished at the mouth and was not seen again by the shot's end went in (one seen again
        would have been given back its track by the tracker, and not be lost here)."""
        pocket = pocket_in_reach(tr, self.surface) if self.surface.walls else None
        return replace(tr, left="pocket", left_where=pocket) if pocket else tr

    @staticmethod
    def _unseen(motions: Mapping[str, Motion], gone: set, before: Mapping) -> dict[str, dict]:
        """Pieces that were on the surface before the shot and whose track ended without a departure
        (lost, or taken by a hand): each with its last reliable place (the last resting stretch's fit, or
        the last sighting) and why it needs the referee. So is one whose departure was seen before the shot
        began (a tracking mistake on a piece at rest: its event is not the shot's), kept where it lay."""
        out = {}
        for p, m in motions.items():
            why = m.track.left
            if why in (None, "view") or p in gone or p not in before:
                continue
            last = m.fits[-1]
            at = last.p if last.rest else m.xy[-1]
            reason = {"pickup": "taken by a hand", "lost": "lost from sight"}.get(why)
            if reason is None:  # seen to leave (pocket, off, pit) before the shot began: no shot explains it, and a
                at, reason = before[p], "seen to leave the surface before the shot began"  # record must keep it
            out[p] = {"code": "piece_unseen", "piece": p, "at": [round(float(at[0]), 2), round(float(at[1]), 2)],
                      "t": round(float(m.t[-1]), 6), "moving": not last.rest, "reason": reason}
        return out

    def _launches(self, motions: Mapping[str, Motion]) -> dict[str, tuple[float, float]]:
        """Pieces that were resting and set off: (instant, 1-sigma) where the outgoing line leaves the rest."""
        out = {}
        for p, m in motions.items():
            if len(m.fits) < 2 or not m.fits[0].rest or not self._went(m):
                continue
            k = rest_left(m.fits, self.launch_mm)
            if k + 1 >= len(m.fits):
                continue
            rest, go = m.fits[k], m.fits[k + 1]
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
        dt = m.frame_dt()
        best = None
        for q, mq in motions.items():
            if q == p or mq.fits[0].rest or not t - dt / 2 <= mq.t[0] <= t + 2 * dt:
                continue
            gap = abs(float(np.hypot(*(mq.fits[0].pos(t) - here))) - m.radius - mq.radius)
            if gap <= share * (m.radius + mq.radius) and (best is None or gap < best[0]):
                best = (gap, q)
        return best[1] if best else None

    def _went(self, m: Motion) -> bool:
        """The piece left its first rest: slid farther than ``launch_mm`` from it (``launch.slid``: not a fit
        that jumped to another still place) and did not come back there without getting three times that far
        away (``launch.came_back``: fit noise), or left the surface."""
        if m.track.left in ("pit", "off", "view", "pocket"):
            return True
        return slid(m.fits, m.xy, self.launch_mm) and not came_back(m.fits, m.xy, self.launch_mm, 3.0 * self.launch_mm)

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
        out: list[Event] = []
        touch = self.spec.unexplained_launch == Kind.TOUCH
        for p, (t, err) in launches.items():
            if p == window.starter and p == self.spec.striker:
                continue  # the stroke itself: the cue sets the striker off
            # only a contact sets a resting piece off (its leaving the surface at once is no cause)
            # (the contact's own timing error counts too: a contact timed across dropped or jittered frames)
            cause = [e for e in events if e.kind == "contact" and p in e.pieces()
                     and abs(e.t - t) <= self.explain_s + 3 * math.hypot(err, e.t_err)]
            if cause:
                continue
            mate = self._neighbour(p, t, motions)
            newcomer = self._newcomer(p, t, motions) if not self.spec.sees_whole_field and mate is None else None
            if newcomer is not None:  # struck by a marble first seen just after, already on its way out
                a, b = sorted((p, newcomer))
                out.append(Event(t, Kind.CONTACT, a=a, b=b, t_err=err, confidence=0.5, note="struck as it came into view"))
            elif mate is not None and (not touch or mate in launches or not motions[mate].fits[0].rest):
                # set off inside a cluster: pushed by a neighbour within the frame interval; order unknown (where
                # the unexplained launch would be a touch, the neighbour must itself have been moving)
                a, b = sorted((p, mate))
                out.append(Event(t, Kind.CONTACT, a=a, b=b, t_err=max(err, motions[p].frame_dt() / 4), confidence=0.5,
                                 note="cluster launch"))
            elif touch:
                out.append(Event(t, Kind.TOUCH, piece=p, t_err=err, confidence=0.9, note="launch without contact"))
            elif p != self.spec.striker:
                out.append(Event(t, Kind.EXTERNAL, piece=p, effect="moved", t_err=err, confidence=0.7,
                                 note="launch without contact"))
        for p, m in motions.items() if touch or not self.spec.sees_whole_field else ():
            if touch and p not in launches and m.fits[0].rest and self._went(m) and \
                    not any(p in e.pieces() for e in events + out if e.kind not in ("pit", "off")):
                # set off where the camera did not see it go (under the hand): touched all the same (7d)
                out.append(Event(float(m.fits[0].t_last), Kind.TOUCH, piece=p, confidence=0.5, note="set off unseen"))
            if self.spec.sees_whole_field or p in launches or m.fits[0].rest:
                continue
            # rolled into view mid-shot: an opening flick from the start line
            out.append(Event(window.t0_s, Kind.TOUCH, piece=p, confidence=0.8, note="entered the view"))
        return out


def _one_per_meeting(events: list[Event], motions: Mapping[str, Motion]) -> list[Event]:
    """Contacts of the same two pieces solved less than a frame interval apart are one meeting read several ways
    (the fits on either side disagree): one contact whose time spans them all, its error half that span, so a
    call that rests on when it happened sees how little the frames tell (#16: under the harsher simulator's
    *everything* at 30 frames/s the bat's fits against its own pawn gave three contacts within 18 ms, the first
    7 ms early with a stated error of 0.6 ms, and a 0.5 ms near tie was called confidently)."""
    contacts = sorted((e for e in events if e.kind == Kind.CONTACT), key=lambda e: e.t)
    out = [e for e in events if e.kind != Kind.CONTACT]
    runs: dict[tuple[str, ...], list[list[Event]]] = {}
    for e in contacts:
        pair = tuple(sorted(e.pieces()))
        dt = max((motions[p].frame_dt() for p in pair if p in motions), default=0.0)
        chains = runs.setdefault(pair, [])
        if chains and e.t - chains[-1][-1].t < dt:
            chains[-1].append(e)
        else:
            chains.append([e])
    for chains in runs.values():
        for chain in chains:
            if len(chain) == 1:
                out.append(chain[0])
                continue
            lo = min(e.t - e.t_err for e in chain)
            hi = max(e.t + e.t_err for e in chain)
            out.append(replace(chain[0], t=(lo + hi) / 2, t_err=(hi - lo) / 2,
                               confidence=min(e.confidence for e in chain),
                               note=f"{len(chain)} readings of one contact ({(hi - lo) * 1000:.0f} ms apart)"))
    return out


def _struck_by_it(e: Event, c: Event, motions: Mapping[str, Motion], dt: float) -> bool:
    """Contact ``c``, after ``e.piece`` set off, is that piece striking one that lay still until then: it cannot be
    what set it off (#16: on the independent renderer the bat's contact with A1 was missed; A1's launch, 'explained'
    by its own contact with B1 40 ms later, went unasked, and the call, with the bat's line passing A1 to B1, was
    silently wrong)."""
    if c.t <= e.t:
        return False
    m = next((motions.get(p) for p in c.pieces() if p != e.piece), None)
    return m is not None and m.fits[0].rest and m.fits[0].t_last >= c.t - dt


def _launch_review(e: Event) -> dict:
    """The review item of a piece set off with nothing seen to set it off (``launch_unexplained``)."""
    return {"code": "launch_unexplained", "piece": e.piece, "t": round(e.t, 6),
            "reason": "set off with no contact seen (a contact the frames missed, or outside interference)"}


def _rounded(where: Mapping[str, Any]) -> dict[str, tuple[float, float]]:
    return {p: (round(float(x), 2), round(float(y), 2)) for p, (x, y) in sorted(where.items())}


def _in_shot(e: Event, t0: float, t1: float) -> Event:
    """The event as the shot carries it: its time to 0.1 µs within the shot's span, its uncertainty to 0.1 µs."""
    return replace(e, t=min(max(round(e.t, 7), t0), t1), t_err=round(max(e.t_err, 0.0), 7),
                   confidence=round(max(0.0, e.confidence), 4))


def _first_stamp(m) -> float:
    """When ``m``'s first stretch was first seen, by its frame's stamp (without its row's delay, ``vision.rows``):
    a piece in the shot's first frame was there at its start whatever its row."""
    first, rows = m.fits[0], m.track.rows()
    return first.t_first - (float(rows[first.i0]) if 0 <= first.i0 < len(rows) else 0.0)

