"""``shotjudge replay``: judge a recorded match from its video, for the record or for a dispute.

Every frame goes through vision and every shot through the rule engine, exactly as live, but nothing
is dropped. The pieces on the board when the video starts are the game's opening layout (Novuss: both
rows of pawns, no bat; Cvrnkaná: no marble on the field) unless ``--state`` gives a start state file
(the ``state`` of a journal entry, or ``shotjudge referee --print-state``), or ``--start-from-board`` reads
them from the first frames at rest (what a camera cannot see, whose turn and the debt or the pit, from
``--turn`` and the other flags below, or ``--confirm`` to take the proposal as it is). The classical detector needs a picture
of the empty board from the same camera (``--background``, as for ``shotjudge live``).

``--games N`` is the match's length: after the N-th game ends the match is over and a further shot is not
judged. The match score (per game the result, games won; Cvrnkaná: marbles and clause 8 points) is printed
under the table of the calls and kept in the report (``match``).

Outputs: a table of the calls; ``--report`` (JSON: rulings in the documented schema, per shot the
record and the evidence frames, crops in ``<report>_files/``); ``--overlay`` (the video with tracks,
zones, contacts and calls drawn); ``--shot N`` the dispute view of shot N slowed down ``--slow`` times.
A video that breaks off (cut short or damaged) still gives its report, holding the shots completed
before the break and marked ``truncated``; the shot in progress there is not judged. Nothing is
written when no frame can be read or the calibration does not fit the video.
"""
from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path

from .errors import UserError
from .i18n import N_, _, add_lang_arg
from .options import add_games_arg, frame_rate, match_games
from .start_state import add_start_args

__all__ = ["register", "run", "print_calls", "cut_message", "EXIT_PARTIAL"]

GAMES = ("novuss", "cvrnkana")
EXIT_PARTIAL = 1  # the video broke off: the outputs hold what came before (2 is bad input, nothing written)
EPILOG = N_("""exit status:
  0  the whole video was judged
  1  partial result: the video breaks off (cut short or damaged); the report, overlay and table hold
     the shots completed before the break, the report says where it is ("truncated"), and the shot
     in progress at the break is not judged
  2  bad input (unreadable video, calibration for another camera, bad options): nothing written""")


