"""Cvrnkaná field physics: glass marbles rolling on uneven ground towards a pit.

Rolling resistance is a constant deceleration; the ground is a smooth random height field (a few
sinusoids, seeded) whose slope pulls a rolling marble with 5/7 g sin(slope). The pit decides when a
marble's centre crosses its rim: the marble has ``chord / speed`` seconds over the hole, and it drops in
when that is long enough to fall ``pit_drop_diameters`` marble diameters (so the capture speed for a
central crossing is ``D / sqrt(2 * drop / g)``, about 1.9 m/s for a 100 mm pit and 14 mm marbles);
a faster marble skips over, losing some speed on the far rim. Field frame: mm, origin at the pit centre.
"""
from __future__ import annotations

import math
import random
from dataclasses import asdict, dataclass
from typing import Mapping

from .frames import ClipRecorder, PieceInfo, SAMPLE_S
from .world import Disc, ShotResult, World, entry_fraction

__all__ = ["CvrnkanaPhysics", "Field", "marble_pieces", "start_lines_mm", "Ground", "rest_spot"]

G_MM_S2 = 9810.0


@dataclass(frozen=True)
class CvrnkanaPhysics:
    """Physical constants of marbles on packed soil (defaults; not part of the field profile)."""

    roll_mu: float = 0.06  # rolling resistance: a 2 m/s flick rolls ~3.4 m on flat ground
    glass_density_g_cm3: float = 2.5
    restitution_marbles: float = 0.9
    friction_marbles: float = 0.05
    slope_amplitude_mm: float = 1.5  # height of each of the ground's sinusoids
    slope_waves: int = 4
    pit_drop_diameters: float = 1.0
    skip_keep: float = 0.8  # speed kept when a marble skips over the pit
    dt_s: float = 0.001
    max_shot_s: float = 20.0

    def to_dict(self) -> dict:
        return asdict(self)


def marble_pieces(geometry: Mapping[str, float]) -> tuple[PieceInfo, ...]:
    n, r = int(geometry["marbles_per_player"]), geometry["marble_diameter_mm"] / 2
    return tuple(PieceInfo(f"{p}{i}", "marble", p, r) for p in "AB" for i in range(1, n + 1))


def start_lines_mm(geometry: Mapping[str, float]) -> dict[str, tuple[tuple[float, float], tuple[float, float]]]:
    """The two start lines, side by side ``start_line_gap_mm`` apart, ``start_line_distance_mm`` from the
    pit towards -y; player A's on the left (-x)."""
    y, gap, length = -geometry["start_line_distance_mm"], geometry["start_line_gap_mm"] / 2, geometry["start_line_length_mm"]
    return {"A": ((-gap - length, y), (-gap, y)), "B": ((gap, y), (gap + length, y))}


@dataclass(frozen=True)
class Ground:
    """Height field h(x, y) = sum A sin(k.p + phase) in mm, and its slope."""

    waves: tuple[tuple[float, float, float, float], ...]  # amplitude, kx, ky, phase

    @classmethod
    def random(cls, seed: int, physics: CvrnkanaPhysics) -> "Ground":
        rng = random.Random(seed * 7919 + 17)
        waves = []
        for _ in range(physics.slope_waves):
            wavelength = rng.uniform(800.0, 3000.0)
            theta = rng.uniform(0, 2 * math.pi)
            k = 2 * math.pi / wavelength
            waves.append((physics.slope_amplitude_mm * rng.uniform(0.5, 1.0), k * math.cos(theta), k * math.sin(theta),
                          rng.uniform(0, 2 * math.pi)))
        return cls(tuple(waves))

    def height(self, x: float, y: float) -> float:
        return sum(a * math.sin(kx * x + ky * y + ph) for a, kx, ky, ph in self.waves)

    def gradient(self, x: float, y: float) -> tuple[float, float]:
        gx = gy = 0.0
        for a, kx, ky, ph in self.waves:
            c = a * math.cos(kx * x + ky * y + ph)
            gx += c * kx
            gy += c * ky
        return gx, gy


