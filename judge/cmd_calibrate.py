"""``shotjudge calibrate``: from images of the table to a calibration file (and a preview to check it).

The lens comes from ChArUco views (``--lens``), from an earlier calibration (``--lens-from``) or, for a
lens known to be straight, a nominal field of view (``--hfov``). The plane comes from the profile's ArUco
markers, or from four image points (``--points``) on known board points when the markers are missing.
SOURCE is an image, a folder of images, a video, or a camera (``picam``, ``usb:N``, a stream) read through
hardware/; ``shotjudge setup`` is the guided way from a camera (locked exposure, empty board, colours).
"""
from __future__ import annotations

from pathlib import Path

from judge.i18n import _

__all__ = ["register", "run", "read_frames", "lens_for", "fit_plane", "measure_pieces", "measure_pieces_on"]

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp")
VIDEO_SUFFIXES = (".mp4", ".mkv", ".avi", ".mov", ".webm", ".h264", ".mjpeg")
#: the surface's corners that ``--points``/``--click`` name where the camera sees the whole surface, in order
CORNERS = ("SW", "SE", "NE", "NW")


def register(subparsers) -> None:
    from rules.game import GAMES

    p = subparsers.add_parser("calibrate", help=_("calibrate the camera over the table or pit"),
                              description=_("Find the board in SOURCE (ArUco markers from the profile), write the "
                                            "calibration file and optionally a preview with the board drawn back."))
    p.add_argument("--game", choices=tuple(GAMES), required=True)
    p.add_argument("--profile", help=_("profile name or JSON file (default: the game's default profile)"))
    p.add_argument("--source", required=True, help=_("image file, folder of images, video file, or a camera (picam, "
                                                     "usb:N, rtsp://..., http(s)://...) showing the table"))
    p.add_argument("--size", type=_size, help=_("camera resolution to request, WxH (use the one live will use)"))
    p.add_argument("--fps", type=frame_rate, help=_("camera frame rate to request"))
    p.add_argument("--out", required=True, help=_("calibration file to write (JSON)"))
    p.add_argument("--preview", help=_("write a PNG of the source with the calibrated board drawn on it"))
    lens = p.add_mutually_exclusive_group()
    lens.add_argument("--lens", help=_("image folder or video of the ChArUco board (shotjudge markers --charuco)"))
    lens.add_argument("--lens-from", help=_("reuse the lens of an existing calibration file"))
    lens.add_argument("--hfov", type=float, help=_("assume a straight lens with this horizontal field of view (deg)"))
    manual = p.add_mutually_exclusive_group()
    manual.add_argument("--click", action="store_true", help=_("manual fallback: click the 4 reference points in a window"))
    manual.add_argument("--points", help=_("manual fallback: 'u,v;u,v;u,v;u,v' image pixels of the 4 reference points "
                                           "(Novuss: surface corners SW, SE, NE, NW; Cvrnkana: the markers' centres by "
                                           "id)"))
    p.add_argument("--max-frames", type=int, default=30, help=_("frames of a folder/video to try (default 30)"))
    p.add_argument("--pieces", help=_("also measure the piece colours on this image of the opening layout (or of "
                                      "--state's layout); needs --background"))
    p.add_argument("--background", help=_("with --pieces: image of the empty board from the same camera"))
    p.add_argument("--state", help=_("with --pieces: game state file giving where the pieces stand (default: opening)"))
    p.set_defaults(func=run)


def _size(text: str) -> tuple[int, int]:
    from .cmd_live import _size as parse

    return parse(text)


def frame_rate(text: str) -> float:
    from .options import frame_rate as parse

    return parse(text)


