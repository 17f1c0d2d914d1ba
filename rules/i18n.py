"""Every text a user reads, in their language: one GNU gettext catalogue (domain ``shotjudge``) for the call
texts and the judge's page, console, captions and notices alike.

The English text is the message id (the call texts' are in ``rules.call_texts``); a translation is
``rules/locale/<lang>/LC_MESSAGES/shotjudge.mo``, compiled from the ``.po`` beside it and read with the
standard library's ``gettext`` (no Babel at run time). Lives in ``rules`` because it is the bottom layer:
every other one may read it. How to add a text: docs/translating.md.
"""
from __future__ import annotations

import gettext
import string
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

from .call_texts import TEXTS

__all__ = ["LANGS", "LANG_NAMES", "DOMAIN", "LOCALE_DIR", "translation", "text_for", "catalog"]

#: English first: the message ids themselves (no catalogue file)
LANGS = ("en", "cs", "ru", "lv")
LANG_NAMES = {"en": "English", "cs": "čeština", "ru": "русский", "lv": "latviešu"}
DOMAIN = "shotjudge"
LOCALE_DIR = Path(__file__).resolve().parent / "locale"


def _check(lang: str) -> None:
    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r} (expected one of {', '.join(LANGS)})")


@lru_cache(maxsize=None)
def translation(lang: str) -> gettext.NullTranslations:
    """The catalogue of ``lang`` (English: the message ids unchanged). Read from the compiled ``.mo`` only,
    never from the environment's locale settings: the language is the one the user chose."""
    _check(lang)
    if lang == "en":
        return gettext.NullTranslations()
    with open(LOCALE_DIR / lang / "LC_MESSAGES" / f"{DOMAIN}.mo", "rb") as fh:
        return gettext.GNUTranslations(fh)


@lru_cache(maxsize=None)
def catalog(lang: str) -> Mapping[str, str]:
    """Call code -> call text template in ``lang``."""
    tr = translation(lang)
    return {code: tr.gettext(text) for code, text in TEXTS.items()}


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
    template = catalog(lang)[code]
    fields = _Safe({k: _fmt(v) for k, v in (evidence or {}).items()})
    return string.Formatter().vformat(template, (), fields)
