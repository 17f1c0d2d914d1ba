"""Simple players that play whole games shot by shot, with seeded aiming noise.

Novuss: for every own light pawn and every pocket, the ghost-ball point (where the bat's centre must be
at contact to send the pawn at the pocket) is aimed at from spots along the own striking zone; the
clearest, straightest shot wins, struck hard enough to carry the pawn in. Cvrnkaná: opening flicks from
the start line, then the own marble nearest the pit is flicked at it with the speed to stop there.
Between shots the session referees the record and carries out the ruling, so the game follows the rules.
"""
from __future__ import annotations

import math
import random

from rules.novuss import Novuss

from .physics_cvrnkana import G_MM_S2, start_lines_mm
from .physics_novuss import G_MM_S2 as G_NOVUSS
from .physics_novuss import NovussPhysics
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
        if best is None:  # nothing pottable: hit the nearest own pawn straight
            own = [p for k, p in pawns.items() if k[0] == player] or list(pawns.values())
            bat = (0.0, bat_y)
            p = min(own, key=lambda q: math.hypot(q[0], q[1] - bat_y))
            d = math.hypot(p[0], p[1] - bat_y)
            return bat, ((p[0]) / d * 3000.0, (p[1] - bat_y) / d * 3000.0)
        _, bat, w, d_bg, d_pp, cut = best
        v_pawn = math.sqrt(2 * self.decel * d_pp) * 1.3 + 300.0
        v_hit = v_pawn / (1.19 * max(math.cos(math.radians(cut)), 0.3))
        speed = min(5000.0, max(1500.0, math.sqrt(v_hit ** 2 + 2 * self.decel * d_bg)))
        speed *= 1 + self.rng.gauss(0, self.speed_noise)
        a = math.atan2(w[1], w[0]) + math.radians(self.rng.gauss(0, self.aim_noise_deg))
        return bat, (speed * math.cos(a), speed * math.sin(a))


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
            marble = sorted(behind, key=lambda m: int(m[1:]))[0]
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
