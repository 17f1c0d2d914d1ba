"""Call texts in the rules' own languages (Czech, Russian) and English.

Catalogs are JSON files in ``rules/locale/`` (one per language, code -> template);
templates may name evidence fields in braces, e.g. ``{piece}``.
"""
from __future__ import annotations

import json
import string
from functools import lru_cache
from importlib import resources
from typing import Any, Mapping

__all__ = ["LANGS", "text_for", "catalog"]

LANGS = ("en", "cs", "ru")


@lru_cache(maxsize=None)
def catalog(lang: str) -> Mapping[str, str]:
    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r} (expected one of {', '.join(LANGS)})")
    raw = (resources.files("rules") / "locale" / f"{lang}.json").read_text(encoding="utf-8")
    texts: dict[str, str] = json.loads(raw)
    return texts


class _Safe(dict[str, str]):
    """Format fields where a field the evidence lacks stays as written (``{piece}``)."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def _fmt(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return ", ".join(_fmt(v) for v in value)
    if isinstance(value, float):
        return f"{value:.1f}"
    return str(value)


def text_for(code: str, lang: str = "en", evidence: Mapping[str, Any] | None = None) -> str:
    template = catalog(lang).get(code) or catalog("en")[code]
    fields = _Safe({k: _fmt(v) for k, v in (evidence or {}).items()})
    return string.Formatter().vformat(template, (), fields)
