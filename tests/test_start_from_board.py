"""Starting from the board as it is: a simulated stretch filmed, cut at a rest point before shot K, judged from
the cut with the start read off its first frames (``--start-from-board``) gives the calls the uncut video
gives from shot K on; a wrong proposal corrected by the referee; the bat in a state; ``referee --print-state``."""
from __future__ import annotations

import json
import re
import socket
import threading
import time

import cv2
import pytest

from calibration import default_profile
from judge import cli
from judge.demo import NOVUSS_START, DemoGame, film
from judge.journal import Journal
from judge.replay import judge_video
from rules import engine_for
from rules.state_doc import Bat, StateError
from sim.policy import CvrnkanaPolicy, play_novuss_set
from sim.scenarios_cvrnkana import mid_game_state
from sim.session import CvrnkanaSession, NovussSession
from sim.video import read_video_frames

FPS, SIZE, K = 30.0, (640, 360), 2  # the cut video starts at rest just before shot K
#: a mid-game field whose marbles the camera tells apart without being told where they are
CVRNKANA_FIELD = {"A1": (-150.0, -250.0), "A4": (250.0, 100.0), "B2": (200.0, -150.0), "B5": (-300.0, 120.0)}


def _stretch(game: str):
    profile = default_profile(game)
    if game == "novuss":
        pawns, seed = NOVUSS_START
        s = NovussSession(profile, seed)
        s.setup(pawns)
        start = s.state.to_dict()
        play_novuss_set(profile, seed, max_shots=4, session=s)
    else:
        seed = 1
        s = CvrnkanaSession(profile, seed)
        s.setup_state(mid_game_state(profile, CVRNKANA_FIELD))
        start = s.state.to_dict()
        policy = CvrnkanaPolicy(profile.geometry, seed)
        while not s.over and len(s.shots) < 4:
            marble, at, v = policy.choose(s, s.state.to_move)
            s.flick(s.state.to_move, marble, v, at=at)
    return DemoGame(game, profile, s, start, seed)


def _rest_frame(demo: DemoGame, k: int) -> int:
    """The first frame after shot k-1 ended with nothing over the board for two frames."""
    clip = demo.session.rec.clip()
    i = int(demo.session.shots[k - 2].record["t1"] * FPS) + 2
    while clip.frame(i, FPS).occluders or clip.frame(i + 1, FPS).occluders:
        i += 1
    assert i < demo.session.shots[k - 1].record["t0"] * FPS
    return i


@pytest.fixture(scope="module", params=["novuss", "cvrnkana"])
def clip(request, tmp_path_factory):
    """(game, folder, demo, the cut video (a folder of frames), the uncut video's judged shots)."""
    game = request.param
    d = tmp_path_factory.mktemp(game)
    demo = _stretch(game)
    film(demo, d, FPS, SIZE)
    cut = d / "cut"
    cut.mkdir()
    first = _rest_frame(demo, K)
    for i, image in enumerate(read_video_frames(d / "video.mp4")[first:]):
        cv2.imwrite(str(cut / f"{i:05d}.png"), image)
    whole = judge_video(d / "video.mp4", game, d / "calibration.json", background=str(d / "empty-board.png"),
                        state=d / "start-state.json")
    assert len(whole.shots) == len(demo.session.shots) == 4 and all(s.ruling for s in whole.shots)
    return game, d, demo, cut, whole.shots


def _seen(ruling) -> tuple:
    """What the referee sees of a ruling, with piece ids left out (the cut names them in its own order)."""
    score = {p: tuple(v for k, v in sorted(ruling["score"][p].items()) if k != "pocketed") for p in "AB"}
    return (ruling["player"], ruling.get("stroke"), ruling.get("first_contact"),
            {p: len(v) for p, v in (ruling.get("pocketed") or {}).items()},
            [(c["code"], c.get("player")) for c in ruling["calls"]],
            [(a["kind"], a.get("player"), tuple(round(v / 5) for v in a["at"]) if a.get("at") else None)
             for a in ruling["actions"]], ruling["next_player"], ruling["game_over"], score)


def _facts(demo: DemoGame, game: str) -> list[str]:
    """The flags that say what the camera cannot see, true to the simulated game before shot K."""
    state = demo.session.states_before[K - 1].to_dict()
    flags = ["--turn", state["to_move"]]
    if game == "novuss":
        return flags + ["--debt", f"A:{state['debt']['A']},B:{state['debt']['B']}"]
    pit = {p: sum(1 for m in state["pit"] if m[0] == p) for p in "AB"}
    return flags + ["--pit", f"A:{pit['A']},B:{pit['B']}", "--starter", state["starter"],
                    "--flicks", f"A:{state['flicks']['A']},B:{state['flicks']['B']}"]


