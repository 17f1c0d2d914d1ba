"""Vision accuracy on simulator clips: one table.

    python bench/accuracy.py [--quick] [--detector oracle|classical|learned] [--gap-seeds N] [--fps 60,30]
                             [--groups 'nov hard,cvr hard']

Clips (fixed seeds), each watched at 30 and 60 frames/s from a random frame phase:
* ``nov hard``: every scripted Novuss scenario (sim.scenarios_novuss), seed 1;
* ``nov gaps``: the bat grazes an own and an opponent pawn ``gap`` apart, gap uniform in 0-8 ms, own or
  opponent first at random (``--gap-seeds`` clips): the first-contact statistics;
* ``nov set``: whole Novuss sets (seeds 1-3, ~180 shots) played by the simulator's policy (hands placing the
  bat, cue, penalties);
* ``cvr hard``: every scripted Cvrnkaná scenario; ``cvr game``: whole Cvrnkaná games (seeds 1-3, ~110 flicks).

``oracle`` feeds the simulator's piece positions with 0.3 mm noise, blur-like noise along the motion of
fast pieces (2 % of the streak drawn in half a frame), nothing under a hand or the cue and nothing outside
the camera's view (measures tracking, segmentation, events and records on their own); ``classical``
renders every frame (blur, noise, hand and cue) and runs ``vision.detect_classical``; ``learned`` renders the
same frames and runs the shipped YOLO model (``models/shotjudge-det.onnx``), so the paths compare in one table.

Columns: detection recall/precision and position RMS (pieces on the surface — not falling into a pocket or
the pit, not in the air — in view and not under an occluder), id
switches per shot (a piece's name passing to a detection > 12 mm from that piece), segmentation errors
(shots missed, split or invented), event recall/precision (same kind and pieces within 10 ms) and timing
error of contacts and cushions (median/95th pct), first contact by the gap between the first own and the
first opponent bat contact: correct / flagged for review / wrong (silently), and rulings identical to the
ruling of the ground-truth record, both applied to the true game state before the shot (calls that only
ask for review do not count as different; flagged rulings — a review call, or vision's own review items
on the record, which the judge shows beside the call — are listed apart, and so are silently wrong ones).
A shot the pipeline missed, split or invented counts as a wrong ruling. Before a record is judged on the
true state, its pieces are renamed within each player by where they stood at the start
(``vision_clips.same_player_names``; a marble rolling in from an unknown place outside the view takes the
name of the true record's moving marble of that player): the rules tell a player's pawns or marbles apart
only by owner, and the judge folds its own records, so a name passed between two of one player's pieces
changes no call (it still counts as an id switch). "judge fold": the calls the judge itself makes, folding
its own records from the opening (its state keeps vision's names), with the referee overruling each wrong
call so play goes on from the true state; the pipeline is told of penalty and returned pieces from these
rulings, and of the marbles out of its view from the judge's own state (``Ruleset.hints``:
known places only where the judge knows them), as in ``shotjudge replay`` and ``live``: the bench judges
with the same referee step (``judge.referee.Referee``).
"""
from __future__ import annotations

import argparse
import math
import os
import random
import sys
import time
from collections import defaultdict

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.vision_clips import in_view, match_events, on_surface, oracle_detections, same_player_names  # noqa: E402
from calibration import default_profile  # noqa: E402
from judge.referee import Referee  # noqa: E402
from rules import GAMES, engine_for  # noqa: E402
from rules.record import parse_record  # noqa: E402
from vision.board import Surface  # noqa: E402
from vision.pipeline import Pipeline, hints_for  # noqa: E402

GAP_BINS = ((0.0, 1.0, "<1ms"), (1.0, 2.0, "1-2ms"), (2.0, 5.0, "2-5ms"), (5.0, 1e9, ">=5ms"))
SET_SEEDS = (1, 2, 3)  # whole Novuss sets: about 180 shots
GAME_SEEDS = (1, 2, 3)  # whole Cvrnkaná games: about 110 flicks
QUICK = ("own-opponent-3ms", "opponent-first", "ricochet", "bat-pocketed", "touching")


# -- the clips ----------------------------------------------------------------------------------------------
def gap_episode(profile, seed: int):
    """The bat grazes two pawns a random 0-8 ms apart, own or opponent first (seeded)."""
    from sim.scenarios_novuss import own_opponent
    rng = random.Random(seed)
    gap = round(rng.uniform(0.0, 8.0), 3)
    return own_opponent(profile, seed, gap, first=rng.choice(("own", "opponent")))


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
    for key in ("t_err_ms", "t_cover_contact", "t_cover_cushion", "pos_err", "rulings", "ruling_notes", "rulings_view", "rulings_fold"):
        stats[key] = []
    stats["fc"] = defaultdict(list)
    return stats


