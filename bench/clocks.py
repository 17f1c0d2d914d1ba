"""Frame clocks: the times a live stream gives its frames, and the accuracy bench's clock stratum.

    python bench/accuracy.py --clocks [--conditions 'exact,jitter 3 ms + drop 5 %'] [--groups 'nov set,cvr game']
                                      [--gap-seeds N] [--fps 60,30] [--notes] [--detector oracle|classical|learned]

(``bench/accuracy.py``'s options; ``--refine`` and ``--referee-unseen`` do not apply: the referee always
enters the Cvrnkaná flicks played wholly out of view.)

A schedule is a list of (true capture time, reported time) pairs, seconds from the first frame, in the
order the frames arrive: the true time drives the simulator (where the pieces are), the reported time is
what vision gets (the ``Detections``' and each ``Detection``'s ``t_s``). A true time of None is the
previous picture again (a stream repeating a frame), under the previous time (reported None) or a new one.

Conditions (``CONDITIONS``), each a schedule of ``n`` frame slots at ``fps`` from a seed:
``exact`` (k / fps), ``jitter 1 ms`` / ``jitter 3 ms`` (each stamp up to that far off, uniform, still
increasing; the frame is taken at k / fps), ``drop 2 %`` / ``drop 5 %`` (frames lost at random, one burst
of 5 lost together, and the 2nd-4th frames late), ``jitter 3 ms + drop 5 %``, ``repeats`` (every 17th frame
twice: the same picture at the same time or 2-6 ms later; every 41st a frame taken half a frame late and
stamped 0.3 frame early, a time going back), ``drift +10 %`` / ``drift -10 %`` (the frame interval swings
slowly, by up to 10 % of a frame over 90 frames, first lengthening (+) or shortening (-); times true).

The stratum runs every clip of ``bench/accuracy.py`` (its groups and options) under each condition at each
rate (``scoring.run_clip``; the oracle detector unless ``--detector`` says otherwise; the referee entering
the Cvrnkaná flicks played wholly out of view; the exact run is the baseline) and prints a row per
condition, rate and group of clips, and each game's total: the shots; rulings on the true state against the
ground truth (``scoring._ruling``) — right, right but flagged, wrong and flagged, confidently wrong (wrong
and not flagged: a missed, split or invented shot counts here; a record the rules refuse goes to the
referee, flagged); against the exact-time run of the same clip, paired shot by shot by start time
(``compare``) — the same call (and of those, how many are newly flagged), a different call flagged,
differing unflagged (confidently wrong against the exact run, a lost or invented shot included); the first
contact's timing error (the bat's first contact, in Cvrnkaná the first contact; median / 95th pct ms), that
of every contact and cushion, and the share of contacts within 2 ``t_err`` of the truth (is the stated
uncertainty honest); Novuss first contact by the gap between the own and the opponent pawn: right / flagged
/ wrong. Flagged: a review call, or vision's review items on the record, which the judge shows beside the
call.
"""
from __future__ import annotations

import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench import scoring  # noqa: E402


# -- schedules ---------------------------------------------------------------------------------------------
def exact(n: int, fps: float) -> list:
    """The frames taken and stamped at k / fps."""
    return [(k / fps, k / fps) for k in range(n)]


def jitter(take: list, ms: float, seed: int = 2) -> list:
    """``take`` with every reported time but the first up to ``ms`` off (uniform; the true times stay)."""
    rng = np.random.default_rng(seed)
    return [(t, s + (rng.uniform(-ms, ms) / 1000 if k else 0.0)) for k, (t, s) in enumerate(take)]


def drop(take: list, rate: float = 0.05, seed: int = 3, burst: int = 5, burst_at: int | None = None, late: int = 3) -> list:
    """``take`` with ``rate`` of its frames lost at random, ``burst`` lost together from ``burst_at`` (a
    third of the way in by default) and frames 1 to ``late`` lost (the first frames come late)."""
    rng = np.random.default_rng(seed)
    n = len(take)
    keep = rng.random(n) > rate
    at = n // 3 if burst_at is None else burst_at
    keep[at:at + burst] = False
    keep[1:1 + late] = False
    keep[0] = True
    return [f for f, k in zip(take, keep) if k]


