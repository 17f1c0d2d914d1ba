"""``shotjudge live``: judge a match from a camera (or a file played as if live), as it happens.

Calls are printed as they are made and pushed to the spectators' page; every shot, ruling and
referee action is in the journal before it is announced, and starting again with the same
journal resumes the match where it stopped. ``--games N`` sets the match's length (kept in the
journal): after the N-th game the match is over and a further shot is refused; the match score
(Cvrnkaná: games won, marbles, clause 8 points) is printed after each game and at the end.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

from .cmd_replay import add_detector_args, vision_options
from .errors import UserError
from .i18n import _, add_lang_arg
from .options import add_games_arg, count, frame_rate, match_games, mqtt_address, port, table_name
from .setup import check_calibration, make_vision, read_background
from .start_state import add_start_args

__all__ = ["register", "run", "make_pipeline"]


def escape(text: str) -> str:
    """``text`` shown as written by rich (a translated line may hold brackets); rich is imported when needed."""
    from rich.markup import escape as rich_escape

    return rich_escape(text)


def register(subparsers) -> None:
    p = subparsers.add_parser("live", help=_("judge a match live from a camera, stream or file"),
                              description=_(__doc__), formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--game", required=True, choices=("novuss", "cvrnkana"))
    p.add_argument("--source", required=True, help=_("picam, picam:N, usb:N, rtsp://..., http(s)://..., FILE or DIR"))
    p.add_argument("--calibration", required=True, help=_("calibration.json made by `shotjudge calibrate`"))
    p.add_argument("--background", help=_("picture(s) of the empty board from this camera: a file or a folder; required with "
                                              "the classical detector (the default), not with --detector learned"))
    p.add_argument("--state", help=_("start state: the game state the match starts from (JSON, as for replay; default: "
                                     "the opening); kept in a new journal, a resumed one keeps its own"))
    add_detector_args(p)
    add_start_args(p)
    p.add_argument("--ruleset", help=_("rule variant (default: the game's, e.g. novuss-seed)"))
    add_games_arg(p)
    p.add_argument("--journal", default=None, help=_("match journal (SQLite; default: match-<game>.sqlite); an "
                                                     "existing one is resumed"))
    p.add_argument("--clips", default="clips", help=_("folder for the per-shot clips (default: clips)"))
    p.add_argument("--no-clips", action="store_true", help=_("do not record clips"))
    add_lang_arg(p)
    p.add_argument("--fps", type=frame_rate, help=_("camera frame rate to request (or the rate of an image folder)"))
    p.add_argument("--size", type=_size, help=_("camera resolution to request, WxH"))
    p.add_argument("--exposure-us", type=int, help=_("Pi camera: locked exposure time in µs"))
    p.add_argument("--colour-gains", type=_gains, help=_("Pi camera: locked red,blue gains (default: measured, then locked)"))
    p.add_argument("--queue", type=count(1, 100000), default=64, help=_("frames buffered between capture and judging "
                                                                        "(oldest dropped)"))
    p.add_argument("--max-reconnects", type=count(0, 1000), default=5, help=_("reopen attempts when a camera stops delivering"))
    p.add_argument("--overlay-host", default="127.0.0.1", help=_("address of the spectators' page (default: this machine only)"))
    p.add_argument("--overlay-port", type=port, default=8080)
    p.add_argument("--no-overlay", action="store_true", help=_("no spectators' page"))
    p.add_argument("--token", default=None, help=_("referee token (default: $SHOTJUDGE_REFEREE_TOKEN or a new one, "
                                                   "printed once)"))
    hall = p.add_argument_group(_("the hall (docs/hub.md): publish this table's calls to a `shotjudge hub`"))
    hall.add_argument("--table", type=table_name, metavar="NAME", help=_("this table's name in the hall (with --mqtt)"))
    hall.add_argument("--mqtt", type=mqtt_address, metavar="HOST[:PORT]",
                      help=_("publish the journal to this MQTT broker (port 1883 by default); judging never waits for it, "
                             "and what it missed is published when it is back"))
    hall.add_argument("--players", type=_players, metavar="A_NAME,B_NAME", help=_("the players' names in the hall's standings"))
    hall.add_argument("--mqtt-drain", type=_seconds, default=30.0, metavar="S",
                      help=_("at the end, wait up to S seconds for the hub to confirm every call (default 30); what it "
                             "has not is published on the next start with this journal"))
    p.add_argument("--confirm-timeout", type=_seconds, default=None, metavar="S",
                   help=_("--start-from-board: give up (exit 2, no journal kept) when the referee has not confirmed "
                          "the start state within S seconds (default: wait as long as it takes)"))
    p.set_defaults(func=run)


#: how often live reminds that it is waiting for the referee's start state
REMIND_S = 60.0


class StartNotConfirmed(UserError):
    """The referee did not confirm the proposed start within ``--confirm-timeout``."""


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(_("must be a number of seconds above 0, got {text}").format(text=repr(text)))
    return value


def _players(text: str) -> dict[str, str]:
    names = [n.strip() for n in text.split(",")]
    if len(names) != 2 or not all(names) or any(len(n) > 40 for n in names):
        raise argparse.ArgumentTypeError(_("must be the two players' names, A's then B's, like Anna,Boris, got {text}").format(
            text=repr(text)))
    return {"A": names[0], "B": names[1]}


def _size(text: str) -> tuple[int, int]:
    try:
        w, h = text.lower().split("x")
        return int(w), int(h)
    except ValueError:
        raise argparse.ArgumentTypeError(_("size must be WIDTHxHEIGHT like 1280x720, got {text}").format(
            text=repr(text))) from None


def _gains(text: str) -> tuple[float, float]:
    try:
        r, b = text.split(",")
        return float(r), float(b)
    except ValueError:
        raise argparse.ArgumentTypeError(_("colour gains must be RED,BLUE like 2.1,1.7, got {text}").format(
            text=repr(text))) from None


def make_pipeline(calibration, fps: float, game: str, background=(), **vision):
    """Vision for live frames (a ``vision.pipeline.Vision``): the classical detector on this calibration,
    taught the empty board from ``background`` images (or the learned one: ``vision``'s options)."""
    return make_vision(calibration, list(background), purpose="live judging", **vision)


def run(args) -> int:
    from rich.console import Console

    import rules
    from hardware import open_source

    from .journal import Journal
    from .live import ConsoleAnnouncer, run_live, source_key
    from .match import Match

    games = match_games(args.game, args.games)
    _check_pairs(args)
    console = Console(highlight=False, stderr=False)
    opening = _opening(args, console)
    source = open_source(args.source, max_reconnects=args.max_reconnects,
                         on_event=lambda kind, message: console.print(f"[yellow]{message}[/]"), **opening)
    journal_path = Path(args.journal or f"match-{args.game}.sqlite")
    hub = server = recorder = feed = None
    with source:
        for warning in getattr(source, "warnings", []):
            console.print("[yellow]" + escape(_("warning: {warning}").format(warning=warning)) + "[/]")
        console.print(escape(_("source {source}").format(source=source.describe())))
        cal = check_calibration(args.calibration, source.size, args.game)
        engine = rules.engine_for(args.ruleset or args.game, cal.profile.geometry, args.game)
        match_info = {"game": args.game, "ruleset": engine.name, "profile": cal.profile.name,
                      "calibration": str(Path(args.calibration).resolve()), "source": source.name,
                      "lang": args.lang, "options": engine.options(),
                      "games": games}  # None: open; a resumed journal of another length is refused
        match_info.update({"players": args.players} if args.players else {})
        if args.state is not None:  # the first game starts here (a resumed journal keeps the start it has)
            from .replay import load_state

            match_info["start"] = load_state(engine, args.state).to_dict()
        background = read_background(args.background, source.size)  # before the journal: a bad picture leaves none
        gate = _board_start(args, engine, cal, background, source, journal_path, match_info, console) \
            if args.start_from_board else None
        journal = Journal.open(journal_path, create=True, match=match_info)
        try:
            match = Match(engine, journal, lang=args.lang, listeners=[ConsoleAnnouncer(console)])
            if gate is not None:  # the referee's confirmation is journaled as the state the match goes on from
                gate.on_confirm = lambda doc, by: match.set_state(doc, by=by)
            resume_after = -1 if source.live else match.consumed_in(source_key(source))
            _say_resumed(console, match, journal_path, resume_after)
            vision = make_pipeline(cal, source.fps, args.game, background=background, **vision_options(args))
            if not args.no_overlay:
                hub, server = _start_overlay(args, cal, match, console, gate)
            if args.mqtt is not None:
                feed = _start_feed(args, journal_path, match, server, console)
            if not args.no_clips:
                from .recorder import ShotRecorder
                recorder = ShotRecorder(args.clips, source.fps)
            result = None
            try:
                if gate is not None:
                    _wait_for_start(gate, server, console, args.confirm_timeout)
                if source.live:  # reopened now: frames queued while setting up would come in one burst, stamped
                    source.close()  # on arrival nearly together, and squash the time of a shot under way
                    source.open()
                result = run_live(source, vision, match, queue_size=args.queue, recorder=recorder, hub=hub,
                                  resume_after=resume_after, placement=_placement(cal, vision, hub, match, console))
            finally:
                if feed is not None:
                    _stop_feed(feed, args.mqtt_drain, console)
                if recorder is not None:
                    recorder.close()
                if server is not None:
                    ended = result is not None and not source.live
                    hub.close(_("The video has ended: judging is over.") if ended else _("The judge has stopped."))
                    server.stop()
        except (StartNotConfirmed, KeyboardInterrupt) as exc:
            # nothing was judged: a journal kept would be resumed from the opening, not from this board
            kept = gate is None or not gate.pending or any(e["kind"] != "match" for e in journal.entries())
            journal.close()
            if not kept:
                _discard_journal(journal_path)
            if isinstance(exc, StartNotConfirmed):
                raise StartNotConfirmed(_("{exc}; nothing judged, {journal_path} {value}").format(
                    exc=exc, journal_path=journal_path, value=_('kept') if kept else _('not kept'))) from None
            raise
        finally:
            journal.close()
    return _summary(console, result, match, journal_path, recorder)


def _check_pairs(args) -> None:
    """Options that mean something only together."""
    if (args.table is None) != (args.mqtt is None):
        raise UserError(_("--table NAME and --mqtt HOST[:PORT] go together: the hall knows a table by its name"))
    if args.confirm_timeout is not None and not args.start_from_board:
        raise UserError(_("--confirm-timeout is how long live waits for the referee to confirm --start-from-board's "
                          "proposal: give --start-from-board, or drop --confirm-timeout"))


def _opening(args, console) -> dict:
    """How the source is opened: the flags' camera settings, else those `shotjudge setup` locked and recorded in
    the calibration (the camera is opened as it was set up)."""
    from .setup_camera import settings_for_live

    camera = {}
    if args.exposure_us is not None:
        camera["exposure_us"] = args.exposure_us
    if args.colour_gains is not None:
        camera["colour_gains"] = args.colour_gains
    opening, recorded = settings_for_live(args.calibration, args.source, args.fps, args.size, camera)
    if recorded:
        console.print(recorded, soft_wrap=True)
    return opening


def _discard_journal(path: Path) -> None:
    """Remove a journal this run made and never used (its SQLite side files too)."""
    for p in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        p.unlink(missing_ok=True)


def _say_resumed(console, match, journal_path, resume_after: int) -> None:
    if match.resumed_shots or match.pending_judged or resume_after >= 0:
        line = _("resuming {journal}: game {game_no}, {shots} shot(s) already judged").format(
            journal=journal_path, game_no=match.game_no, shots=match.resumed_shots)
        if match.pending_judged:
            line += _(", {n} seen before the stop judged now").format(n=match.pending_judged)
        if resume_after >= 0:
            line += _("; reading on after frame {frame}").format(frame=resume_after)
        console.print(escape(line), soft_wrap=True)


def _summary(console, result, match, journal_path, recorder) -> int:
    """The closing line, counting apart what was judged, refused and already in; an error as one line."""
    from hardware import TruncatedVideo

    open_reviews = len(match.open_reviews())
    console.print(escape(_("{frames} frames, {shots} shot(s) judged ({reviewed} flagged for review), {refused} refused "
                           "({open} review item(s) open for the referee), {skipped} duplicate(s) already in the journal, "
                           "{lost} frame(s) lost in {gaps} gap(s); journal {journal}").format(
        frames=result.frames, shots=result.shots, reviewed=result.reviewed, refused=result.refused, open=open_reviews,
        skipped=result.skipped, lost=sum(g.count for g in result.gaps), gaps=len(result.gaps), journal=journal_path)),
        soft_wrap=True)
    from .score_text import score_line

    console.print(score_line(match.score()), markup=False, soft_wrap=True)
    if recorder is not None:
        for error in recorder.errors:
            console.print("[red]" + escape(_("clip not saved: {error}").format(error=error)) + "[/]")
    if result.error is not None:
        kept = _("; the {shots} shot(s) judged before it are in {journal}").format(shots=result.shots, journal=journal_path)
        if result.unfinished:
            kept += _("; the shot in progress when it stopped was not judged")
        if isinstance(result.error, TruncatedVideo):
            raise UserError(f"{result.error}{kept}")
        raise UserError(f"{result.error}{kept}" + _("; run the same command again to resume"))
    return 0


def _board_start(args, engine, cal, background, source, journal_path, match_info, console):
    """``--start-from-board``: the proposal read from the source's first frames (then read again from its start).
    With ``--confirm`` it is the match's start at once; otherwise the gate the referee confirms it through."""
    from .start_state import StartGate, asked, board_proposal, describe, facts_from_args, proposed_state

    if args.state is not None:
        raise UserError(_("--state and --start-from-board both say where the match starts: give one of them"))
    if journal_path.exists():
        console.print("[yellow]" + escape(_("{journal} is resumed: it keeps its own start state (--start-from-board not "
                                             "used)").format(journal=journal_path)) + "[/]")
        return None
    if args.no_overlay and not args.confirm:
        raise UserError(_("--start-from-board needs the referee to confirm the proposal: on the spectators' page (drop "
                          "--no-overlay) or with --confirm"))
    facts = facts_from_args(args)
    proposal = board_proposal(source, cal, background)
    source.close()  # judging starts from the first frame again
    source.open()
    doc = proposed_state(engine, proposal, facts)
    text = describe(proposal, doc, asked(engine.game, facts))
    console.print(text, markup=False, highlight=False, soft_wrap=True)
    if args.confirm:
        match_info["start"] = doc
        console.print(_("start state confirmed (--confirm)"))
        return None
    return StartGate(engine, doc, text)


def _wait_for_start(gate, server, console, timeout_s: float | None = None, clock=time.monotonic,
                    remind_s: float = REMIND_S) -> None:
    """Live waits until the referee confirms or corrects the proposed start on the overlay page: never in
    silence (a line every ``remind_s``), and no longer than ``timeout_s`` (``StartNotConfirmed``)."""
    console.print(_("waiting for the referee to confirm the start state: on the overlay page {url} (referee mode), or "
                    "POST {url}api/referee/start-state with the referee token, body {take} to take the proposal or "
                    "{correct} to correct it (or start again with --confirm)").format(
        url=server.url, take='{"state": null}', correct='{"state": {...}}'), markup=False, soft_wrap=True)
    start_s = clock()
    reminders = 0
    while True:
        waited_s = clock() - start_s
        if timeout_s is not None and waited_s >= timeout_s:
            raise StartNotConfirmed(_("the referee did not confirm the start state within {timeout_s} s "
                                      "(--confirm-timeout {timeout_s})").format(timeout_s=format(timeout_s, 'g')))
        if waited_s >= (reminders + 1) * remind_s:
            reminders = int(waited_s // remind_s)
            console.print(_("still waiting for the referee to confirm the start state ({minutes} min)...").format(
                minutes=f"{reminders * remind_s / 60:g}"), markup=False)
        step_s = min(0.5, (reminders + 1) * remind_s - waited_s)
        if timeout_s is not None:
            step_s = min(step_s, timeout_s - waited_s)
        if gate.wait(max(step_s, 0.0)):
            break
    console.print(_("start state confirmed by the referee"))


def _report_maker(args, match):
    """The dispute report of this match as it stands, for the referee's console: from the journal (read
    only) and the clips kept so far."""
    def make() -> str:
        from .cmd_report import report_html

        clips = None if args.no_clips else args.clips
        return report_html(args.lang, journal=str(match.journal.path), clips=clips, calibration=args.calibration)

    return make


def _placement(cal, vision, hub, match, console):
    """The placement assistant (``judge.placement_live``), listening to the match: spots on the video and the
    page, status lines on the console."""
    from rich.markup import escape

    from .placement_live import PlacementAssistant
    from .placement_view import PlacementView

    assistant = PlacementAssistant(cal.profile, vision, hub, PlacementView(cal) if hub is not None else None,
                                   say=lambda text: console.print(f"[green]{escape(text)}[/]"), note=match.note)
    match.listeners.append(assistant)
    return assistant


def _start_overlay(args, cal, match, console, gate=None):
    from .overlay import OverlayHub, OverlayServer, board_for, create_app, new_token

    token = args.token or os.environ.get("SHOTJUDGE_REFEREE_TOKEN") or new_token()
    hub = OverlayHub(board_for(cal.profile))
    hub.state = match.snapshot()
    match.listeners.append(hub)
    try:
        from .dispute_report import clip_evidence

        evidence = clip_evidence(None if args.no_clips else args.clips, args.calibration, args.game)
        app = create_app(hub, match, token, hosts=(args.overlay_host,), start=gate, report=_report_maker(args, match),
                         evidence=evidence)
        server = OverlayServer(app, args.overlay_host, args.overlay_port).start()
    except OSError as exc:
        raise UserError(_("spectators' page: {exc}; use --overlay-port or --no-overlay").format(exc=exc)) from None
    console.print(escape(_("spectators' page: {url}  (for OBS: {url}?transparent=1)").format(url=server.url)))
    if not (args.token or os.environ.get("SHOTJUDGE_REFEREE_TOKEN")):
        print(_("referee token (shown once): {token}").format(token=token), file=sys.stderr)
    return hub, server


def _start_feed(args, journal_path, match, server, console):
    """The table's feed to the hall's hub (``judge.table_feed``): every call wakes it."""
    from .table_feed import TableFeed

    host, port_no = args.mqtt
    info = {"overlay": server.url} if server is not None else {}
    feed = TableFeed(args.table, journal_path, host, port_no, info=info).start()
    match.listeners.append(feed)
    console.print(escape(_("table {table}: publishing to the hall's broker {host}:{port}").format(
        table=args.table, host=host, port=port_no)), soft_wrap=True)
    return feed


def _stop_feed(feed, drain_s: float, console) -> None:
    feed.stop(drain_s=drain_s)
    if not feed.caught_up():
        console.print("[yellow]" + escape(_("table {table}: the hub has confirmed entries up to {seq} only; the rest "
                                            "is published when this journal is opened again with --mqtt").format(
            table=feed.table, seq=feed.confirmed)) + "[/]", soft_wrap=True)
