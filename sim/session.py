"""A simulated stretch of play: physics, the timeline the renderer draws, shot records and rulings.

A session owns one table (or field), one :class:`~sim.frames.ClipRecorder` and, when it can be
imported, the rule engine. Each shot becomes a shot record (validated by ``rules.record.parse_record``)
that is refereed at once; the ruling's actions (penalty pawns, returns, marbles back to the line) are
then carried out on the physical pieces by a hand, so the next shot starts where the rules say.
A hand never puts a piece on top of another: the bat is refused on a taken spot, and a piece whose
ruled spot is taken goes to the nearest free one (see :meth:`NovussSession.carry_out`).
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, Mapping

from rules.record import parse_record

from .frames import ClipRecorder, OccluderTrack
from .physics_cvrnkana import CvrnkanaPhysics, Field, marble_pieces, rest_spot
from .physics_novuss import NovussPhysics, NovussTable, novuss_pieces
from .placement import nearest_free_spot, overlapping
from .world import ShotResult

__all__ = ["SimShot", "NovussSession", "CvrnkanaSession", "Episode", "PremiseError", "check", "to_record"]

POS_DECIMALS = 2
TIME_DECIMALS = 6
HAND_R_MM = 45.0
REFEREE_S = 1.0  # from the last motion of a shot to a hand carrying out its ruling (the call is read first)
CUE = dict(length_mm=1300.0, width_mm=12.0)


@dataclass(frozen=True)
class SimShot:
    record: Mapping[str, Any]  # the shot record as JSON
    ruling: Mapping[str, Any] | None  # the engine's ruling as JSON (None without an engine)
    codes: tuple[str, ...]
    result: ShotResult  # raw physics result (events carry speeds)
    extra: Mapping[str, Any] = field(default_factory=dict)


def _r(v: float, d: int) -> float:
    out = round(float(v), d)
    return 0.0 if out == 0 else out


def to_record(game: str, player: str | None, res: ShotResult, before=None, after=None) -> dict:
    """The shot record for a physics result, rounded (0.01 mm, 1 us) and validated by the parser."""
    pts = lambda m: {k: [_r(x, POS_DECIMALS), _r(y, POS_DECIMALS)] for k, (x, y) in sorted(m.items())}
    events = []
    for e in res.events:
        ev = {k: v for k, v in e.items() if k != "speed"}
        ev["t"] = _r(ev["t"], TIME_DECIMALS)
        events.append(ev)
    rec = {"game": game, "t0": _r(res.t0_s, TIME_DECIMALS), "t1": _r(res.t1_s, TIME_DECIMALS),
           "before": pts(res.before if before is None else before), "after": pts(res.after if after is None else after),
           "events": events}
    if player:
        rec["player"] = player
    parse_record(rec, "simulated shot", game)
    return rec


class _Session:
    game = ""

    def __init__(self, profile, seed: int, use_engine: bool = True):
        self.profile = profile
        self.geometry = profile.geometry
        self.seed = seed
        self.shots: list[SimShot] = []
        self.engine = None
        self.state = None
        #: the engine's game state before each refereed shot, in order: what a bench judges every record
        #: (vision's and the truth's) against
        self.states_before: list = []
        if use_engine:
            try:
                from rules import engine_for
                self.engine = engine_for(self.game, self.geometry)
            except (ImportError, AttributeError):
                self.engine = None

    def referee(self, record: Mapping[str, Any]):
        self.states_before.append(self.state)
        if self.engine is None or self.state is None:
            return None
        self.state, ruling = self.engine.apply(self.state, parse_record(dict(record), "simulated shot", self.game))
        return ruling

    @property
    def over(self) -> bool:
        return self.state is not None and getattr(self.state, "outcome", None) is not None

    def _hand(self, t0: float, frm: tuple[float, float], to: tuple[float, float], direction: float,
              dwell_s: float = 0.25, move_s: float = 0.4) -> float:
        """A hand comes from ``frm`` to ``to``, rests, and goes back; returns the instant it arrives."""
        keys = ((t0, frm[0], frm[1], direction, 60.0), (t0 + move_s, to[0], to[1], direction, 25.0),
                (t0 + move_s + dwell_s, to[0], to[1], direction, 25.0),
                (t0 + 2 * move_s + dwell_s, frm[0], frm[1], direction, 60.0))
        self.rec.occluders.append(OccluderTrack("hand", keys, radius_mm=HAND_R_MM))
        return t0 + move_s


class NovussSession(_Session):
    """Novuss: player A shoots from the S side (+y), B from the N side (-y)."""

    game = "novuss"

    def __init__(self, profile, seed: int = 0, physics: NovussPhysics = NovussPhysics(), use_engine: bool = True,
                 first: str = "A"):
        super().__init__(profile, seed, use_engine)
        self.table = NovussTable(self.geometry, physics, seed)
        self.rec = ClipRecorder(novuss_pieces(self.geometry))
        self.first = first
        self.half = self.geometry["surface_mm"] / 2

    def setup(self, pawns: Mapping[str, tuple[float, float]]) -> None:
        """Pawns on the board at t = 0 (the bat is placed by hand before each stroke)."""
        self.table.place(pawns)
        self.rec.sample(0.0, {k: (x, y, 0.0, 0.0, True) for k, (x, y) in pawns.items()})
        if self.engine is not None:
            self.state = self.engine.initial(first=self.first, positions=dict(pawns))

    def _outside(self, player: str, x: float) -> tuple[float, float]:
        return (x, -(self.half + 150.0) if player == "A" else self.half + 150.0)

    def _radius(self, piece: str) -> float:
        return self.geometry["bat_diameter_mm" if piece == "bat" else "pawn_diameter_mm"] / 2

    def _others(self, piece: str) -> tuple[list[str], list[tuple[tuple[float, float], float]]]:
        ids = sorted(k for k in self.table.on_board if k != piece)
        return ids, [(self.table.on_board[k], self._radius(k)) for k in ids]

    def place_bat(self, xy: tuple[float, float], player: str) -> None:
        """A hand carries the bat to ``xy`` (from where it lies, or from off the board). A spot that
        overlaps a pawn is refused (ValueError): choosing a free one is the player's job."""
        ids, others = self._others("bat")
        hit = overlapping(xy, self._radius("bat"), others)
        if hit:
            raise ValueError(f"bat at ({xy[0]:.1f}, {xy[1]:.1f}) mm would overlap {', '.join(ids[i] for i in hit)}")
        t = self.rec.t_last_s + 0.1
        direction = math.pi / 2 if player == "A" else -math.pi / 2
        x0, y0, _, ang, vis = self.rec.state("bat")
        start = (x0, y0) if vis and "bat" in self.table.on_board else self._outside(player, xy[0])
        grab = t + 0.35
        self.rec.sample(grab, {"bat": (start[0], start[1], 0.0, ang, True)})
        arrive = grab + 0.5
        for k in range(1, 11):
            f = k / 10
            x, y = start[0] + f * (xy[0] - start[0]), start[1] + f * (xy[1] - start[1])
            self.rec.sample(grab + f * 0.5, {"bat": (x, y, 8.0 * math.sin(math.pi * f), ang, True)})
        keys = ((t, *self._outside(player, start[0]), direction, 60.0), (grab, *start, direction, 25.0),
                (arrive, *xy, direction, 25.0), (arrive + 0.35, *self._outside(player, xy[0]), direction, 60.0))
        self.rec.occluders.append(OccluderTrack("hand", keys, radius_mm=HAND_R_MM))
        self.rec.hold(arrive + 0.35)
        self.table.place({"bat": xy})

    def shoot(self, player: str, velocity_mm_s: tuple[float, float], apply_ruling: bool = True) -> SimShot:
        """The cue strikes the bat; returns the refereed shot and carries out the ruling's actions."""
        bx, by = self.table.on_board["bat"]
        speed = math.hypot(*velocity_mm_s)
        ux, uy = velocity_mm_s[0] / speed, velocity_mm_s[1] / speed
        direction = math.atan2(uy, ux)
        r = self.geometry["bat_diameter_mm"] / 2
        tip = lambda back: (bx - ux * (r + back), by - uy * (r + back))
        t = self.rec.t_last_s + 0.05
        t0 = t + 0.6
        keys = [(t, *tip(260.0), direction, 20.0), (t + 0.35, *tip(120.0), direction, 20.0),
                (t0, *tip(0.2), direction, 20.0), (t0 + 0.05, *tip(-30.0), direction, 20.0),
                (t0 + 0.5, *tip(300.0), direction, 20.0)]
        self.rec.occluders.append(OccluderTrack("cue", tuple(keys), **CUE))
        self.rec.hold(t0)
        res = self.table.strike("bat", velocity_mm_s, t0, self.rec)
        record = to_record("novuss", player, res)
        ruling = self.referee(record)
        shot = SimShot(record, ruling.to_dict() if ruling else None, tuple(ruling.codes()) if ruling else (), res)
        self.shots.append(shot)
        if ruling is not None and apply_ruling:
            self.carry_out(ruling, player)
        return shot

    def lift_bat(self, player: str) -> None:
        """A hand picks the bat up where it lies and takes it off the board (it comes back with the
        next :meth:`place_bat`)."""
        x, y = self.table.on_board["bat"]
        _, _, _, ang, _ = self.rec.state("bat")
        direction = math.pi / 2 if player == "A" else -math.pi / 2
        off = self._outside(player, x)
        arrive = self._hand(self.rec.t_last_s + 0.1, off, (x, y), direction, dwell_s=0.1)
        leave = arrive + 0.1
        self.rec.sample(leave, {"bat": (x, y, 0.0, ang, True)})
        for k in range(1, 11):
            f = k / 10
            self.rec.sample(leave + f * 0.4, {"bat": (x + f * (off[0] - x), y + f * (off[1] - y), 8.0, ang, f < 1.0)})
        self.table.take("bat")

    def carry_out(self, ruling, player: str) -> None:
        """Penalty pawns and returns: a hand puts each piece where the ruling says. The bat, if it lies
        there, is lifted off first (it is placed anew before the next stroke anyway); if a pawn lies
        there (a dark pawn's previous place that another pawn has taken), the piece goes to the nearest
        free spot, and the referee's state records where it really is."""
        moved: dict[str, tuple[float, float]] = {}
        for act in ruling.actions:
            if act.kind not in ("place_penalty", "return") or act.at is None:
                continue
            who = act.player or player
            direction = math.pi / 2 if who == "A" else -math.pi / 2
            at = (float(act.at[0]), float(act.at[1]))
            r = self._radius(act.piece)
            ids, others = self._others(act.piece)
            if "bat" in ids and overlapping(at, r, [others[ids.index("bat")]]):
                self.lift_bat(who)
                ids, others = self._others(act.piece)
            if overlapping(at, r, others):
                lim = self.half - r
                free = nearest_free_spot(at, r, others, (-lim, lim, -lim, lim), step_mm=0.5)
                if free is None:
                    raise RuntimeError(f"no free spot on the board for {act.piece}")
                at = moved[act.piece] = free
            t = self.rec.t_last_s + 0.1
            arrive = self._hand(t, self._outside(who, at[0]), at, direction)
            self.rec.sample(arrive, {act.piece: (at[0], at[1], 0.0, 0.0, True)})
            self.rec.hold(arrive + 0.65)
            self.table.place({act.piece: at})
        if self.state is not None:
            if moved:
                self.state = dataclasses.replace(
                    self.state, positions=tuple(sorted({**dict(self.state.positions), **moved}.items())))
            want = dict(self.state.positions)
            have = {k: v for k, v in self.table.on_board.items() if k != "bat"}
            for k in set(have) - set(want):  # e.g. pieces the engine removed
                self.table.take(k)
                self.rec.sample(self.rec.t_last_s, {k: (*have[k], 0.0, 0.0, False)})
            self.table.place({k: v for k, v in want.items() if have.get(k) != v})


