"""What ``shotjudge replay`` needs beside a simulated video, written from what the simulator knows exactly.

The camera's calibration is the synthetic camera itself (its lens and its board-to-image homography, no
fit and so no residual), the empty-board picture is the clip's first frame rendered with nothing on the
board and no hand in view, and the start state is the rule engine's state before the first shot. Both
``shotjudge sim`` and ``shotjudge demo`` write these files through here, so a simulated video can be
replayed with the same files whichever verb filmed it.
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from calibration.atomic import write_text_atomic
from calibration.calfile import Calibration, save_calibration
from calibration.plane import PlaneMap

from .video import write_png

__all__ = ["REPLAY_INPUTS", "empty_frame", "exact_calibration", "start_state", "write_replay_inputs"]

#: role -> file name, as ``replay``'s options take them (--background, --calibration, --state)
REPLAY_INPUTS = {"background": "empty-board.png", "calibration": "calibration.json", "state": "start-state.json"}


def empty_frame(clip, fps: float):
    """The clip's first frame with every piece lifted off and no occluder: the board as the camera sees it
    before play."""
    first = clip.frame(0, fps)
    return dataclasses.replace(first, pieces=tuple(dataclasses.replace(p, visible=False) for p in first.pieces),
                               occluders=())


def exact_calibration(profile, camera) -> Calibration:
    """The synthetic camera as a calibration file holds it: its own lens and the exact plane (nothing fitted,
    so the residuals are 0)."""
    plane = PlaneMap((camera.width, camera.height), camera.K, np.asarray(camera.dist, float),
                     np.linalg.inv(camera.board_to_undistorted()))
    return Calibration(profile, plane, 0.0, 0.0, 0.0, 4, "manual", (), "known", None, "simulated camera")


def start_state(session) -> dict[str, Any] | None:
    """The engine's state document before the session's first shot (its current one if none was played;
    None without an engine)."""
    state = session.states_before[0] if session.states_before else session.state
    return None if state is None else state.to_dict()


def write_replay_inputs(out_dir: str | Path, profile, camera, renderer, clip, fps: float,
                        state: Mapping[str, Any] | None) -> dict[str, Path]:
    """Write the calibration, the empty-board picture and (when there is one) the start state into ``out_dir``;
    returns role -> path. ``renderer`` is the one that films the clip (same camera, same look)."""
    out = Path(out_dir)
    files = {role: out / name for role, name in REPLAY_INPUTS.items()}
    write_png(files["background"], renderer.render(empty_frame(clip, fps)))
    save_calibration(exact_calibration(profile, camera), files["calibration"])
    if state is None:
        del files["state"]
    else:
        write_text_atomic(files["state"], json.dumps(state, indent=1) + "\n")
    return files
