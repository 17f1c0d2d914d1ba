"""One call that turns (game, scenario, seed) into files: ``truth.json`` and, once wired, the video.

Video hook: with ``video=True`` this imports ``sim.render_video.write_clip(episode, profile, fps, size,
out_dir, seed) -> dict`` (the renderer's module) and merges the dict it returns (``camera``,
``homography``, file names) into the truth document. Without the renderer, ``video=True`` is refused
with a clear message rather than writing a truth file without the video it was asked for.
"""
from __future__ import annotations

import importlib
from pathlib import Path

from calibration.profile import default_profile, load_profile

from .scenarios import SimError, build
from .truth import truth_document, write_truth

__all__ = ["run_scenario", "parse_size"]


def parse_size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise SimError(f"size {text!r} must be WIDTHxHEIGHT, e.g. 1280x720") from None
    if not (16 <= w <= 8192 and 16 <= h <= 8192):
        raise SimError(f"size {text!r} is out of range (16..8192 pixels each way)")
    return w, h


def run_scenario(game: str, scenario: str, seed: int, out_dir: str | Path, fps: float = 60.0,
                 size: tuple[int, int] = (1280, 720), video: bool = False, profile: str | None = None) -> dict:
    """Simulate, referee and write ``out_dir/truth.json`` (and the video when ``video``)."""
    if fps <= 0 or fps > 1000:
        raise SimError(f"fps must be between 0 and 1000, got {fps}")
    prof = default_profile(game) if profile is None else load_profile(profile)
    if prof.game != game:
        raise SimError(f"profile {prof.name!r} is for {prof.game}, not {game}")
    render = None
    if video:
        try:
            render = importlib.import_module("sim.render_video").write_clip
        except (ImportError, AttributeError):
            raise SimError("video rendering is not available (sim.render_video is missing); use --no-video") from None
    ep = build(game, scenario, prof, seed)
    out = Path(out_dir)
    extra: dict = {}
    if render is not None:
        extra = dict(render(ep, prof, fps, size, out, seed))
    doc = truth_document(ep, fps, size, camera=extra.pop("camera", None), homography=extra.pop("homography", None))
    path = write_truth(out / "truth.json", doc)
    return {"truth": str(path), "shots": len(ep.shots), "frames": len(doc["frames"]), **extra}
