"""The per-frame state stream the renderer draws: what every piece and occluder is doing at an instant.

The physics records every piece at a fixed sample interval (``SAMPLE_S``, 1 ms, every other 0.5 ms
physics step) plus extra samples around placements. :meth:`Clip.states_at` interpolates linearly
between the two samples around any instant, so the renderer can take as many sub-frame states as its
motion blur needs (at 60 fps and 8 sub-frames, one state every 2.1 ms). A piece that is invisible in
either neighbouring sample, or that jumps (a placement), is not interpolated: the earlier sample is used.

Board frame (Novuss): mm, origin at the board centre, +y towards player B. Field frame (Cvrnkaná): mm,
origin at the pit centre, start lines towards -y. ``z_mm`` is the height of the piece's centre above its
resting height: > 0 flying over a cushion, < 0 sinking into a pocket or the pit.
"""
from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from typing import Iterator, Mapping

import numpy as np

__all__ = ["PieceState", "Occluder", "SimFrame", "PieceInfo", "OccluderTrack", "Clip", "ClipRecorder",
           "pocket_centres_mm", "SAMPLE_S"]

SAMPLE_S = 0.001


@dataclass(frozen=True)
class PieceState:
    id: str
    kind: str  # 'pawn' | 'bat' | 'marble'
    owner: str | None  # 'A' | 'B' | None (the bat)
    x_mm: float
    y_mm: float
    z_mm: float
    angle_rad: float
    radius_mm: float
    visible: bool


@dataclass(frozen=True)
class Occluder:
    """Something over the surface that hides pieces.

    cue: ``x_mm, y_mm`` is the tip, ``direction_rad`` the stroke direction (butt -> tip), the shaft runs
    ``length_mm`` back from the tip and is ``width_mm`` wide at the tip.
    hand: ``x_mm, y_mm`` is the palm centre, ``radius_mm`` its size, the arm leaves the picture in the
    direction ``direction_rad + pi`` (towards the player).  ``z_mm`` is the height above the surface.
    """

    kind: str  # 'cue' | 'hand'
    x_mm: float
    y_mm: float
    direction_rad: float
    z_mm: float = 0.0
    length_mm: float = 0.0
    width_mm: float = 0.0
    radius_mm: float = 0.0


@dataclass(frozen=True)
class SimFrame:
    index: int
    t_s: float
    pieces: tuple[PieceState, ...]
    occluders: tuple[Occluder, ...]

    def piece(self, piece_id: str) -> PieceState:
        return next(p for p in self.pieces if p.id == piece_id)


@dataclass(frozen=True)
class PieceInfo:
    id: str
    kind: str
    owner: str | None
    radius_mm: float


@dataclass(frozen=True)
class OccluderTrack:
    """An occluder animated by keyframes ``(t_s, x_mm, y_mm, direction_rad, z_mm)``; present from the
    first keyframe to the last, moving linearly in between."""

    kind: str
    keys: tuple[tuple[float, float, float, float, float], ...]
    length_mm: float = 0.0
    width_mm: float = 0.0
    radius_mm: float = 0.0

    def at(self, t_s: float) -> Occluder | None:
        times = [k[0] for k in self.keys]
        if not times or t_s < times[0] or t_s > times[-1]:
            return None
        i = max(0, min(bisect.bisect_right(times, t_s) - 1, len(times) - 2)) if len(times) > 1 else 0
        a, b = self.keys[i], self.keys[min(i + 1, len(self.keys) - 1)]
        f = 0.0 if b[0] == a[0] else (t_s - a[0]) / (b[0] - a[0])
        v = [a[j] + f * (b[j] - a[j]) for j in range(1, 5)]
        return Occluder(self.kind, v[0], v[1], v[2], v[3], self.length_mm, self.width_mm, self.radius_mm)


def pocket_centres_mm(geometry: Mapping[str, float]) -> dict[str, tuple[float, float]]:
    """Novuss pockets: circles of ``pocket_radius_mm`` centred on the corners of the playing surface;
    a piece is captured when its centre enters the circle. The cushions stop where the circle cuts them."""
    h = geometry["surface_mm"] / 2
    return {"SW": (-h, -h), "SE": (h, -h), "NW": (-h, h), "NE": (h, h)}


