"""Simple players that play whole games shot by shot, with seeded aiming noise.

Novuss: for every own light pawn and every pocket, the ghost-ball point (where the bat's centre must be
at contact to send the pawn at the pocket) is aimed at from spots along the own striking zone; the
clearest, straightest shot wins, struck hard enough to carry the pawn in. With nothing to pot it
strikes the nearest own light pawn straight, or, when all its pawns are dark, banks the bat off the
opposite cushion onto one (a ricochet may hit a dark pawn). The bat always goes on a free spot of the
zone: the nearest one when the wanted spot is taken. Cvrnkaná: opening flicks from
the start line, then the own marble nearest the pit is flicked at it with the speed to stop there.
Between shots the session referees the record and carries out the ruling, so the game follows the rules.
"""
from __future__ import annotations

import math
import random

from rules.game import piece_key
from rules.novuss import Novuss

from .physics_cvrnkana import G_MM_S2, start_lines_mm
from .physics_novuss import G_MM_S2 as G_NOVUSS
from .physics_novuss import NovussPhysics
from .placement import nearest_free_spot
from .session import CvrnkanaSession, NovussSession

__all__ = ["NovussPolicy", "CvrnkanaPolicy", "play_novuss_set", "play_cvrnkana_game"]


def _seg_dist(p, a, b) -> float:
    ax, ay = b[0] - a[0], b[1] - a[1]
    n = ax * ax + ay * ay
    f = 0.0 if n == 0 else max(0.0, min(1.0, ((p[0] - a[0]) * ax + (p[1] - a[1]) * ay) / n))
    return math.hypot(p[0] - a[0] - f * ax, p[1] - a[1] - f * ay)


class NovussPolicy:
    def __init__(self, geometry, seed: int = 0, aim_noise_deg: float = 0.6, speed_noise: float = 0.08):
        self.g = geometry
        self.rules = Novuss(geometry)
        self.rng = random.Random(seed)
        self.aim_noise_deg, self.speed_noise = aim_noise_deg, speed_noise
        self.r_bat, self.r_pawn = geometry["bat_diameter_mm"] / 2, geometry["pawn_diameter_mm"] / 2
        self.decel = NovussPhysics().slide_mu * G_NOVUSS

    def choose(self, pawns: dict, player: str) -> tuple[tuple[float, float], tuple[float, float]]:
        """(bat position, bat velocity) for ``player`` with the pawns at ``pawns``."""
        h = self.g["surface_mm"] / 2
        x0, x1, y0, y1 = self.rules.zone_rect(player)
        bat_y = (y0 + y1) / 2
        reach = self.r_bat + self.r_pawn
        pockets = [(-h, h), (h, h), (-h, -h), (h, -h)]
        best = None
        for pid, p in pawns.items():
            if pid[0] != player or self.rules.is_dark(p, player):
                continue
            for c in pockets:
                d_pp = math.hypot(c[0] - p[0], c[1] - p[1])
                u = ((c[0] - p[0]) / d_pp, (c[1] - p[1]) / d_pp)
                ghost = (p[0] - reach * u[0], p[1] - reach * u[1])
                if any(_seg_dist(q, p, c) < 2 * self.r_pawn + 1 for k, q in pawns.items() if k != pid):
                    continue
                for bx in [x0 + 30 + i * (x1 - x0 - 60) / 12 for i in range(13)]:
                    bat = (bx, bat_y)
                    if any(math.hypot(q[0] - bx, q[1] - bat_y) < reach + 2 for q in pawns.values()):
                        continue
                    d_bg = math.hypot(ghost[0] - bx, ghost[1] - bat_y)
                    if d_bg < 1:
                        continue
                    w = ((ghost[0] - bx) / d_bg, (ghost[1] - bat_y) / d_bg)
                    cut = math.degrees(math.acos(max(-1.0, min(1.0, w[0] * u[0] + w[1] * u[1]))))
                    if cut > 55 or any(_seg_dist(q, bat, ghost) < reach + 1 for k, q in pawns.items() if k != pid):
                        continue
                    score = cut + 0.02 * (d_bg + d_pp)
                    if best is None or score < best[0]:
                        best = (score, bat, w, d_bg, d_pp, cut)
        if best is None:
            return self._fallback(pawns, player)
        _, bat, w, d_bg, d_pp, cut = best
        v_pawn = math.sqrt(2 * self.decel * d_pp) * 1.3 + 300.0
        v_hit = v_pawn / (1.19 * max(math.cos(math.radians(cut)), 0.3))
        speed = min(5000.0, max(1500.0, math.sqrt(v_hit ** 2 + 2 * self.decel * d_bg)))
        speed *= 1 + self.rng.gauss(0, self.speed_noise)
        a = math.atan2(w[1], w[0]) + math.radians(self.rng.gauss(0, self.aim_noise_deg))
        return bat, (speed * math.cos(a), speed * math.sin(a))

    def bat_spot(self, pawns: dict, player: str, want: tuple[float, float]) -> tuple[float, float]:
        """The free spot of the zone nearest ``want`` (the whole bat inside the zone, 2 mm clear of
        every pawn)."""
        x0, x1, y0, y1 = self.rules.zone_rect(player)
        rb = self.r_bat
        spot = nearest_free_spot(want, rb, [(q, self.r_pawn) for q in pawns.values()],
                                 (x0 + rb, x1 - rb, y0 + rb, y1 - rb), clearance_mm=2.0)
        if spot is None:
            raise RuntimeError(f"no free spot for the bat in {player}'s striking zone")
        return spot

    def _fallback(self, pawns: dict, player: str):
        """Nothing to pot: strike the nearest own light pawn straight from a free spot (a clear path
        preferred); all own pawns dark: bank the bat off the opposite cushion onto the nearest one."""
        x0, x1, y0, y1 = self.rules.zone_rect(player)
        bat_y = (y0 + y1) / 2
        own = {k: p for k, p in pawns.items() if k[0] == player} or dict(pawns)
        light = {k: p for k, p in own.items() if not self.rules.is_dark(p, player)}
        if light:
            spots = {self.bat_spot(pawns, player, (x0 + 30 + i * (x1 - x0 - 60) / 12, bat_y)) for i in range(13)}
            reach = self.r_bat + self.r_pawn
            options = []
            for k, p in sorted(light.items()):
                for bat in sorted(spots):
                    d = math.hypot(p[0] - bat[0], p[1] - bat[1])
                    blocked = any(_seg_dist(q, bat, p) < reach + 1 for j, q in pawns.items() if j != k)
                    options.append((blocked, d, bat, p))
            blocked, d, bat, p = min(options)
            u = ((p[0] - bat[0]) / d, (p[1] - bat[1]) / d)
            return bat, (u[0] * 3000.0, u[1] * 3000.0)
        h = self.g["surface_mm"] / 2
        wall = (h - self.r_bat) * (1 if player == "A" else -1)  # the bat centre's line at the far cushion
        reach = self.r_bat + self.r_pawn
        spots = {self.bat_spot(pawns, player, (x0 + 30 + i * (x1 - x0 - 60) / 12, bat_y)) for i in range(13)}
        options = []
        for k, p in sorted(own.items()):
            mirror = (p[0], 2 * wall - p[1])
            for bat in sorted(spots):
                f = (wall - bat[1]) / (mirror[1] - bat[1])
                bounce = (bat[0] + f * (mirror[0] - bat[0]), wall)
                blocked = any(_seg_dist(q, bat, bounce) < reach + 1 for q in pawns.values()) or \
                    any(_seg_dist(q, bounce, p) < reach + 1 for j, q in pawns.items() if j != k)
                options.append((blocked, math.dist(bat, mirror), bat, p, mirror, bounce))
        blocked, d, bat, p, mirror, bounce = min(options)
        d1 = math.dist(bat, bounce)
        keep = NovussPhysics().restitution_cushion
        v_in = math.sqrt(2 * self.decel * (d - d1) + 800.0 ** 2) / keep
        speed = min(5000.0, math.sqrt(v_in ** 2 + 2 * self.decel * d1))
        return bat, ((mirror[0] - bat[0]) / d * speed, (mirror[1] - bat[1]) / d * speed)


