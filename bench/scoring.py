"""One simulator clip watched by the vision pipeline and judged by the referee step, scored against the
ground truth: what ``bench/accuracy.py`` tabulates (its docstring says what each figure means) and its
frame-clock stratum (``bench/clocks.py``) runs under irregular frame times.

``clips`` names every clip, ``run_clip`` watches one into a ``new_stats`` dict, ``merge`` adds them up and
``summary`` turns them into the table's figures.
"""
from __future__ import annotations

import math
import os
import random
import sys
from collections import defaultdict

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.vision_clips import in_view, match_events, on_surface, oracle_detections, restamp, same_player_names  # noqa: E402
from calibration import default_profile  # noqa: E402
from judge.referee import Referee  # noqa: E402
from judge.setup import assembler_for  # noqa: E402
from rules import GAMES, engine_for  # noqa: E402
from rules.record import parse_record  # noqa: E402
from vision.board import Surface  # noqa: E402
from vision.pipeline import Pipeline, hints_for  # noqa: E402
from vision.rows import RowClock  # noqa: E402

__all__ = ["GAP_BINS", "clips", "episodes", "merge", "new_stats", "run_clip", "summary"]

GAP_BINS = ((0.0, 1.0, "<1ms"), (1.0, 2.0, "1-2ms"), (2.0, 5.0, "2-5ms"), (5.0, 1e9, ">=5ms"))
SET_SEEDS = (1, 2, 3)  # whole Novuss sets: about 180 shots
GAME_SEEDS = (1, 2, 3)  # whole Cvrnkaná games: about 110 flicks
QUICK = ("own-opponent-3ms", "opponent-first", "ricochet", "bat-pocketed", "touching")


# -- the clips ----------------------------------------------------------------------------------------------
def gap_of(seed: int) -> tuple[float, str]:
    """The gap clip ``seed``'s (gap in ms, a random 0-8, which pawn first: own or opponent)."""
    rng = random.Random(seed)
    gap = round(rng.uniform(0.0, 8.0), 3)
    return gap, rng.choice(("own", "opponent"))


def gap_episode(profile, seed: int):
    """The bat grazes two pawns a random 0-8 ms apart, own or opponent first (seeded)."""
    from sim.scenarios_novuss import own_opponent
    gap, first = gap_of(seed)
    return own_opponent(profile, seed, gap, first=first)


def clips(quick: bool, gap_seeds: int):
    """(group, game, name, seed, builder) of every clip in the table."""
    from sim import scenarios
    from sim.scenarios_cvrnkana import SCENARIOS as CVR
    from sim.scenarios_novuss import SCENARIOS as NOV
    out = [("nov hard", "novuss", n, 1, NOV[n][0]) for n in (QUICK if quick else NOV)]
    out += [("nov gaps", "novuss", "gap", s, gap_episode) for s in range(1, gap_seeds + 1)]
    if not quick:
        out += [("nov set", "novuss", "set", s, scenarios.SCENARIOS["novuss"]["set"][0]) for s in SET_SEEDS]
    out += [("cvr hard", "cvrnkana", n, 1, CVR[n][0]) for n in (("pit-entry", "hand-nudge") if quick else CVR)]
    if not quick:
        out += [("cvr game", "cvrnkana", "game", s, scenarios.SCENARIOS["cvrnkana"]["game"][0]) for s in GAME_SEEDS]
    return out


def new_stats() -> dict:
    stats = defaultdict(int)
    for key in ("t_err_ms", "t_err_first_ms", "t_cover_contact", "t_cover_cushion", "pos_err", "rulings", "ruling_notes",
                "flag_notes", "rulings_decidable", "rulings_view", "rulings_fold", "calls", "vs_exact_parts"):
        stats[key] = []
    stats["fc"] = defaultdict(list)
    return stats