# -- one clip ---------------------------------------------------------------------------------------------
def run_clip(profile, ep, fps: float, detector: str, seed: int, stats: dict, phase_s: float | None = None,
             refine: str | None = None, referee_unseen: bool = False) -> list:
    """Watch an episode at ``fps`` and add its figures to ``stats``; returns the vision records.
    ``referee_unseen``: the referee enters each Cvrnkaná flick the camera had nothing of to see (see
    ``_unseen``) as it ends, with ``Cvrnkana.unseen_flick`` as the judge's overlay does; those records
    are judged and scored with the camera's and counted in ``referee_entries``."""
    clip = ep.clip()
    rng = np.random.default_rng(seed * 7919 + int(fps))
    phase = rng.uniform(0.0, 1.0 / fps) if phase_s is None else phase_s
    t_start = clip.t_start_s + phase
    pipe = Pipeline(profile)
    referee = Referee(engine_for(profile.game, profile.geometry))
    f0 = clip.states_at(t_start, 0)
    pipe.start(hints_for({p.id: (p.x_mm, p.y_mm) for p in f0.pieces
                          if p.visible and p.z_mm > -20 and in_view(profile, p.x_mm, p.y_mm)}), 0, f0.t_s)
    renderer = det = None
    if detector == "classical":
        renderer, det = _classical(profile, clip, fps, seed)
    elif detector == "learned":
        renderer, det = _learned(profile, clip, fps, seed, refine)
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
    for k in range(n):
        fr = clip.states_at(t_start + k / fps, k)
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
        if det is None:
            dets = oracle_detections(fr, 0.3, rng, profile=profile, clip=clip, exposure_s=0.5 / fps)
        else:
            dets = det.detect(renderer.render(fr, clip.states_at), k, fr.t_s)
        _score_detections(profile, fr, dets, stats)
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
            stats["rulings_fold"].append(False)
            stats["ruling_notes"].append(f"{ep.scenario}: invented shot at {rec['t0']:.2f}s")
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
            stats["ruling_notes"].append(f"{ep.scenario}: shot {i + 1} {'missed' if not got else 'split'}")
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
        # is the stated t_err honest? the share of contacts/cushions within 2 t_err of the truth
        for t, g in pairs:
            if t["kind"] in ("contact", "cushion"):
                stats[f"t_cover_{t['kind']}"].append(abs(g["t"] - t["t"]) <= 2.0 * g.get("t_err", 0.0) + 1e-7)
        _ruling(profile, ep, i, truth, rec, states[i], stats)


def _ruling(profile, ep, i, truth, rec, state, stats) -> None:
    if state is None:
        return
    plain = engine_for(profile.game, profile.geometry)
    _, r_true = plain.apply(state, parse_record(dict(truth)))
    try:
        shot = parse_record(rec)
        _, r_got = plain.told(shot).apply(state, shot)
    except Exception as exc:  # a record the engine refuses is a wrong ruling
        stats["rulings"].append(False)
        stats["ruling_notes"].append(f"{ep.scenario}: shot {i + 1} refused: {str(exc)[:90]}")
        return
    codes = lambda r: sorted(c.code for c in r.calls if not c.review)  # noqa: E731
    same = codes(r_true) == codes(r_got) and r_true.next_player == r_got.next_player
    # flagged for the referee: a call marked review, or vision's own review items on the record (a piece lost
    # from sight), which the judge shows beside the call
    asks = any(c.review for c in r_got.calls) or bool((rec.get("meta") or {}).get("review"))
    flagged = asks and not any(c.review for c in r_true.calls)
    stats["rulings"].append(same)
    if not profile.spec.sees_whole_field:
        stats["rulings_view"].append((_left_view(profile, truth), same))
    stats["rulings_flagged"] += flagged
    if not same:
        stats["rulings_wrong_flagged" if flagged else "rulings_wrong_silent"] += 1
        stats["ruling_notes"].append(f"{ep.scenario}: shot {i + 1} {codes(r_true)} -> {codes(r_got)}"
                                     f"{' (flagged)' if flagged else ''}")
    if profile.spec.striker:  # the first contact of the striker (the bat)
        _first_contact(truth, r_true, r_got, stats)


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


def _first_contact(truth, r_true, r_got, stats) -> None:
    """Shots where the bat touched an own and an opponent pawn: was the first-contact call right?"""
    player = truth.get("player", "A")
    own = opp = None
    for e in truth["events"]:
        if e["kind"] == "contact" and "bat" in (e["a"], e["b"]):
            pawn = e["b"] if e["a"] == "bat" else e["a"]
            if pawn[0] == player and own is None:
                own = e["t"]
            elif pawn[0] != player and opp is None:
                opp = e["t"]
    if own is None or opp is None:
        return
    gap_ms = abs(opp - own) * 1000
    label = next(name for lo, hi, name in GAP_BINS if lo <= gap_ms < hi)
    flagged = any(c.code == "review_first_contact" for c in r_got.calls)
    if flagged:
        stats["fc"][label].append("flagged")
    else:
        stats["fc"][label].append("correct" if r_got.first_contact == r_true.first_contact else "wrong")