def read_frames(source: str, limit: int | None = None, size: tuple[int, int] | None = None,
                fps: float | None = None):
    """Frames (BGR) from an image file, a folder of images (sorted by name), a video file or a camera
    (``picam``, ``usb:N``, a stream URL: opened through ``hardware.open_source`` at ``size``/``fps``)."""
    import re

    import cv2

    from judge.errors import UserError

    path = Path(source)
    if not path.exists():
        if re.fullmatch(r"picam(:\d+)?|usb:.*|[A-Za-z][A-Za-z0-9+.-]*://.*", source):
            yield from _camera_frames(source, limit, size, fps)
            return
        if source.isdigit() or source.startswith("/dev/video"):
            raise UserError(_("source {source} does not exist: a webcam is named usb:N (usb:0 for /dev/video0), the Pi "
                              "camera picam").format(source=repr(source)))
        raise UserError(_("source {source} does not exist (give an image, a folder of images, a video file or a "
                          "camera: picam, usb:N, rtsp://...)").format(source=repr(source)))
    count = 0
    if path.is_dir():
        files = sorted(f for f in path.iterdir() if f.suffix.lower() in IMAGE_SUFFIXES)
        if not files:
            raise UserError(_("folder {source} holds no images ({value})").format(source=source, value=', '.join(IMAGE_SUFFIXES)))
        for f in files:
            image = cv2.imread(str(f), cv2.IMREAD_COLOR)
            if image is None:
                raise UserError(_("{f}: not a readable image").format(f=f))
            yield image
            count += 1
            if limit and count >= limit:
                return
        return
    if path.suffix.lower() in IMAGE_SUFFIXES:
        image = cv2.imread(str(path), cv2.IMREAD_COLOR)
        if image is None:
            raise UserError(_("{source}: not a readable image").format(source=source))
        yield image
        return
    cap = cv2.VideoCapture(str(path))
    try:
        while cap.isOpened():
            ok, image = cap.read()
            if not ok:
                break
            yield image
            count += 1
            if limit and count >= limit:
                return
    finally:
        cap.release()
    if count == 0:
        raise UserError(_("{source}: no frames could be read (not an image, folder or video OpenCV can open)").format(
            source=source))


def _camera_frames(source: str, limit: int | None, size, fps):
    """Frames of a live camera or stream, copied out of the source's read-only buffers."""
    from hardware import open_source

    with open_source(source, size=size, fps=fps, reconnect=False) as cam:
        for warning in getattr(cam, "warnings", []):
            print(_("warning: {warning}").format(warning=warning))
        for count, frame in enumerate(cam, 1):
            yield frame.image.copy()
            if limit and count >= limit:
                return


def _parse_points(text: str):
    from judge.errors import UserError

    try:
        pts = [[float(v) for v in part.split(",")] for part in text.replace(" ", "").split(";") if part]
    except ValueError:
        pts = []
    if len(pts) != 4 or any(len(p) != 2 for p in pts):
        raise UserError(_("--points must be 4 image points 'u,v;u,v;u,v;u,v', got {text}").format(text=repr(text)))
    return pts


def manual_reference_mm(profile):
    """The board points ``--points`` refers to, in order."""
    if profile.spec.sees_whole_field:  # the surface's corners, in the order of CORNERS
        hx, hy = profile.spec.bounds_mm
        return [[-hx, -hy], [hx, -hy], [hx, hy], [-hx, hy]]
    centres = profile.markers["centres_mm"]
    ids = sorted(centres, key=int)
    if len(ids) < 4:
        raise ValueError("the profile needs 4 markers for manual points")
    return [list(centres[i]) for i in ids[:4]]


def _lens(args, image_size):
    return lens_for(image_size, args.lens, args.lens_from, args.hfov)