# -- one clip ---------------------------------------------------------------------------------------------
def run_clip(profile, ep, fps: float, detector: str, seed: int, stats: dict, phase_s: float | None = None,
             refine: str | None = None, referee_unseen: bool = False, clock=None, settings=None, on_frame=None,
             renderer_factory=None, row_times: bool = True) -> list:
    """Watch an episode at ``fps`` and add its figures to ``stats``; returns the vision records.
    ``settings``: the classical detector's clips filmed in this look (a ``RenderSettings``, e.g. a stratum
    of the harsher simulator) instead of the standard one; ``on_frame(frame, detections)``: called with
    every frame the simulator gave and what the detector made of it (before vision is fed);
    ``renderer_factory``: the classical detector's clips filmed by another renderer (see
    ``bench.vision_detect.setup``). ``row_times``: the pipeline told the renderer's rolling shutter (its
    ``readout_s``), as a judge is told its camera's; False: every sighting at its frame's time (the baseline).
    ``clock``: the frames' times, ``clock(n, fps, seed)`` -> a schedule (``bench.clocks``) ((true, reported)
    seconds from the first frame; None: the previous picture again); by default every frame at k / fps.
    ``referee_unseen``: the referee enters each Cvrnkaná flick the camera had nothing of to see (see
    ``_unseen``) as it ends, with ``Cvrnkana.unseen_flick`` as the judge's overlay does; those records
    are judged and scored with the camera's and counted in ``referee_entries``."""
    clip = ep.clip()
    rng = np.random.default_rng(seed * 7919 + int(fps))
    phase = rng.uniform(0.0, 1.0 / fps) if phase_s is None else phase_s
    t_start = clip.t_start_s + phase
    renderer = det = None
    if detector == "classical":
        renderer, det = _classical(profile, clip, fps, seed, settings, renderer_factory)
    elif detector == "learned":
        renderer, det = _learned(profile, clip, fps, seed, refine)
    # as the judge builds it (judge.setup): the events solved with the detector's own position error, and the
    # detector told what the judge tells vision (the layout to measure colours on, who is to move); the bench
    # runs it itself and feeds the pipeline its detections, to score them
    # the camera's rolling shutter, as its spec tells the judge (``vision.rows``): each sighting dated by its row
    readout_s = getattr(renderer, "readout_s", 0.0) if row_times else 0.0
    rows = RowClock(readout_s, renderer.camera.height) if readout_s else None
    pipe = Pipeline(profile, rows=rows) if det is None else Pipeline(profile, detector=det, rows=rows,
                                                                      assembler=assembler_for(profile, det))
    referee = Referee(engine_for(profile.game, profile.geometry))
    f0 = clip.states_at(t_start, 0)
    pipe.start(hints_for({p.id: (p.x_mm, p.y_mm) for p in f0.pieces
                          if p.visible and p.z_mm > -20 and in_view(profile, p.x_mm, p.y_mm)}), 0, f0.t_s)
    truths = [sh.record for sh in ep.shots]
    rulings = [sh.ruling for sh in ep.shots]
    n = int((clip.t_end_s - t_start) * fps) + 1 + int(1.0 * fps)
    named_ok: dict[str, bool] = {}
    shot_of = _shot_index(truths)
    states = ep.session.states_before  # the engine's state before each shot, as the simulator refereed it
    if states:
        pipe.tell(referee.hints(states[0]))
    own_state = states[0] if states else None  # the judge's own fold over the vision records
    fold: dict = {}  # truth shot index -> did the judge's call match
    entered: list[dict] = []
    waiting = 0  # the next truth shot the referee may still have to enter
    take = clock(n, fps, seed) if clock is not None else [(k / fps, k / fps) for k in range(n)]
    dets = None
    for k, (t_true, t_said) in enumerate(take):
        if t_true is not None:
            fr = clip.states_at(t_start + t_true, k)
        while referee_unseen and waiting < len(truths) and truths[waiting]["t1"] < fr.t_s:
            i, waiting = waiting, waiting + 1
            if not _unseen(profile, truths[i], clip) or any(shot_of(s.shot.to_dict()) == i for s in pipe.shots):
                continue
            now = own_state if own_state is None or own_state.outcome is None else states[i]
            touched = next(e["piece"] for e in truths[i]["events"] if e["kind"] == "touch")
            on_field = touched in dict(now.field)
            rec = engine_for(profile.game, profile.geometry).unseen_flick(now, touched if on_field else None, truths[i]["t1"])
            entered.append(rec)
            stats["referee_entries"] += 1
            own_state, fold[i], _ = _judge(referee, own_state, parse_record(rec), pipe, states, rulings, i)
        if t_true is None:  # the last picture again, at its time or a new one
            dets = restamp(dets, k, dets.t_s if t_said is None else t_start + t_said)
        else:
            dets = oracle_detections(fr, 0.3, rng, profile=profile, clip=clip, exposure_s=0.5 / fps) if det is None \
                else det.detect(renderer.render(fr, clip.states_at), k, fr.t_s)
            dets = dets if t_said == t_true else restamp(dets, k, t_start + t_said)
            _score_detections(profile, fr, dets, stats)
            on_frame is None or on_frame(fr, dets)
        seen = pipe.feed(dets)
        truth_at = {p.id: p for p in fr.pieces}
        named = pipe.last_named if pipe.last_named is not None and pipe.last_named.t_s == dets.t_s else None
        for d in named.pieces() if named is not None else ():  # (None: vision skipped the frame as a repeat)
            tp = truth_at.get(d.piece)
            ok = tp is not None and tp.visible and math.dist((tp.x_mm, tp.y_mm), d.centre_mm) <= 12.0
            if named_ok.get(d.piece, True) and not ok:
                stats["id_switches"] += 1
            named_ok[d.piece] = ok
        if seen is not None:
            i = shot_of(seen.shot.to_dict())
            own_state, fold[i], _ = _judge(referee, own_state, seen.shot, pipe, states, rulings, i)
    pipe.finish()
    records = [s.shot.to_dict() for s in pipe.shots]
    _score_shots(profile, ep, truths, records + entered, stats, fold)
    return records