class CvrnkanaSession(_Session):
    """Cvrnkaná: marbles behind the start lines until their opening flick, then on the field or in the pit."""

    game = "cvrnkana"

    def __init__(self, profile, seed: int = 0, physics: CvrnkanaPhysics = CvrnkanaPhysics(), use_engine: bool = True,
                 toss_winner: str = "A"):
        super().__init__(profile, seed, use_engine)
        self.field = Field(self.geometry, physics, seed)
        self.rec = ClipRecorder(marble_pieces(self.geometry))
        self.toss_winner = toss_winner
        if self.engine is not None:
            self.state = self.engine.initial(toss_winner=toss_winner)
        self.rec.sample(0.0, {})

    def setup_state(self, state_dict: Mapping[str, Any]) -> None:
        """Start from a position in the middle of a game (engine state document + physical field)."""
        field_pos = {k: tuple(v) for k, v in state_dict["field"].items() if v is not None}
        self.field.place(field_pos)
        for m in state_dict.get("pit", []):
            self.field.in_pit[m] = (0.0, 0.0)
        states = {k: (x, y, 0.0, 0.0, True) for k, (x, y) in field_pos.items()}
        bottom = -(self.geometry["pit_depth_mm"] - self.field.r)
        for m in state_dict.get("pit", []):
            spot = rest_spot(m, self.field.pit_r - self.field.r, self.seed)
            self.field.in_pit[m] = spot
            states[m] = (spot[0], spot[1], bottom, 0.0, True)
        self.rec.sample(0.0, states)
        if self.engine is not None:
            self.state = self.engine.state_from_dict(dict(state_dict))

    def flick(self, player: str, marble: str, velocity_mm_s: tuple[float, float], at: tuple[float, float] | None = None,
              nudges: Mapping[str, tuple[float, float]] | None = None, apply_ruling: bool = True) -> SimShot:
        """Flick ``marble`` (from ``at`` behind the start line for an opening flick, else from where it lies).
        ``nudges`` are opponent marbles the hand moves at the same instant (they get a touch event)."""
        opening = marble not in self.field.on_field
        if opening:
            if at is None:
                raise ValueError(f"{marble} is not on the field: an opening flick needs 'at'")
            self.field.place({marble: at})
        mx, my = self.field.on_field[marble]
        speed = math.hypot(*velocity_mm_s) or 1.0
        direction = math.atan2(velocity_mm_s[1], velocity_mm_s[0])
        back = (mx - velocity_mm_s[0] / speed * 45.0, my - velocity_mm_s[1] / speed * 45.0)
        t = self.rec.t_last_s + 0.1
        arrive = self._hand(t, (back[0], back[1] - 400.0), back, direction, dwell_s=0.35, move_s=0.4)
        if opening:
            self.rec.sample(arrive, {marble: (mx, my, 0.0, 0.0, True)})
        t0 = arrive + 0.3
        self.rec.hold(t0)
        velocities = {marble: velocity_mm_s, **(nudges or {})}
        res = self.field.flick(velocities, t0, self.rec)
        before = {k: v for k, v in res.before.items() if not (opening and k == marble)}
        record = to_record("cvrnkana", player, res, before=before)
        ruling = self.referee(record)
        shot = SimShot(record, ruling.to_dict() if ruling else None, tuple(ruling.codes()) if ruling else (), res)
        self.shots.append(shot)
        if ruling is not None and apply_ruling:
            self.carry_out(ruling)
        return shot

    def _carry(self, marble: str, at: tuple[float, float], after_s: float = REFEREE_S) -> None:
        """A hand comes once the call is known (``after_s`` after the last motion), picks the marble up
        where it lies (or from the pit), carries it to ``at`` and puts it down: the marble never slides
        on its own, and is out of sight only under the hand."""
        x, y, z, ang, vis = self.rec.state(marble)
        frm = (x, y) if vis and z > -20.0 else (0.0, 0.0)  # a marble in the pit is fished out of it
        t0 = self.rec.t_last_s + after_s
        out = (frm[0], frm[1] - 500.0)
        keys = ((t0, *out, math.pi / 2, 60.0), (t0 + 0.4, *frm, math.pi / 2, 25.0),
                (t0 + 0.55, *frm, math.pi / 2, 25.0), (t0 + 0.95, *at, math.pi / 2, 25.0),
                (t0 + 1.2, *at, math.pi / 2, 25.0), (t0 + 1.6, at[0], at[1] - 500.0, math.pi / 2, 60.0))
        self.rec.occluders.append(OccluderTrack("hand", keys, radius_mm=HAND_R_MM))
        self.rec.hold(t0 + 0.45)
        self.rec.sample(t0 + 0.46, {marble: (x, y, z, ang, False)})  # lifted under the hand
        self.rec.hold(t0 + 1.0)
        self.rec.sample(t0 + 1.01, {marble: (at[0], at[1], 0.0, 0.0, True)})  # put down under the hand
        self.rec.hold(t0 + 2.2)
        self.field.place({marble: at})

    def carry_out(self, ruling) -> None:
        """Returns (7a, 7f) put marbles back; a marble sent to the start line leaves the field."""
        first = True
        for act in ruling.actions:
            if act.piece is None:
                continue
            if act.kind == "return" and act.at is not None:
                self._carry(act.piece, (float(act.at[0]), float(act.at[1])), REFEREE_S if first else 0.2)
                first = False
            elif act.kind in ("to_start_line", "replace"):
                self.field.take(act.piece)
                x, y, *_ = self.rec.state(act.piece)
                self.rec.sample(self.rec.t_last_s + 0.5, {act.piece: (x, y, 0.0, 0.0, False)})


@dataclass
class Episode:
    """What a scenario produced: the session (clip, shots, rulings) and the premise it verified."""

    game: str
    scenario: str
    seed: int
    session: Any
    premise: dict = field(default_factory=dict)

    @property
    def shots(self) -> list[SimShot]:
        return self.session.shots

    def clip(self):
        return self.session.rec.clip()


class PremiseError(AssertionError):
    """A scripted scenario whose simulated events do not show what it was designed to show."""


def check(cond: bool, message: str) -> None:
    if not cond:
        raise PremiseError(message)
