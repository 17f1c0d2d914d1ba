"""Babel extraction for the command modules: their ``_()`` texts as usual, plus the module docstring that a
command shows as its ``--help`` description (``description=_(__doc__)``), which no ``_()`` call names.

Named in babel.cfg's ``[extractors]``; used only by ``pybabel extract`` (run from the repository root with
``PYTHONPATH=.``) and by tests/test_i18n.py, never at run time."""
from __future__ import annotations

import ast

__all__ = ["extract_command"]


def extract_command(fileobj, keywords, comment_tags, options):
    """Babel's Python extraction of ``fileobj``, and its docstring when the module passes it to argparse."""
    from babel.messages.extract import extract_python

    source = fileobj.read()
    fileobj.seek(0)
    yield from extract_python(fileobj, keywords, comment_tags, options)
    text = source.decode(options.get("encoding", "utf-8")) if isinstance(source, bytes) else source
    doc = ast.get_docstring(ast.parse(text), clean=False)
    if doc and "description=_(__doc__)" in text:
        yield 1, None, doc, []
