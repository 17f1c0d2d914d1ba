"""The video hook of ``sim.run``: render a simulated episode to ``video.mp4`` (and YOLO folders) next to its
``truth.json``, in one rendering pass.

A piece's pixel centre in the video is ``Camera.from_dict(camera).project(apparent_point_mm(profile, piece))``
(see ``sim.render_geometry``); ``sim.truth`` writes it per frame.
"""
from __future__ import annotations

from pathlib import Path

from .render import Renderer
from .render_settings import RenderSettings, make_camera
from .video import VideoWriter
from .yolo import export_yolo

__all__ = ["write_clip", "render_outputs", "VIDEO_NAME", "YOLO_NAMES", "BLUR_SAMPLES"]

VIDEO_NAME = "video.mp4"
YOLO_NAMES = ("images", "labels", "data.yaml")
BLUR_SAMPLES = 4  # sub-frame states per frame: the CLI's videos show motion blur like a real camera


def render_outputs(clip, camera, profile, settings: RenderSettings, fps: float, out_dir: str | Path, *,
                   video: bool = True, yolo_every: int | None = None, prefix: str = "clip",
                   dataset_path: str | Path | None = None, renderer: Renderer | None = None) -> dict:
    """Render ``clip`` at ``fps`` once: every frame into ``out_dir/video.mp4`` (when ``video``) and every
    ``yolo_every``-th frame into YOLO ``images/``, ``labels/`` and ``data.yaml`` (when given), with
    ``renderer`` when given (one built for ``camera``, ``profile`` and ``settings``: it is slow to build).
    Returns what was written: ``video`` (file name or None), ``video_frames``, ``codec``, ``yolo_images``."""
    out = Path(out_dir)
    frames = clip.frames(fps)
    got: dict = {"video": None, "video_frames": 0, "codec": None, "yolo_images": 0}
    if yolo_every is None:
        if video:
            renderer = renderer or Renderer(camera, profile, settings)
            with VideoWriter(out / VIDEO_NAME, fps, (camera.width, camera.height)) as writer:
                for f in frames:
                    writer.write(renderer.render(f, clip.states_at))
            got.update(video=VIDEO_NAME, video_frames=writer.frames, codec=writer.codec)
        return got
    if not video:
        got["yolo_images"] = export_yolo(frames, camera, profile, settings, out, prefix=prefix, every=yolo_every,
                                         states_at=clip.states_at, dataset_path=dataset_path, renderer=renderer)
        return got
    with VideoWriter(out / VIDEO_NAME, fps, (camera.width, camera.height)) as writer:
        got["yolo_images"] = export_yolo(frames, camera, profile, settings, out, prefix=prefix, every=yolo_every,
                                         states_at=clip.states_at, dataset_path=dataset_path, renderer=renderer,
                                         on_image=lambda _f, img: writer.write(img))
    got.update(video=VIDEO_NAME, video_frames=writer.frames, codec=writer.codec)
    return got


def write_clip(episode, profile, fps: float, size: tuple[int, int], out_dir: str | Path, seed: int,
               settings: RenderSettings | None = None) -> dict:
    """Render ``episode.clip()`` at ``fps`` and ``size`` into ``out_dir/video.mp4``; returns the camera model,
    the exact homography (board mm on the surface -> undistorted pixels), the file name and frame count."""
    settings = settings or RenderSettings(seed=seed, blur_samples=BLUR_SAMPLES)
    camera = make_camera(profile, int(size[0]), int(size[1]), settings)
    got = render_outputs(episode.clip(), camera, profile, settings, fps, out_dir)
    return {"camera": camera.to_dict(), "homography": camera.board_to_undistorted().tolist(), "video": got["video"],
            "video_frames": got["video_frames"]}
