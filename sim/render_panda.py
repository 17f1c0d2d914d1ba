"""A second, independent renderer, for evaluation only: Panda3D's software rasteriser films the simulator's
world states in 3-D, to ask whether the detector transfers to pictures it was never developed against.

    r = PandaRenderer(camera, profile, settings)   # the interface of sim.render.Renderer
    image = r.render(frame, states_at)             # BGR uint8, camera.height x camera.width

Only the world (``sim.frames``), the camera (``calibration.camera.Camera``), the profile's geometry and the
settings' seed and exposure time are shared with ``sim.render``; materials, lamps, shadows, blur, noise
and compression are this module's own (``sim.render_panda_look``, ``sim.render_panda_scene``). Nothing in
``vision/`` may be tuned on it.

The camera: a pinhole lens made from ``camera.K`` (focal length, principal point, film offset) looking
from the camera's pose renders the *undistorted* picture, with a margin wide enough for what the lens
distortion pulls in; one ``cv2.remap`` then applies ``camera.dist`` (each output pixel samples the
undistorted picture at ``camera.undistort_points`` of itself), so a board point lands where
``camera.project`` says. Each picture averages three renders across the exposure (``settings.exposure_s``,
centred on the frame's time: motion blur); then optical blur (which also hides the rasteriser's jagged
edges), white balance and vignetting, a tone curve, signal-dependent sensor noise and a JPEG round trip.
Speed: the frame's state is rendered whole (unless it is the one rendered whole last time), the sub-frame
states only inside the rectangle around what moves during the exposure (a scissor; the rasteriser clips
to it, so texture sampling there can differ from the whole render by a few levels while things move),
and the same states as the last call are not rendered at all.
"""
from __future__ import annotations

import math
from typing import Callable

import cv2
import numpy as np

from .render_panda_look import draw_look
from .render_settings import RenderSettings

__all__ = ["PandaRenderer", "SUBFRAMES"]

SUBFRAMES = 3
#: the software rasteriser fills a polygon's pixels a quarter pixel up and left of where OpenGL's pixel-centre
#: rule puts them (measured: centroids of large flat discs, any image size); the film is shifted to undo it
RASTER_SHIFT_PX = 0.25
_PRC = "window-type offscreen\naudio-library-name null\nload-display p3tinydisplay\nnotify-level-display fatal\n" \
       "notify-level-x11display fatal\nnotify-level-glxdisplay fatal\nframebuffer-multisample 0\n"
_ENGINE: list = []


def _engine():
    """(engine, pipe): Panda3D's graphics engine with the software pipe, made once per process."""
    if not _ENGINE:
        from panda3d.core import GraphicsEngine, GraphicsPipeSelection, load_prc_file_data

        load_prc_file_data("shotjudge-render-panda", _PRC)
        pipe = GraphicsPipeSelection.get_global_ptr().make_module_pipe("p3tinydisplay")
        if pipe is None:
            raise RuntimeError("Panda3D's software renderer (p3tinydisplay) is not available")
        _ENGINE.extend([GraphicsEngine.get_global_ptr(), pipe])
    return _ENGINE[0], _ENGINE[1]


def _panda_pose(camera):
    """The camera's pose as a Panda3D transform: its axes (x right, y forward, z up) and centre in board mm."""
    from panda3d.core import LMatrix4f

    r = camera.R  # world -> OpenCV camera (x right, y down, z forward)
    to_cv = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])  # Panda camera axes -> OpenCV's
    q = r.T @ to_cv  # Panda camera -> world
    c = camera.centre_mm
    rows = [(*q[:, i], 0.0) for i in range(3)] + [(*c, 1.0)]
    return LMatrix4f(*[float(v) for row in rows for v in row])


