"""Ground truth as JSON: the shot records, the engine's rulings, the camera and every frame's pieces.

Per frame and piece: the board position, whether it is on the surface, its pixel centre in the picture
and whether a detector is expected to find it (the YOLO labelling rule). The pixel centre is the camera
projection of :func:`sim.render_geometry.apparent_point_mm` (a disc's top face, a marble's centre) at the
instant the piece's image rows are read: the frame time, or with a rolling shutter the readout time of
the row band it lies in. With motion blur it is the centre of the smear (exposure centred on the frame).

Deterministic: keys sorted, positions rounded to 0.01 mm, pixels to 0.001 px, times to 1 us, the camera
and homographies to 12 significant digits, no wall-clock data or encoder names: the same scenario, seed
and options give byte-identical files whether or not the video is rendered. Schema:
``docs/schemas/truth.schema.json``.
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from calibration.atomic import write_text_atomic

from .frames import Clip, SimFrame
from .render_geometry import CanvasGeometry, apparent_point_mm, piece_top_z_mm
from .render_occluders import OccluderPainter
from .render_settings import RenderSettings
from .session import Episode
from .yolo import labelled_pieces

__all__ = ["SCHEMA", "PIECE_COLUMNS", "truth_document", "frame_table", "dumps", "write_truth"]

SCHEMA = "shotjudge.truth/1"
PIECE_COLUMNS = ("x_mm", "y_mm", "z_mm", "visible", "u_px", "v_px", "in_view")


def _round(obj: Any, digits: int = 6) -> Any:
    if isinstance(obj, float):
        out = round(obj, digits)
        return 0.0 if out == 0 else out
    if isinstance(obj, Mapping):
        return {str(k): _round(v, digits) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_round(v, digits) for v in obj]
    return obj


def _sig(obj: Any, digits: int = 12) -> Any:
    """Round floats to significant digits (perspective terms of a homography are ~1e-6)."""
    if isinstance(obj, (float, np.floating)):
        out = float(f"{float(obj):.{digits}g}")
        return 0.0 if out == 0 else out
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, Mapping):
        return {str(k): _sig(v, digits) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, np.ndarray)):
        return [_sig(v, digits) for v in obj]
    return obj


def _snap(m: np.ndarray) -> np.ndarray:
    """Rounding noise (1e-17 where the maths gives 0) set to exactly 0, so it cannot differ between machines."""
    m = np.asarray(m, float)
    return np.where(np.abs(m) < 1e-13 * np.abs(m).max(), 0.0, m)


class _PixelCentres:
    """Pixel centres of the visible pieces of a frame, with the rolling shutter's row timing."""

    def __init__(self, clip: Clip, camera, profile, settings: RenderSettings):
        self.clip, self.camera, self.profile = clip, camera, profile
        self.bands = settings.rolling_bands if settings.rolling_shutter_s > 0 else 1
        self.readout_s = settings.rolling_shutter_s

    def _project(self, frame: SimFrame, ids: list[str]) -> np.ndarray:
        by_id = {p.id: p for p in frame.pieces}
        return self.camera.project(np.array([apparent_point_mm(self.profile, by_id[i]) for i in ids], float))

    def __call__(self, frame: SimFrame) -> dict[str, tuple[float, float]]:
        ids = [p.id for p in frame.pieces if p.visible]
        if not ids:
            return {}
        px = self._project(frame, ids)
        if self.bands > 1:
            k, h = self.bands, self.camera.height
            starts = np.array([(b * h) // k for b in range(k)])  # first image row of each band (as rendered)
            states: dict[int, SimFrame] = {}
            band = np.full(len(ids), -1)
            for _ in range(4):  # the band a piece is seen in depends on where it is: settle it
                row = np.clip(np.floor(px[:, 1] + 0.5), 0, h - 1)
                new = np.searchsorted(starts, row, side="right") - 1
                if np.array_equal(new, band):
                    break
                band = new
                for b in sorted(set(band.tolist())):
                    if b not in states:
                        t = frame.t_s + self.readout_s * ((b + 0.5) / k - 0.5)
                        states[b] = self.clip.states_at(t, frame.index)
                    sel = np.flatnonzero(band == b)
                    px[sel] = self._project(states[b], [ids[i] for i in sel])
        return {i: (float(u), float(v)) for i, (u, v) in zip(ids, px)}


def frame_table(clip: Clip, fps: float, camera, profile, settings: RenderSettings) -> list[dict]:
    """Per video frame: each piece's [x_mm, y_mm, z_mm, visible, u_px, v_px, in_view] (pixels null when the
    piece is not on the surface) and the occluders in view."""
    centres = _PixelCentres(clip, camera, profile, settings)
    occluders = OccluderPainter(CanvasGeometry.for_camera(camera, settings.oversample), settings) \
        if settings.occluders else None
    out = []
    for f in clip.frames(fps):
        px = centres(f)
        seen = labelled_pieces(f, camera, profile, occluders)
        pieces = {}
        for p in f.pieces:
            u, v = px.get(p.id, (None, None))
            pieces[p.id] = [round(p.x_mm, 2), round(p.y_mm, 2), round(p.z_mm, 2), int(p.visible),
                            None if u is None else round(u, 3), None if v is None else round(v, 3), int(seen[p.id])]
        row: dict[str, Any] = {"i": f.index, "t": round(f.t_s, 6), "pieces": pieces}
        if f.occluders:
            row["occluders"] = [{"kind": o.kind, "x": round(o.x_mm, 2), "y": round(o.y_mm, 2),
                                 "direction": round(o.direction_rad, 5), "z": round(o.z_mm, 2)} for o in f.occluders]
        out.append(row)
    return out


def truth_document(ep: Episode, fps: float, camera, settings: RenderSettings, *, randomised: bool = False,
                   outputs: Mapping | None = None) -> dict:
    """The whole ground truth of an episode filmed by ``camera`` with ``settings``; ``outputs`` names the
    files written next to it (``video``, ``yolo``)."""
    s = ep.session
    clip = ep.clip()
    prof = s.profile
    physics = (s.table if hasattr(s, "table") else s.field).physics  # the session's board, or its field
    state = s.state.to_dict() if s.state is not None else None
    doc = _round({
        "schema": SCHEMA, "game": ep.game, "scenario": ep.scenario, "seed": ep.seed, "fps": float(fps),
        "size": [camera.width, camera.height], "profile": prof.to_dict(), "physics": physics.to_dict(),
        "premise": ep.premise,
        "shots": [{"record": sh.record, "ruling": sh.ruling} for sh in ep.shots],
        "final_state": state, "engine": s.engine.name if s.engine is not None else None,
        "pieces": {p.id: {"kind": p.kind, "owner": p.owner, "radius_mm": p.radius_mm,
                          "top_z_mm": piece_top_z_mm(prof, p.kind)} for p in clip.pieces},
        "piece_columns": list(PIECE_COLUMNS),
        "frames": frame_table(clip, fps, camera, prof, settings),
        "outputs": {"video": None, "video_frames": 0, "yolo": None, **(outputs or {})},
    })
    h = camera.board_to_undistorted()
    doc["camera"] = _sig(camera.to_dict())
    doc["homography"] = {"board_to_undistorted_px": _sig(_snap(h)), "undistorted_px_to_board": _sig(_snap(np.linalg.inv(h)))}
    doc["render"] = {"mode": "randomised" if randomised else "standard",
                     "settings": _sig(dataclasses.asdict(settings))}
    return doc


def dumps(doc: Mapping) -> str:
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False) + "\n"


def write_truth(path: Path, doc: Mapping) -> Path:
    """Write atomically: a temporary file in the same folder, renamed when complete."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_text_atomic(path, dumps(doc))
