"""``shotjudge --help`` and ``shotjudge referee`` load neither OpenCV, numpy, PyAV, the web server nor the
learned detector's libraries: the command line names its command, and only that command's module is
imported (the heavy ones load inside the commands that need them)."""
import json
import subprocess
import sys

import pytest

HEAVY = ("cv2", "numpy", "av", "fastapi", "uvicorn", "torch", "ultralytics", "onnxruntime")

_PROBE = """
import json, sys
from judge import cli
try:
    code = cli.main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
sys.stdout.flush()
sys.stderr.write(json.dumps({"code": code, "modules": sorted(sys.modules)}) + "\\n")
"""


def _modules_after(*args) -> tuple[int, set[str], str]:
    proc = subprocess.run([sys.executable, "-c", _PROBE, *args], capture_output=True, text=True, timeout=120)
    probe = json.loads(proc.stderr.strip().splitlines()[-1])
    return probe["code"], set(probe["modules"]), proc.stdout


def test_importing_the_cli_loads_nothing_heavy():
    proc = subprocess.run([sys.executable, "-c", "import sys, judge.cli; print(' '.join(sorted(sys.modules)))"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    loaded = set(proc.stdout.split())
    assert not loaded & set(HEAVY)
    assert not any(m.startswith("judge.cmd_") for m in loaded)  # commands are imported when chosen


def test_help_lists_every_command_without_heavy_imports():
    code, loaded, out = _modules_after("--help")
    assert code == 0
    for command in ("referee", "replay", "live", "sim", "demo", "calibrate"):
        assert command in out
    assert not loaded & set(HEAVY), loaded & set(HEAVY)


@pytest.mark.parametrize("args", [["referee", "--help"], ["replay", "--help"], ["live", "--help"]])
def test_a_commands_help_imports_that_command_alone(args):
    code, loaded, out = _modules_after(*args)
    assert code == 0
    assert f"shotjudge {args[0]}" in out
    assert {m for m in loaded if m.startswith("judge.cmd_")} <= {f"judge.cmd_{args[0]}", "judge.cmd_replay"}
    assert not loaded & set(HEAVY), loaded & set(HEAVY)


def test_referee_rules_without_heavy_imports(tmp_path):
    shot = {"game": "novuss", "t0": 0, "t1": 1, "before": {"bat": [0, -440], "A4": [-16, 484]},
            "after": {"bat": [0, 300]}, "events": [{"t": 0.1, "kind": "contact", "a": "bat", "b": "A4"},
                                                   {"t": 0.5, "kind": "pocket", "piece": "A4", "pocket": "NW"}]}
    path = tmp_path / "shots.jsonl"
    path.write_text(json.dumps(shot) + "\n", encoding="utf-8")
    code, loaded, out = _modules_after("referee", str(path), "--game", "novuss")
    assert code == 0
    assert json.loads(out.splitlines()[0])["pocketed"]["A"] == ["A4"]
    assert {m for m in loaded if m.startswith("judge.cmd_")} == {"judge.cmd_referee"}
    assert not loaded & set(HEAVY), loaded & set(HEAVY)


def test_an_unknown_command_is_refused_with_the_list(capsys):
    from judge import cli

    with pytest.raises(SystemExit) as exit_:
        cli.main(["nonsense"])
    assert exit_.value.code == 2
    assert "referee" in capsys.readouterr().err