def repeats(n: int, fps: float, seed: int = 4) -> list:
    """Every 17th frame comes twice: the same picture again, at the same time (odd k) or 2-6 ms later;
    every 41st a frame taken half a frame later is stamped 0.3 frame earlier (a stamp out of order)."""
    rng = np.random.default_rng(seed)
    out: list = []
    for k in range(n):
        out.append((k / fps, k / fps))
        if k and k % 17 == 0:
            out.append((None, None if k % 2 else k / fps + rng.uniform(0.002, 0.006)))
        if k and k % 41 == 0:
            out.append(((k + 0.5) / fps, (k - 0.3) / fps))
    return out


def drifting(n: int, fps: float, amp: float = 0.10, period: int = 90) -> list:
    """``n`` frames whose interval swings by ``amp`` of a frame (a sine over ``period`` frames: a camera's
    clock or a stream's pacing drifting slowly), times true."""
    out, t = [], 0.0
    for k in range(n):
        out.append((t, t))
        t += (1 + amp * math.sin(2 * math.pi * k / period)) / fps
    return out


def _burst_at(n: int, seed: int) -> int:
    """Where a clip's burst of drops falls: anywhere after the first frames (seeded)."""
    return int(np.random.default_rng(seed + 101).integers(4, max(n - 5, 5)))


#: name -> schedule(n, fps, seed); the seed is the clip's, so every condition differs from clip to clip
CONDITIONS = {
    "exact": lambda n, fps, seed: exact(n, fps),
    "jitter 1 ms": lambda n, fps, seed: jitter(exact(n, fps), 1.0, seed),
    "jitter 3 ms": lambda n, fps, seed: jitter(exact(n, fps), 3.0, seed),
    "drop 2 %": lambda n, fps, seed: drop(exact(n, fps), 0.02, seed, burst_at=_burst_at(n, seed)),
    "drop 5 %": lambda n, fps, seed: drop(exact(n, fps), 0.05, seed, burst_at=_burst_at(n, seed)),
    "jitter 3 ms + drop 5 %": lambda n, fps, seed: jitter(drop(exact(n, fps), 0.05, seed, burst_at=_burst_at(n, seed)), 3.0, seed),
    "repeats": lambda n, fps, seed: repeats(n, fps, seed),
    "drift +10 %": lambda n, fps, seed: drifting(n, fps, 0.10),
    "drift -10 %": lambda n, fps, seed: drifting(n, fps, -0.10),
}


def compare(base: list, got: list, notes: list | None = None) -> tuple[int, int, int]:
    """Calls of two runs of one stretch, shot by shot (each base shot paired with the nearest unpaired
    shot of ``got`` starting within 0.5 s): (same calls, differing but flagged, silently different).
    A shot is (start time, calls, next player, flagged); the same calls newly flagged count as flagged; a
    base shot with no partner is silently different (its call is lost), and so is an unflagged shot of
    ``got`` with none (an invented call). ``notes``: each differing pair (base, got; None where none) is added."""
    same = flagged = silent = 0
    used: set[int] = set()
    for t0, calls, nxt, review in base:
        near = [(abs(g[0] - t0), j) for j, g in enumerate(got) if j not in used and abs(g[0] - t0) < 0.5]
        if not near:
            silent += 1
            notes is None or notes.append(((t0, calls, nxt, review), None))
            continue
        j = min(near)[1]
        used.add(j)
        g = got[j]
        if (g[1], g[2]) == (calls, nxt) and not (g[3] and not review):
            same += 1
            continue
        if g[3]:
            flagged += 1
        else:
            silent += 1
        notes is None or notes.append(((t0, calls, nxt, review), g))
    extra = [g for j, g in enumerate(got) if j not in used and not g[3]]
    silent += len(extra)
    notes is None or notes.extend((None, g) for g in extra)
    return same, flagged, silent


