"""The judge's texts in the user's language: ``_("English text")`` wherever a user reads it.

One catalogue for everything (``rules.i18n``). A command sets the language once, from ``--lang`` (read
before the parser is built, so help and argparse's own messages are translated too); code that renders
for another language than the process's (a report for a given ``lang``) asks ``translator(lang)``.
Placeholders are ``{name}``, filled by ``.format`` after translating: ``_("shot {n}").format(n=3)``.
"""
from __future__ import annotations

import os
from typing import Callable, Sequence

from rules.i18n import LANGS, translation

__all__ = ["LANGS", "_", "N_", "ngettext", "translator", "plural_translator", "set_language", "language", "language_from_argv",
           "page_strings", "add_lang_arg"]

_current = ["en"]


def set_language(lang: str) -> None:
    """Make ``lang`` the language of every ``_()`` from now on (and of argparse's own messages)."""
    translation(lang)  # an unknown language or a missing catalogue is refused here, not at the first text
    _current[0] = lang
    import argparse

    argparse._ = _  # type: ignore[attr-defined]  # argparse's own texts ("usage:", "error:") through our catalogue
    argparse.ngettext = ngettext  # type: ignore[attr-defined]


def language() -> str:
    return _current[0]


def _(text: str) -> str:
    """``text`` (an English message id) in the current language."""
    return translation(_current[0]).gettext(text)


def N_(text: str) -> str:
    """Mark ``text`` for the catalogue where it is defined; translate it with ``_`` where it is shown."""
    return text


def ngettext(singular: str, plural: str, n: int) -> str:
    return translation(_current[0]).ngettext(singular, plural, n)


def translator(lang: str) -> Callable[[str], str]:
    """``gettext`` of ``lang``: English message id -> text in ``lang``, whatever the current language."""
    return translation(lang).gettext


def plural_translator(lang: str) -> Callable[[str, str, int], str]:
    """``ngettext`` of ``lang``: (English singular, English plural, n) -> the form ``n`` takes in ``lang``."""
    return translation(lang).ngettext


def language_from_argv(argv: Sequence[str]) -> str:
    """The ``--lang`` value in ``argv`` (``--lang cs`` or ``--lang=cs``), else ``SHOTJUDGE_LANG``, else English;
    an unknown value is left for argparse to refuse (in English, the only language known then)."""
    found = os.environ.get("SHOTJUDGE_LANG", "en")
    for k, arg in enumerate(argv):
        if arg == "--":
            break
        if arg == "--lang" and k + 1 < len(argv):
            found = argv[k + 1]
        elif arg.startswith("--lang="):
            found = arg.split("=", 1)[1]
    return found if found in LANGS else "en"


def add_lang_arg(parser) -> None:
    """``--lang``: the language of everything the command says (calls, console, page, captions, help)."""
    parser.add_argument("--lang", default="en", choices=LANGS,
                        help=_("language of everything shotjudge says: en English, cs čeština, ru русский, lv latviešu "
                               "(default en; SHOTJUDGE_LANG sets it for every command)"))


def page_strings(lang: str) -> dict[str, str]:
    """Every translated text of ``lang``'s catalogue, message id -> text: what the spectators' page looks
    its words up in (it reads no catalogue of its own)."""
    tr = translation(lang)
    catalog = getattr(tr, "_catalog", {})
    return {k: v for k, v in catalog.items() if isinstance(k, str) and k and v}