def register(subparsers) -> None:
    p = subparsers.add_parser("replay", help=_("judge a recorded match from its video (report, overlay, dispute view)"),
                              description=_(__doc__), epilog=_(EPILOG), formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("video", metavar="VIDEO", help=_("the recorded match (a video file or a folder of images)"))
    p.add_argument("--game", required=True, help=_("novuss or cvrnkana"))
    p.add_argument("--calibration", required=True, help=_("calibration.json made by `shotjudge calibrate` for this camera"))
    p.add_argument("--background", help=_("picture(s) of the empty board from this camera: a file or a folder; required with "
                                              "the classical detector (the default), not with --detector learned"))
    p.add_argument("--state", help=_("start state: the game state at the start of the video (JSON); default: the opening"))
    p.add_argument("--ruleset", help=_("rule variant (default: the game's)"))
    p.add_argument("--report", help=_("write the report here (JSON; evidence crops go to <name>_files/ beside it)"))
    p.add_argument("--overlay", help=_("write the video with tracks, zones, contacts and calls drawn (MP4)"))
    add_lang_arg(p)
    p.add_argument("--fps", type=frame_rate, help=_("frame rate, when the video does not say it (or an image folder)"))
    p.add_argument("--shot", type=int, help=_("render the dispute view of this shot (numbered from 1 through the video)"))
    p.add_argument("--slow", type=int, default=8, help=_("dispute view: output frames per video frame (default 8)"))
    p.add_argument("--dispute", help=_("dispute view file (default: shotNNN_dispute.mp4 in the current folder)"))
    p.add_argument("--quiet", action="store_true", help=_("no progress bar"))
    add_games_arg(p)
    add_detector_args(p)
    add_start_args(p)
    p.set_defaults(func=run)


def _check_out(option: str, path: str | None) -> None:
    from .options import output_path

    output_path(option, path)  # its folder made, or one line saying why it cannot be


def run(args) -> int:
    from rich.console import Console

    from .replay import judge_video, make_vision

    if args.game not in GAMES:
        raise UserError(_("unknown game {game} (expected novuss or cvrnkana)").format(game=repr(args.game)))
    games = match_games(args.game, args.games)
    if args.shot is not None and args.shot < 1:
        raise UserError(_("--shot must be 1 or more, got {shot}").format(shot=args.shot))
    if not 1 <= args.slow <= 64:
        raise UserError(_("--slow must be between 1 and 64, got {slow}").format(slow=args.slow))
    dispute = args.dispute or (f"shot{args.shot:03d}_dispute.mp4" if args.shot else None)
    for option, path in (("--report", args.report), ("--overlay", args.overlay), ("--dispute", dispute)):
        _check_out(option, path)
    console = Console(highlight=False)
    err = Console(stderr=True, highlight=False)
    with _Progress(err, args.quiet) as bar:
        result = judge_video(args.video, args.game, args.calibration, background=args.background, state=args.state,
                             ruleset=args.ruleset, lang=args.lang, fps=args.fps, progress=bar.task("judging"),
                             vision_factory=None if args.detector == "classical" else
                             functools.partial(make_vision, **vision_options(args)),
                             start_from_board=_board_start(args, err) if getattr(args, "start_from_board", False) else None,
                             games=games)
        if result.error is not None and not result.frames:
            raise UserError(_("{error}; no frame could be read, nothing written").format(error=result.error))
        if args.shot is not None and not any(s.no == args.shot for s in result.shots):
            cut = result.cut
            where = f" before it ends abruptly after frame {cut['last_frame']}" if cut else ""
            raise UserError(_("--shot {shot}: the video has {value} judged shot(s){where}").format(
                shot=args.shot, value=len(result.shots), where=where))
        doc = None
        if args.report or args.overlay:
            from .report import write_outputs  # imported only when asked for (#20: replay's start-up)

            doc = write_outputs(result, report=args.report, overlay=args.overlay, lang=args.lang,
                                calibration_path=str(args.calibration),
                                start_from=args.state or ("board" if getattr(args, "start_from_board", False) else "opening"),
                                progress=bar.task("writing " + " and ".join(
                                    n for n, v in (("report", args.report), ("overlay", args.overlay)) if v)))
        frames = None
        if args.shot is not None:
            from .dispute import render_dispute

            frames = render_dispute(result, args.shot, args.slow, dispute, progress=bar.task(f"dispute view of shot {args.shot}"))
    print_calls(console, result)
    from .score_text import score_line

    console.print(score_line(result.match), markup=False, soft_wrap=True)
    for note in result.notes:
        err.print(f"[yellow]{note}[/]")
    speed = result.duration_s / result.seconds if result.seconds else float("inf")
    err.print(_("{frames} frames ({video_s} s of video) judged in {seconds} s ({speed}x real time); {shots} shot(s), "
                "{review} for review").format(frames=result.frames, video_s=f"{result.duration_s:.1f}",
                                              seconds=f"{result.seconds:.1f}", speed=f"{speed:.1f}", shots=len(result.shots),
                                              review=sum(s.review for s in result.shots)))
    if doc is not None and args.report:
        err.print(_("report: {path}").format(path=args.report))
    if args.overlay:
        err.print(_("overlay video: {path}").format(path=args.overlay))
    if frames is not None:
        err.print(_("dispute view of shot {shot}: {path} ({frames} frames, {slow}x slower)").format(
            shot=args.shot, path=dispute, frames=frames, slow=args.slow))
    if result.cut is not None:
        print(_("shotjudge {command}: error: {message}").format(command="replay", message=cut_message(result, args.report)),
              file=sys.stderr)
        return EXIT_PARTIAL
    return 0


def _board_start(args, err):
    """The ``start_from_board`` hook of ``judge_video``: the proposal printed, then the start state when the flags
    confirm it (every asked fact given, or ``--confirm``), else a one-line error naming the flags missing."""
    from .start_state import asked, board_proposal, describe, facts_from_args, proposed_state

    facts = facts_from_args(args)

    def start(engine, cal, images, open_video):
        with open_video() as again:
            proposal = board_proposal(again, cal, images)
        doc = proposed_state(engine, proposal, facts)
        missing = asked(engine.game, facts)
        err.print(describe(proposal, doc, missing), markup=False, highlight=False, soft_wrap=True)
        if proposal.unsure and not args.confirm:
            raise UserError(_("--start-from-board: {value} disc(s) could not be given to a player; write the state "
                              "yourself and pass it with --state, or --confirm to leave them out").format(
                                  value=len(proposal.unsure)))
        if proposal.unidentified and not args.confirm:
            raise UserError(_("--start-from-board: {value} disc(s) of a piece's size match no player's colour; write "
                              "the state yourself and pass it with --state, or --confirm to leave them out").format(
                                  value=len(proposal.unidentified)))
        if missing and not args.confirm:
            raise UserError(_("--start-from-board: the camera cannot see {value}: give them, or --confirm to take the "
                              "proposal as it is").format(value=', '.join(missing)))
        return engine.state_from_dict(doc)

    return start


def cut_message(result, report: str | None) -> str:
    """One line for a video that broke off: where, why, and what the outputs hold."""
    cut = result.cut
    of = _(" of {n}").format(n=cut["frames_expected"]) if cut["frames_expected"] else ""
    holds = _("{report} holds").format(report=report) if report else _("the table above lists")
    shot = (_("the shot in progress at the cut was not judged") if cut["shot_in_progress"]
            else _("no shot was in progress at the cut"))
    return _("{video}: the video ends abruptly after frame {last_frame} (t={last_t} s; {frames}{of} frames readable: "
             "{reason}): {holds} the {shots} shot(s) completed before the cut; {shot}").format(
        video=result.video, last_frame=cut["last_frame"], last_t=f"{cut['last_t_s']:.2f}", frames=result.frames, of=of,
        reason=cut["reason"], holds=holds, shots=len(result.shots), shot=shot)


def print_calls(console, result, truth: list | None = None, title: str | None = None) -> None:
    """The calls as a table; with ``truth`` (ground-truth rulings by shot) a column says whether each matches."""
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=title or f"{result.game}: {Path(result.video).name}", show_lines=False)
    for col in (_("shot"), _("player"), _("calls (clause)"), _("review")) + ((_("ground truth"),) if truth is not None else ()):
        table.add_column(col)
    rows = max(len(result.shots), len(truth or []))
    for i in range(rows):
        s = result.shots[i] if i < len(result.shots) else None
        if s is None:
            calls, player, review = "[red]" + _("not seen by vision") + "[/]", "", ""
        elif s.ruling is None:
            calls, player, review = "[red]" + escape(_("not judged: {error}").format(error=s.error)) + "[/]", \
                s.record.get("player", ""), "[red]" + _("yes") + "[/]"
        else:
            calls = ", ".join(f"{c['code']} ({c['clause']})" for c in s.ruling["calls"]) or "-"
            player, review = s.ruling["player"], "[red]" + _("yes") + "[/]" if s.review else ""
        row = [str(i + 1), player, calls, review]
        if truth is not None:
            row.append(_verdict(s, truth[i] if i < len(truth) else None))
        table.add_row(*row)
    console.print(table)