def _classical(profile, clip, fps, seed):
    """The classical detector on this clip's renderer (the same set-up as bench/vision_detect.py), with the
    profile's piece colours measured once on the first frame's layout, as the judge does."""
    from bench.vision_detect import setup

    renderer, det = setup(profile, clip, fps, seed, colours="appearance")
    f0 = clip.frame(0, fps)
    det.expect({p.id: (p.x_mm, p.y_mm) for p in f0.pieces if p.visible})
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


# -- the table ----------------------------------------------------------------------------------------------
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
        "rulings_fold": pct(sum(stats["rulings_fold"]), len(stats["rulings_fold"])),
        "rulings_flagged": stats["rulings_flagged"], "referee_entries": stats["referee_entries"], "rulings_wrong_silent": stats["rulings_wrong_silent"],
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


def table(rows, detector: str) -> str:
    head = ("fps", "clips", "shots", "det rec%", "det prec%", "pos RMS", "id sw/shot", "seg err", "ev rec%",
            "ev prec%", "t err ms med/p95", "within 2 t_err % contact/cushion") + tuple(f"1st {n} ok/flag/wrong" for _, _, n in GAP_BINS) + \
        ("rulings same%", "judge fold same%", "flagged", "silent wrong", "cvr same% all in view / some out of view",
         "referee entries")
    lines = [f"vision accuracy, {detector} detector (positions mm, times ms; first contact: counts of shots)",
             " | ".join(head)]
    for fps, group, st in rows:
        s = summary(st)
        cells = [f"{fps}", group, f"{s['shots']}", f"{s['det_recall']:.2f}", f"{s['det_precision']:.2f}",
                 f"{s['pos_rms_mm']:.2f}", f"{s['id_switch_per_shot']:.3f}", f"{s['segmentation_errors']}",
                 f"{s['ev_recall']:.1f}", f"{s['ev_precision']:.1f}", f"{s['t_err_med_ms']:.2f}/{s['t_err_p95_ms']:.2f}", f"{s['t_cover_contact']:.1f}/{s['t_cover_cushion']:.1f}"]
        cells += ["{}/{}/{}".format(*s[f"fc_{n}"]) for _, _, n in GAP_BINS]
        cells += [f"{s['rulings_same']:.1f} of {s['rulings_n']}", f"{s['rulings_fold']:.1f}", f"{s['rulings_flagged']}", f"{s['rulings_wrong_silent']}"]
        iv, lv = s["rulings_in_view"], s["rulings_left_view"]
        cells.append(f"{iv[0]:.1f} of {iv[1]} / {lv[0]:.1f} of {lv[1]}" if iv[1] + lv[1] else "-")
        cells.append(f"{s['referee_entries']}")
        lines.append(" | ".join(cells))
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="a few hard cases and 20 gap clips only")
    ap.add_argument("--detector", choices=("oracle", "classical", "learned"), default="oracle",
                    help="learned: the shipped ONNX model (~150 ms a frame here: use --quick --fps 60)")
    ap.add_argument("--groups", help="comma-separated groups to run (nov hard, nov gaps, nov set, cvr hard, cvr game)")
    ap.add_argument("--gap-seeds", type=int, default=None, help="clips of the own/opponent gap scenario (120)")
    ap.add_argument("--fps", default="60,30")
    ap.add_argument("--notes", action="store_true", help="list every ruling that differs")
    ap.add_argument("--refine", choices=("background", "local", "background-drop", "local-drop"), default=None,
                    help="learned: refine box centres by the rim fit against the empty board or the board around each box")
    ap.add_argument("--referee-unseen", action="store_true",
                    help="Cvrnkaná: the referee enters each flick played wholly out of the camera's view (overlay "
                         "'Flick out of view'); counted in the 'referee entries' column")
    args = ap.parse_args(argv)
    profiles = {g: default_profile(g) for g in GAMES}
    gap_seeds = args.gap_seeds if args.gap_seeds is not None else (20 if args.quick else 120)
    groups = {g.strip() for g in args.groups.split(",")} if args.groups else None
    built = [(group, game, name, seed, builder(profiles[game], seed))
             for group, game, name, seed, builder in clips(args.quick, gap_seeds) if groups is None or group in groups]
    rows, notes = [], []
    for fps in (int(f) for f in args.fps.split(",")):
        t = time.perf_counter()
        per_group: dict[str, list] = defaultdict(list)
        for group, game, name, seed, ep in built:
            st = new_stats()
            run_clip(profiles[game], ep, fps, args.detector, seed, st, refine=args.refine,
                     referee_unseen=args.referee_unseen)
            per_group[group].append(st)
            notes += [f"{fps} fps {n}" for n in st["ruling_notes"]]
        groups = [(fps, g, merge(v)) for g, v in per_group.items()]
        rows += groups + [(fps, "all", merge([st for _, _, st in groups]))]
        print(f"# {fps} fps: {time.perf_counter() - t:.0f} s", file=sys.stderr)
    print(table(rows, args.detector + (f" refined ({args.refine})" if args.refine else "")))
    if args.notes and notes:
        print("\nrulings that differ:\n" + "\n".join(notes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