def _judge(referee, state, shot, pipe, states, rulings, i):
    """What the judge does with a shot of truth shot ``i`` (None: an invented shot): the one referee step
    (``judge.referee``, as ``shotjudge live`` and ``replay``) on its own game state (folded over the vision
    records, not the truth, so pieces keep vision's names), vision told the step's hints (penalty and
    returned pieces about to be put down, the marbles out of view, who is to move), and whether the call
    matches the ground-truth ruling. A game that is over is followed by the next as the simulator's referee
    set it up; a wrong call is overruled, play going on from the true state (vision is then told that
    state, with the placements of the call it made). Returns (the judge's state after the shot, call right,
    the referee's step: None when the judge had no state to judge on).

    Vision hears of the pieces out of its view from the judge's own state, as in ``judge.live``: vision's
    names (which may swap two of one player's marbles) then stay the names the judge folds with."""
    truth_after = states[i + 1] if i is not None and i + 1 < len(states) else None
    if state is None:
        if truth_after is not None:
            pipe.tell(referee.hints(truth_after))
        return state, False, None
    if i is not None and state.outcome is not None:
        state = states[i]
    step = referee.step(state, shot, 1)
    ok = False
    if step.judged and i is not None:
        want = sorted(c["code"] for c in rulings[i]["calls"] if not c.get("review"))
        got = sorted(c.code for c in step.ruling.calls if not c.review)
        ok = want == got and rulings[i].get("next_player") == step.ruling.next_player
    after = truth_after if not ok and truth_after is not None else step.state  # the referee overrules
    told = truth_after if after.outcome is not None else after  # a game over: the next is set up
    if told is not None:
        pipe.tell(referee.engine.hints(told, step.ruling))
    return after, ok, step


def _shot_index(truths):
    def best(rec):
        scores = [(_overlap(rec, t), i) for i, t in enumerate(truths)]
        s, i = max(scores, default=(0.0, None))
        return i if s > 0 else None
    return best


def _overlap(rec, truth) -> float:
    lo, hi = max(rec["t0"], truth["t0"]), min(rec["t1"], truth["t1"])
    return max(hi - lo, 0.0) + (1e-6 if lo <= hi else 0.0)