class Clip:
    """Sampled tracks of every piece plus occluder tracks: the whole episode as a function of time."""

    def __init__(self, pieces: tuple[PieceInfo, ...], times_s: np.ndarray, xyza: np.ndarray, visible: np.ndarray,
                 occluders: tuple[OccluderTrack, ...] = ()):
        self.pieces = pieces
        self.times_s = np.asarray(times_s, float)
        self.xyza = np.asarray(xyza, float)  # (samples, pieces, 4): x, y, z, angle
        self.visible = np.asarray(visible, bool)  # (samples, pieces)
        self.occluders = occluders
        if len(self.times_s) == 0:
            raise ValueError("a clip needs at least one sample")

    @property
    def t_start_s(self) -> float:
        return float(self.times_s[0])

    @property
    def t_end_s(self) -> float:
        return float(self.times_s[-1])

    def n_frames(self, fps: float) -> int:
        return int(math.floor((self.t_end_s - self.t_start_s) * fps + 1e-9)) + 1

    def states_at(self, t_s: float, index: int = -1) -> SimFrame:
        times = self.times_s
        t = min(max(t_s, times[0]), times[-1])
        i = int(np.searchsorted(times, t, side="right")) - 1
        i = min(max(i, 0), len(times) - 1)
        j = min(i + 1, len(times) - 1)
        span = times[j] - times[i]
        f = 0.0 if span <= 0 else (t - times[i]) / span
        a, b = self.xyza[i], self.xyza[j]
        va, vb = self.visible[i], self.visible[j]
        out = []
        for k, info in enumerate(self.pieces):
            jump = abs(b[k, 0] - a[k, 0]) + abs(b[k, 1] - a[k, 1]) > 50.0 * max(span / SAMPLE_S, 1.0)
            if va[k] and vb[k] and not jump:
                x, y, z, ang = a[k] + f * (b[k] - a[k])
            else:
                x, y, z, ang = a[k]
            out.append(PieceState(info.id, info.kind, info.owner, float(x), float(y), float(z), float(ang),
                                  info.radius_mm, bool(va[k])))
        occ = tuple(o for o in (tr.at(t_s) for tr in self.occluders) if o is not None)
        return SimFrame(index, float(t_s), tuple(out), occ)

    def frame(self, index: int, fps: float) -> SimFrame:
        return self.states_at(self.t_start_s + index / fps, index)

    def frames(self, fps: float) -> Iterator[SimFrame]:
        for i in range(self.n_frames(fps)):
            yield self.frame(i, fps)


class ClipRecorder:
    """Collects samples while the physics runs and hands out the finished :class:`Clip`."""

    def __init__(self, pieces: tuple[PieceInfo, ...]):
        self.pieces = pieces
        self.index = {p.id: k for k, p in enumerate(pieces)}
        self._t: list[float] = []
        self._s: list[np.ndarray] = []
        self._v: list[np.ndarray] = []
        self._last = np.zeros((len(pieces), 4))
        self._last_vis = np.zeros(len(pieces), bool)
        self.occluders: list[OccluderTrack] = []

    @property
    def t_last_s(self) -> float:
        return self._t[-1] if self._t else 0.0

    def sample(self, t_s: float, states: Mapping[str, tuple[float, float, float, float, bool]]) -> None:
        """Record ``{id: (x, y, z, angle, visible)}`` at ``t_s``; pieces not given keep their last state."""
        if self._t and t_s < self._t[-1] - 1e-12:
            raise ValueError(f"samples must go forward in time ({t_s} < {self._t[-1]})")
        row, vis = self._last.copy(), self._last_vis.copy()
        for pid, (x, y, z, ang, v) in states.items():
            k = self.index[pid]
            row[k] = (x, y, z, ang)
            vis[k] = v
        if self._t and t_s <= self._t[-1] + 1e-12:
            self._s[-1], self._v[-1] = row, vis
        else:
            self._t.append(t_s)
            self._s.append(row)
            self._v.append(vis)
        self._last, self._last_vis = row, vis

    def hold(self, t_s: float) -> None:
        """Everything stays as it is until ``t_s``."""
        self.sample(t_s, {})

    def state(self, piece_id: str) -> tuple[float, float, float, float, bool]:
        k = self.index[piece_id]
        x, y, z, a = self._last[k]
        return float(x), float(y), float(z), float(a), bool(self._last_vis[k])

    def clip(self) -> Clip:
        return Clip(self.pieces, np.array(self._t), np.array(self._s), np.array(self._v), tuple(self.occluders))
