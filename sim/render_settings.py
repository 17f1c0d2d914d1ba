"""Every knob of the synthetic camera in one frozen value, so a clip is reproducible from (settings, seed).

``RenderSettings()`` is a plausible club-room camera; ``RenderSettings.randomised(seed)`` draws lighting,
textures, colours (within each player's colour family), blur, noise, camera tilt and lens distortion for
training data (domain randomisation); ``RenderSettings.flat()`` is a flat, noise-free look for geometry tests;
``sim.render_strata.stratum(name, seed)`` gives one of the harsher named looks built on these settings (lamps with
fall-off, a dim room, drifting white balance and exposure, pieces from any colour family, compression, a
rolling shutter, tilt). The defaults of the knobs those add (lamps, ambient, drift, compression) change
nothing: a default, randomised or flat look renders as it did before they existed.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from calibration.camera import Camera

__all__ = ["RenderSettings", "make_camera"]

BGR = tuple[int, int, int]


@dataclass(frozen=True)
class RenderSettings:
    seed: int = 0
    # Look
    plain: bool = False  # flat colours, no texture, shading, shadows, lighting or noise
    oversample: float = 1.25  # top-down canvas pixels per image pixel (at the view centre)
    wood_bgr: BGR = (120, 175, 214)  # lacquered birch playing surface
    rail_bgr: BGR = (40, 62, 110)  # cushions and frame
    line_bgr: BGR = (38, 34, 34)
    soil_bgr: BGR = (72, 98, 122)
    pawn_a_bgr: BGR = (200, 228, 238)  # ivory
    pawn_b_bgr: BGR = (38, 38, 150)  # dark red
    bat_bgr: BGR = (60, 120, 30)  # green
    marble_a_hue: float = 105.0  # OpenCV hue (0..180): A blues
    marble_b_hue: float = 5.0  # B reds/oranges
    marble_a_sv: tuple[float, float] | None = None  # (saturation, value) of the marble bodies; None: bright glass
    marble_b_sv: tuple[float, float] | None = None
    skin_bgr: BGR = (140, 170, 215)
    sleeve_bgr: BGR = (90, 60, 50)
    texture_contrast: float = 1.0
    # Light and shadows
    light_azimuth_deg: float = 120.0  # where the lamp is, seen from the board centre (0 = +x, ccw)
    light_elevation_deg: float = 65.0
    shadow_strength: float = 0.45
    shadow_blur_mm: float = 3.0
    vignette: float = 0.30  # relative darkening in the image corners
    gradient: float = 0.12  # relative brightness change across the view along the light azimuth
    hotspot: float = 0.10  # glare of the lamp on the surface
    tint_bgr: tuple[float, float, float] = (1.0, 1.0, 1.0)
    exposure_gain: float = 1.0
    # Lamps and room light (sim.render_light): none given = one far lamp along light_dir, no fall-off
    lamps_mm: tuple[tuple[float, float, float], ...] = ()  # (x, y over the board, height above the surface)
    corner_falloff: float | None = None  # corners this much darker than the centre (None: as the lamps give it)
    ambient: float = 1.0  # the room's light level relative to the nominal room (0.2: a dim room, exposure unchanged)
    # White balance and exposure drifting during a clip (auto-exposure / auto-white-balance catching up)
    exposure_drift: float = 0.0  # relative brightness change at the end of the ramp (-0.25: a quarter darker)
    wb_drift_bgr: tuple[float, float, float] = (0.0, 0.0, 0.0)  # relative change per channel
    drift_start_s: float = 0.3  # clip time the ramp starts
    drift_s: float = 1.5  # its duration
    # Time
    exposure_s: float = 0.008
    blur_samples: int = 1  # sub-frame states accumulated per frame (1 = no motion blur)
    rolling_shutter_s: float = 0.0  # top-to-bottom readout time (0 = global shutter)
    rolling_bands: int = 8
    flicker: float = 0.02  # relative amplitude of the mains flicker
    flicker_hz: float = 100.0
    flicker_jitter: float = 0.005  # random per-frame gain on top
    # Sensor
    noise_sigma: float = 2.0  # grey levels
    # Compression of the filmed frames (sim.render_codec): "none", "jpeg" (per frame) or "h264" (one stream)
    compression: str = "none"
    jpeg_quality: int = 35
    bitrate_mbps: float = 4.0
    codec_fps: float = 30.0  # the stream's frame rate, for the bit budget per frame
    keyframe_s: float = 2.0
    # Occluders
    occluders: bool = True
    # Camera (used by make_camera; a clip's camera is passed explicitly to the renderer)
    camera_height_mm: float = 1400.0
    camera_tilt_deg: float = 0.0
    camera_yaw_deg: float = 0.0
    camera_dist: tuple[float, float, float, float, float] = (-0.08, 0.02, 0.0, 0.0, 0.0)

    def __post_init__(self):
        if self.blur_samples < 1:
            raise ValueError(f"blur_samples must be >= 1, got {self.blur_samples}")
        if self.rolling_bands < 1:
            raise ValueError(f"rolling_bands must be >= 1, got {self.rolling_bands}")
        if not 0.5 <= self.oversample <= 4.0:
            raise ValueError(f"oversample must be within 0.5..4, got {self.oversample}")
        if self.exposure_s < 0 or self.rolling_shutter_s < 0:
            raise ValueError("exposure_s and rolling_shutter_s must be >= 0")
        if self.corner_falloff is not None and not 0.0 <= self.corner_falloff <= 0.9:
            raise ValueError(f"corner_falloff must be within 0..0.9, got {self.corner_falloff}")
        if not 0.05 <= self.ambient <= 2.0:
            raise ValueError(f"ambient must be within 0.05..2, got {self.ambient}")
        if len(self.lamps_mm) > 8 or any(len(lamp) != 3 or lamp[2] <= 0 for lamp in self.lamps_mm):
            raise ValueError("lamps_mm: at most 8 lamps, each (x_mm, y_mm, height_mm > 0)")
        if self.exposure_drift <= -1.0 or any(d <= -1.0 for d in self.wb_drift_bgr) or self.drift_s < 0:
            raise ValueError("exposure_drift and wb_drift_bgr must be > -1, drift_s >= 0")
        if self.compression not in ("none", "jpeg", "h264"):
            raise ValueError(f"compression must be none, jpeg or h264, got {self.compression!r}")
        if not 1 <= self.jpeg_quality <= 100 or self.bitrate_mbps <= 0 or self.codec_fps <= 0 or self.keyframe_s <= 0:
            raise ValueError("jpeg_quality must be 1..100; bitrate_mbps, codec_fps and keyframe_s > 0")

    @classmethod
    def flat(cls, seed: int = 0, **changes) -> "RenderSettings":
        """Flat colours on a flat background: for measuring geometry, not for looks."""
        base = cls(seed=seed, plain=True, vignette=0.0, gradient=0.0, hotspot=0.0, flicker=0.0,
                   flicker_jitter=0.0, noise_sigma=0.0, shadow_strength=0.0, camera_dist=(0.0,) * 5)
        return replace(base, **changes)

    @classmethod
    def randomised(cls, seed: int, **changes) -> "RenderSettings":
        """Domain randomisation: every look parameter drawn from a seeded range that still looks like a table."""
        rng = np.random.default_rng([seed, 0x5E77])

        def u(a, b):
            return float(rng.uniform(a, b))

        def jitter(bgr, amount):
            return tuple(int(np.clip(c + rng.normal(0, amount), 0, 255)) for c in bgr)

        def scaled(bgr, lo, hi, spread):
            return tuple(int(c) for c in np.clip(np.array(bgr) * u(lo, hi) + rng.normal(0, spread, 3), 10, 245))

        wood = scaled(cls.wood_bgr, 0.7, 1.15, 10)
        skin_light, skin_dark = np.array([150, 180, 225]), np.array([55, 85, 135])
        k = u(0, 1)
        values = dict(
            seed=seed,
            wood_bgr=wood,
            rail_bgr=scaled(cls.rail_bgr, 0.5, 1.5, 5),
            line_bgr=jitter(cls.line_bgr, 10),
            soil_bgr=scaled(cls.soil_bgr, 0.7, 1.4, 6),
            pawn_a_bgr=jitter(cls.pawn_a_bgr, 12),
            pawn_b_bgr=jitter((38, 38, 150) if rng.random() < 0.6 else (35, 35, 45), 12),
            bat_bgr=jitter(cls.bat_bgr, 20),
            marble_a_hue=u(95, 120),
            marble_b_hue=u(0, 12),
            skin_bgr=jitter(tuple(skin_light * (1 - k) + skin_dark * k), 8),
            sleeve_bgr=tuple(int(v) for v in rng.integers(20, 200, 3)),
            texture_contrast=u(0.6, 1.4),
            light_azimuth_deg=u(0, 360),
            light_elevation_deg=u(50, 85),
            shadow_strength=u(0.25, 0.6),
            shadow_blur_mm=u(1.5, 6.0),
            vignette=u(0.1, 0.5),
            gradient=u(0.0, 0.3),
            hotspot=u(0.0, 0.25),
            tint_bgr=(u(0.85, 1.15), u(0.95, 1.05), u(0.85, 1.15)),
            exposure_gain=u(0.75, 1.2),
            exposure_s=u(0.002, 0.016),
            blur_samples=int(rng.integers(1, 9)),
            flicker=u(0.0, 0.06),
            flicker_jitter=u(0.0, 0.01),
            noise_sigma=u(0.5, 5.0),
            camera_height_mm=u(1200, 1700),
            camera_tilt_deg=u(0, 15),
            camera_yaw_deg=u(-4, 4),
            camera_dist=(u(-0.2, 0.05), u(-0.05, 0.08), 0.0, 0.0, 0.0),
        )
        values.update(changes)
        return cls(**values)

    @property
    def light_dir(self) -> np.ndarray:
        """Unit vector from the surface towards the lamp (board frame, z up)."""
        a, e = math.radians(self.light_azimuth_deg), math.radians(self.light_elevation_deg)
        return np.array([math.cos(a) * math.cos(e), math.sin(a) * math.cos(e), math.sin(e)])


def make_camera(profile, width: int, height: int, settings: RenderSettings = RenderSettings(),
                margin_px: float = 4.0) -> Camera:
    """The overhead camera this game is filmed with, framed so that everything that must be seen is in the
    picture whatever the tilt and distortion: the whole Novuss frame with its markers, or the Cvrnkaná view
    rectangle around the pit with the marker tiles."""
    spec = profile.spec
    if spec.sees_whole_field:  # the whole frame round the board, and a little more
        half_w = half_h = spec.geometry.frame_mm / 2.0 + 10.0
    else:  # the camera's view rectangle
        half_w, half_h = spec.bounds_mm
    must = [(sx * half_w, sy * half_h) for sx in (-1, 1) for sy in (-1, 1)]
    markers = profile.markers or {}
    s = float(markers.get("size_mm", 0.0)) * 0.75
    for cx, cy in markers.get("centres_mm", {}).values():
        must += [(cx + dx * s, cy + dy * s) for dx in (-1, 1) for dy in (-1, 1)]
    must = np.asarray(must, float)
    view_w, view_h = 2.0 * half_w, 2.0 * half_h
    cam = None
    for _ in range(8):
        cam = Camera.overhead(width, height, view_w, view_h, settings.camera_height_mm, settings.camera_tilt_deg,
                              settings.camera_yaw_deg, settings.camera_dist)
        px = cam.project(must)
        spread = max(float(np.max(np.abs(px[:, 0] - cam.cx))) / (cam.cx - margin_px),
                     float(np.max(np.abs(px[:, 1] - cam.cy))) / (cam.cy - margin_px))
        if spread <= 1.0:
            break
        view_w, view_h = view_w * spread * 1.01, view_h * spread * 1.01
    return cam