def lens_for(image_size, lens: str | None = None, lens_from: str | None = None, hfov: float | None = None):
    """The lens for ``image_size``: (camera matrix, distortion, source, rms px) from ChArUco views (``lens``),
    an earlier calibration (``lens_from``) or a straight lens of ``hfov`` degrees (default 70)."""
    from calibration.calfile import load_calibration
    from calibration.intrinsics import calibrate_intrinsics, nominal_intrinsics
    from judge.errors import UserError

    if lens:
        intr = calibrate_intrinsics(read_frames(lens, limit=200))
        if intr.image_size != image_size:
            raise UserError(_("ChArUco images are {value}x{value2} but the table source is {value3}x{value4}: use the "
                              "same camera resolution").format(
                                  value=intr.image_size[0], value2=intr.image_size[1], value3=image_size[0], value4=image_size[1]))
        print(_("lens: ChArUco, {views} views, reprojection {rms_px} px rms").format(
            views=intr.views, rms_px=format(intr.rms_px, '.3f')))
        return intr.camera_matrix, intr.distortion, "charuco", intr.rms_px
    if lens_from:
        old = load_calibration(lens_from, expected_image_size=image_size)
        return old.plane.camera_matrix, old.plane.distortion, old.intrinsics_source, old.intrinsics_rms_px
    intr = nominal_intrinsics(image_size, hfov or 70.0)
    print(_("lens: not calibrated, assuming a straight lens with {value} deg field of view (use --lens for a real "
            "camera)").format(value=format(hfov or 70.0, 'g')))
    return intr.camera_matrix, intr.distortion, "nominal", None


def _check_outputs(args) -> None:
    """Where the calibration and its preview go, checked before any work."""
    from judge.errors import UserError
    from judge.options import output_path

    if args.preview and Path(args.preview).suffix.lower() != ".png":
        raise UserError(_("--preview must be a .png file"))
    for option, path in (("--out", args.out), ("--preview", args.preview)):
        output_path(option, path)  # its folder made, or one line saying why it cannot be


def run(args) -> int:
    from calibration.calfile import Calibration, save_calibration
    from calibration.overlay import draw_overlay
    from calibration.atomic import staged_files
    from calibration.plane import from_points
    from calibration.profile import profile_for
    from sim.video import write_png

    _check_outputs(args)
    profile = profile_for(args.game, args.profile)
    out = Path(args.out)
    frames = read_frames(args.source, limit=max(1, args.max_frames), size=args.size, fps=args.fps)
    first = next(frames)
    size = (first.shape[1], first.shape[0])
    k, dist, lens_source, lens_rms = _lens(args, size)
    if args.points or args.click:
        if args.click:
            from calibration.clicks import click_points

            names = ([f"surface corner {c}" for c in CORNERS]
                     if profile.spec.sees_whole_field else [f"centre of marker {i}" for i in sorted(
                         profile.markers["centres_mm"], key=int)[:4]])
            pts = click_points(first, names)
        else:
            pts = _parse_points(args.points)
        fit = from_points(pts, manual_reference_mm(profile), size, k, dist)
        best_image = first
    else:
        fit, best_image = fit_plane([first, *frames], profile, size, k, dist, args.source)[:2]
    calibration = Calibration.from_fit(profile, fit, lens_source, lens_rms)
    if args.pieces:
        calibration = measure_pieces(calibration, args.pieces, args.background, args.state)
    with staged_files() as stage:  # the calibration and its preview: both or neither
        save_calibration(calibration, out, stage)
        if args.preview:
            write_png(args.preview, draw_overlay(best_image, calibration), stage)
    print(_("wrote {out}: {name}, {value}x{value2}, {method} ({value3}), residual {rms_mm} mm rms / {max_mm} mm max, "
            "{rms_px} px rms").format(
                out=out, name=profile.name, value=size[0], value2=size[1], method=fit.method,
                value3=', '.join(map(str, fit.marker_ids)) or _('4 points'), rms_mm=format(fit.rms_mm, '.2f'),
                max_mm=format(fit.max_mm, '.2f'), rms_px=format(fit.rms_px, '.2f')))
    if fit.rms_mm > 1.0:
        print(_("warning: residual above 1 mm - calibrate the lens (--lens) or check the markers lie flat"))
    if args.preview:
        print(_("wrote {preview}: check that the drawn lines lie on the table's lines").format(preview=args.preview))
    return 0


