"""The steps of ``shotjudge setup`` on an open camera, each giving its pictures and one line of status.

Nothing here writes files: the command stages what the steps return and renames it into place only when
the step (or the whole set-up) succeeded, so a failed set-up leaves nothing half-written.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from .i18n import _
from .errors import UserError

__all__ = ["NAMES", "open_camera", "take_picture", "calibrate_step", "empty_step", "pieces_step", "live_command"]

#: what set-up writes into its folder
NAMES = {"calibration": "calibration.json", "view": "setup-view.png", "empty": "empty-board.png",
         "pieces": "setup-pieces.png"}


def open_camera(spec: str, kind: str, size=None, fps=None, camera=None):
    """The camera opened (not reconnecting: set-up is attended), with the recorded ``camera`` settings if
    given, else ready for metering (a Pi camera's white balance is metered by set-up, not by the source)."""
    from hardware import open_source

    if camera is not None:
        from .setup_camera import open_kwargs

        if camera.kind != kind:
            raise UserError(_("--source {spec}: the calibration was made with a {kind} camera; start again with --step "
                              "camera").format(spec=spec, kind=camera.kind))
        settings = open_kwargs(camera)
        if size is not None and tuple(size) != tuple(settings["size"]) or fps is not None and abs(fps - settings["fps"]) > 0.01:
            raise UserError(_("--size/--fps differ from the camera step's ({value}x{value2} at {fps} fps): give the "
                              "same, or start again with --step camera").format(
                                  value=settings['size'][0], value2=settings['size'][1], fps=format(settings['fps'], 'g')))
        source = open_source(spec, reconnect=False, **settings)
    else:
        extra = {"colour_gains": (1.0, 1.0)} if kind == "picam" else {}
        source = open_source(spec, size=size, fps=fps, reconnect=False, **extra)
    source.open()
    for warning in getattr(source, "warnings", []):
        print(_("warning: {warning}").format(warning=warning))
    return source


def take_picture(source, frames: int) -> np.ndarray:
    """The median of ``frames`` frames: sensor noise and a passing flicker are gone from it."""
    images = []
    for _frame in range(max(1, frames)):
        frame = source.read()
        if frame is None:
            raise UserError(_("{name}: the camera stopped delivering frames").format(name=source.name))
        images.append(frame.image[..., :3])
    return np.median(np.stack(images), axis=0).astype(np.uint8) if len(images) > 1 else images[0].copy()


def calibrate_step(source, profile, camera, frames: int, lens: dict):
    """The plane found from the markers on locked frames: (calibration with the camera block, the view with
    the markers found and the board drawn back, status line)."""
    import cv2

    from calibration.calfile import Calibration
    from calibration.overlay import draw_overlay

    from .cmd_calibrate import fit_plane, lens_for

    size = source.size
    images = [np.ascontiguousarray(source.read().image[..., :3]) for _ in range(max(1, frames))]
    k, dist, lens_source, lens_rms = lens_for(size, **lens)
    fit, image, found = fit_plane(images, profile, size, k, dist, source.name)
    calibration = replace(Calibration.from_fit(profile, fit, lens_source, lens_rms), camera=camera)
    view = draw_overlay(image, calibration)
    cv2.aruco.drawDetectedMarkers(view, [c.reshape(1, 4, 2).astype(np.float32) for c in found.corners_px],
                                  np.asarray(found.ids, np.int32).reshape(-1, 1))
    status = (f"markers: found {', '.join(map(str, fit.marker_ids))} of {len(profile.markers['centres_mm'])}; "
              f"board residual {fit.rms_mm:.2f} mm rms / {fit.max_mm:.2f} mm max")
    if fit.rms_mm > 1.0:
        status += " - above 1 mm: calibrate the lens (--lens) or check the markers lie flat"
    return calibration, view, status


def empty_step(source, calibration, frames: int):
    """The empty board: (picture, status line)."""
    picture = take_picture(source, frames)
    if (picture.shape[1], picture.shape[0]) != tuple(calibration.plane.image_size):
        raise UserError(_("the camera gives {value}x{value2}, the calibration is for {value3}x{value4}: start again "
                          "with --step camera").format(
                              value=picture.shape[1], value2=picture.shape[0], value3=calibration.plane.image_size[0],
                              value4=calibration.plane.image_size[1]))
    return picture, f"empty board: median of {max(1, frames)} frames, {picture.shape[1]}x{picture.shape[0]}"


def pieces_step(source, calibration, empty: np.ndarray, frames: int, state: str | None, where: str):
    """The pieces in the opening layout (or ``state``'s): (calibration with their colours, picture, status
    lines for the equipment, lines saying what to fix)."""
    from .cmd_calibrate import measure_pieces_on, piece_layout
    from .setup_equipment import check_equipment

    layout = piece_layout(calibration, state)
    picture = take_picture(source, frames)
    measured = measure_pieces_on(calibration, picture, [empty], layout, f"the pieces picture ({where})", where)
    ok, fix = check_equipment(calibration, picture, empty, layout)
    lines = [f"equipment: {', '.join(ok) if ok else 'nothing measured'}"
             + ("" if ok or fix else " (the pieces touch in this layout: give --state with pieces apart to measure them)")]
    return measured, picture, lines, fix


def live_command(args, calibration, out: Path) -> str:
    """The ``shotjudge live`` line that uses what set-up wrote, with the same camera settings."""
    cam = calibration.camera
    parts = ["shotjudge live", f"--game {calibration.game}", f"--source {args.source}",
             f"--calibration {out / NAMES['calibration']}", f"--background {out / NAMES['empty']}",
             f"--size {cam.size[0]}x{cam.size[1]}", f"--fps {cam.fps:g}"]
    if cam.kind == "picam" and cam.exposure_us is not None:
        parts.append(f"--exposure-us {cam.exposure_us}")
    if cam.kind == "picam" and cam.colour_gains is not None:
        parts.append(f"--colour-gains {cam.colour_gains[0]:g},{cam.colour_gains[1]:g}")
    return " ".join(parts)
