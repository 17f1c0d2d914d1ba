"""A pymunk space of sliding or rolling discs that reports exact contact instants.

Chipmunk moves the bodies first and then finds the overlaps, so when a contact callback runs the two
shapes already overlap by ``depth`` and still carry their pre-impact velocities: the contact happened
``depth / closing_speed`` before the end of the step. That puts contact times inside the 0.5 ms step,
well below the 1 ms that decides "at the same time" in Novuss.

The impulses, though, change the velocities only at the end of the step, after each body has moved the
whole step with its old velocity. So that the motion agrees with the reported instant (a struck pawn's
outgoing line runs back to where it was at the contact time, not to the step's end), each body whose
velocity a contact changed is then moved by ``(v_after - v_before) * (t_step_end - t_contact)``: as if it
had moved with the old velocity up to the contact and with the new one since. A body pushed on through
pieces resting against the struck one (no impact of its own) takes the earliest instant of its cluster.

Table friction is not a pymunk force: each step every moving body loses ``decel_mm_s2 * dt`` of speed
(Coulomb friction, constant deceleration), and a game-specific hook may add accelerations (slopes).
Units: mm, s, g.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Callable, Mapping

import pymunk

__all__ = ["Disc", "World", "WallHit", "ShotResult", "entry_fraction"]

PIECE, WALL = 1, 2
_REST = (pymunk.Vec2d(0.0, 0.0), 0.0)


@dataclass(frozen=True)
class Disc:
    id: str
    kind: str
    owner: str | None
    radius_mm: float
    mass_g: float


@dataclass(frozen=True)
class WallHit:
    """A piece reached a wall (cushion) this step; ``t_s`` is the interpolated contact instant."""

    t_s: float
    piece: str
    side: str
    normal_speed_mm_s: float


@dataclass(frozen=True)
class ShotResult:
    t0_s: float
    t1_s: float
    before: Mapping[str, tuple[float, float]]
    after: Mapping[str, tuple[float, float]]
    events: tuple[Mapping, ...]  # ordered; contacts and cushions carry their closing 'speed' (mm/s)
    gone: Mapping[str, str] = field(default_factory=dict)  # piece -> 'pocket' | 'off'


def entry_fraction(p0, p1, c, r) -> float:
    """Fraction of the step at which the segment p0->p1 enters the circle (c, r)."""
    dx, dy = p1[0] - p0[0], p1[1] - p0[1]
    fx, fy = p0[0] - c[0], p0[1] - c[1]
    a = dx * dx + dy * dy
    b = 2 * (fx * dx + fy * dy)
    cc = fx * fx + fy * fy - r * r
    if a == 0 or cc <= 0:
        return 0.0
    disc = b * b - 4 * a * cc
    if disc < 0:
        return 1.0
    return min(1.0, max(0.0, (-b - math.sqrt(disc)) / (2 * a)))


class World:
    """Discs in a zero-gravity pymunk space with fixed steps, friction and timed contact events.

    ``events`` collects ``(t_s, order, dict)`` for contacts and cushions; subclasses add pockets, pits
    and pieces leaving the surface. ``wall_filter(hit) -> bool`` may decide that a piece goes over a
    wall instead of bouncing (return False to let it through; the subclass removes it after the step).
    """

    def __init__(self, dt_s: float, decel_mm_s2: float, spin_decel_per_mm: float, contact_eps_mm_s: float = 20.0,
                 seed: int = 0):
        self.space = pymunk.Space()
        self.space.gravity = (0.0, 0.0)
        self.space.iterations = 30
        self.dt_s = dt_s
        self.decel_mm_s2 = decel_mm_s2
        self.spin_decel_per_mm = spin_decel_per_mm
        self.contact_eps_mm_s = contact_eps_mm_s
        self.rng = random.Random(seed)
        self.t0_s = 0.0
        self.steps = 0
        self.discs: dict[str, Disc] = {}
        self.bodies: dict[str, pymunk.Body] = {}
        self._shape_id: dict[pymunk.Shape, str] = {}
        self._wall_side: dict[pymunk.Shape, str] = {}
        self._impact: dict[tuple[str, str], bool] = {}
        self._order = 0
        self.events: list[tuple[float, int, dict]] = []
        self.wall_filter: Callable[[WallHit], bool] | None = None
        self.through_wall: dict[str, WallHit] = {}
        self.active: set[str] = set()  # bodies that move; resting ones cost nothing per step
        self._touched: set[str] = set()
        self.rolling_follow = False  # rolling spheres: the spin they keep after a contact drives them on
        self._hit_now: set[str] = set()
        self._hit_t: dict[str, float] = {}  # body -> earliest impact instant in this step
        self._links: list[tuple[str, str]] = []  # piece pairs in contact in this step
        self.accel_hook: Callable[[str, pymunk.Body], tuple[float, float]] | None = None
        self.space.on_collision(PIECE, PIECE, pre_solve=self._pre_piece, separate=self._separate)
        self.space.on_collision(PIECE, WALL, pre_solve=self._pre_wall, separate=self._separate)

    @property
    def t_s(self) -> float:
        """Time at the end of the last step (counted in whole steps, so it does not drift)."""
        return self.t0_s + self.steps * self.dt_s

    def start(self, t0_s: float) -> None:
        self.t0_s, self.steps = t0_s, 0

    # ----- building ---------------------------------------------------------------------------------
    def add_wall(self, a: tuple[float, float], b: tuple[float, float], side: str, elasticity: float,
                 friction: float) -> None:
        seg = pymunk.Segment(self.space.static_body, a, b, 0.0)
        seg.elasticity, seg.friction, seg.collision_type = elasticity, friction, WALL
        self.space.add(seg)
        self._wall_side[seg] = side

    def add_disc(self, disc: Disc, xy: tuple[float, float], elasticity: float, friction: float,
                 angle_rad: float = 0.0) -> None:
        if disc.id in self.bodies:
            raise ValueError(f"{disc.id} is already on the surface")
        body = pymunk.Body(disc.mass_g, pymunk.moment_for_circle(disc.mass_g, 0.0, disc.radius_mm))
        body.position, body.angle = xy, angle_rad
        shape = pymunk.Circle(body, disc.radius_mm)
        shape.elasticity, shape.friction, shape.collision_type = elasticity, friction, PIECE
        self.space.add(body, shape)
        self.discs[disc.id] = disc
        self.bodies[disc.id] = body
        self._shape_id[shape] = disc.id

    def kick(self, piece: str, velocity: tuple[float, float]) -> None:
        self.bodies[piece].velocity = velocity
        self.active.add(piece)

    def remove_disc(self, piece: str) -> None:
        self.active.discard(piece)
        body = self.bodies.pop(piece)
        for shape in list(body.shapes):
            self.space.remove(shape)
            self._shape_id.pop(shape, None)
        self.space.remove(body)
        self._impact = {k: v for k, v in self._impact.items() if piece not in k}

    def move_disc(self, piece: str, xy: tuple[float, float]) -> None:
        body = self.bodies[piece]
        body.position, body.velocity, body.angular_velocity = xy, (0.0, 0.0), 0.0
        self.space.reindex_shapes_for_body(body)
        self.active.discard(piece)

    def positions(self, moving_only: bool = False) -> dict[str, tuple[float, float]]:
        ids = sorted(self.active) if moving_only else sorted(self.bodies)
        return {k: tuple(self.bodies[k].position) for k in ids}

    def emit(self, t_s: float, event: dict) -> None:
        self._order += 1
        self.events.append((t_s, self._order, {"t": t_s, **event}))

    # ----- contacts ---------------------------------------------------------------------------------
    def _contact_time(self, arb: pymunk.Arbiter, closing: float) -> float:
        pts = arb.contact_point_set.points
        depth = max(0.0, -min(p.distance for p in pts)) if pts else 0.0
        back = min(self.dt_s, depth / closing) if closing > 0 else 0.0
        return self.t0_s + (self.steps + 1) * self.dt_s - back

    def _closing(self, arb: pymunk.Arbiter) -> float:
        a, b = arb.bodies
        n = arb.normal
        return (a.velocity - b.velocity).dot(n)

    def _pre_piece(self, arb: pymunk.Arbiter, space, data) -> None:
        sa, sb = arb.shapes
        ida, idb = self._shape_id.get(sa), self._shape_id.get(sb)
        if ida is None or idb is None:
            return
        key = (min(ida, idb), max(ida, idb))
        self._touched.update((ida, idb))
        self._links.append(key)
        closing = self._closing(arb)
        hitting = closing > self.contact_eps_mm_s
        if hitting and not self._impact.get(key):
            a, b = (ida, idb) if ida == "bat" or (idb != "bat" and ida < idb) else (idb, ida)
            t = self._contact_time(arb, closing)
            self.emit(t, {"kind": "contact", "a": a, "b": b, "speed": closing})
            self._hit_now.update((ida, idb))
            self._hit_at(t, ida, idb)
        self._impact[key] = hitting

    def _pre_wall(self, arb: pymunk.Arbiter, space, data) -> None:
        sa, sb = arb.shapes
        piece_shape, wall_shape = (sa, sb) if sa in self._shape_id else (sb, sa)
        pid = self._shape_id.get(piece_shape)
        if pid is None:
            return
        if pid in self.through_wall:
            arb.process_collision = False
            return
        side = self._wall_side[wall_shape]
        key = (pid, "#" + side)
        closing = abs(self._closing(arb))
        body = self.bodies[pid]
        approaching = body.velocity.dot(self._outward(side)) > self.contact_eps_mm_s
        if approaching and not self._impact.get(key):
            hit = WallHit(self._contact_time(arb, closing), pid, side, closing)
            if self.wall_filter is not None and not self.wall_filter(hit):
                self.through_wall[pid] = hit
                arb.process_collision = False
                return
            self.emit(hit.t_s, {"kind": "cushion", "piece": pid, "side": side, "speed": closing})
            self._hit_at(hit.t_s, pid)
        self._impact[key] = approaching

    def _hit_at(self, t_s: float, *ids: str) -> None:
        for pid in ids:
            self._hit_t[pid] = min(t_s, self._hit_t.get(pid, t_s))

    def _separate(self, arb: pymunk.Arbiter, space, data) -> None:
        ids = [self._shape_id.get(s) or "#" + self._wall_side.get(s, "?") for s in arb.shapes]
        self._impact.pop((min(ids), max(ids)), None)
        self._impact.pop((ids[0], ids[1]), None)
        self._impact.pop((ids[1], ids[0]), None)

    @staticmethod
    def _outward(side: str) -> pymunk.Vec2d:
        return {"N": pymunk.Vec2d(0, 1), "S": pymunk.Vec2d(0, -1), "E": pymunk.Vec2d(1, 0), "W": pymunk.Vec2d(-1, 0)}[side]

    # ----- stepping ---------------------------------------------------------------------------------
    def moving(self) -> bool:
        return bool(self.active)

    def _friction(self, ids, h: float) -> None:
        for pid in ids:
            body = self.bodies.get(pid)
            if body is None:
                continue
            vx, vy = body.velocity
            if self.accel_hook is not None:
                ax, ay = self.accel_hook(pid, body)
                vx, vy = vx + ax * h, vy + ay * h
            speed = math.hypot(vx, vy)
            if speed > 0.0:
                keep = max(0.0, speed - self.decel_mm_s2 * h) / speed
                body.velocity = (vx * keep, vy * keep)
            w = body.angular_velocity
            if w != 0.0:
                dw = self.spin_decel_per_mm / self.discs[pid].radius_mm * h
                body.angular_velocity = 0.0 if abs(w) <= dw else w - math.copysign(dw, w)

    def step(self) -> None:
        """Half a step of friction (and the game's accelerations), one pymunk step, the other half:
        pymunk then moves each body with its mid-step velocity, exact for a constant deceleration.

        Only moving bodies are touched: a resting piece stays put (friction exceeds any slope force)
        until a contact wakes it."""
        dt = self.dt_s
        moving = sorted(self.active)
        self._friction(moving, dt / 2)
        pre = {k: (self.bodies[k].velocity, self.bodies[k].angular_velocity) for k in moving}
        self._hit_now.clear()
        self._touched.clear()
        self._hit_t.clear()
        self._links.clear()
        self.space.step(dt)
        self.steps += 1
        if self.rolling_follow:
            # A rolling sphere keeps its spin through a contact; ground friction then brings it back to
            # rolling at 5/7 of its new velocity plus 2/7 of the old one (the billiard "follow").
            for pid in sorted(self._hit_now):
                body = self.bodies.get(pid)
                if body is not None:
                    body.velocity = (body.velocity * 5.0 + pre.get(pid, _REST)[0] * 2.0) / 7.0
        self._move_to_contact(pre)
        self._friction(sorted(self.active | self._touched), dt / 2)
        for pid in sorted(self.active | self._touched):
            body = self.bodies.get(pid)
            if body is not None and (body.velocity.x != 0.0 or body.velocity.y != 0.0 or body.angular_velocity != 0.0):
                self.active.add(pid)
            else:
                self.active.discard(pid)

    def _move_to_contact(self, pre: Mapping[str, tuple[pymunk.Vec2d, float]]) -> None:
        """Shift each body whose velocity changed in this step's contacts so that the change takes
        effect at the contact instant instead of the step's end (see the module docstring).

        A resting body holds zero velocity (it leaves ``active`` only then), so one missing from
        ``pre`` had none before the step."""
        if not self._hit_t:
            return
        when = dict(self._hit_t)
        changed = True
        while changed:  # pieces resting against a struck one are pushed at its instant
            changed = False
            for a, b in self._links:
                for x, y in ((a, b), (b, a)):
                    if x in when and y not in self._hit_t and when[x] < when.get(y, math.inf):
                        when[y], changed = when[x], True
        t_end = self.t_s
        for pid, t_c in sorted(when.items()):
            body = self.bodies.get(pid)
            if body is None:
                continue
            lead = max(0.0, t_end - t_c)
            v0, w0 = pre.get(pid, _REST)
            dv, dw = body.velocity - v0, body.angular_velocity - w0
            if lead > 0.0 and (dv.x != 0.0 or dv.y != 0.0 or dw != 0.0):
                body.position += dv * lead
                body.angle += dw * lead

    def sorted_events(self) -> list[dict]:
        return [e for _, _, e in sorted(self.events, key=lambda item: (item[0], item[1]))]
