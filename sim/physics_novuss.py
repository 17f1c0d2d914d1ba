"""Novuss board physics: pawns and bat sliding on a powdered board, cushions, corner pockets.

Sizes and masses come from the table profile; the physical constants that the profile does not hold
(friction, restitution, when a piece jumps a cushion) are the named defaults of :class:`NovussPhysics`.
A shot is simulated in 0.5 ms steps until every piece has stopped; the result is the shot's events with
exact instants, the positions before and after, and 1 ms samples for the renderer.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Mapping

from .frames import ClipRecorder, PieceInfo, SAMPLE_S, pocket_centres_mm
from .world import Disc, ShotResult, WallHit, World, entry_fraction

__all__ = ["NovussPhysics", "NovussTable", "novuss_pieces"]

G_MM_S2 = 9810.0


@dataclass(frozen=True)
class NovussPhysics:
    """Physical constants of a powdered Novuss board (defaults; not part of the table profile)."""

    slide_mu: float = 0.12  # Coulomb sliding friction: a 3 m/s piece slides ~3.8 m
    restitution_pieces: float = 0.9
    restitution_cushion: float = 0.7
    friction_pieces: float = 0.05
    friction_cushion: float = 0.1
    off_speed_mm_s: float = 3000.0  # a piece reaching a cushion faster than this may jump it
    off_chance: float = 0.0  # ... with this probability (seeded)
    off_pieces: tuple[str, ...] | None = None  # which pieces may jump (None: all)
    dt_s: float = 0.0005
    max_shot_s: float = 20.0

    def to_dict(self) -> dict:
        return asdict(self)


def novuss_pieces(geometry: Mapping[str, float]) -> tuple[PieceInfo, ...]:
    r_pawn, r_bat = geometry["pawn_diameter_mm"] / 2, geometry["bat_diameter_mm"] / 2
    pawns = tuple(PieceInfo(f"{p}{i}", "pawn", p, r_pawn) for p in "AB" for i in range(1, 9))
    return (PieceInfo("bat", "bat", None, r_bat),) + pawns


class NovussTable:
    """The board with the pieces now on it. ``strike`` plays one shot and records it into ``recorder``."""

    def __init__(self, geometry: Mapping[str, float], physics: NovussPhysics = NovussPhysics(), seed: int = 0):
        self.geometry = geometry
        self.physics = physics
        self.seed = seed
        self.half = geometry["surface_mm"] / 2
        self.pocket_r = geometry["pocket_radius_mm"]
        self.pockets = pocket_centres_mm(geometry)
        self.infos = {p.id: p for p in novuss_pieces(geometry)}
        self.mass = {"pawn": geometry["pawn_mass_g"], "bat": geometry["bat_mass_g"]}
        self.on_board: dict[str, tuple[float, float]] = {}
        self.angles: dict[str, float] = {}
        self._shots = 0

    def place(self, positions: Mapping[str, tuple[float, float]]) -> None:
        """Put pieces on the board (replacing where they were); everything else stays."""
        for pid, xy in positions.items():
            if pid not in self.infos:
                raise ValueError(f"unknown Novuss piece {pid!r}")
            self.on_board[pid] = (float(xy[0]), float(xy[1]))
            self.angles.setdefault(pid, 0.0)

    def take(self, piece: str) -> None:
        self.on_board.pop(piece, None)

    def _world(self) -> World:
        ph = self.physics
        e_piece = math.sqrt(ph.restitution_pieces)
        f_piece = math.sqrt(ph.friction_pieces)
        w = World(ph.dt_s, ph.slide_mu * G_MM_S2, 4.0 / 3.0 * ph.slide_mu * G_MM_S2,
                  seed=self.seed * 1000003 + self._shots)
        h, gap = self.half, self.pocket_r
        for side, a, b in (("S", (-h + gap, -h), (h - gap, -h)), ("N", (-h + gap, h), (h - gap, h)),
                           ("W", (-h, -h + gap), (-h, h - gap)), ("E", (h, -h + gap), (h, h - gap))):
            w.add_wall(a, b, side, ph.restitution_cushion / e_piece, ph.friction_cushion / f_piece)
        for pid, xy in sorted(self.on_board.items()):
            info = self.infos[pid]
            w.add_disc(Disc(pid, info.kind, info.owner, info.radius_mm, self.mass[info.kind]), xy, e_piece, f_piece,
                       self.angles.get(pid, 0.0))

        def may_jump(hit: WallHit) -> bool:
            if ph.off_chance <= 0.0 or hit.normal_speed_mm_s < ph.off_speed_mm_s:
                return True
            if ph.off_pieces is not None and hit.piece not in ph.off_pieces:
                return True
            return w.rng.random() >= ph.off_chance

        w.wall_filter = may_jump
        return w

    def strike(self, piece: str, velocity_mm_s: tuple[float, float], t0_s: float,
               recorder: ClipRecorder | None = None, max_s: float | None = None) -> ShotResult:
        """The cue gives ``piece`` ``velocity_mm_s`` at ``t0_s``; run until everything rests (or ``max_s``,
        for the trial runs that aim scripted shots)."""
        if piece not in self.on_board:
            raise ValueError(f"{piece} is not on the board")
        w = self._world()
        self._shots += 1
        w.start(t0_s)
        before = dict(self.on_board)
        w.kick(piece, velocity_mm_s)
        gone: dict[str, str] = {}
        ghosts: dict[str, tuple[float, tuple[float, float], tuple[float, float], str]] = {}
        every = max(1, round(SAMPLE_S / w.dt_s))
        if recorder is not None:
            recorder.sample(t0_s, {k: (x, y, 0.0, self.angles.get(k, 0.0), True) for k, (x, y) in before.items()})
        n = 0
        while True:
            prev = w.positions(moving_only=True)
            w.step()
            n += 1
            self._captures(w, prev, gone, ghosts)
            if recorder is not None and (n % every == 0 or not w.moving()):
                self._sample(w, recorder, ghosts)
            if not w.moving() or w.t_s - t0_s > (self.physics.max_shot_s if max_s is None else max_s):
                break
        t1 = w.t_s
        for pid in list(ghosts):
            ghosts[pid] = ghosts[pid][:3] + ("done",)
        if recorder is not None:
            self._sample(w, recorder, ghosts)
        self.on_board = {k: (b.position.x, b.position.y) for k, b in w.bodies.items()}
        self.angles.update({k: b.angle for k, b in w.bodies.items()})
        return ShotResult(t0_s, t1, before, dict(self.on_board), tuple(w.sorted_events()), gone)

    def _captures(self, w: World, prev: Mapping[str, tuple[float, float]], gone: dict, ghosts: dict) -> None:
        """Pieces whose centre entered a pocket this step, and pieces that went over a cushion."""
        t_prev = w.t_s - w.dt_s
        reach = self.half - self.pocket_r
        for pid in sorted(w.active):
            body = w.bodies[pid]
            p1 = (body.position.x, body.position.y)
            p0 = prev.get(pid, p1)
            if p0 == p1:
                continue
            near_corner = abs(p1[0]) > reach and abs(p1[1]) > reach
            for name, c in sorted(self.pockets.items()):
                if near_corner and math.hypot(p1[0] - c[0], p1[1] - c[1]) < self.pocket_r:
                    s = entry_fraction(p0, p1, c, self.pocket_r)
                    t = t_prev + s * w.dt_s
                    w.emit(t, {"kind": "pocket", "piece": pid, "pocket": name})
                    gone[pid] = "pocket"
                    ghosts[pid] = (t, (p0[0] + s * (p1[0] - p0[0]), p0[1] + s * (p1[1] - p0[1])),
                                   tuple(body.velocity), "pocket")
                    w.remove_disc(pid)
                    break
            else:
                hit = w.through_wall.get(pid)
                h = self.half
                beyond = abs(p1[0]) > h + 5.0 or abs(p1[1]) > h + 5.0
                if hit is not None and beyond:
                    w.emit(hit.t_s, {"kind": "off", "piece": pid, "side": hit.side})
                elif hit is None and beyond:  # slipped past a cushion end at a corner
                    side = _side_of(p1, h)
                    hit = WallHit(w.t_s, pid, side, 0.0)
                    w.emit(w.t_s, {"kind": "off", "piece": pid, "side": side})
                else:
                    continue
                gone[pid] = "off"
                ghosts[pid] = (hit.t_s, p1, tuple(body.velocity), "off")
                w.through_wall.pop(pid, None)
                w.remove_disc(pid)

    def _sample(self, w: World, recorder: ClipRecorder, ghosts: dict) -> None:
        states = {k: (w.bodies[k].position.x, w.bodies[k].position.y, 0.0, w.bodies[k].angle, True) for k in sorted(w.active)}
        for pid, (t_gone, xy, v, how) in ghosts.items():
            states[pid] = _ghost(t_gone, xy, v, how, w.t_s, self.pockets, self.pocket_r)
        recorder.sample(w.t_s, states)


def _side_of(p, h) -> str:
    if abs(p[0]) - h > abs(p[1]) - h:
        return "E" if p[0] > 0 else "W"
    return "N" if p[1] > 0 else "S"


def _ghost(t_gone, xy, v, how, t, pockets, pocket_r):
    """Where a pocketed or jumping piece is drawn after it left the surface."""
    dt = max(0.0, t - t_gone)
    if how == "done":
        return (xy[0], xy[1], -100.0, 0.0, False)
    if how == "pocket":
        # slides on towards the pocket's middle while it drops
        x, y = xy[0] + v[0] * dt * 0.5, xy[1] + v[1] * dt * 0.5
        c = min(pockets.values(), key=lambda q: math.hypot(q[0] - xy[0], q[1] - xy[1]))
        d = math.hypot(x - c[0], y - c[1])
        if d > pocket_r:
            x, y = c[0] + (x - c[0]) * pocket_r / d, c[1] + (y - c[1]) * pocket_r / d
        z = -0.5 * G_MM_S2 * dt * dt
        return (x, y, z, 0.0, z > -25.0)
    speed = math.hypot(*v)
    z = 0.25 * speed * dt - 0.5 * G_MM_S2 * dt * dt
    return (xy[0] + v[0] * dt, xy[1] + v[1] * dt, max(z, -200.0), 0.0, dt < 0.4)
