"""The video hook of ``sim.run``: render a simulated episode to ``video.mp4`` next to its ``truth.json``.

Returns the camera model and the exact homography (board mm on the surface -> undistorted image pixels)
for the truth document. A piece's pixel centre in the video is
``Camera.from_dict(camera).project(apparent_point_mm(profile, piece))`` (see ``sim.render_geometry``).
"""
from __future__ import annotations

from pathlib import Path

from .render import render_clip
from .render_settings import RenderSettings, make_camera

__all__ = ["write_clip", "VIDEO_NAME", "BLUR_SAMPLES"]

VIDEO_NAME = "video.mp4"
BLUR_SAMPLES = 4  # sub-frame states per frame: the CLI's videos show motion blur like a real camera


def write_clip(episode, profile, fps: float, size: tuple[int, int], out_dir: str | Path, seed: int,
               settings: RenderSettings | None = None) -> dict:
    """Render ``episode.clip()`` at ``fps`` and ``size`` into ``out_dir/video.mp4``."""
    settings = settings or RenderSettings(seed=seed, blur_samples=BLUR_SAMPLES)
    camera = make_camera(profile, int(size[0]), int(size[1]), settings)
    clip = episode.clip()
    out = Path(out_dir)
    n = render_clip(clip.frames(fps), camera, profile, settings, out / VIDEO_NAME, fps=fps, states_at=clip.states_at)
    return {"camera": camera.to_dict(), "homography": camera.board_to_undistorted().tolist(), "video": VIDEO_NAME,
            "video_frames": n}
