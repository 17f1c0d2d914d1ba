"""``shotjudge setup``: guided set-up from the live camera, for ``shotjudge live``.

Steps, in order, each printing one line of status and writing its pictures into --out DIR:

  camera  open the camera at --size/--fps, let its automatic exposure and white balance settle, lock what
          they chose (refused controls are named), find the markers on a locked frame and calibrate:
          calibration.json (with the locked settings) and setup-view.png (markers found, board drawn back)
  empty   the empty board, as a median of --frames frames: empty-board.png
  pieces  the pieces in the opening layout (or --state's): their colours into calibration.json, the
          equipment sizes checked (exit status 1 if something must be fixed), setup-pieces.png

``--step all`` (the default) runs them in one go, asking on the terminal before each picture (``--yes``:
without asking); ``--step camera|empty|pieces`` runs one, reading what the earlier steps left in DIR, so a
script can clear the board between them. Files appear only when their step succeeded. ``--page PORT``
also shows the status lines and the pictures in a browser while the set-up runs (judge/setup_page.py).
"""
from __future__ import annotations

import argparse
from pathlib import Path

from judge.i18n import _

__all__ = ["register", "run"]

STEPS = ("all", "camera", "empty", "pieces")
PROMPTS = {"empty": "clear the board: take every piece off, hands out of view",
           "pieces": "put the pieces in the opening layout (or --state's), hands out of view"}


