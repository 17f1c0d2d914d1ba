"""A deterministic sequence of valid Novuss shot records, made by playing them through the engine."""
from calibration import default_profile
from rules import engine_for, parse_record


def novuss_engine():
    return engine_for("novuss", default_profile("novuss").geometry)


def make_records(n: int, engine=None, start_s: float = 0.0, step_s: float = 2.0) -> list[dict]:
    """Shot k: the player to move pockets their first pawn still on the table, except every third
    shot, which misses (a foul: the turn passes). t0 = start_s + k * step_s."""
    engine = engine or novuss_engine()
    state = engine.initial()
    out = []
    for k in range(n):
        player = state.to_move
        pawn = state.on_table(player)[0]
        x, y = state.pos[pawn]
        bat_y = -380.0 if player == "A" else 380.0
        t0 = start_s + step_s * k
        raw = {"game": "novuss", "t0": t0, "t1": t0 + 0.75 * step_s,
               "before": {"bat": [0.0, bat_y]}, "after": {"bat": [0.0, bat_y / 4]},
               "events": [{"t": t0 + 0.1 * step_s, "kind": "contact", "a": "bat", "b": pawn},
                          {"t": t0 + 0.3 * step_s, "kind": "pocket", "piece": pawn,
                           "pocket": ("N" if y > 0 else "S") + ("E" if x > 0 else "W")}]}
        if k % 3 == 2:
            raw["events"] = []
        state, _ = engine.apply(state, parse_record(raw))
        out.append(raw)
    return out
