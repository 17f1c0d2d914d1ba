"""Finds user-facing English the catalogue never sees: a text literal given straight to print, a console, an
error a user reads, or an argparse help, instead of through ``_()`` (tests/test_i18n.py)."""
from __future__ import annotations

import ast
import re
from pathlib import Path

#: calls whose arguments a user reads
SHOWN = {"print", "UserError", "RefereeError", "HTTPException", "ArgumentTypeError", "JournalError", "StartNotConfirmed",
         "error"}
#: keywords of argparse whose value a user reads
SHOWN_KEYWORDS = {"help", "description", "detail"}
_MARKUP = re.compile(r"\[/?[a-z ]*\]|\{[^{}]*\}|--[\w-]+")  # rich markup, {fields}, --options
_WORD = re.compile(r"[A-Za-z]{2,}")


def _name(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _bare_texts(node: ast.AST) -> list[str]:
    """The text literals ``node`` shows outside any ``_()``: through ``+``, f-strings, ``a if c else b`` and a
    literal's ``.format``; a literal counts when a word is left once rich markup and {fields} are gone. Keys,
    names and arguments of other calls are not shown text and are not looked at."""
    if isinstance(node, ast.Constant):
        texts = [node.value] if isinstance(node.value, str) else []
    elif isinstance(node, ast.JoinedStr):
        texts = ["".join(c.value for c in node.values if isinstance(c, ast.Constant))]
    elif isinstance(node, ast.BinOp):
        return _bare_texts(node.left) + _bare_texts(node.right)
    elif isinstance(node, ast.IfExp):
        return _bare_texts(node.body) + _bare_texts(node.orelse)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        return _bare_texts(node.func.value)
    else:
        return []
    return [t for t in texts if _WORD.search(_MARKUP.sub("", t))]


def unwrapped(source: str, filename: str = "<text>") -> list[tuple[int, str]]:
    """(line, text) for every user-facing literal in ``source`` not given through the catalogue."""
    hits = []
    for node in ast.walk(ast.parse(source, filename)):
        if not isinstance(node, ast.Call):
            continue
        args: list[ast.expr] = []
        if _name(node.func) == "Check":  # judge.doctor_checks: status and check name are keys, the third is the text
            args += list(node.args[2:])
        elif _name(node.func) in SHOWN:
            args += list(node.args) + [k.value for k in node.keywords if k.arg in SHOWN_KEYWORDS | {None}]
        elif _name(node.func) in ("add_argument", "add_parser", "ArgumentParser"):
            args += [k.value for k in node.keywords if k.arg in SHOWN_KEYWORDS]
        for arg in args:
            hits += [(node.lineno, t) for t in _bare_texts(arg)]
    return hits


def unwrapped_in(path: Path) -> list[tuple[int, str]]:
    return unwrapped(path.read_text(encoding="utf-8"), str(path))