def _score_shots(profile, ep, truths, records, stats, fold: dict) -> None:
    shot_of = _shot_index(truths)
    owned = defaultdict(list)
    for rec in records:
        i = shot_of(rec)
        if i is None:
            stats["seg_extra"] += 1
            stats["rulings"].append(False)  # an invented shot would be refereed
            stats["rulings_decidable"].append(False)
            stats["rulings_fold"].append(False)
            stats["ruling_notes"].append(f"{ep.scenario}: invented shot at {rec['t0']:.2f}s")
            stats["calls"].append((rec["t0"], "invented", None, _asks(rec)))
        else:
            owned[i].append(rec)
    states = ep.session.states_before or [None] * len(truths)
    for i, truth in enumerate(truths):
        stats["shots"] += 1
        got = owned.get(i, [])
        stats["rulings_fold"].append(len(got) == 1 and fold.get(i, False))
        if len(got) != 1:
            stats["seg_missed" if not got else "seg_split"] += 1
            stats["rulings"].append(False)
            if not _flag_due(engine_for(profile.game, profile.geometry), truth):  # a shot missed is one not told
                stats["rulings_decidable"].append(False)
            stats["ruling_notes"].append(f"{ep.scenario}: shot {i + 1} {'missed' if not got else 'split'}")
            stats["calls"] += [(r["t0"], "split", None, _asks(r)) for r in got]
            stats["ev_true"] += len(truth["events"])
            continue
        rec = same_player_names(got[0], truth.get("before", {}), events_true=truth["events"])
        if truth.get("player"):
            rec["player"] = truth["player"]
        pairs, _, _ = match_events(truth["events"], rec["events"])
        stats["ev_true"] += len(truth["events"])
        stats["ev_got"] += len(rec["events"])
        stats["ev_match"] += len(pairs)
        stats["t_err_ms"].extend(abs(g["t"] - t["t"]) * 1000 for t, g in pairs if t["kind"] in ("contact", "cushion"))
        first = _first_contact_event(profile, truth["events"])
        stats["t_err_first_ms"].extend(abs(g["t"] - t["t"]) * 1000 for t, g in pairs if t is first)
        # is the stated t_err honest? the share of contacts/cushions within 2 t_err of the truth
        clock = rec.get("meta", {}).get("clock_err_s", 0.0)  # a live stream's fitted clock: shared by the events
        for t, g in pairs:
            if t["kind"] in ("contact", "cushion"):
                err = math.hypot(g.get("t_err", 0.0), clock)
                stats[f"t_cover_{t['kind']}"].append(abs(g["t"] - t["t"]) <= 2.0 * err + 1e-7)
        stats["calls"].append((got[0]["t0"],) + _ruling(profile, ep, i, truth, rec, states[i], stats))


def _asks(rec) -> bool:
    """Whether vision flagged a record for review (its review items, which the judge shows beside the call)."""
    return bool((rec.get("meta") or {}).get("review"))


def notes(stats) -> list[str]:
    """The failure map's lines of a clip's (or merged) statistics: rulings that differ, then right ones flagged."""
    return stats["ruling_notes"] + stats["flag_notes"]


def _why_flagged(ruling, rec) -> str:
    """What asked the referee about a call: the review calls' codes and vision's review items (code, piece)."""
    items = [c.code for c in ruling.calls if c.review]
    items += [f"{r.get('code')} {r.get('piece') or ''}".strip() for r in (rec.get("meta") or {}).get("review") or ()]
    return ", ".join(items)


def _first_contact_event(profile, events):
    """The first contact of a true record: the striker's (the bat's), or any where the game has none."""
    striker = profile.spec.striker
    return next((e for e in sorted(events, key=lambda e: e["t"]) if e["kind"] == "contact"
                 and (striker is None or striker in (e["a"], e["b"]))), None)


