"""The import layering, kept by a test: which of our packages may import which, nothing imports tests, and
no import circles inside a package (imports inside functions count too; those under ``if TYPE_CHECKING:``
never run, so they count for the arrows but close no circle)."""
from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ("judge", "vision", "hardware", "calibration", "sim", "rules", "models")
ALLOWED = {  # package -> the other packages of ours it may import
    "judge": {"vision", "hardware", "calibration", "sim", "rules", "models"},
    "vision": {"calibration", "rules"},
    "sim": {"calibration", "rules"},
    "calibration": {"rules"},
    "hardware": set(),
    "rules": set(),
    "models": set(),
    "bench": set(PRODUCT),
}
OURS = set(ALLOWED)


def _module_name(rel: Path) -> str:
    parts = list(rel.with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, module: str):
    """(line, module, module or name in it, typing only) for every import in the file, at any depth,
    relative ones resolved: ``from a import b`` gives ``a`` and ``a.b`` (b a module of a or a name in it)."""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    guards = [n for n in ast.walk(tree) if isinstance(n, ast.If)
              and ast.unparse(n.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")]
    typing_only = {id(n) for guard in guards for stmt in guard.body for n in ast.walk(stmt)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, alias.name, id(node) in typing_only
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
            for alias in node.names:
                yield node.lineno, base, f"{base}.{alias.name}" if alias.name != "*" else base, id(node) in typing_only


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every circle a depth-first search closes (one per back edge), each starting at its smallest module."""
    found, state, stack = set(), {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                ring = stack[stack.index(nxt):]
                i = ring.index(min(ring))
                found.add(tuple(ring[i:] + ring[:i]))
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return [list(c) for c in sorted(found)]


def _arrow(top: str, base: str, helpers: set[str], bench_bare: set[str]) -> str | None:
    """What is wrong with package ``top`` importing module ``base``, or None."""
    first = base.split(".")[0]
    if first == "tests" or (first in helpers and top != "tests"):
        return f"{top} → tests ({base})" if top != "tests" else None
    if first in bench_bare:
        return f"{top} → {base} by a bare name (sys.path); import bench.{base}"
    if first in OURS and first != top and first not in ALLOWED.get(top, OURS):
        return f"{top} → {first} ({base})"
    if top == "rules" and first not in OURS and first not in sys.stdlib_module_names | {"__future__"}:
        return f"rules → {base} (not the standard library)"
    return None


def layer_violations(root: Path) -> list[str]:
    """Every import in the tree at ``root`` that breaks the layering, one line each."""
    root = Path(root)
    files = {path: _module_name(path.relative_to(root)) for top in (*OURS, "tests") if (root / top).is_dir()
             for path in sorted((root / top).rglob("*.py")) if "__pycache__" not in path.parts}
    modules = set(files.values())
    helpers = {p.stem for p in (root / "tests").glob("*.py")} - sys.stdlib_module_names | {"tests"}
    bench_bare = {p.stem for p in (root / "bench").glob("*.py")} - sys.stdlib_module_names - {"__init__"}
    out, graphs = [], {}
    for path, module in files.items():
        top = module.split(".")[0]
        where = path.relative_to(root).as_posix()
        for line, base, name, typing_only in _imports(path, module):
            first, bad = base.split(".")[0], _arrow(top, base, helpers, bench_bare)
            if bad and f"{where}:{line}: {bad}" not in out:
                out.append(f"{where}:{line}: {bad}")
            if first == top and top in OURS and not typing_only:
                while name not in modules and "." in name:  # ``from a import f``: the edge goes to a
                    name = name.rsplit(".", 1)[0]
                if name in modules and name != module:
                    graphs.setdefault(top, {}).setdefault(module, set()).add(name)
    for top, graph in sorted(graphs.items()):
        for ring in _cycles(graph):
            out.append(f"import circle in {top}: {' → '.join(ring + ring[:1])}")
    return out


def _write_tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_the_repo_keeps_its_layers():
    found = layer_violations(ROOT)
    assert not found, "layering broken:\n" + "\n".join(found)


def test_a_broken_tree_is_reported(tmp_path):
    files = {
        "vision/__init__.py": "",
        "vision/x.py": "import sim.frames\nfrom calibration.plane import PlaneMap\n",
        "rules/__init__.py": "",
        "rules/y.py": "import json\n\ndef f():\n    import numpy\n",
        "sim/__init__.py": "",
        "sim/a.py": "from sim import b\n",
        "sim/b.py": "def f():\n    from .a import g\n    from . import c\n",
        "sim/c.py": "from typing import TYPE_CHECKING\nfrom sim.b import f\n\n"
                    "if TYPE_CHECKING:\n    from sim.a import A\n",  # type-only: closes no circle
        "bench/__init__.py": "",
        "bench/t.py": "import synthetic_board\nfrom bench import u\nimport u\nimport judge.replay\n",
        "bench/u.py": "",
        "tests/synthetic_board.py": "",
        "tests/test_z.py": "import synthetic_board\nfrom tests.synthetic_board import f\n",
    }
    _write_tree(tmp_path, files)
    assert sorted(layer_violations(tmp_path)) == sorted([
        "vision/x.py:1: vision → sim (sim.frames)",
        "rules/y.py:4: rules → numpy (not the standard library)",
        "bench/t.py:1: bench → tests (synthetic_board)",
        "bench/t.py:3: bench → u by a bare name (sys.path); import bench.u",
        "import circle in sim: sim.a → sim.b → sim.a",
        "import circle in sim: sim.b → sim.c → sim.b",
    ])


# ----- judge/ uses the hardware sources only through their public surface --------------------------------
REFLECTION = ("getattr", "hasattr", "setattr", "delattr")


def _private_names(hardware: Path) -> set[str]:
    """The private attributes of hardware/'s classes: ``self._x`` they assign and ``_x`` methods they define."""
    names = set()
    for path in sorted(hardware.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
            for node in ast.walk(cls):
                if (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
                        and isinstance(node.value, ast.Name) and node.value.id == "self"):
                    names.add(node.attr)
                elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    names.add(node.name)
    return {n for n in names if n.startswith("_") and not n.endswith("__")}


def private_reaches(root: Path) -> list[str]:
    """Every place under judge/ that reads or writes a private attribute of a hardware source on something
    other than ``self``: ``source._cam``, ``getattr(src, "_cap", None)`` and the like, one line each."""
    root = Path(root)
    private = _private_names(root / "hardware")
    out = []
    for path in sorted((root / "judge").rglob("*.py")):
        where = path.relative_to(root).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if (isinstance(node, ast.Attribute) and node.attr in private
                    and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))):
                out.append(f"{where}:{node.lineno}: {ast.unparse(node)}")
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in REFLECTION
                  and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
                  and node.args[1].value in private):
                out.append(f"{where}:{node.lineno}: {ast.unparse(node)}")
    return out


def test_judge_reaches_no_private_attribute_of_a_hardware_source():
    assert private_reaches(ROOT) == [], "judge/ uses private handles of hardware/: add a public method there"


def test_a_private_reach_into_a_source_is_reported(tmp_path):
    files = {  # the reaches judge/ had before the sources grew public control methods
        "hardware/picam.py": "class PicameraSource:\n    def __init__(self):\n        self._cam = None\n"
                             "        self.name = 'picam'\n\n    def _next_request(self):\n        return self._cam\n",
        "hardware/opencv.py": "class UsbCameraSource:\n    def open(self):\n        self._cap = object()\n",
        "judge/setup_camera.py": "def lock(source):\n    cam = source._cam\n    source._next_request()\n"
                                 "    return cam, source.name, source._cap.get(3)\n",
        "judge/doctor_checks.py": "def text(src):\n    return getattr(src, '_cam', None), getattr(src, 'info', {})\n",
        "judge/own.py": "class Mine:\n    def __init__(self):\n        self._cam = 1\n\n    def f(self):\n"
                        "        return self._cam, self._other\n",  # its own privates are its business
    }
    _write_tree(tmp_path, files)
    assert private_reaches(tmp_path) == [
        "judge/doctor_checks.py:2: getattr(src, '_cam', None)",
        "judge/setup_camera.py:2: source._cam",
        "judge/setup_camera.py:3: source._next_request",
        "judge/setup_camera.py:4: source._cap",
    ]
