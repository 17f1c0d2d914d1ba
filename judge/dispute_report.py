"""What a dispute hearing needs of one match, gathered from what the judge kept.

Two sources give the same value, :class:`MatchReport`: a replay report (``replay --report``: rulings, the
key instants of each shot and the crops around them) and a live match's journal (rulings, refused shots,
every referee decision) with the per-shot clips, from which the crops are cut the same way
(``judge.replay_draw.Board.crop``). The page itself is ``judge.dispute_page``. Nothing here decides a
call: it shows the calls as they were made, the referee's decisions beside them, and where the camera's
evidence was too thin to time an instant it says so instead of printing a number.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping

from .errors import UserError
from .i18n import N_, _

__all__ = ["Instant", "ShotPage", "Decision", "MatchReport", "from_replay_report", "from_journal", "from_entries",
           "clip_evidence"]

#: a time whose 1-sigma is over this was not timed by the camera (two pieces touching at rest): shown as such
UNTIMED_S = 0.5


@dataclass(frozen=True)
class Instant:
    """A key instant of a shot (``judge.evidence.KeyInstant`` as the report keeps it) with its crop."""

    name: str
    kind: str
    t_s: float
    t_err_s: float
    pieces: tuple[str, ...]
    at_mm: tuple[float, float]
    positions_mm: Mapping[str, tuple[float, float]]
    frame_before: int | None = None
    frame_after: int | None = None
    sub_frame: float | None = None
    note: str = ""
    png: bytes | None = None
    no_picture: str = ""  # why there is no crop

    @property
    def timed(self) -> bool:
        return self.t_err_s <= UNTIMED_S


@dataclass(frozen=True)
class Decision:
    """A referee action from the journal, in the order it was taken."""

    kind: str  # override | undo | next_game | set_state | settle | gap | note
    game_no: int
    shot_no: int | None
    wall_time: float
    detail: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ShotPage:
    """One shot as judged (``ruling``) or refused (``error``: the engine could not rule; the referee did)."""

    game_no: int
    shot_no: int | None
    player: str | None
    t0_s: float
    t1_s: float
    ruling: Mapping[str, Any] | None
    error: str | None
    review: bool
    instants: tuple[Instant, ...] = ()
    decisions: tuple[Decision, ...] = ()
    undone: bool = False
    vision_notes: tuple[str, ...] = ()
    before_mm: Mapping[str, Any] = field(default_factory=dict)  # where the pieces stood when the shot began
    record: Mapping[str, Any] = field(default_factory=dict)  # the shot record as judged


@dataclass(frozen=True)
class MatchReport:
    game: str
    source: str  # the video or camera the match was judged from
    made_from: str  # "replay" | "journal"
    board: Mapping[str, Any]  # judge.overlay.board_for: what the diagrams are drawn on
    shots: tuple[ShotPage, ...]
    decisions: tuple[Decision, ...] = ()  # those not about one shot (next game, a corrected state, gaps)
    score: Mapping[str, Any] | None = None
    notes: tuple[str, ...] = ()
    truncated: Mapping[str, Any] | None = None


def _instant(item: Mapping[str, Any], png: bytes | None, no_picture: str = "") -> Instant:
    return Instant(str(item["name"]), str(item["kind"]), float(item["t_s"]), float(item.get("t_err_s", 0.0)),
                   tuple(item.get("pieces", ())), (float(item["at_mm"][0]), float(item["at_mm"][1])),
                   {k: (float(v[0]), float(v[1])) for k, v in (item.get("positions_mm") or {}).items()},
                   item.get("frame_before"), item.get("frame_after"), item.get("sub_frame"), str(item.get("note", "")),
                   png, no_picture)


def _vision_notes(record: Mapping[str, Any]) -> tuple[str, ...]:
    from .review import vision_review

    return tuple(vision_review(record))


def _profile_and_board(game: str, calibration: str | None):
    from calibration import default_profile

    from .board_view import board_for

    cal = None
    if calibration and Path(calibration).is_file():
        from calibration.calfile import load_calibration

        cal = load_calibration(calibration)
        profile = cal.profile
    else:
        profile = default_profile(game)
    return profile, board_for(profile), cal


def from_replay_report(path: str | Path) -> MatchReport:
    """A replay report (``shotjudge.replay-report/1``) and its crops (``<report>_files/``)."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UserError(_("{path}: cannot read the replay report ({error})").format(path=path, error=exc)) from None
    if not isinstance(doc, dict) or doc.get("schema") != "shotjudge.replay-report/1":
        raise UserError(_("{path}: not a replay report (no schema shotjudge.replay-report/1); "
                          "give the file `replay --report` wrote, or a journal with --journal").format(path=path))
    board = _profile_and_board(doc["game"], doc.get("calibration"))[1]
    shots = []
    for s in doc.get("shots", []):
        instants = []
        for item in s.get("evidence", []):
            image = item.get("image")
            png, why = None, N_("the report was written without crops")
            if image:
                try:
                    png, why = (path.parent / image).read_bytes(), ""
                except OSError:
                    why = N_("its crop is missing beside the report")
            instants.append(_instant(item, png, why))
        ruling = s.get("ruling")
        shots.append(ShotPage(int(s["game_no"]), int(s["no"]), (ruling or s.get("record") or {}).get("player"),
                              float(s["t0_s"]), float(s["t1_s"]), ruling, s.get("error"), bool(s.get("review")),
                              tuple(instants), vision_notes=_vision_notes(s.get("record") or {}),
                              before_mm=dict((s.get("record") or {}).get("before") or {})))
    return MatchReport(doc["game"], str(doc.get("video", "")), "replay", board, tuple(shots), (), doc.get("match"),
                       tuple(doc.get("notes", [])), doc.get("truncated"))


