"""Simulated matches for the hall's tests and its bench (bench/hub_load.py): whole games played by ``shotjudge sim``
(real physics, both players driven by its policy; no video), put together into matches of two games. A Cvrnkaná game 2 is started
by the other player (clause 1): it is a simulated game with the players' sides swapped (A's marbles are B's)."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from rules.game import game_class

GAMES = {"novuss": "set", "cvrnkana": "game"}
GAP_S = 5.0  # between the end of one game and the first shot of the next


def simulated_games(folder: Path) -> dict[tuple[str, int], list[dict]]:
    """The shot records of ``shotjudge sim GAME --scenario set|game --seed 0|1 --no-video``, once per folder."""
    jobs = [(game, seed) for game in GAMES for seed in (0, 1)]

    def run(job):
        game, seed = job
        out = folder / f"{game}-{seed}"
        if not (out / "truth.json").exists():
            subprocess.run([sys.executable, "-m", "judge.cli", "sim", game, "--scenario", GAMES[game], "--seed",
                            str(seed), "--no-video", "--fps", "10", "--out", str(out)],
                           check=True, capture_output=True, timeout=300)
        return [s["record"] for s in json.loads((out / "truth.json").read_text())["shots"]]

    with ThreadPoolExecutor(2) as pool:
        return dict(zip(jobs, pool.map(run, jobs)))


def swap_sides(record: dict) -> dict:
    """The same shot with the players' sides swapped: A's pieces are B's and B's A's."""
    text = re.sub(r'"([AB])(\d+)"', lambda m: f'"{"B" if m.group(1) == "A" else "A"}{m.group(2)}"', json.dumps(record))
    swapped = json.loads(text)
    if "player" in swapped:
        swapped["player"] = {"A": "B", "B": "A"}[swapped["player"]]
    return swapped


def shifted(record: dict, dt_s: float) -> dict:
    out = json.loads(json.dumps(record))
    out["t0"], out["t1"] = out["t0"] + dt_s, out["t1"] + dt_s
    for event in out["events"]:
        event["t"] += dt_s
    return out


def two_game_match(game: str, first: list[dict], second: list[dict]) -> list[dict]:
    """Game 1 then game 2 (for Cvrnkaná with sides swapped: B starts it), game 2's times after game 1's."""
    if game_class(game).starts_by_toss:  # clause 1: the other player starts the even games
        second = [swap_sides(r) for r in second]
    dt_s = first[-1]["t1"] + GAP_S - second[0]["t0"]
    return list(first) + [shifted(r, dt_s) for r in second]


def hall_matches(folder: Path) -> dict[str, tuple[str, list[dict]]]:
    """Three tables' matches, both games: ``{table: (game, records)}``."""
    sims = simulated_games(folder)
    return {"t1": ("novuss", two_game_match("novuss", sims[("novuss", 0)], sims[("novuss", 1)])),
            "t2": ("cvrnkana", two_game_match("cvrnkana", sims[("cvrnkana", 0)], sims[("cvrnkana", 1)])),
            "t3": ("cvrnkana", two_game_match("cvrnkana", sims[("cvrnkana", 1)], sims[("cvrnkana", 0)]))}