def _ruling(profile, ep, i, truth, rec, state, stats) -> tuple:
    """Scores the call on record ``rec`` against the true record's, both on the true state before the shot;
    returns (the call's codes, next player, flagged for review): what ``bench.clocks.compare`` pairs. A
    record the rules refuse is flagged (the judge cannot rule: the referee is asked, as ``judge.referee``'s
    ``Step.review`` says) and counted in ``rulings_refused``."""
    if state is None:
        return (None, None, _asks(rec))
    plain = engine_for(profile.game, profile.geometry)
    _, r_true = plain.apply(state, parse_record(dict(truth)))
    try:
        shot = parse_record(rec)
        told = plain.told(shot)
        _, r_got = told.apply(state, shot)
    except Exception as exc:  # a record the engine refuses is a wrong ruling (the judge hands it to the referee)
        stats["rulings"].append(False)
        if not _flag_due(plain, truth):
            stats["rulings_decidable"].append(False)
        stats["rulings_refused"] += 1
        stats["ruling_notes"].append(f"{ep.scenario}: shot {i + 1} refused: {str(exc)[:90]}")
        return ("refused", None, True)
    codes = lambda r: sorted(c.code for c in r.calls if not c.review)  # noqa: E731
    same = codes(r_true) == codes(r_got) and r_true.next_player == r_got.next_player
    # flagged for the referee: a call marked review, or vision's own review items on the record (a piece lost
    # from sight), which the judge shows beside the call
    asks = any(c.review for c in r_got.calls) or _asks(rec)
    flagged = asks and not any(c.review for c in r_true.calls)
    stats["rulings"].append(same)
    if not profile.spec.sees_whole_field:
        stats["rulings_view"].append((_left_view(profile, truth), same))
    stats["rulings_flagged"] += flagged
    due = _flag_due(told, truth)
    stats["rulings_flagged_undue"] += flagged and same and not due
    if not due:  # the rulings the camera can decide: the truth not beyond it
        stats["rulings_decidable"].append(same)
    if not same:
        stats["rulings_wrong_flagged" if flagged else "rulings_wrong_silent"] += 1
        stats["ruling_notes"].append(f"{ep.scenario}: shot {i + 1} {codes(r_true)} -> {codes(r_got)}"
                                     f"{' (flagged)' if flagged else ''}")
    elif flagged:  # a right call the referee is asked about: what asked (the other half of "flags that mean something")
        stats["flag_notes"].append(f"{ep.scenario}: shot {i + 1} right, flagged: {_why_flagged(r_got, rec)}")
    if profile.spec.striker:  # the first contact of the striker (the bat)
        _first_contact(truth, r_true, r_got, stats, _asks(rec))
    return (tuple(codes(r_got)), r_got.next_player, asks)


def _unseen(profile, truth, clip, step_s: float = 0.02) -> bool:
    """A Cvrnkaná flick the camera had nothing of to see: no marble it moved (the flicked one, and any
    it knocked on) was in the view at any moment of the shot (sampled every ``step_s``), and none reached
    the pit. The referee enters the flicked marble only; whether that gives the right call is measured."""
    if profile.spec.sees_whole_field or any(e["kind"] == "pit" for e in truth["events"]):
        return False
    before, after = truth.get("before", {}), truth.get("after", {})
    moved = {p for p, xy in after.items() if before.get(p) != xy} | {e["piece"] for e in truth["events"] if e["kind"] == "touch"}
    for k in range(int((truth["t1"] - truth["t0"]) / step_s) + 2):
        frame = clip.states_at(min(truth["t0"] + k * step_s, truth["t1"]), k)
        if any(p.id in moved and p.visible and in_view(profile, p.x_mm, p.y_mm) for p in frame.pieces):
            return False
    return bool(moved)


def _left_view(profile, truth) -> bool:
    """Whether a marble this shot moved (or touched) lay or stopped outside the camera's view: the
    record cannot know where, so the ruling rests on what the referee or the game state adds."""
    before, after = truth.get("before", {}), truth.get("after", {})
    moved = {p for p, xy in after.items() if before.get(p) != xy}
    moved |= {e["piece"] for e in truth["events"] if e["kind"] == "touch"}
    return any(not in_view(profile, *xy) for p in moved for xy in (before.get(p), after.get(p)) if xy is not None)