def _inputs(game, d, cut):
    return [str(cut), "--game", game, "--calibration", str(d / "calibration.json"), "--background",
            str(d / "empty-board.png"), "--fps", str(FPS)]


def test_replay_from_the_board_judges_as_the_uncut_video(clip, tmp_path, capsys):
    game, d, demo, cut, whole = clip
    report = tmp_path / "report.json"
    assert cli.main(["replay", *_inputs(game, d, cut), "--start-from-board", *_facts(demo, game),
                     "--report", str(report), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "the board as the camera sees it" in err and "UNSURE" not in err
    doc = json.loads(report.read_text())
    assert doc["start"]["from"] == "board"
    want = [_seen(s.ruling) for s in whole[K - 1:]]
    assert [_seen(s["ruling"]) for s in doc["shots"]] == want
    seen = sorted((round(x), round(y)) for x, y in doc["start"]["layout"].values())
    truth = demo.session.states_before[K - 1].to_dict()
    places = truth["positions"] if game == "novuss" else {k: v for k, v in truth["field"].items() if v}
    expect = sorted((round(x), round(y)) for x, y in places.values())
    if game == "novuss":  # the bat lies where shot K-1 left it, and is part of the start
        bat = demo.session.shots[K - 2].record["after"]["bat"]
        expect = sorted(expect + [(round(bat[0]), round(bat[1]))])
    assert len(seen) == len(expect) and all(abs(a[0] - b[0]) <= 3 and abs(a[1] - b[1]) <= 3 for a, b in zip(seen, expect))


def test_replay_from_the_board_asks_what_the_camera_cannot_see(clip, tmp_path, capsys):
    game, d, _, cut, _ = clip
    report = tmp_path / "report.json"
    assert cli.main(["replay", *_inputs(game, d, cut), "--start-from-board", "--report", str(report), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    missing = "--turn A|B, --debt A:N,B:M" if game == "novuss" else "--turn A|B, --pit A:N,B:M, --starter A|B"
    assert err[-1] == (f"shotjudge replay: error: --start-from-board: the camera cannot see {missing}: give them, "
                       "or --confirm to take the proposal as it is")
    assert any(line.startswith("  not known from the camera, please give: --turn A|B") for line in err)
    assert not report.exists()
    assert cli.main(["replay", *_inputs(game, d, cut), "--start-from-board", "--state", str(d / "start-state.json"),
                     "--quiet"]) == 2
    assert capsys.readouterr().err.strip().endswith("--state and --start-from-board both say where the video starts: "
                                                    "give one of them")


def _live_args(d, cut, journal, *more, game="novuss"):
    return ["live", "--game", game, "--source", str(cut), "--fps", str(FPS), "--calibration",
            str(d / "calibration.json"), "--background", str(d / "empty-board.png"), "--no-clips",
            "--journal", str(journal), "--start-from-board", *more]


def _journal_rulings(path):
    with Journal.open(path) as j:
        return [e["payload"]["ruling"] for e in j.entries("shot")], j.entries("set_state"), j.match()


def test_live_from_the_board_confirmed_with_the_flag(clip, tmp_path):
    game, d, demo, cut, whole = clip
    journal = tmp_path / "j.sqlite"
    assert cli.main(_live_args(d, cut, journal, *_facts(demo, game), "--confirm", "--no-overlay", game=game)) == 0
    rulings, _, match = _journal_rulings(journal)
    assert [_seen(r) for r in rulings] == [_seen(s.ruling) for s in whole[K - 1:]]
    assert match["start"]["to_move"] == demo.session.states_before[K - 1].to_move
    assert ("bat" in match["start"]) == (game == "novuss")  # the bat lies where the last shot left it


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_live_wrong_proposal_corrected_by_the_referee_on_the_overlay(clip, tmp_path):
    """The referee gave the wrong turn: live shows the proposal and waits; a bad correction is refused with the
    field named; the corrected state posted is journaled and the shots after it are judged right."""
    import httpx

    game, d, demo, cut, whole = clip
    if game != "novuss":
        pytest.skip("live is shown on the Novuss clip")
    right = demo.session.states_before[K - 1].to_move
    wrong = "B" if right == "A" else "A"
    journal, port, token = tmp_path / "j.sqlite", _free_port(), "referee-secret"
    args = _live_args(d, cut, journal, "--turn", wrong, "--debt", "A:0,B:0", "--overlay-port", str(port),
                      "--token", token)
    done: dict = {}
    worker = threading.Thread(target=lambda: done.setdefault("rc", cli.main(args)), daemon=True)
    worker.start()
    url, auth = f"http://127.0.0.1:{port}/api/referee/start-state", {"Authorization": f"Bearer {token}"}
    deadline = time.monotonic() + 60
    while True:
        try:
            got = httpx.get(url, headers=auth, timeout=2)
            break
        except httpx.HTTPError:
            assert time.monotonic() < deadline and worker.is_alive()
            time.sleep(0.1)
    assert got.status_code == 200 and got.json()["pending"] is True
    proposal = got.json()["proposal"]
    assert proposal["to_move"] == wrong and "bat" in proposal
    assert httpx.post(url, json={"state": None}).status_code == 401  # the referee's token is needed
    bad = {**proposal, "debt": {"A": -1, "B": 0}}
    refused = httpx.post(url, headers=auth, json={"state": bad})
    assert refused.status_code == 409 and "debt.A: must be a whole number" in refused.json()["detail"]
    corrected = {**proposal, "to_move": right}
    ok = httpx.post(url, headers=auth, json={"state": corrected})
    assert ok.status_code == 200 and ok.json()["how"] == "corrected"
    worker.join(timeout=120)
    assert done.get("rc") == 0
    rulings, set_states, _ = _journal_rulings(journal)
    assert [s["payload"]["state"]["to_move"] for s in set_states] == [right]
    assert set_states[0]["payload"]["by"] == "referee"
    assert [_seen(r) for r in rulings] == [_seen(s.ruling) for s in whole[K - 1:]]


def test_live_gives_up_at_the_confirm_timeout_and_keeps_no_journal(clip, tmp_path, capsys):
    game, d, demo, cut, _ = clip
    if game != "novuss":
        pytest.skip("live is shown on the Novuss clip")
    journal = tmp_path / "j.sqlite"
    args = _live_args(d, cut, journal, *_facts(demo, game), "--overlay-port", str(_free_port()), "--token", "t",
                      "--confirm-timeout", "0.5")
    assert cli.main(args) == 2
    captured = capsys.readouterr()
    assert "waiting for the referee to confirm the start state" in captured.out
    assert captured.err.strip().splitlines()[-1] == (
        "shotjudge live: error: the referee did not confirm the start state within 0.5 s (--confirm-timeout 0.5); "
        f"nothing judged, {journal} not kept")
    assert not journal.exists() and not list(tmp_path.glob("j.sqlite*"))  # a rerun starts from the board again


# ----- the bat in a state, and one meaning of --state -----------------------------------------------
def test_the_bat_round_trips_in_a_state_and_old_documents_still_load():
    engine = engine_for("novuss", default_profile("novuss").geometry)
    old = engine.initial().to_dict()
    assert "bat" not in old and engine.state_from_dict(old).bat is None
    doc = {**old, "bat": {"at": [12.5, -300.0], "colour_rgb": [200, 30, 40]}}
    state = engine.state_from_dict(doc)
    assert state.bat == Bat((12.5, -300.0), (200, 30, 40))
    assert state.to_dict() == doc and engine.state_from_dict(state.to_dict()) == state
    assert engine.hints(state).layout["bat"] == (12.5, -300.0)
    for bad, message in (({"at": [1e9, 0]}, "bat.at: (1e+09, 0) mm is off the surface"),
                         ({"at": [0, 0], "colour_rgb": [1, 2, 300]}, "bat.colour_rgb[2]: must be a whole number"),
                         ({"colour_rgb": [1, 2, 3]}, "bat.at: is missing"), ({"at": [0, 0], "size": 1}, "bat.size:")):
        with pytest.raises(StateError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")
                           .replace("]", r"\]").replace("+", r"\+")):
            engine.state_from_dict({**old, "bat": bad})


def test_referee_print_state_and_state_as_a_start(tmp_path, capsys):
    engine = engine_for("novuss", default_profile("novuss").geometry)
    start = engine.initial(first="B", positions={"A4": (-16.0, 484.0), "B2": (100.0, -200.0)}).to_dict()
    state_file, shots = tmp_path / "start.json", tmp_path / "shots.jsonl"
    state_file.write_text(json.dumps(start))
    shots.write_text(json.dumps({"game": "novuss", "t0": 0, "t1": 1, "player": "B", "before": {"bat": [0, 440]},
                                 "after": {"bat": [0, 300]}, "events": []}) + "\n")
    assert cli.main(["referee", "--game", "novuss", "--state", str(state_file), str(shots)]) == 0
    ruling = json.loads(capsys.readouterr().out)
    assert ruling["player"] == "B" and ruling["score"]["A"]["on_table"] == 1 and ruling["next_player"] == "A"
    assert cli.main(["referee", "--game", "novuss", "--state", str(state_file), "--print-state", str(shots)]) == 0
    final = json.loads(capsys.readouterr().out)
    assert final["to_move"] == "A" and final["positions"]["B2"] == [100.0, -200.0] and final["shot"] == 1
    with pytest.raises(SystemExit) as exc:  # the old flag form: --state with no file is an error, not a switch
        cli.main(["referee", "--game", "novuss", str(shots), "--state"])
    assert exc.value.code == 2
    assert "--state: expected one argument" in capsys.readouterr().err


# ----- a disc of a piece's size that is no player's colour ------------------------------------------
STRANGE_AT_MM = (0.0, 180.0)  # an empty place on the Novuss board before shot K (checked below)


def _with_a_strange_disc(d, cut, out):
    """The cut's frames with a blue disc of about a pawn's size painted at ``STRANGE_AT_MM`` (a pawn of a colour no
    player has: a spare from another set, a coin)."""
    from calibration.calfile import load_calibration

    cal = load_calibration(d / "calibration.json")
    r_mm = cal.profile.spec.piece_radii_mm["pawn"] - 2.5  # smaller than a pawn: a bat's edge never looks it
    x, y = STRANGE_AT_MM
    (u, v), (u1, _) = cal.plane.to_image_px([(x, y), (x + r_mm, y)])
    out.mkdir()
    # set-up measured the bat's colour (shotjudge setup): a disc of no class's colour is then not the bat
    # being looked for
    from calibration.appearance import appearance_from_dict
    from calibration.calfile import save_calibration

    board = cal.piece_appearance().board_rgb
    measured = appearance_from_dict({"board_rgb": list(board), "source": "measured",
                                     "pieces": {"bat": {"rgb": [79, 107, 62], "spread": 0.15}}}, "novuss",
                                    complete=False)
    save_calibration(cal.with_appearance(measured), out.parent / "calibration-bat.json")
    for path in sorted(cut.glob("*.png")):
        image = cv2.imread(str(path))
        cv2.circle(image, (int(round(16 * u)), int(round(16 * v))), int(round(16 * abs(u1 - u))), (200, 70, 20), -1,
                   cv2.LINE_AA, shift=4)
        cv2.imwrite(str(out / path.name), image)
    return r_mm


def test_a_disc_of_no_players_colour_is_proposed_as_unidentified_and_the_start_waits_for_the_referee(
        clip, tmp_path, capsys):
    game, d, demo, cut, _ = clip
    if game != "novuss":
        pytest.skip("shown on the Novuss board")
    truth = demo.session.states_before[K - 1].to_dict()["positions"]
    assert all(((px - STRANGE_AT_MM[0]) ** 2 + (py - STRANGE_AT_MM[1]) ** 2) ** 0.5 > 60 for px, py in truth.values())
    strange = tmp_path / "strange"
    r_mm = _with_a_strange_disc(d, cut, strange)
    args = ["replay", str(strange), "--game", game, "--calibration", str(tmp_path / "calibration-bat.json"),
            "--background", str(d / "empty-board.png"), "--fps", str(FPS), "--start-from-board",
            *_facts(demo, game), "--quiet"]
    assert cli.main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == ("shotjudge replay: error: --start-from-board: 1 disc(s) of a piece's size match no player's "
                       "colour; write the state yourself and pass it with --state, or --confirm to leave them out")
    line = next(s for s in err if s.startswith("  UNIDENTIFIED: "))
    across = re.fullmatch(r"  UNIDENTIFIED: a disc of (\d+) mm across at \(0, 180\) mm whose colour is no player's; "
                          r"it is not in the proposal \(whose it is, or take it off the board\)", line)
    assert across and abs(int(across[1]) - 2 * r_mm) <= 3.0  # measured at 2.5 mm a pixel
    assert not any(s.startswith("  UNSURE") for s in err)
    # the pieces are proposed as on the unpainted frames: the strange disc is in no one's hands
    a = [s for s in err if s.startswith("  A: ")]
    b = [s for s in err if s.startswith("  B: ")]
    assert a[0].startswith(f"  A: {sum(1 for p in truth if p.startswith('A'))} on the board")
    assert b[0].startswith(f"  B: {sum(1 for p in truth if p.startswith('B'))} on the board")
    assert cli.main(args + ["--confirm"]) == 0
