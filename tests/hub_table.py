"""One table of the hall for the hub's tests and bench: ``shotjudge live --table NAME --mqtt ADDR`` on a folder of
frames, with vision replaced by a script that finishes the given shot records (a simulated match) one every
4 frames. Everything after vision is the real judge: the match, its journal and the feed to the hub.

usage: python hub_table.py TABLE GAME GAMES RECORDS_JSON FOLDER BROKER FRAME_DELAY_S [PLAYERS]
FOLDER gets the frames, the calibration and the journal (FOLDER/journal.sqlite); run it again to resume.
"""
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import judge.cmd_live  # noqa: E402
from judge import cli  # noqa: E402
from live_worker import ScriptedPipeline  # noqa: E402 - the same scripted vision: shot k ends on frame 4k - 1
from rules import parse_record  # noqa: E402

SIZE = (32, 24)


def write_inputs(folder: Path, game: str, n_shots: int) -> None:
    """The frames (4 a shot and a few after) and a calibration of the game's profile for their size."""
    import cv2
    import numpy as np

    from calibration import default_profile
    from calibration.calfile import Calibration, save_calibration
    from calibration.plane import from_points

    frames = folder / "frames"
    if not frames.is_dir():
        frames.mkdir(parents=True)
        for i in range(4 * n_shots + 3):
            cv2.imwrite(str(frames / f"f{i:05d}.png"), np.full((SIZE[1], SIZE[0], 3), i % 256, np.uint8))
    profile = default_profile(game)
    g = profile.geometry
    hx, hy = (g["view_half_width_mm"], g["view_half_height_mm"]) if game == "cvrnkana" else \
        (profile["surface_mm"] / 2, profile["surface_mm"] / 2)
    w, h = SIZE
    fit = from_points([[1, h - 1], [w - 1, h - 1], [w - 1, 1], [1, 1]], [[-hx, -hy], [hx, -hy], [hx, hy], [-hx, hy]],
                      SIZE, [[w, 0, w / 2], [0, w, h / 2], [0, 0, 1]], [0, 0, 0, 0, 0])
    save_calibration(Calibration.from_fit(profile, fit, intrinsics_source="nominal"), folder / "cal.json")


def main():
    table, game, games, records_path, folder, broker, delay_s = sys.argv[1:8]
    players = sys.argv[8:9]
    folder = Path(folder)
    records = [parse_record(r) for r in json.loads(Path(records_path).read_text(encoding="utf-8"))]
    write_inputs(folder, game, len(records))
    judge.cmd_live.make_pipeline = lambda *args, **kwargs: ScriptedPipeline(records, float(delay_s))
    return cli.main(["live", "--game", game, "--games", games, "--source", str(folder / "frames"), "--fps", "30",
                     "--calibration", str(folder / "cal.json"), "--journal", str(folder / "journal.sqlite"),
                     "--no-overlay", "--no-clips", "--queue", "100000", "--table", table, "--mqtt", broker,
                     "--mqtt-drain", "60"] + (["--players", players[0]] if players else []))


if __name__ == "__main__":
    sys.exit(main())