def _bat_gap_ms(truth) -> float | None:
    """How far apart the bat's first touches of an own and an opponent pawn were (None: not both touched)."""
    player = truth.get("player", "A")
    own = opp = None
    for e in truth["events"]:
        if e["kind"] == "contact" and "bat" in (e["a"], e["b"]):
            pawn = e["b"] if e["a"] == "bat" else e["a"]
            if pawn[0] == player and own is None:
                own = e["t"]
            elif pawn[0] != player and opp is None:
                opp = e["t"]
    return None if own is None or opp is None else abs(opp - own) * 1000


def _flag_due(told, truth) -> bool:
    """Whether the truth lies beyond what the camera can tell, so a right call must still ask the referee:
    the bat's touches of an own and an opponent pawn under 2 ms apart (#16: flagged, never wrong, below), or
    the bat come to rest within the record's stated position error (``told``: the engine told it) of its
    zone's line. A flagged right call where none was due is a flag that tells the referee nothing."""
    gap_ms = _bat_gap_ms(truth)
    if gap_ms is not None and gap_ms < 2.0:
        return True
    bat, tol = (truth.get("after") or {}).get("bat"), getattr(told, "position_tolerance_mm", 0.0)
    return bool(bat is not None and tol and abs(told.bat_zone_margin_mm(tuple(bat), truth.get("player", "A"))) <= tol)


def _first_contact(truth, r_true, r_got, stats, asks: bool = False) -> None:
    """Shots where the bat touched an own and an opponent pawn: was the first-contact call right? Flagged:
    the call asks for review, or vision asks the referee to check the shot (``asks``: e.g. a pawn set
    off with no contact seen, a contact the frames missed)."""
    gap_ms = _bat_gap_ms(truth)
    if gap_ms is None:
        return
    label = next(name for lo, hi, name in GAP_BINS if lo <= gap_ms < hi)
    flagged = asks or any(c.code == "review_first_contact" for c in r_got.calls)
    if flagged:
        stats["fc"][label].append("flagged")
    else:
        stats["fc"][label].append("correct" if r_got.first_contact == r_true.first_contact else "wrong")


def _classical(profile, clip, fps, seed, settings=None, renderer_factory=None):
    """The classical detector on this clip's renderer (the same set-up as bench/vision_detect.py; filming
    in ``settings`` where given), with the profile's piece colours measured once on the first frame's
    layout, as the judge does."""
    from bench.vision_detect import setup

    renderer, det = setup(profile, clip, fps, seed, colours="appearance", settings=settings,
                          renderer_factory=renderer_factory)
    f0 = clip.frame(0, fps)
    det.expect({p.id: (p.x_mm, p.y_mm) for p in f0.pieces if p.visible and p.z_mm > -20})  # on the field, as the judge
    return renderer, det


def _learned(profile, clip, fps, seed, refine: str | None = None):
    """The shipped learned detector (``models/shotjudge-det.onnx`` through ultralytics) on this clip's
    renderer, mapped to the board by the same camera model as the classical one; ``refine``: box centres
    refined by the rim fit against the empty board (``"background"``) or the board around each box (``"local"``)."""
    from bench.vision_detect import setup
    from judge.weights import shipped_weights
    from vision.detectors import load_learned

    renderer, classical = setup(profile, clip, fps, seed, colours="appearance")
    background = classical.background if refine in ("background", "background-drop") else None
    return renderer, load_learned(shipped_weights(), classical.plane, refine=refine is not None, profile=profile, background=background,
                                  drop_unfit=bool(refine and refine.endswith("-drop")),  # boxes with no plausible rim dropped
                                  game=profile.game)  # only this game's classes compete for a box, as in the judge