class PandaRenderer:
    """Settings in ``__init__``, one method: ``render(frame, states_at=None) -> image``."""

    #: a global shutter: every row at the frame's time (``settings.rolling_shutter_s`` is not drawn here)
    readout_s = 0.0

    def __init__(self, camera, profile, settings: RenderSettings = RenderSettings()):
        from panda3d.core import (Camera as PCamera, FrameBufferProperties, GraphicsOutput, GraphicsPipe, PerspectiveLens,
                                  Texture, WindowProperties)

        from .render_panda_scene import Scene

        self.camera, self.profile, self.settings = camera, profile, settings
        self.look = draw_look(settings.seed)
        self._rng = np.random.default_rng([int(settings.seed), 0x7A11])
        self._maps, (self.margin_x, self.margin_y), (bw, bh) = self._distortion_maps(camera)
        engine, pipe = _engine()
        fb = FrameBufferProperties()
        fb.set_rgb_color(True)
        fb.set_rgba_bits(8, 8, 8, 0)
        fb.set_depth_bits(24)
        self._engine = engine
        self._buffer = engine.make_output(pipe, f"panda-{id(self)}", 0, fb, WindowProperties.size(bw, bh),
                                          GraphicsPipe.BF_refuse_window)
        if self._buffer is None:
            raise RuntimeError("Panda3D could not make an offscreen buffer")
        self._tex = Texture()
        self._buffer.add_render_texture(self._tex, GraphicsOutput.RTM_copy_ram)
        self._buffer.set_clear_color((0.05, 0.05, 0.05, 1.0))
        self._buffer.set_active(False)
        px_per_mm = camera.fx / max(float(np.linalg.norm(camera.centre_mm)), 1.0)
        self.scene = Scene(profile, self.look, settings.seed, self._view_rect(camera), px_per_mm)
        lens = PerspectiveLens()
        self._lens = lens
        self._set_lens()
        lens.set_near_far(50.0, 8000.0)
        cam_node = PCamera("camera")
        cam_node.set_lens(lens)
        self._cam = self.scene.root.attach_new_node(cam_node)
        self._cam.set_mat(_panda_pose(camera))
        self._buffer.make_display_region().set_camera(self._cam)
        self._buffer_size = (bw, bh)
        self._full: tuple | None = None  # (state, uint8 BGR buffer) of the last state rendered whole
        self._vignette = self._vignette_map(camera)
        self._tone = (255.0 * (np.arange(256) / 255.0) ** (1.0 / self.look.gamma) + 0.5).astype(np.uint8)
        self._sigma = (self.look.noise * np.sqrt(0.25 + np.arange(256) / 170.0)).astype(np.float32)  # shot + read noise
        self._fixed_maps = cv2.convertMaps(self._maps[0], self._maps[1], cv2.CV_16SC2)
        self._noise = [self._rng.standard_normal((camera.height + 16, camera.width + 16, 3), np.float32) for _ in range(2)]
        self._last: tuple | None = None

    # ------------------------------------------------------------------ the camera
    def _set_lens(self) -> None:
        """Film size (the buffer's pixels), focal length ``fx`` and film offset so that buffer pixel
        (u + margin_x, v + margin_y) is the undistorted image pixel (u, v) of ``camera.K`` (pixel centres at
        integers, as OpenCV has them; ``fy != fx`` stretches the film's height)."""
        cam = self.camera
        w, h = self._maps[2]
        aspect = cam.fx / cam.fy
        self._lens.set_film_size(w, h * aspect)
        self._lens.set_focal_length(cam.fx)
        edge = 0.5 + RASTER_SHIFT_PX  # from a pixel's centre (OpenCV) to the film's pixel grid
        self._lens.set_film_offset(w / 2.0 - (cam.cx + edge + self.margin_x), aspect * (cam.cy + edge + self.margin_y - h / 2.0))

    def undistorted_px(self, points_mm) -> np.ndarray:
        """Board points (N, 3) through the Panda3D lens and pose: undistorted image pixels (N, 2), less the
        rasteriser's shift (for tests: compare with ``camera.undistort_points(camera.project(points))``)."""
        from panda3d.core import LMatrix4f, Point2, Point3

        self._set_lens()
        inv = LMatrix4f(self._cam.get_mat())
        inv.invert_in_place()
        (bw, bh) = self._maps[2]
        out = []
        for p in np.asarray(points_mm, float).reshape(-1, 3):
            local, film = inv.xform_point(Point3(*p)), Point2()
            self._lens.project(local, film)
            out.append(((film[0] + 1) * bw / 2 - 0.5 - RASTER_SHIFT_PX - self.margin_x,
                        (1 - film[1]) * bh / 2 - 0.5 - RASTER_SHIFT_PX - self.margin_y))
        return np.asarray(out)

    @staticmethod
    def _distortion_maps(camera):
        """Remap tables from the output (distorted) pixels to the undistorted render with its margins."""
        w, h = camera.width, camera.height
        grid = np.stack(np.meshgrid(np.arange(w, dtype=np.float64), np.arange(h, dtype=np.float64)), -1).reshape(-1, 1, 2)
        if any(camera.dist):
            crit = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 40, 1e-7)
            dist = np.asarray(camera.dist, float)
            if hasattr(cv2, "undistortPointsIter"):  # OpenCV 4
                und = cv2.undistortPointsIter(grid, camera.K, dist, None, camera.K, crit)
            else:  # OpenCV 5: the iteration criteria are an argument of undistortPoints
                und = cv2.undistortPoints(grid, camera.K, dist, R=None, P=camera.K, criteria=crit)
            und = und.reshape(h, w, 2)
        else:
            und = grid.reshape(h, w, 2)
        lo, hi = und.reshape(-1, 2).min(0), und.reshape(-1, 2).max(0)
        mx, my = int(math.ceil(max(0.0, -lo[0]))) + 3, int(math.ceil(max(0.0, -lo[1]))) + 3
        bw = mx + int(math.ceil(max(hi[0], w - 1))) + 4
        bh = my + int(math.ceil(max(hi[1], h - 1))) + 4
        bw += -bw % 4
        return ((und[..., 0] + mx).astype(np.float32), (und[..., 1] + my).astype(np.float32), (bw, bh)), (mx, my), (bw, bh)

    def _view_rect(self, camera, margin_mm: float = 200.0, limit_mm: float = 4000.0):
        """The part of the plane z = 0 the camera sees, with a margin (x0, x1, y0, y1)."""
        w, h = camera.width, camera.height
        edge = [(u, v) for u in np.linspace(0, w - 1, 9) for v in (0, h - 1)] + [(u, v) for v in np.linspace(0, h - 1, 9) for u in (0, w - 1)]
        mm = np.clip(camera.image_to_board(np.asarray(edge, float)), -limit_mm, limit_mm)
        (x0, y0), (x1, y1) = mm.min(0) - margin_mm, mm.max(0) + margin_mm
        return float(max(x0, -limit_mm)), float(min(x1, limit_mm)), float(max(y0, -limit_mm)), float(min(y1, limit_mm))

    def _vignette_map(self, camera) -> np.ndarray:
        yy, xx = np.mgrid[0:camera.height, 0:camera.width].astype(np.float32)
        r2 = ((xx - camera.cx) ** 2 + (yy - camera.cy) ** 2) / (camera.cx ** 2 + camera.cy ** 2)
        gain = (1.0 - self.look.vignette * r2)[..., None]
        return np.ascontiguousarray(gain * np.asarray(self.look.gains[::-1], np.float32))  # RGB gains, BGR pixels

    # ------------------------------------------------------------------ per frame
    def _region(self, corners: np.ndarray):
        """The buffer rectangle (x0, y0, x1, y1), rows from the top, that covers ``corners`` (board mm) as
        the lens sees them, with a margin; the whole buffer where one is near or behind the camera."""
        bw, bh = self._buffer_size
        cam = np.asarray(corners, float) @ self.camera.R.T + np.asarray(self.camera.tvec, float)
        if np.any(cam[:, 2] < 60.0):
            return 0, 0, bw, bh
        u = self.camera.fx * cam[:, 0] / cam[:, 2] + self.camera.cx + self.margin_x
        v = self.camera.fy * cam[:, 1] / cam[:, 2] + self.camera.cy + self.margin_y
        x0, x1 = max(0, int(u.min()) - 3), min(bw, int(math.ceil(u.max())) + 4)
        y0, y1 = max(0, int(v.min()) - 3), min(bh, int(math.ceil(v.max())) + 4)
        return (x0, y0, x1, y1) if x1 > x0 and y1 > y0 else None

    def _draw(self, rect=None) -> np.ndarray:
        """Render the scene as posed (only inside ``rect`` (x0, y0, x1, y1), a scissor, when given): the
        buffer as uint8 BGR, rows from the top."""
        from panda3d.core import ScissorAttrib

        bw, bh = self._buffer_size
        if rect is None:
            self.scene.root.clear_attrib(ScissorAttrib)
        else:
            x0, y0, x1, y1 = rect
            self.scene.root.set_attrib(ScissorAttrib.make(x0 / bw, x1 / bw, 1.0 - y1 / bh, 1.0 - y0 / bh))
        self._buffer.set_active(True)
        self._engine.render_frame()
        self._buffer.set_active(False)
        ram = np.frombuffer(memoryview(self._tex.get_ram_image()), np.uint8)  # Panda3D keeps BGR(A) in RAM
        return ram.reshape(bh, bw, -1)[::-1, :, :3]

    def _substates(self, frame, states_at):
        exp = self.settings.exposure_s
        if states_at is None or exp <= 0:
            return [frame]
        return [states_at(frame.t_s + exp * ((i + 0.5) / SUBFRAMES - 0.5)) for i in range(SUBFRAMES)]

    def _exposure(self, frame, states) -> np.ndarray:
        """The undistorted buffer (uint8 BGR) over the exposure: ``frame`` rendered whole (unless it is
        the state rendered whole last time), then the sub-frame states averaged inside the rectangle
        around everything that differs between them and ``frame`` (rendered under a scissor)."""
        key = (frame.pieces, frame.occluders)
        if self._full is None or self._full[0] != key:
            self.scene.pose(frame)
            self._full = (key, self._draw().copy())
        out = self._full[1]
        if all((s.pieces, s.occluders) == key for s in states):
            return out
        self.scene.pose(frame)
        corners = [self.scene.pose(s) for s in states]
        rect = self._region(np.concatenate(corners))
        if rect is None:
            return out
        x0, y0, x1, y1 = rect
        acc = np.zeros((y1 - y0, x1 - x0, 3), np.float32)
        for s in states:
            self.scene.pose(s)
            acc += self._draw(rect)[y0:y1, x0:x1]
        out = out.copy()
        out[y0:y1, x0:x1] = acc * (1.0 / len(states)) + 0.5
        return out

    def clean(self, frame, states_at: Callable[[float], object] | None = None) -> np.ndarray:
        """The picture before the sensor noise (uint8 BGR, distorted like the camera's, blurred by the
        optics, white-balanced, vignetted, with the camera's tone curve). The sub-frame states of the last
        call give the same picture again without rendering."""
        states = self._substates(frame, states_at)
        key = (frame.pieces, frame.occluders) + tuple((s.pieces, s.occluders) for s in states)
        if self._last is not None and self._last[0] == key:
            return self._last[1]
        img = cv2.remap(self._exposure(frame, states), *self._fixed_maps, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        img = cv2.GaussianBlur(img, (0, 0), self.look.blur_px)
        img = cv2.LUT(cv2.multiply(img, self._vignette, dtype=cv2.CV_8U), self._tone)
        self._last = (key, img, cv2.LUT(img, self._sigma))
        return img

    def render(self, frame, states_at: Callable[[float], object] | None = None) -> np.ndarray:
        """The camera image of ``frame`` (a ``sim.frames.SimFrame``); ``states_at(t_s)`` gives sub-frame
        states across the exposure (motion blur), without it the frame is rendered sharp."""
        img = self.clean(frame, states_at)
        sigma = self._last[2]
        h, w = img.shape[:2]
        bank = self._noise[int(self._rng.integers(0, 2))]
        oy, ox = (int(v) for v in self._rng.integers(0, 16, 2))
        out = cv2.add(img, cv2.multiply(sigma, bank[oy:oy + h, ox:ox + w]), dtype=cv2.CV_8U)  # rounded, saturated
        ok, jpg = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, self.look.jpeg_quality])
        return cv2.imdecode(jpg, cv2.IMREAD_COLOR) if ok else out

    def close(self) -> None:
        """Give the offscreen buffer back to Panda3D (also done when the renderer is collected)."""
        buffer, self._buffer = getattr(self, "_buffer", None), None
        if buffer is not None and _ENGINE:
            _ENGINE[0].remove_window(buffer)

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass
