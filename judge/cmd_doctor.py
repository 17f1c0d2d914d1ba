"""``shotjudge doctor``: check this machine before a match, one line per check.

Camera found (its size, rate and modes), calibration made for that camera, detector loads, free disk space
where the journal and the clips go, and the clock. Exit status 0 when nothing FAILs, 1 otherwise: a
service or a script can run it before ``shotjudge live``.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from .i18n import _
from .options import frame_rate

__all__ = ["register", "run"]


def register(subparsers) -> None:
    from .cmd_live import _gains, _size

    p = subparsers.add_parser("doctor", help=_("check the camera, calibration, detector, disk and clock before a match"),
                              description=_(__doc__), formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--source", help=_("the camera live will use: picam, picam:N, usb:N, rtsp://..., FILE or DIR "
                                      "(default: no camera check)"))
    p.add_argument("--fps", type=frame_rate, help=_("camera frame rate to request (as for live)"))
    p.add_argument("--size", type=_size, help=_("camera resolution to request, WxH (as for live)"))
    p.add_argument("--exposure-us", type=int, help=_("Pi camera: locked exposure time in µs (as for live)"))
    p.add_argument("--colour-gains", type=_gains, help=_("Pi camera: locked red,blue gains (as for live)"))
    p.add_argument("--calibration", help=_("calibration.json to check against the camera's image size"))
    p.add_argument("--game", choices=("novuss", "cvrnkana"), help=_("also check the calibration is for this game"))
    p.add_argument("--detector", default="classical", choices=("classical", "learned"), help=_("detector to load (as for live)"))
    p.add_argument("--weights", help=_("learned detector weights: an .onnx file or an _ncnn_model folder (default: the "
                                       "shipped models/shotjudge-det.onnx)"))
    p.add_argument("--journal", default="match.sqlite", help=_("live's journal file: the free space of its folder is "
                                                               "checked (default: this folder, where live puts "
                                                               "match-GAME.sqlite)"))
    p.add_argument("--clips", default="clips", help=_("live's clips folder (default: clips)"))
    p.add_argument("--save-frame", metavar="PNG", help=_("save the frame read from the camera (a picture at live's "
                                                         "settings, for calibrate and --background)"))
    p.set_defaults(func=run)


def _guarded(name: str, check, *args):
    """A check's result; anything it did not expect is its FAIL line, never a traceback."""
    from .doctor_checks import Check

    try:
        return check(*args)
    except Exception as exc:  # noqa: BLE001 - doctor reports every problem as a line and goes on
        first = (str(exc).splitlines() or [""])[0]
        return Check("FAIL", name, f"{type(exc).__name__}: {first}" if first else type(exc).__name__)


def run(args) -> int:
    from . import doctor_checks as dc

    lines: list = []
    size = None
    if args.source:
        camera = {k: v for k, v in (("exposure_us", args.exposure_us), ("colour_gains", args.colour_gains)) if v is not None}
        found = _guarded(f"camera {args.source}", dc.camera, args.source, args.fps, args.size, camera, args.save_frame)
        checks, size = found if isinstance(found, tuple) else ([found], None)
        lines += checks
    else:
        lines.append(dc.Check("warn", "camera", _("not checked (give --source picam or usb:N, as for live)")))
    found = _guarded("calibration", dc.calibration, args.calibration, size, args.game)
    checks, cal = found if isinstance(found, tuple) else ([found], None)
    lines += checks
    lines.append(_guarded(f"detector {args.detector}", dc.detector, args.detector, args.weights, cal))
    folders = {"journal": Path(args.journal).parent, "clips": Path(args.clips)}
    found = _guarded("disk", dc.disk, folders)
    lines += found if isinstance(found, list) else [found]
    lines.append(_guarded("clock", dc.clock))
    for check in lines:
        print(check.line(), flush=True)
    return 1 if any(c.status == "FAIL" for c in lines) else 0
