"""A piece seen at rest stays that piece while its shape is there, whatever its colour drifts to.

Colour tells the players apart, but on a small, dark piece in dim light a webcam's codec (its chroma at a
quarter of the pixels, smeared with the board's) and the noise move the measured colour by as much as two
classes lie apart: a marble that was named on one frame matches neither class well enough on the next, and
the detector would drop it while its outline is plainly there (#16: a green marble in a 0.3 light lost on
102 of 104 frames). :class:`RestHold` keeps the class each piece was last found under where it was found; a
well-fitted outline that no colour class claims, found within a fraction of a radius of such a place (the
piece has not moved), takes that class. A place is forgotten once no piece has been found there for
``keep_s``: the shape is gone (moved, pocketed, under a hand), and a piece put down there later is named by
its colour again.
"""
from __future__ import annotations

import math
from typing import Callable, Sequence

__all__ = ["RestHold", "MotionHold"]


class RestHold:
    """Where each class's pieces were last found (``claim`` lends the class, ``update`` records a frame)."""

    def __init__(self, radius_mm: Callable[[str], float], near_share: float = 0.25, keep_s: float = 1.0):
        self.radius_mm, self.near_share, self.keep_s = radius_mm, float(near_share), float(keep_s)
        # (centre, class, t_s last found)
        self._places: list[tuple[tuple[float, float], tuple[str, str | None], float]] = []

    def claim(self, centres_mm: Sequence, classes: list, kinds: Sequence[str]) -> list[int]:
        """Give each unclassified fit (``classes[j]`` None, ``centres_mm[j]`` not None, fitted as a piece of
        ``kinds[j]``) the class last found where it lies, if any; returns the indices given one."""
        given = []
        for j, (c, cls) in enumerate(zip(centres_mm, classes)):
            if c is None or cls is not None:
                continue
            best = None
            for at, held, _ in self._places:
                if held[0] != kinds[j]:
                    continue
                d = math.dist(at, (float(c[0]), float(c[1])))
                if d <= self.near_share * self.radius_mm(held[0]) and (best is None or d < best[0]):
                    best = (d, held)
            if best is not None:
                classes[j] = best[1]
                given.append(j)
        return given

    def places(self) -> list[tuple[tuple[float, float], str]]:
        """(board mm centre, kind) of every place a piece was found lately. The empty board's upkeep keeps
        off them (a faint piece blended into the empty board would vanish for good)."""
        return [(at, cls[0]) for at, cls, _ in self._places]

    def update(self, found: Sequence, t_s: float) -> None:
        """Record a frame's pieces (``(kind, owner, centre_mm, sharp)``): each piece's place replaces those
        within a fraction of a radius of it (whichever class stood there); a new place needs a ``sharp`` fit
        (a board's texture can fit a faint disc once, and held it would stay); places unseen for ``keep_s``
        are dropped."""
        places = [p for p in self._places if t_s - p[2] <= self.keep_s]
        fresh = []
        for kind, who, c, sharp in found:
            at = (float(c[0]), float(c[1]))
            near = self.near_share * self.radius_mm(kind)
            here = [math.dist(p[0], at) <= near for p in places]  # whoever stood there, this piece does now
            kept = any(h and p[1] == (kind, who) for h, p in zip(here, places))
            places = [p for h, p in zip(here, places) if not h]
            if sharp or kept:  # a place is made by a whole, sharp outline; a fainter one only keeps it
                fresh.append((at, (kind, who), t_s))
        self._places = places + fresh