class Field:
    """The marbles now in play (on the field) and in the pit. ``flick`` plays one flick."""

    def __init__(self, geometry: Mapping[str, float], physics: CvrnkanaPhysics = CvrnkanaPhysics(), seed: int = 0):
        self.geometry = geometry
        self.physics = physics
        self.seed = seed
        self.ground = Ground.random(seed, physics)
        self.pit_r = geometry["pit_diameter_mm"] / 2
        self.r = geometry["marble_diameter_mm"] / 2
        self.mass_g = physics.glass_density_g_cm3 * 4.0 / 3.0 * math.pi * (self.r / 10.0) ** 3
        self.infos = {p.id: p for p in marble_pieces(geometry)}
        self.on_field: dict[str, tuple[float, float]] = {}
        self.in_pit: dict[str, tuple[float, float]] = {}  # where it lies at the bottom
        self._shots = 0

    def place(self, positions: Mapping[str, tuple[float, float]]) -> None:
        for pid, xy in positions.items():
            if pid not in self.infos:
                raise ValueError(f"unknown Cvrnkaná marble {pid!r} (this field has {len(self.infos) // 2} per player)")
            self.on_field[pid] = (float(xy[0]), float(xy[1]))
            self.in_pit.pop(pid, None)

    def take(self, piece: str) -> None:
        self.on_field.pop(piece, None)

    def capture_speed_mm_s(self, chord_mm: float) -> float:
        """Fastest crossing of a ``chord_mm`` stretch of the pit that still drops the marble in."""
        drop = self.physics.pit_drop_diameters * 2 * self.r
        return chord_mm / math.sqrt(2 * drop / G_MM_S2)

    def _world(self) -> World:
        ph = self.physics
        w = World(ph.dt_s, ph.roll_mu * G_MM_S2, 0.0, seed=self.seed * 1000003 + self._shots)
        e, f = math.sqrt(ph.restitution_marbles), math.sqrt(ph.friction_marbles)
        for pid, xy in sorted(self.on_field.items()):
            info = self.infos[pid]
            w.add_disc(Disc(pid, "marble", info.owner, self.r, self.mass_g), xy, e, f)
        k = 5.0 / 7.0 * G_MM_S2
        ground = self.ground

        def slope(pid, body):
            gx, gy = ground.gradient(body.position.x, body.position.y)
            return -k * gx, -k * gy

        w.accel_hook = slope
        w.rolling_follow = True
        return w

    def flick(self, velocities: Mapping[str, tuple[float, float]], t0_s: float,
              recorder: ClipRecorder | None = None, touch: bool = True, max_s: float | None = None) -> ShotResult:
        """Give the marbles ``velocities`` at ``t0_s`` (the flicked one, or a hand nudge) and run until all
        rest. ``touch`` adds a touch event at ``t0_s`` for every marble set moving."""
        for pid in velocities:
            if pid not in self.on_field:
                raise ValueError(f"{pid} is not on the field")
        w = self._world()
        self._shots += 1
        w.start(t0_s)
        before = dict(self.on_field)
        for pid, v in velocities.items():
            w.kick(pid, v)
            if touch:
                w.emit(t0_s, {"kind": "touch", "piece": pid})
        gone: dict[str, str] = {}
        crossing: dict[str, tuple[float, float]] = {}  # pid -> (t_entry, dip start)
        sinking: dict[str, tuple[float, tuple[float, float], tuple[float, float], tuple[float, float]]] = {}
        every = max(1, round(SAMPLE_S / w.dt_s))
        if recorder is not None:
            recorder.sample(t0_s, {k: (x, y, 0.0, 0.0, True) for k, (x, y) in before.items()})
        n = 0
        while True:
            prev = w.positions(moving_only=True)
            w.step()
            n += 1
            self._pit(w, prev, gone, crossing, sinking)
            if recorder is not None and (n % every == 0 or not w.moving()):
                self._sample(w, recorder, crossing, sinking)
            if not w.moving() or w.t_s - t0_s > (self.physics.max_shot_s if max_s is None else max_s):
                break
        t1 = w.t_s + 0.3 if sinking else w.t_s  # let the last marble settle at the bottom
        if recorder is not None:
            self._sample(w, recorder, crossing, sinking, t1)
        self.on_field = {k: (b.position.x, b.position.y) for k, b in w.bodies.items()}
        return ShotResult(t0_s, t1, before, dict(self.on_field), tuple(w.sorted_events()), gone)

    def _pit(self, w: World, prev, gone, crossing, sinking) -> None:
        t_prev = w.t_s - w.dt_s
        R = self.pit_r
        for pid in sorted(w.active | set(crossing)):
            body = w.bodies.get(pid)
            if body is None:
                continue
            x1, y1 = body.position
            inside = math.hypot(x1, y1) < R
            if pid in crossing:
                if not inside:  # reached the far rim at speed: skips on
                    del crossing[pid]
                    body.velocity = body.velocity * self.physics.skip_keep
                elif pid not in w.active:  # came to rest over the hole: it drops
                    del crossing[pid]
                    self._capture(w, pid, w.t_s, (x1, y1), (0.0, 0.0), gone, sinking)
                continue
            if not inside:
                continue
            x0, y0 = prev.get(pid, (x1, y1))
            s = entry_fraction((x0, y0), (x1, y1), (0.0, 0.0), R)
            ex, ey = x0 + s * (x1 - x0), y0 + s * (y1 - y0)
            v = body.velocity
            speed = v.length
            chord = 0.0
            if speed > 0:
                perp = abs(ex * v.y / speed - ey * v.x / speed)
                chord = 2 * math.sqrt(max(R * R - perp * perp, 0.0))
            t_in = t_prev + s * w.dt_s
            if chord == 0.0 or speed < self.capture_speed_mm_s(chord):
                self._capture(w, pid, t_in, (ex, ey), (v.x, v.y), gone, sinking)
            else:
                crossing[pid] = (t_in, 0.0)

    def _capture(self, w: World, pid: str, t_in: float, at, v, gone, sinking) -> None:
        w.emit(t_in, {"kind": "pit", "piece": pid})
        gone[pid] = "pit"
        rest = rest_spot(pid, self.pit_r - self.r, self.seed)
        sinking[pid] = (t_in, at, v, rest)
        self.in_pit[pid] = rest
        w.remove_disc(pid)

    def _sample(self, w: World, recorder: ClipRecorder, crossing, sinking, t_s: float | None = None) -> None:
        t = w.t_s if t_s is None else t_s
        states = {}
        for k in sorted(w.active | set(crossing)):
            b = w.bodies.get(k)
            if b is None:
                continue
            z = 0.0
            if k in crossing:
                dt = t - crossing[k][0]
                z = -min(0.5 * G_MM_S2 * dt * dt, self.r)
            states[k] = (b.position.x, b.position.y, z, b.angle, True)
        bottom = -(self.geometry["pit_depth_mm"] - self.r)
        for pid, (t_in, (ex, ey), (vx, vy), rest) in sinking.items():
            dt = max(0.0, t - t_in)
            f = min(1.0, dt / 0.25)
            x = ex + (rest[0] - ex) * f + vx * 0.02 * (1 - f)
            y = ey + (rest[1] - ey) * f + vy * 0.02 * (1 - f)
            states[pid] = (x, y, max(bottom, -0.5 * G_MM_S2 * dt * dt), 0.0, True)
        recorder.sample(t, states)


def rest_spot(pid: str, reach: float, seed: int) -> tuple[float, float]:
    """A marble's resting place at the bottom of the pit (seeded by piece, so it is reproducible)."""
    rng = random.Random(f"{seed}:{pid}")
    a, d = rng.uniform(0, 2 * math.pi), reach * math.sqrt(rng.uniform(0, 1))
    return (d * math.cos(a), d * math.sin(a))