def from_journal(path: str | Path, clips: str | Path | None = None, calibration: str | None = None) -> MatchReport:
    """A live match's journal (read only: a match in progress is not disturbed), the clips of its shots
    (``live --clips``) for the crops, the calibration (default: the one the journal names) to cut them."""
    from .journal import Journal, JournalError

    path = Path(path)
    if not path.is_file():
        raise UserError(_("{path}: no such journal").format(path=path))
    try:
        with Journal.open(path) as journal:
            match = journal.match() or {}
            entries = journal.entries()
            resume = journal.resume()
    except JournalError as exc:
        raise UserError(str(exc)) from None
    game = match.get("game")
    from rules.game import GAMES

    if game not in GAMES:
        raise UserError(_("{path}: the journal names no game").format(path=path))
    profile, board, cal = _profile_and_board(game, calibration or match.get("calibration"))
    pages, loose = _pages(entries)
    cut = _Cutter(Path(clips) if clips else None, cal, profile)
    pages = [cut.page(p) for p in pages]
    return MatchReport(game, str(match.get("source", "")), "journal", board, tuple(pages), tuple(loose),
                       _journal_score(match, resume, game, profile), (), None)


def from_entries(game: str, entries: list[dict[str, Any]], source: str, score: Mapping[str, Any] | None = None) -> MatchReport:
    """A match from journal entries held elsewhere (the hall's hub stores each table's, in the journal's form):
    the calls, refused shots and decisions, with the instants from the records (no clips there: no crops)."""
    profile, board, _cal = _profile_and_board(game, None)
    pages, loose = _pages(entries)
    cut = _Cutter(None, None, profile)
    return MatchReport(game, source, "journal", board, tuple(cut.page(p) for p in pages), tuple(loose), score, (), None)


def _pages(entries: list[dict[str, Any]]) -> tuple[list[ShotPage], list[Decision]]:
    """The journal's entries folded into shot pages (judged and refused, with their decisions) and the
    decisions about no one shot."""
    pages: list[ShotPage] = []
    by_shot: dict[tuple[int, int], int] = {}
    by_seq: dict[int, int] = {}
    loose: list[Decision] = []
    for e in entries:
        kind, p, g = e["kind"], e["payload"], e["game_no"]
        if kind in ("shot", "refused"):
            record = p["record"]
            ruling = p.get("ruling") if kind == "shot" else None
            pages.append(ShotPage(g, e["shot_no"], record.get("player"), float(record.get("t0", 0.0)),
                                  float(record.get("t1", 0.0)), ruling, p.get("error"),
                                  kind == "refused" or bool((ruling or {}).get("review")),
                                  vision_notes=_vision_notes(record), before_mm=dict(record.get("before") or {}),
                                  record=record))
            by_seq[e["seq"]] = len(pages) - 1
            if kind == "shot":
                by_shot[(g, e["shot_no"])] = len(pages) - 1
            continue
        if kind in ("match", "seen"):
            continue
        decision = Decision(kind, g, e["shot_no"], float(e["wall_time"]), p)
        if kind == "undo":
            judged = [i for i, page in enumerate(pages) if page.game_no == g and page.ruling is not None and not page.undone]
            target = judged[-1] if judged else None
            if target is not None:
                pages[target] = _with(pages[target], decision, undone=True)
                continue
        target = by_shot.get((g, e["shot_no"])) if kind == "override" else by_seq.get(p.get("review")) if kind == "settle" else None
        if target is not None:
            pages[target] = _with(pages[target], decision)
        else:
            loose.append(decision)
    return pages, loose


def _with(page: ShotPage, decision: Decision, undone: bool | None = None) -> ShotPage:
    return replace(page, decisions=page.decisions + (decision,), undone=page.undone if undone is None else undone)


