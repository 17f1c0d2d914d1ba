"""What a judging command builds before the first frame: the calibration checked against the camera,
the empty-board pictures, and vision (detector + pipeline) on them. Shared by ``live`` and ``replay``."""
from __future__ import annotations

import sys
from pathlib import Path

from .errors import UserError
from .i18n import N_, _

#: what ``make_vision`` is for, as its errors name it (translated there)
PURPOSES = (N_("replay"), N_("live judging"))

__all__ = ["check_calibration", "read_background", "make_vision", "assembler_for"]


def check_calibration(path: str, image_size: tuple[int, int], game: str):
    """The calibration for this camera, refused with one line if it was made for another size or game."""
    from calibration.calfile import load_calibration

    cal = load_calibration(path, expected_image_size=image_size)
    if cal.game != game:
        raise UserError(_("{path}: this calibration is for {cal_game}, not {game}").format(
            path=path, cal_game=cal.game, game=game))
    return cal


def read_background(path: str | None, size: tuple[int, int]) -> list:
    """Empty-board images (a file, or every image in a folder) of the camera's size."""
    if path is None:
        return []
    import cv2

    from hardware.source import IMAGE_SUFFIXES

    p = Path(path)
    files = sorted(f for f in p.iterdir() if f.suffix.lower() in IMAGE_SUFFIXES) if p.is_dir() else [p]
    images = []
    for f in files:
        image = cv2.imread(str(f), cv2.IMREAD_COLOR)
        if image is None:
            raise UserError(_("--background {path}: cannot read this image").format(path=f))
        if (image.shape[1], image.shape[0]) != tuple(size):
            raise UserError(_("--background {path}: image is {width}x{height}, the camera gives {cam_w}x{cam_h}").format(
                path=f, width=image.shape[1], height=image.shape[0], cam_w=size[0], cam_h=size[1]))
        images.append(image)
    if not images:
        raise UserError(_("--background {path}: no images there").format(path=path))
    return images


def make_vision(calibration, background: list, purpose: str = "replay", detector: str = "classical",
                weights=None, fallback: bool = True):
    """The detector on this calibration inside the vision pipeline (a ``vision.pipeline.Vision``).
    ``classical`` (the default: the fastest and most precise on the benchmarks) is taught the empty board;
    its piece colours are the calibration's (``shotjudge calibrate --pieces``) or the profile's nominal
    ones, refined from the first frame's known layout and then from every confident detection. ``learned``
    runs the YOLO weights (``weights``, default the shipped model); if they cannot be loaded it falls back
    to the classical detector (with a warning) when ``fallback`` and a background are given, else it is a
    one-line error. ``purpose`` names the command in error messages (replay, live judging)."""
    try:
        from vision.detectors import make_detector
        from vision.pipeline import Pipeline
        from vision.types import VisionError
    except ImportError as exc:
        raise UserError(_("{purpose} needs the vision pipeline, which this build lacks ({error})").format(
            purpose=_(purpose), error=exc)) from None
    if detector not in ("classical", "learned"):
        raise UserError(_("--detector must be classical or learned, not {detector}").format(detector=repr(detector)))
    setup = dict(appearance=calibration.piece_appearance())
    found = None
    if detector == "learned":
        from .weights import crop_weights_for, shipped_weights

        full = Path(weights) if weights else shipped_weights()
        crops = crop_weights_for(full)
        try:
            # box centres refined by the rim fit, boxes with no plausible rim dropped: the one set-up
            # that measured right on the hard cases (models/README.md); whole frames only to (re)acquire,
            # crops where the picture changed between (vision.detect_crops: about 10x faster, same recall)
            found = make_detector("learned", calibration.plane, calibration.profile, refine=True, drop_unfit=True,
                                  weights=full, crop_weights=crops, **setup)
            if crops is None:
                print(_("shotjudge: warning: no {name} beside {weights}: the learned detector runs on every whole "
                        "frame (about 8 frames/s on one core, too slow to judge live)").format(
                    name=f"{full.stem}-crops.onnx", weights=full), file=sys.stderr)
        except VisionError as exc:
            if not fallback:
                raise UserError(f"{exc} (--no-fallback)") from None
            if not background:
                raise UserError(_("{error}; the classical fallback needs --background").format(error=exc)) from None
            print(_("shotjudge: warning: {error}; falling back to the classical detector").format(error=exc), file=sys.stderr)
    if found is None:
        if not background:
            raise UserError(_("{purpose} needs --background EMPTY.png: a picture of the empty board from this camera").format(
                purpose=_(purpose)))
        found = make_detector("classical", calibration.plane, calibration.profile, **setup)
        found.learn_background(list(background))
    return Pipeline(calibration.profile, detector=found, assembler=assembler_for(calibration.profile, found),
                    rows=rows_for(calibration))


def rows_for(calibration):
    """The camera's rolling shutter as its calibration records it (``vision.rows``), or None: a global
    shutter, or one not known (a webcam's readout is in no driver's report: ``camera.readout_s`` in the file)."""
    from vision.rows import RowClock

    readout_s = calibration.camera.readout_s if calibration.camera is not None else None
    return RowClock(readout_s, calibration.plane.image_size[1]) if readout_s else None


def assembler_for(profile, detector):
    """The shot assembler told the detector's position error (a still piece's repeated fit would make it
    look far smaller, and contact times falsely sure)."""
    from vision.board import Surface
    from vision.events import EventExtractor
    from vision.shot import ShotAssembler

    return ShotAssembler(profile, EventExtractor(Surface.from_profile(profile), sigma_mm=detector.position_sigma_mm))
