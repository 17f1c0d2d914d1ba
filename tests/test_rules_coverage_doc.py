"""docs/rules-coverage.md stays true: the tests it names exist, and every call code has a row."""
import ast
import pathlib
import re

from rules import CODES

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs/rules-coverage.md").read_text(encoding="utf-8")


def _test_names() -> set[str]:
    names = set()
    for path in (ROOT / "tests").glob("test_*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                names.add(node.name)
    return names


def test_every_test_named_in_the_coverage_table_exists():
    named = set(re.findall(r"`(?:[\w/.]+::)?(test_\w+)`", DOC))
    assert len(named) > 60
    missing = named - _test_names()
    assert not missing, f"coverage table names tests that do not exist: {sorted(missing)}"


def test_every_call_code_appears_in_the_coverage_table():
    missing = [code for code in CODES if f"`{code}`" not in DOC]
    assert not missing, f"codes without a row: {missing}"


def test_every_clause_has_a_row():
    rows = [line for line in DOC.splitlines() if line.startswith("| ")]
    for clause in ("general.1", "general.6", "I.1", "I.3a", "I.3c", "II.1", "II.5", "III.1", "III.5"):
        assert any(row.startswith(f"| {clause} ") for row in rows), clause
    for clause in ["1", "2", "3", "4", "5", "6", "7", "8", "9", "10"] + [f"7{c}" for c in "abcdefghi"]:
        assert any(row.startswith(f"| {clause} ") for row in rows), clause
