"""Bad input through every verb that reads it, in process: the count of tracebacks must be 0.

Valid documents come from the simulator (whole games of shot records, the states between their shots) and
from the shipped profiles and a calibration; each case is one seeded mutation of one of them (a wrong type,
a huge or long number, NaN, deep nesting, a missing or extra field, a negative time, a place off the board,
a duplicate key, a cut text), or random command-line options. Each goes through ``judge.cli.main``:
``referee`` for records and profiles, ``replay`` (three blank frames) for states and calibrations, and
``referee``, ``replay``, ``live`` and ``calibrate`` for options. An outcome is accepted (exit 0), refused
with one error line (exit 2; argparse puts its usage above it), a traceback (the command raised: run with
``SHOTJUDGE_TRACEBACK=1``), or other (any other exit, or a refused ``referee`` that wrote output).

    python bench/fuzz_inputs.py [--records 2000] [--documents 400] [--options 400] [--seed 0]
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import re
import sys
import tempfile
import traceback
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Iterator

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from calibration import default_profile  # noqa: E402
from calibration.calfile import Calibration, save_calibration  # noqa: E402
from calibration.plane import from_points  # noqa: E402
from judge import cli  # noqa: E402
from rules import engine_for, parse_record  # noqa: E402

GAMES = ("novuss", "cvrnkana")
SIZE = (96, 64)
OUTCOMES = ("accepted", "refused", "traceback", "other")
def _in_every_language(msgid: str) -> list[str]:
    """``msgid`` as each language says it (``--lang`` is fuzzed too: a refusal may be in Czech)."""
    from judge.i18n import translator
    from rules.i18n import LANGS

    return sorted({translator(lang)(msgid) for lang in LANGS})


#: an error line in any of the languages (``error``, ``chyba``, ...), and the start of argparse's usage lines
_ERRORS = [t.split("%(prog)s: ", 1)[1].split(" %(message)s", 1)[0] for t in _in_every_language("%(prog)s: error: %(message)s\n")]
_ERROR_LINE = re.compile(r"^shotjudge( [a-z]+)?: (" + "|".join(map(re.escape, _ERRORS)) + ") ")
_USAGE = tuple(t.strip() for t in _in_every_language("usage: ")) + (" ",)
JUNK = ["x", "", None, True, False, [], {}, [1, 2], {"a": 1}, 0, -1, 1.5, "A1", "bat", "B99", [[0, 0]], "NE", "pocket"]
HUGE = [1e308, -1e308, 10 ** 400, -(10 ** 30), 2 ** 63, 1e-320, 123456789.123]
JUNK_OPTIONS = ["", "nan", "inf", "-inf", "-1", "0", "1e9", "1e-9", "x" * 300, "3.5", "-", "--", "NE", "☃", "10x10", "0x0",
                "1,2", "1,2;3,4;5,6;7,8", "A", "C", "novuss", "cvrnkana", "novuss-seed", "en", "xx", "99999999999999999999"]


# ----- valid documents ------------------------------------------------------------------------------------
def simulated_games(shots: int, seeds: tuple[int, ...]) -> dict[str, list[list[dict]]]:
    """Per game, whole stretches of play from the opening: lists of valid shot records (the simulator's)."""
    from sim.policy import play_cvrnkana_game, play_novuss_set

    out: dict[str, list[list[dict]]] = {g: [] for g in GAMES}
    for seed in seeds:
        out["novuss"].append([dict(s.record) for s in play_novuss_set(default_profile("novuss"), seed, max_shots=shots).shots])
        out["cvrnkana"].append([dict(s.record) for s in play_cvrnkana_game(default_profile("cvrnkana"), seed, max_flicks=shots).shots])
    return out


def states_of(game: str, records: list[dict]) -> list[dict]:
    """The states a stretch of play passes through (its opening first), as state documents."""
    engine = engine_for(game, default_profile(game).geometry)
    state = engine.initial()
    out = [state.to_dict()]
    for raw in records:
        state, _ = engine.apply(state, parse_record(raw))
        out.append(state.to_dict())
    return out


def write_calibration(path: Path, game: str) -> dict:
    """A calibration of a 96x64 camera seeing the board's reference points near the picture's corners."""
    w, h = SIZE
    profile = default_profile(game)
    if profile.spec.sees_whole_field:
        half = profile["surface_mm"] / 2
        ref = [[-half, -half], [half, -half], [half, half], [-half, half]]
    else:
        centres = profile.markers["centres_mm"]
        ref = [list(centres[i]) for i in sorted(centres, key=int)[:4]]
    fit = from_points([[4, h - 4], [w - 4, h - 4], [w - 4, 4], [4, 4]], ref, SIZE, [[w, 0, w / 2], [0, w, h / 2], [0, 0, 1]],
                      [0, 0, 0, 0, 0])
    save_calibration(Calibration.from_fit(profile, fit, intrinsics_source="nominal"), path)
    return json.loads(path.read_text())


def blank_video(folder: Path) -> Path:
    """Three blank 96x64 frames (an image folder, read at --fps) and the same picture as the empty board."""
    import cv2
    import numpy as np

    folder.mkdir(parents=True, exist_ok=True)
    for i in range(3):
        cv2.imwrite(str(folder / f"f{i}.png"), np.full((SIZE[1], SIZE[0], 3), 100, np.uint8))
    return folder


# ----- mutations ------------------------------------------------------------------------------------------
def _paths(doc: Any, path: tuple = ()) -> Iterator[tuple]:
    yield path
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, path + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _paths(v, path + (i,))


def _at(doc: Any, path: tuple) -> Any:
    for k in path:
        doc = doc[k]
    return doc


def _replaced(doc: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    doc = json.loads(json.dumps(doc))
    _at(doc, path[:-1])[path[-1]] = value
    return doc


_MARK = "\u2063MARK\u2063"


def _text_at(doc: Any, path: tuple, text: str) -> str:
    """The document's JSON with ``text`` written in place of the value at ``path``."""
    return json.dumps(_replaced(doc, path, _MARK)).replace(json.dumps(_MARK), text, 1)


def _pick(rng: random.Random, doc: Any, want: Callable[[Any, tuple], bool] = lambda v, p: True) -> tuple | None:
    paths = [p for p in _paths(doc) if want(_at(doc, p), p)]
    return rng.choice(paths) if paths else None


def _number(v: Any, p: tuple) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _place(v: Any, p: tuple) -> bool:
    return isinstance(v, list) and len(v) == 2 and all(_number(x, p) for x in v)


def _time(v: Any, p: tuple) -> bool:
    return _number(v, p) and bool(p) and p[-1] in ("t", "t0", "t1", "t_err", "shot", "flicks", "debt", "A", "B")


def mutate(doc: Any, rng: random.Random) -> tuple[str, str]:
    """One random mutation of ``doc`` that changes it: (its kind, the mutated JSON text)."""
    plain = json.dumps(doc)
    for _ in range(20):
        kind, text = _mutation(doc, rng)
        if text != plain:
            break
    return kind, text


def _mutation(doc: Any, rng: random.Random) -> tuple[str, str]:
    kind = rng.choice(["wrong type", "huge number", "NaN", "missing field", "extra field", "negative time",
                       "off the board", "deep nesting", "long number", "duplicate key", "cut text", "piece swapped"])
    want = {"huge number": _number, "NaN": _number, "negative time": _time, "off the board": _place,
            "missing field": lambda v, p: bool(p), "extra field": lambda v, p: isinstance(v, dict),
            "duplicate key": lambda v, p: isinstance(v, dict) and bool(v),
            "piece swapped": lambda v, p: isinstance(v, str)}.get(kind, lambda v, p: True)
    path = _pick(rng, doc, want)
    if path is None:
        path, kind = _pick(rng, doc), "wrong type"
    value = _at(doc, path)
    if kind == "wrong type":
        return kind, json.dumps(_replaced(doc, path, rng.choice(JUNK)))
    if kind == "huge number":
        return kind, json.dumps(_replaced(doc, path, rng.choice(HUGE)))
    if kind == "NaN":
        return kind, json.dumps(_replaced(doc, path, rng.choice([float("nan"), float("inf"), float("-inf")])))
    if kind == "missing field":
        return kind, json.dumps(_without(doc, path))
    if kind == "extra field":
        return kind, json.dumps(_replaced(doc, path, {**value, rng.choice(["x", "A1", "t", "kind", "meta"]): rng.choice(JUNK)}))
    if kind == "negative time":
        return kind, json.dumps(_replaced(doc, path, rng.choice([-value, -1e-9, value - 1000, -(10 ** 12)])))
    if kind == "off the board":
        far = rng.choice([1e5, -99999.0, 1e9, 1e300, 545.1, 6001.0])
        return kind, json.dumps(_replaced(doc, path, rng.choice([[far, value[1]], [value[0], far], [far, far]])))
    if kind == "deep nesting":
        depth = rng.choice([50, 2000, 100_000])
        return kind, _text_at(doc, path, "[" * depth + "]" * depth)
    if kind == "long number":
        return kind, _text_at(doc, path, rng.choice(["-", ""]) + "9" * rng.choice([400, 5000]))
    if kind == "duplicate key":
        key = rng.choice(list(value))
        inner = json.dumps(value)
        return kind, _text_at(doc, path, "{" + json.dumps(key) + ": " + json.dumps(rng.choice(JUNK + [value[key]])) + ", " + inner[1:])
    if kind == "cut text":
        text = json.dumps(doc)
        return kind, text[: rng.randrange(0, max(1, len(text)))]
    other = rng.choice(["A1", "B8", "A20", "B21", "bat", "Z", "a1", "A0", "contact", "NE", "north", ""])
    return kind, json.dumps(_replaced(doc, path, other))


def _without(doc: Any, path: tuple) -> Any:
    doc = json.loads(json.dumps(doc))
    parent = _at(doc, path[:-1])
    del parent[path[-1]]
    return doc


# ----- running a verb -------------------------------------------------------------------------------------
def run_verb(argv: list[str], stdin: str | None = None) -> tuple[int, str, str, str | None]:
    """``shotjudge ARGV`` in process: exit status, standard output, standard error, and the traceback's
    last line where it raised."""
    out, err = io.StringIO(), io.StringIO()
    old_stdin, sys.stdin = sys.stdin, io.StringIO(stdin or "")
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = cli.main(argv)
    except SystemExit as exc:  # argparse
        rc = exc.code if isinstance(exc.code, int) else 1
    except BaseException as exc:  # noqa: BLE001 - what the count is about
        where = traceback.extract_tb(exc.__traceback__)[-1]
        return 70, out.getvalue(), err.getvalue(), f"{type(exc).__name__}: {str(exc)[:160]} ({where.filename}:{where.lineno})"
    finally:
        sys.stdin = old_stdin
    return rc, out.getvalue(), err.getvalue(), None


def outcome(rc: int, out: str, err: str, trace: str | None, writes_stdout: bool) -> str:
    """accepted, refused (one error line, argparse's usage above it allowed), traceback or other."""
    if trace is not None:
        return "traceback"
    if rc == 0:
        return "accepted"
    lines = err.rstrip("\n").split("\n")
    usage = all(line.startswith(_USAGE) for line in lines[:-1])
    if rc == 2 and _ERROR_LINE.match(lines[-1]) and (len(lines) == 1 or usage) and not (writes_stdout and out):
        return "refused"
    return "other"


class Tally:
    """Outcomes per kind of input, with the first few tracebacks and others kept to show."""

    def __init__(self) -> None:
        self.counts: dict[str, Counter] = {}
        self.examples: list[str] = []

    def add(self, kind: str, argv: list[str], result: tuple[int, str, str, str | None], writes_stdout: bool = False,
            mutation: str = "") -> None:
        verdict = outcome(*result, writes_stdout)
        self.counts.setdefault(kind, Counter())[verdict] += 1
        if verdict in ("traceback", "other") and len(self.examples) < 20:
            rc, _, err, trace = result
            self.examples.append(f"{kind} ({mutation}) {' '.join(a[:40] for a in argv)}: exit {rc}: {trace or err.strip()[-300:]}")

    def table(self) -> str:
        rows = [f"{'input kind':28s} {'cases':>6s} {'accepted':>9s} {'refused, one line':>18s} {'tracebacks':>11s} {'other':>6s}"]
        for kind, c in self.counts.items():
            rows.append(f"{kind:28s} {sum(c.values()):6d} {c['accepted']:9d} {c['refused']:18d} {c['traceback']:11d} {c['other']:6d}")
        return "\n".join(rows)


# ----- the cases ------------------------------------------------------------------------------------------
def fuzz_records(tally: Tally, game: str, games: list[list[dict]], cases: int, rng: random.Random) -> None:
    """A stretch of valid shots, then one mutated shot (sometimes the valid rest after it), to ``referee``."""
    for _ in range(cases):
        records = rng.choice(games)
        k = rng.randrange(len(records))
        kind, text = mutate(records[k], rng)
        lines = [json.dumps(r) for r in records[:k]] + [text] + ([json.dumps(r) for r in records[k + 1:]] if rng.random() < 0.3 else [])
        body = "[" + ",\n".join(lines) + "]" if rng.random() < 0.2 else "\n".join(lines) + "\n"
        argv = ["referee", "--game", game, "-"]
        tally.add(f"{game} shot records", argv, run_verb(argv, body), writes_stdout=True, mutation=kind)


def fuzz_documents(tally: Tally, label: str, docs: list[Any], cases: int, rng: random.Random, tmp: Path,
                   argv_for: Callable[[Path], list[str]], writes_stdout: bool = False) -> None:
    """Each case a mutated document in a file, read by the command ``argv_for(file)``."""
    for i in range(cases):
        kind, text = mutate(rng.choice(docs), rng)
        path = tmp / f"{label.split()[0]}-{i}.json"
        path.write_text(text, encoding="utf-8")
        argv = argv_for(path)
        tally.add(label, argv, run_verb(argv), writes_stdout=writes_stdout, mutation=kind)
        path.unlink()


def _option(rng: random.Random, good: list[str]) -> str:
    return rng.choice(good) if rng.random() < 0.5 else rng.choice(JUNK_OPTIONS)


def option_cases(rng: random.Random, tmp: Path, setup: dict[str, Path], i: int) -> list[str]:
    """One command line of random options (each valid or junk) for referee, replay, live or calibrate."""
    game = rng.choice(GAMES)
    verb = rng.choice(["referee", "replay", "live", "calibrate"])
    if verb == "referee":
        argv = ["referee", "--game", _option(rng, [game]), str(setup[f"{game}-records"])]
        for opt, good in (("--ruleset", [game]), ("--lang", ["en", "cs", "ru", "lv"]), ("--first", ["A", "B"]),
                          ("--toss-winner", ["A", "B"]), ("--game-number", ["1", "2"]), ("--profile", [f"{game}-default"])):
            if rng.random() < 0.4:
                argv += [opt, _option(rng, good)]
        return argv
    if verb == "calibrate":
        argv = ["calibrate", "--game", _option(rng, [game]), "--source", str(setup["video"] / "f0.png"),
                "--out", str(tmp / f"cal-{i}.json"), "--points", _option(rng, ["4,60;92,60;92,4;4,4"])]
        for opt, good in (("--hfov", ["70", "50"]), ("--max-frames", ["1", "3"])):
            if rng.random() < 0.5:
                argv += [opt, _option(rng, good)]
        return argv
    base = [verb, str(setup["video"])] if verb == "replay" else [verb, "--source", str(setup["video"]), "--no-overlay",
                                                                   "--no-clips", "--journal", str(tmp / f"j-{i}.sqlite")]
    argv = base + ["--game", _option(rng, [game]), "--calibration", str(setup[f"{game}-calibration"]),
                   "--background", str(setup["video"] / "f0.png"), "--fps", _option(rng, ["30", "25"])]
    extra = ((("--shot", ["1"]), ("--slow", ["8", "2"]), ("--quiet", None)) if verb == "replay" else
             (("--queue", ["8", "64"]), ("--max-reconnects", ["0", "3"]), ("--size", ["96x64"])))
    for opt, good in extra + (("--lang", ["en", "cs"]), ("--ruleset", [game])):
        if rng.random() < 0.4:
            argv += [opt] if good is None else [opt, _option(rng, good)]
    return argv


def run(records: int, documents: int, options: int, seed: int, shots: int = 12, seeds: tuple[int, ...] = (0, 1),
        progress: Callable[[str], None] | None = None) -> Tally:
    """Every kind of case; the tally of outcomes."""
    rng = random.Random(seed)
    tally = Tally()
    games = simulated_games(shots, seeds)
    old_env = os.environ.get("SHOTJUDGE_TRACEBACK")
    os.environ["SHOTJUDGE_TRACEBACK"] = "1"  # a bug raises here instead of becoming a crash file
    try:
        with tempfile.TemporaryDirectory(prefix="shotjudge-fuzz-") as folder:
            tmp = Path(folder)
            setup = {"video": blank_video(tmp / "video")}
            calibrations = {g: write_calibration(tmp / f"{g}-calibration.json", g) for g in GAMES}
            for g in GAMES:
                setup[f"{g}-calibration"] = tmp / f"{g}-calibration.json"
                setup[f"{g}-records"] = tmp / f"{g}-records.jsonl"
                setup[f"{g}-records"].write_text(json.dumps(games[g][0][0]) + "\n")
            for g in GAMES:
                fuzz_records(tally, g, games[g], records, rng)
                if progress:
                    progress(f"{g} shot records done")
            replay = ["replay", str(setup["video"]), "--fps", "30", "--background", str(setup["video"] / "f0.png"), "--quiet"]
            for g in GAMES:
                states = [s for stretch in games[g] for s in states_of(g, stretch)]
                fuzz_documents(tally, f"{g} states (--state)", states, documents, rng, tmp,
                               lambda p, g=g: replay + ["--game", g, "--calibration", str(setup[f"{g}-calibration"]), "--state", str(p)])
            fuzz_documents(tally, "calibrations", list(calibrations.values()), documents, rng, tmp,
                           lambda p: replay + ["--game", _game_of(p), "--calibration", str(p)])
            profiles = [default_profile(g).to_dict() for g in GAMES]
            fuzz_documents(tally, "profiles (--profile)", profiles, documents, rng, tmp,
                           lambda p: ["referee", "--game", _game_of(p), "--profile", str(p), str(setup[f"{_game_of(p)}-records"])],
                           writes_stdout=True)
            if progress:
                progress("documents done")
            for i in range(options):
                argv = option_cases(rng, tmp, setup, i)
                tally.add("options", argv, run_verb(argv), writes_stdout=argv[0] == "referee")
    finally:
        if old_env is None:
            os.environ.pop("SHOTJUDGE_TRACEBACK", None)
        else:
            os.environ["SHOTJUDGE_TRACEBACK"] = old_env
    return tally


def _readable(path: Path) -> bool:
    try:
        return isinstance(json.loads(path.read_text()), dict)
    except (ValueError, RecursionError):
        return False


def _game_of(path: Path) -> str:
    """The game a (mutated) profile or calibration is for, where it still says one; else novuss."""
    game = json.loads(path.read_text()).get("game") if _readable(path) else None
    return game if game in GAMES else "novuss"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--records", type=int, default=2000, help="mutated shot records per game (default 2000)")
    ap.add_argument("--documents", type=int, default=400, help="mutated states per game, calibrations, profiles (default 400)")
    ap.add_argument("--options", type=int, default=400, help="random command lines (default 400)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    tally = run(args.records, args.documents, args.options, args.seed,
                progress=lambda msg: print(f"# {msg}", file=sys.stderr, flush=True))
    print(tally.table())
    for example in tally.examples:
        print(f"  {example}")
    return 1 if any(c["traceback"] or c["other"] for c in tally.counts.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