def same_ruling(got, want) -> bool:
    """Two rulings agree when they make the same calls and give the next shot to the same player."""
    if got is None or want is None:
        return False
    return (sorted(c["code"] for c in got["calls"]) == sorted(c["code"] for c in want["calls"])
            and got.get("next_player") == want.get("next_player"))


def _verdict(shot, want) -> str:
    if want is None:
        return "[red]" + _("extra shot (not in the simulation)") + "[/]"
    if shot is None:
        return "[red]" + _("missed: {codes}").format(codes=", ".join(c["code"] for c in want["calls"])) + "[/]"
    if same_ruling(shot.ruling, want):
        return "[green]" + _("same") + "[/]"
    return "[red]" + _("differs: {codes}").format(codes=", ".join(c["code"] for c in want["calls"]) or "-") + "[/]"


class _Progress:
    """rich progress bars on stderr, one task per pass, for a person at a terminal: silent with ``quiet`` or
    when stderr is a file or a pipe (a script reads only the messages: an error is its one line)."""

    def __init__(self, console, quiet: bool):
        self.console, self.quiet, self.bar = console, quiet or not console.is_terminal, None

    def __enter__(self):
        if not self.quiet:
            from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

            self.bar = Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                                TimeRemainingColumn(), console=self.console, transient=False)
            self.bar.__enter__()
        return self

    def task(self, name: str):
        if self.bar is None:
            return None
        task = self.bar.add_task(name, total=None)

        def update(done: int, total: int | None) -> None:
            self.bar.update(task, completed=done, total=total)

        return update

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.__exit__(*exc)


def add_detector_args(p) -> None:
    """``--detector``, ``--weights``, ``--no-fallback``: which detector ``make_vision`` builds."""
    p.add_argument("--detector", default="classical", choices=("classical", "learned"),
                   help=_("classical (default: fastest and most precise on the benchmarks) or learned (experimental: "
                          "YOLO boxes refined by the rim fit, needs pip install 'shotjudge[learned]'; finds more "
                          "pieces under hands and the cue; measured on the hard cases only; ~150 ms a frame on a CPU)"))
    p.add_argument("--weights", help=_("learned detector weights (default: the shipped models/shotjudge-det.onnx)"))
    p.add_argument("--no-fallback", action="store_true",
                   help=_("learned detector: fail instead of falling back to the classical one when it cannot load"))


def vision_options(args) -> dict:
    return {"detector": getattr(args, "detector", "classical"), "weights": getattr(args, "weights", None),
            "fallback": not getattr(args, "no_fallback", False)}