def play_novuss_set(profile, seed: int, max_shots: int = 300, session: NovussSession | None = None) -> NovussSession:
    """Play one set from the opening to its end (or ``max_shots``)."""
    s = session or NovussSession(profile, seed)
    if s.engine is None:
        raise RuntimeError("a whole Novuss set needs the rule engine (rules.novuss)")
    if s.state is None:
        s.setup(s.engine.opening())
    policy = NovussPolicy(profile.geometry, seed)
    while not s.over and len(s.shots) < max_shots:
        player = s.state.to_move
        pawns = {k: v for k, v in s.table.on_board.items() if k != "bat"}
        bat, v = policy.choose(pawns, player)
        s.place_bat(bat, player)
        s.shoot(player, v)
    return s


class CvrnkanaPolicy:
    def __init__(self, geometry, seed: int = 0, aim_noise_deg: float = 1.5, speed_noise: float = 0.1):
        self.g = geometry
        self.rng = random.Random(seed)
        self.aim_noise_deg, self.speed_noise = aim_noise_deg, speed_noise

    def choose(self, session: CvrnkanaSession, player: str):
        """(marble, start position or None, velocity)."""
        st = session.state
        behind = [m for m in st.behind if m[0] == player]
        if behind:
            marble = sorted(behind, key=piece_key)[0]
            (x0, y), (x1, _) = start_lines_mm(self.g)[player]
            at = (self.rng.uniform(x0 + 20, x1 - 20), y - session.field.r - 1.0)
        else:
            own = {m: p for m, p in session.field.on_field.items() if m[0] == player}
            marble = min(own, key=lambda m: math.hypot(*own[m]))
            at = None
        start = at or session.field.on_field[marble]
        d = math.hypot(*start)
        speed = math.sqrt(2 * session.field.physics.roll_mu * G_MM_S2 * d + 200.0 ** 2)
        speed *= 1 + self.rng.gauss(0, self.speed_noise)
        a = math.atan2(-start[1], -start[0]) + math.radians(self.rng.gauss(0, self.aim_noise_deg))
        return marble, at, (speed * math.cos(a), speed * math.sin(a))


def play_cvrnkana_game(profile, seed: int, max_flicks: int = 400) -> CvrnkanaSession:
    s = CvrnkanaSession(profile, seed)
    if s.engine is None:
        raise RuntimeError("a whole Cvrnkaná game needs the rule engine (rules.cvrnkana)")
    policy = CvrnkanaPolicy(profile.geometry, seed)
    while not s.over and len(s.shots) < max_flicks:
        player = s.state.to_move
        marble, at, v = policy.choose(s, player)
        s.flick(player, marble, v, at=at)
    return s
