"""Ground truth as JSON: the shot records, the engine's rulings and every frame's piece positions.

The document is deterministic: keys sorted, floats rounded (0.01 mm for positions, 1 us for times),
no wall-clock data, so the same scenario and seed give byte-identical files. The renderer adds the
camera model and the image<->board homography under ``camera`` / ``homography`` (null until it does).
"""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Mapping

from .frames import Clip
from .session import Episode

__all__ = ["SCHEMA", "truth_document", "dumps", "write_truth"]

SCHEMA = "shotjudge.truth/1"


def _round(obj: Any, digits: int = 6) -> Any:
    if isinstance(obj, float):
        out = round(obj, digits)
        return 0.0 if out == 0 else out
    if isinstance(obj, Mapping):
        return {str(k): _round(v, digits) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_round(v, digits) for v in obj]
    return obj


def frame_table(clip: Clip, fps: float) -> list[dict]:
    """Per video frame: each piece's [x_mm, y_mm, z_mm, visible] and the occluders in view."""
    out = []
    for f in clip.frames(fps):
        row: dict[str, Any] = {"i": f.index, "t": round(f.t_s, 6),
                               "pieces": {p.id: [round(p.x_mm, 2), round(p.y_mm, 2), round(p.z_mm, 2), int(p.visible)]
                                          for p in f.pieces}}
        if f.occluders:
            row["occluders"] = [{"kind": o.kind, "x": round(o.x_mm, 2), "y": round(o.y_mm, 2),
                                 "direction": round(o.direction_rad, 5), "z": round(o.z_mm, 2)} for o in f.occluders]
        out.append(row)
    return out


def truth_document(ep: Episode, fps: float, size: tuple[int, int] | None = None, camera: Mapping | None = None,
                   homography: list | None = None) -> dict:
    s = ep.session
    physics = s.table.physics if ep.game == "novuss" else s.field.physics
    state = s.state.to_dict() if s.state is not None else None
    doc = {
        "schema": SCHEMA, "game": ep.game, "scenario": ep.scenario, "seed": ep.seed, "fps": fps,
        "size": list(size) if size else None, "profile": s.profile.to_dict(), "physics": physics.to_dict(),
        "premise": ep.premise,
        "shots": [{"record": sh.record, "ruling": sh.ruling} for sh in ep.shots],
        "final_state": state, "engine": s.engine.name if s.engine is not None else None,
        "frames": frame_table(ep.clip(), fps), "camera": camera, "homography": homography,
    }
    return _round(doc)


def dumps(doc: Mapping) -> str:
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"


def write_truth(path: Path, doc: Mapping) -> Path:
    """Write atomically: a temporary file in the same folder, renamed when complete."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".truth-", suffix=".json", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(dumps(doc))
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