class MotionHold:
    """A piece in motion stays that piece along its path while its colour drifts.

    Sliding across the board a piece passes under other light than where its colour was measured: a glossy
    bat under another lamp, a dark pawn through a dim corner, a little of the board smeared into it (#16: on
    the independent renderer a struck bat read 15 % to 5 tolerances outside its colour on half its frames,
    and its blob was taken for a hand). A well-fitted outline that no colour class claims, found where a
    piece of a class was heading (its last place moved on at its last speed, within ``reach_share`` of its
    radius and a third of the way it went since), takes that class if its colour lies within
    ``colour_slack`` times that class's tolerance and no other class is clearly nearer (by ``rival_share``,
    distances in each class's tolerance): continuity of shape and path first, colour to tell the players
    apart. Only fits the colour alone left unnamed are claimed (a piece whose colour says its class plainly
    keeps it). A piece not found for ``keep_s`` is forgotten, and is named by its colour again.

    A piece of a ``launched`` kind (the bat, struck by the cue) leaves its rest at a speed nothing before
    predicts, and the blur of that first flight is where its colour drifts most (#16: a bat struck at 2 m/s
    filmed at 30 frames/s went unseen for 12 frames to its first contact). Until its velocity is known (two
    sightings in motion) it is looked for anywhere it could have gone since, at up to ``launch_mm_s``, for
    ``launch_keep_s``; as there is one such piece, only where no fit this frame has its class by colour, and
    only the fit nearest its colour."""

    def __init__(self, radius_mm: Callable[[str], float], reach_share: float = 0.6, colour_slack: float = 4.0,
                 rival_share: float = 1.5, max_step_mm: float = 120.0, keep_s: float = 0.05,
                 launched: Sequence[str] = (), launch_mm_s: float = 9000.0, launch_keep_s: float = 0.2,
                 rest_mm_s: float = 30.0):
        self.radius_mm, self.reach_share = radius_mm, float(reach_share)
        self.colour_slack, self.rival_share, self.max_step_mm = float(colour_slack), float(rival_share), float(max_step_mm)
        self.keep_s = float(keep_s)
        self.launched, self.launch_mm_s, self.launch_keep_s = frozenset(launched), float(launch_mm_s), float(launch_keep_s)
        self.rest_mm_s = float(rest_mm_s)
        # (class, last place, when, velocity mm/s, whether that velocity was measured between two places in motion)
        self._moving: list[tuple[tuple[str, str | None], tuple[float, float], float, tuple[float, float], bool]] = []

    def _unsure(self, cls, known: bool) -> bool:
        """A piece of a launched kind whose velocity is not known: at rest, or first seen in flight."""
        return cls[0] in self.launched and not known

    def _heading(self, t_s: float) -> list[tuple[tuple[str, str | None], tuple[float, float], float, bool]]:
        """(class, where each piece should be now, how far it went since it was last found; or, for a launched
        piece whose velocity is not known, its last place and how far it could have gone, and True)."""
        out = []
        for cls, at, t, v, known in self._moving:
            dt = t_s - t
            if dt <= 0:
                continue
            if self._unsure(cls, known):
                if dt <= self.launch_keep_s:  # no frame came between to forget it: it is forgotten here
                    out.append((cls, at, self.launch_mm_s * dt, True))
            else:
                out.append((cls, (at[0] + v[0] * dt, at[1] + v[1] * dt), math.hypot(v[0], v[1]) * dt, False))
        return out

    def claim(self, centres_mm: Sequence, classes: list, colours: Sequence, kinds: Sequence[str], distances,
              t_s: float) -> list[int]:
        """Give each unclassified fit (``classes[j]`` None, ``centres_mm[j]`` not None, fitted as a piece of
        ``kinds[j]``, its colour ``colours[j]``) the class of a piece heading there, if its colour allows:
        ``distances(colour)`` is {class: distance in that class's tolerances}. Returns the indices given one."""
        heading = self._heading(t_s)
        given = []
        flights: dict = {}  # launched class -> (its colour distance, fit index): the nearest in colour only
        for j, (c, cls) in enumerate(zip(centres_mm, classes)):
            if c is None or cls is not None or not heading:
                continue
            d = distances(colours[j])
            for held, at, went, unsure in heading:
                if held not in d or d[held] > self.colour_slack or \
                        any(d[held] > self.rival_share * v for k, v in d.items() if k != held):
                    continue
                reach = self.reach_share * self.radius_mm(held[0]) + (went if unsure else went / 3.0)
                if math.dist(at, (float(c[0]), float(c[1]))) > reach:
                    continue
                if unsure:
                    if held not in classes and (held not in flights or d[held] < flights[held][0]):
                        flights[held] = (d[held], j)
                    continue
                classes[j] = held
                given.append(j)
                break
        for held, (_, j) in flights.items():
            if classes[j] is None and held not in classes:
                classes[j] = held
                given.append(j)
        return sorted(given)

    def update(self, found: Sequence, t_s: float) -> None:
        """Record a frame's pieces, ``(class, centre_mm)``: each continues the nearest piece of its class
        heading within ``max_step_mm`` of it (its velocity from the two places), or starts at rest; a piece
        not found stays, on its way, for ``keep_s``."""
        left = list(self._moving)
        now = []
        for cls, c in found:
            at = (float(c[0]), float(c[1]))
            best = None
            for k, (held, was, t, v, known) in enumerate(left):
                dt = t_s - t
                if held != cls or dt <= 0:
                    continue
                if self._unsure(held, known):  # where it could have gone, not where it was heading
                    d = max(math.dist(was, at) - self.launch_mm_s * dt, 0.0)
                else:
                    d = math.dist((was[0] + v[0] * dt, was[1] + v[1] * dt), at)
                if d <= self.max_step_mm and (best is None or d < best[0]):
                    best = (d, k)
            v, known = (0.0, 0.0), False
            if best is not None:
                _, was, t, v_was, _ = left.pop(best[1])
                v = ((at[0] - was[0]) / (t_s - t), (at[1] - was[1]) / (t_s - t))
                # measured from a rest, a velocity is a lower bound (the piece set off some time after)
                known = math.hypot(*v_was) > self.rest_mm_s and math.hypot(*v) > self.rest_mm_s
            now.append((cls, at, t_s, v, known))
        self._moving = now + [m for m in left if t_s - m[2] <= (self.launch_keep_s if self._unsure(m[0], m[4]) else self.keep_s)]