# -- the stratum ---------------------------------------------------------------------------------------------
def run(built, profiles, fps_list, conditions, out=sys.stdout, notes: bool = False, detector: str = "oracle") -> list:
    """Every clip of ``built`` ((group, game, name, seed, episode)) under each condition at each rate;
    prints a table per condition and rate as it is done; returns (condition, fps, game, stats) rows.
    ``notes``: each ruling that differs from the truth or from the exact run, to stderr. ``detector``: as
    ``scoring.run_clip`` (the clock is what is measured: the oracle is fast and enough)."""
    rows = []
    print(header(detector), file=out, flush=True)
    for fps in fps_list:
        base: dict[int, list] = {}
        for cond in ("exact",) + tuple(c for c in conditions if c != "exact"):
            t = time.perf_counter()
            per: dict[tuple[str, str], list] = {}
            for c, (group, game, name, seed, ep) in enumerate(built):
                st = scoring.new_stats()
                scoring.run_clip(profiles[game], ep, fps, detector, seed, st, referee_unseen=True, clock=CONDITIONS[cond])
                if cond == "exact":
                    base[c] = st["calls"]
                diffs: list = []
                st["vs_exact_parts"] = [compare(base[c], st["calls"], diffs)]
                st["vs_exact_n"] = len(base[c])
                st["vs_exact_newly_flagged"] = sum(1 for a, b in diffs if a and b and (a[1], a[2]) == (b[1], b[2]))
                for line in (st["ruling_notes"] + [f"vs exact: {a} -> {b}" for a, b in diffs]) if notes else ():
                    print(f"# {cond}, {fps} fps, {group} seed {seed}: {line}", file=sys.stderr)
                per.setdefault((game, group), []).append(st)
            if cond not in conditions:
                continue
            got = []
            for game in dict.fromkeys(g for g, _ in per):  # each group, then the game's total
                groups = [(group, scoring.merge(v)) for (g, group), v in per.items() if g == game]
                got += [(cond, fps, group, st) for group, st in groups]
                got += [(cond, fps, f"{game} (all)", scoring.merge([st for _, st in groups]))] if len(groups) > 1 else []
            rows += got
            print("\n".join(row(*r) for r in got), file=out, flush=True)
            print(f"# {cond}, {fps} fps: {time.perf_counter() - t:.0f} s", file=sys.stderr, flush=True)
    return rows


def figures(st: dict) -> dict:
    """The stratum's figures of merged stats (``scoring.summary`` plus the rulings split four ways and
    the comparison with the exact run)."""
    s = scoring.summary(st)
    n = len(st["rulings"])
    right = sum(st["rulings"])
    wrong_flagged = st["rulings_wrong_flagged"] + st["rulings_refused"]  # a refused record goes to the referee
    first = np.array(st["t_err_first_ms"]) if st["t_err_first_ms"] else np.array([np.nan])
    same, flagged, silent = (sum(v) for v in zip(*st["vs_exact_parts"])) if st["vs_exact_parts"] else (0, 0, 0)
    newly = st["vs_exact_newly_flagged"]
    return dict(s, n=n, right=right, right_flagged=st["rulings_flagged"] - st["rulings_wrong_flagged"], wrong_flagged=wrong_flagged,
                wrong_silent=n - right - wrong_flagged, exact_n=st["vs_exact_n"], exact_same=same, exact_newly=newly,
                exact_differ_flagged=flagged - newly,
                exact_silent=silent, first_med=float(np.median(first)), first_p95=float(np.percentile(first, 95)),
                first_n=len(st["t_err_first_ms"]))


def header(detector: str = "oracle") -> str:
    return "\n".join((
        f"frame clocks, {detector} detector: rulings on the true state vs the ground truth, and shot by shot vs the exact-time run "
        "(flagged: a review call or vision's review items on the record); times ms; first contact: counts of shots",
        " | ".join(("clock", "fps", "clips", "shots", "right", "right flagged", "wrong flagged", "confidently wrong",
                    "vs exact: same call", "same call newly flagged", "call differs flagged", "differs unflagged",
                    "1st contact t err ms med/p95 (n)",
                    "contact+cushion t err ms med/p95", "contacts within 2 t_err %")
                   + tuple(f"1st {n} ok/flag/wrong" for _, _, n in scoring.GAP_BINS))))


def row(cond, fps, what, st) -> str:
    """One line of the table: a condition at one rate, one group of clips or a game's total."""
    pct = lambda a, b: f"{a} ({100.0 * a / b:.1f} %)" if b else f"{a}"  # noqa: E731
    f = figures(st)
    cells = [cond, f"{fps}", what, f"{f['n']}", pct(f["right"], f["n"]), pct(f["right_flagged"], f["n"]),
             pct(f["wrong_flagged"], f["n"]), pct(f["wrong_silent"], f["n"]),
             pct(f["exact_same"] + f["exact_newly"], f["exact_n"]), f"{f['exact_newly']}",
             pct(f["exact_differ_flagged"], f["exact_n"]), f"{f['exact_silent']}",
             f"{f['first_med']:.2f}/{f['first_p95']:.2f} ({f['first_n']})", f"{f['t_err_med_ms']:.2f}/{f['t_err_p95_ms']:.2f}",
             f"{f['t_cover_contact']:.1f}"]
    cells += ["{}/{}/{}".format(*f[f"fc_{n}"]) if any(st["fc"].values()) else "-" for _, _, n in scoring.GAP_BINS]
    return " | ".join(cells)