def _score_detections(profile, fr, dets, stats) -> None:
    """Recall, precision and position error against the pieces a camera could see (in view, on the
    surface, not under a hand or the cue). A detection inside the pit is a marble out of play, which the
    pipeline drops (``Pipeline._field_only``): it counts neither way."""
    pcs = dets.pieces()
    surface = Surface.from_profile(profile)
    used = set()
    for p in fr.pieces:
        if not on_surface(surface, p) or not in_view(profile, p.x_mm, p.y_mm) or dets.occluded((p.x_mm, p.y_mm), 0.0):
            continue
        stats["det_true"] += 1
        best = min(((math.dist(q.centre_mm, (p.x_mm, p.y_mm)), j) for j, q in enumerate(pcs) if j not in used),
                   default=None)
        if best is not None and best[0] < 8.0:
            used.add(best[1])
            stats["det_hit"] += 1
            stats["pos_err"].append(best[0])
    stats["det_got"] += sum(1 for q in pcs if not dets.occluded(q.centre_mm, 0.0)
                            and not (surface.pit_radius_mm and surface.in_pit(q.centre_mm, -1.0)))


# -- the figures --------------------------------------------------------------------------------------------
def summary(stats) -> dict:
    pct = lambda a, b: 100.0 * a / b if b else float("nan")  # noqa: E731
    te = np.array(stats["t_err_ms"]) if stats["t_err_ms"] else np.array([np.nan])
    pe = np.array(stats["pos_err"]) if stats["pos_err"] else np.array([np.nan])
    out = {
        "det_recall": pct(stats["det_hit"], stats["det_true"]), "det_precision": pct(stats["det_hit"], stats["det_got"]),
        "pos_rms_mm": float(np.sqrt(np.mean(pe ** 2))),
        "id_switch_per_shot": stats["id_switches"] / max(stats["shots"], 1),
        "segmentation_errors": stats["seg_missed"] + stats["seg_split"] + stats["seg_extra"],
        "ev_recall": pct(stats["ev_match"], stats["ev_true"]), "ev_precision": pct(stats["ev_match"], stats["ev_got"]),
        "t_err_med_ms": float(np.median(te)), "t_err_p95_ms": float(np.percentile(te, 95)),
        "t_cover_contact": pct(sum(stats["t_cover_contact"]), len(stats["t_cover_contact"])),
        "t_cover_cushion": pct(sum(stats["t_cover_cushion"]), len(stats["t_cover_cushion"])),
        "rulings_same": pct(sum(stats["rulings"]), len(stats["rulings"])), "rulings_n": len(stats["rulings"]),
        "rulings_decidable_same": pct(sum(stats["rulings_decidable"]), len(stats["rulings_decidable"])),
        "rulings_decidable_n": len(stats["rulings_decidable"]),
        "rulings_fold": pct(sum(stats["rulings_fold"]), len(stats["rulings_fold"])),
        "rulings_flagged": stats["rulings_flagged"], "rulings_flagged_undue": stats["rulings_flagged_undue"],
        "referee_entries": stats["referee_entries"], "rulings_wrong_silent": stats["rulings_wrong_silent"],
        "shots": stats["shots"],
    }
    for name, left_view in (("in_view", False), ("left_view", True)):
        got = [same for left, same in stats["rulings_view"] if left == left_view]
        out[f"rulings_{name}"] = (pct(sum(got), len(got)), len(got))
    for _, _, name in GAP_BINS:
        got = stats["fc"].get(name, [])
        out[f"fc_{name}"] = tuple(sum(1 for g in got if g == what) for what in ("correct", "flagged", "wrong"))
    return out


def merge(stats_list) -> dict:
    total = new_stats()
    for st in stats_list:
        for k, v in st.items():
            if k == "fc":
                for b, xs in v.items():
                    total["fc"][b].extend(xs)
            elif isinstance(v, list):
                total[k].extend(v)
            else:
                total[k] += v
    return total


def episodes(args) -> tuple[dict, list]:
    """The profiles and the clips the options choose: (profiles, [(group, game, name, seed, episode)])."""
    profiles = {g: default_profile(g) for g in GAMES}
    gap_seeds = args.gap_seeds if args.gap_seeds is not None else (20 if args.quick else 120)
    groups = {g.strip() for g in args.groups.split(",")} if args.groups else None
    built = [(group, game, name, seed, builder(profiles[game], seed))
             for group, game, name, seed, builder in clips(args.quick, gap_seeds) if groups is None or group in groups]
    return profiles, built