def register(subparsers) -> None:
    from rules.game import GAMES

    from .cmd_live import _size
    from .options import count, frame_rate

    p = subparsers.add_parser("setup", help=_("guided set-up from the live camera: locked exposure, calibration, empty "
                                              "board, piece colours, equipment check"),
                              description=_(__doc__), formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--game", choices=tuple(GAMES), required=True)
    p.add_argument("--profile", help=_("profile name or JSON file (default: the game's default profile)"))
    p.add_argument("--source", required=True, help=_("the camera: picam, picam:N or usb:N"))
    p.add_argument("--out", required=True, help=_("folder for calibration.json, empty-board.png and the set-up pictures"))
    p.add_argument("--size", type=_size, help=_("camera resolution, WxH (the one live will use)"))
    p.add_argument("--fps", type=frame_rate, help=_("camera frame rate (the one live will use)"))
    p.add_argument("--step", choices=STEPS, default="all", help=_("run one step (default: all, asking before each picture)"))
    p.add_argument("--yes", action="store_true", help=_("with --step all: take each picture without asking"))
    p.add_argument("--settle-frames", type=count(1, 10000), default=30,
                   help=_("frames the automatic exposure gets to settle before it is locked (default 30)"))
    p.add_argument("--frames", type=count(1, 1000), default=5, help=_("frames each picture is the median of (default 5)"))
    p.add_argument("--state", help=_("game state file giving where the pieces stand for the pieces picture (default: "
                                     "the opening; Cvrnkaná needs one)"))
    lens = p.add_mutually_exclusive_group()
    lens.add_argument("--lens", help=_("image folder or video of the ChArUco board (shotjudge markers --charuco)"))
    lens.add_argument("--lens-from", help=_("reuse the lens of an existing calibration file"))
    lens.add_argument("--hfov", type=float, help=_("assume a straight lens with this horizontal field of view (deg)"))
    p.add_argument("--page", type=count(0, 65535), help=_("also show the status and the pictures in a browser page on "
                                                          "this port while the set-up runs (0: any free port)"))
    p.add_argument("--page-host", default="127.0.0.1", help=_("address of that page (default: this machine only)"))
    p.set_defaults(func=run)


def run(args) -> int:
    from .setup_page import serving

    with serving(args.page, args.page_host) as board:
        return _run(args, (lambda name, image: board.show(name, image)) if board is not None else (lambda *_: None))


def _run(args, show) -> int:
    """The set-up; ``show(name, picture)`` puts each picture on the page as soon as it is taken."""
    from calibration.atomic import staged_files
    from calibration.calfile import save_calibration
    from calibration.profile import profile_for
    from sim.video import write_png

    from .errors import UserError
    from .setup_camera import camera_kind
    from .setup_steps import NAMES, live_command

    kind = camera_kind(args.source)
    if kind is None:
        raise UserError(_("--source {source}: setup needs a camera (picam, picam:N or usb:N); for pictures or a video "
                          "of the table use shotjudge calibrate").format(source=repr(args.source)))
    first = args.step in ("all", "camera")
    out = Path(args.out)
    if not (out.is_dir() or first):  # the first step makes the folder (and its parents)
        raise UserError(_("--out {out}: no such folder (run --step camera first)").format(out=out))
    view = empty = pieces = None
    fix: list[str] = []
    if first:
        calibration, view, source = _camera(args, kind, profile_for(args.game, args.profile))
        show(NAMES["view"], view)
    else:
        calibration = _load(out, args)
        source = _open_locked(args, kind, calibration)
    with source:
        if args.step in ("all", "empty"):
            empty = _empty(args, source, calibration)
            show(NAMES["empty"], empty)
        if args.step in ("all", "pieces"):
            calibration, pieces, fix = _pieces(args, source, calibration, _read_empty(out, calibration)
                                               if empty is None else empty, out)
            show(NAMES["pieces"], pieces)
    out.mkdir(parents=True, exist_ok=True)
    with staged_files() as stage:  # this run's files: all of them, or none
        if args.step != "empty":
            save_calibration(calibration, out / NAMES["calibration"], stage)
        for name, picture in (("view", view), ("empty", empty), ("pieces", pieces)):
            if picture is not None:
                write_png(out / NAMES[name], picture, stage)
    written = [NAMES["calibration"]] * (args.step != "empty") + [NAMES[n] for n, p in
                                                                 (("view", view), ("empty", empty), ("pieces", pieces))
                                                                 if p is not None]
    said = _("wrote {value} in {out}").format(value=", ".join(written), out=out)
    if view is not None:
        said += _(": check in setup-view.png that the drawn lines lie on the board's lines")
    print(said)
    if args.step in ("all", "pieces"):
        for line in fix:
            print(line)
        print(_("next: {value}").format(value=live_command(args, calibration, out)))
        if fix:
            print(_("the set-up is written, but fix the equipment above before a match"))
            return 1
    else:
        nxt = "empty, once the board is clear" if args.step == "camera" else "pieces, once the pieces stand in place"
        print(_("next: shotjudge setup --step {nxt} (same options)").format(nxt=nxt))
    return 0


def _camera(args, kind, profile):
    from .setup_camera import meter_and_lock, recorded
    from .setup_steps import calibrate_step, open_camera

    source = open_camera(args.source, kind, args.size, args.fps)
    try:
        metering = meter_and_lock(source, kind, args.settle_frames)
        fps = args.fps or round(source.fps, 3)
        print(metering.status(source.name, source.size, fps, args.settle_frames))
        lens = {"lens": args.lens, "lens_from": args.lens_from, "hfov": args.hfov}
        calibration, view, status = calibrate_step(source, profile, recorded(metering, source.size, fps, source.info.get("readout_s")), args.frames, lens)
        print(status)
    except BaseException:
        source.close()
        raise
    return calibration, view, source


def _load(out: Path, args):
    from calibration.calfile import load_camera_settings

    from .errors import UserError
    from .setup import check_calibration
    from .setup_steps import NAMES

    path = out / NAMES["calibration"]
    if not path.is_file():
        raise UserError(_("{path}: not there yet: run shotjudge setup --step camera first").format(path=path))
    camera = load_camera_settings(path)
    if camera is None:
        raise UserError(_("{path}: has no locked camera settings (not made by setup): run --step camera").format(path=path))
    return check_calibration(str(path), camera.size, args.game)


def _open_locked(args, kind, calibration):
    from .setup_steps import open_camera

    from .errors import UserError

    source = open_camera(args.source, kind, args.size, args.fps, calibration.camera)
    c = calibration.camera
    if tuple(source.size) != tuple(c.size):
        source.close()
        raise UserError(_("{name} gives {value}x{value2}, the camera step had {value3}x{value4}: start again with "
                          "--step camera").format(
                              name=source.name, value=source.size[0], value2=source.size[1], value3=c.size[0], value4=c.size[1]))
    print(_("camera: {name} opened with the locked settings of the camera step ({value}x{value2} at {fps} fps)").format(
        name=source.name, value=c.size[0], value2=c.size[1], fps=format(c.fps, 'g')))
    return source


def _ask(args, step: str) -> None:
    from .errors import UserError

    if args.step != "all":
        return
    if args.yes:
        print(_("{step}: {value} (--yes: taking the picture now)").format(step=step, value=PROMPTS[step]))
        return
    try:
        input(f"{step}: {PROMPTS[step]}, then press Enter ")
    except EOFError:
        raise UserError(_("no answer to '{value}': run the steps one at a time with --step, or give --yes").format(
            value=PROMPTS[step])) from None


def _empty(args, source, calibration):
    from .setup_steps import empty_step

    _ask(args, "empty")
    picture, status = empty_step(source, calibration, args.frames)
    print(status)
    return picture


def _read_empty(out: Path, calibration):
    from .errors import UserError
    from .setup import read_background
    from .setup_steps import NAMES

    path = out / NAMES["empty"]
    if not path.is_file():
        raise UserError(_("{path}: not there yet: run shotjudge setup --step empty first").format(path=path))
    return read_background(str(path), calibration.plane.image_size)[0]


def _pieces(args, source, calibration, empty, out: Path):
    from .setup_steps import NAMES, pieces_step

    _ask(args, "pieces")
    measured, picture, lines, fix = pieces_step(source, calibration, empty, args.frames, args.state,
                                                str(out / NAMES["pieces"]))
    for line in lines:
        print(line)
    return measured, picture, fix