def _journal_score(match: Mapping[str, Any], resume, game: str, profile) -> Mapping[str, Any] | None:
    """The match score refolded from the journal's effective records, as ``live`` keeps it."""
    import rules

    from .match import fold_games

    try:
        engine = rules.engine_for(match.get("ruleset") or game, profile.geometry, game, **(match.get("options") or {}))
        return fold_games(engine, resume, match.get("games"))
    except Exception as exc:  # noqa: BLE001 - the score is shown as unknown, with why, not guessed
        return {"error": f"{type(exc).__name__}: {exc}"}


def clip_evidence(clips: str | Path | None, calibration: str | None, game: str):
    """``(game_no, shot_no, record, ruling) -> [Instant]``: a shot's key instants with the crops cut from its
    clip, for the referee's console while the match goes on."""
    profile, _board, cal = _profile_and_board(game, calibration)
    cut = _Cutter(Path(clips) if clips else None, cal, profile)
    done: dict[tuple[int, int | None, float], list[Instant]] = {}  # each clip decoded once its crops are all there

    def evidence(game_no: int, shot_no: int | None, record: Mapping[str, Any], ruling: Mapping[str, Any] | None):
        key = (game_no, shot_no, float(record.get("t0", 0.0)))
        if key in done:
            return done[key]
        page = ShotPage(game_no, shot_no, record.get("player"), float(record.get("t0", 0.0)), float(record.get("t1", 0.0)),
                        ruling, None, True, record=record)
        found = cut.instants(page)
        if found and all(k.png for k in found):
            done[key] = found
        return found

    return evidence


class _Cutter:
    """Crops for a journaled shot, cut from its clip (``gameGG/shotNNN.mp4``, times in ``shotNNN.json``)."""

    def __init__(self, clips: Path | None, cal, profile):
        self.clips, self.cal, self.profile = clips, cal, profile

    def page(self, page: ShotPage) -> ShotPage:
        if page.ruling is None and page.error is None:
            return page
        return replace(page, instants=tuple(self.instants(page)))

    def instants(self, page: ShotPage) -> list[Instant]:
        from .evidence import key_instants

        keys = key_instants(page.record, self.profile, None, None, page.ruling) if page.record else []
        frames, why = self._frames(page, [k.t_s for k in keys])
        instants = []
        for k, frame in zip(keys, frames):
            png = self._crop(frame, k.at_mm) if frame is not None else None
            item = {"name": k.name, "kind": k.kind, "t_s": k.t_s, "t_err_s": k.t_err_s, "pieces": k.pieces,
                    "at_mm": k.at_mm, "positions_mm": k.positions_mm, "note": k.note}
            instants.append(_instant(item, png, "" if png is not None else why))
        return instants

    def _meta(self, page: ShotPage) -> Mapping[str, Any] | None:
        from .recorder import clip_paths

        if self.clips is None:
            return None
        _, meta = clip_paths(self.clips, page.game_no, page.shot_no, page.t0_s)
        try:
            return json.loads(meta.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def _frames(self, page: ShotPage, times: list[float]) -> tuple[list, str]:
        """The clip's frame nearest each time (None where there is none), and why not where none."""
        if self.clips is None:
            return [None] * len(times), N_("no clips were given (--clips)")
        meta = self._meta(page)
        clip = (meta or {}).get("clip")
        if not clip:
            return [None] * len(times), N_("no clip of this shot has been written (yet)")
        if self.cal is None:
            return [None] * len(times), N_("no calibration to cut the crops with (--calibration)")
        from .recorder import clip_paths

        video, _ = clip_paths(self.clips, page.game_no, page.shot_no, page.t0_s)
        try:
            return _nearest_frames(video, float(clip["t0_s"]), times), N_("the clip does not reach this instant")
        except Exception:  # noqa: BLE001 - a damaged clip: the page says so, the report is still made
            return [None] * len(times), N_("the clip cannot be read")

    def _crop(self, image, at_mm) -> bytes:
        import cv2

        from .replay_draw import Board
        from .report import CROP_HALF_MM, CROP_PX

        crop, _ = Board(self.cal).crop(image, at_mm, CROP_HALF_MM, CROP_PX)
        ok, buf = cv2.imencode(".png", crop)
        return buf.tobytes() if ok else b""


def _nearest_frames(video: Path, t0_s: float, times: list[float]) -> list:
    """Decode the clip once; per wanted source time, the frame whose time (``t0_s`` + its presentation
    time) is nearest, if within one frame interval."""
    import av

    best: list[tuple[float, Any]] = [(float("inf"), None)] * len(times)
    step = 1.0
    with av.open(str(video)) as container:
        stream = container.streams.video[0]
        if stream.average_rate:
            step = 1.0 / float(stream.average_rate)
        for frame in container.decode(stream):
            t = t0_s + float(frame.time or 0.0)
            for i, want in enumerate(times):
                d = abs(t - want)
                if d < best[i][0]:
                    best[i] = (d, frame.to_ndarray(format="bgr24"))
    return [img if d <= step else None for d, img in best]