def fit_plane(images, profile, size, k, dist, where: str):
    """The best marker fit over ``images`` (most markers, then least residual; stops once all are found):
    (fit, the image it came from, its marker detection). One line naming ``where`` if none fits."""
    from calibration.errors import CalibrationError
    from calibration.markers import MarkerDetector
    from calibration.plane import fit_detection
    from judge.errors import UserError

    detector = MarkerDetector.for_profile(profile)
    best, best_image, best_found, last_error = None, None, None, None
    for image in images:
        if (image.shape[1], image.shape[0]) != tuple(size):
            raise UserError(_("frames of {where} differ in size").format(where=where))
        found = detector(image)
        try:
            fit = fit_detection(found, profile, size, k, dist)
        except CalibrationError as exc:
            last_error = exc
            continue
        if best is None or (len(fit.marker_ids), -fit.rms_mm) > (len(best.marker_ids), -best.rms_mm):
            best, best_image, best_found = fit, image, found
        if len(fit.marker_ids) == len(profile.markers["centres_mm"]):
            break
    if best is None:
        raise UserError(_("{where}: {last_error}; print them with 'shotjudge markers --game {game}' or give --points").format(
            where=where, last_error=last_error, game=profile.game))
    return best, best_image, best_found


def measure_pieces(calibration, pieces: str, background: str | None, state: str | None = None):
    """The calibration with piece colours measured on ``pieces`` (an image of a known layout: the game's
    opening, or the pieces of a game state file), against ``background`` (the empty board)."""
    from judge.errors import UserError
    from judge.setup import read_background

    if not background:
        raise UserError(_("--pieces needs --background EMPTY.png: a picture of the empty board from this camera"))
    size = calibration.plane.image_size
    layout = piece_layout(calibration, state)
    try:
        frame = read_background(pieces, size)[0]
        backgrounds = read_background(background, size)
    except UserError as exc:
        raise UserError(str(exc).replace("--background", "--pieces", 1) if pieces in str(exc) else str(exc)) from None
    return measure_pieces_on(calibration, frame, backgrounds, layout, f"--pieces {pieces}", pieces)


def piece_layout(calibration, state: str | None = None) -> dict:
    """Where the pieces stand on the picture: the game's opening, or the pieces of a game state file."""
    import rules
    from judge.errors import UserError
    from judge.replay import load_state

    engine = rules.engine_for(calibration.game, calibration.profile.geometry)
    layout = dict(engine.hints(load_state(engine, state) if state else engine.initial()).layout)
    if not layout:
        raise UserError(_("--pieces: the {game} opening has no piece on the field; give --state").format(game=calibration.game))
    return layout


def measure_pieces_on(calibration, frame, backgrounds: list, layout: dict, label: str, shown: str = ""):
    """The calibration with piece colours measured on ``frame`` (pieces at ``layout``) against the empty-board
    ``backgrounds``; ``label`` names the picture in error messages, ``shown`` (default: label) in the status."""
    from calibration.appearance import AppearanceError, appearance_from_dict
    from judge.errors import UserError
    from vision.detect_classical import ClassicalDetector
    from vision.types import VisionError

    try:
        detector = ClassicalDetector(calibration.plane, calibration.profile)
        detector.learn_background(list(backgrounds))
        measured = appearance_from_dict(detector.measure_appearance(frame, layout), calibration.game,
                                        label, complete=False)
    except (VisionError, AppearanceError) as exc:
        raise UserError(f"{label}: {exc}") from None
    print(_("piece colours measured on {value}: ").format(value=shown or label) + ", ".join(
        f"{k} rgb({', '.join(f'{v:.0f}' for v in look.rgb)})" for k, look in measured.pieces.items()))
    return calibration.with_appearance(measured)
