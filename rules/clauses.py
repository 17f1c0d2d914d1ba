"""The text of the rule clause a call cites, in the user's language (``rules/clauses.json``).

Each rule text has an original that prevails (Novuss: Russian, Cvrnkaná: Czech); the other languages are
working translations. So a clause's text always comes with the original's, and says whether it is the
original: a dispute is settled on the original's wording. A few clause ids are shotjudge's answers where the
rules are silent (``novuss.federation.*``); they have no original, and their text says what shotjudge applies.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any, Mapping

__all__ = ["LANGS", "ClauseText", "clause_text", "clause_ids"]

#: The languages of the clause texts (local to clauses: the call texts' languages are ``rules.i18n.LANGS``).
LANGS = ("en", "cs", "ru", "lv")


@dataclass(frozen=True)
class ClauseText:
    """One clause in one language. ``original_text`` is the prevailing text (None where none exists)."""

    id: str
    title: str
    text: str
    lang: str
    original_lang: str | None
    is_original: bool
    original_text: str | None
    source: str
    section: str | None = None  # the clause whose opening words this one continues (e.g. novuss.II)
    note: str | None = None  # where the rule is silent and shotjudge reads it: what it does, in ``lang``


@lru_cache(maxsize=1)
def _catalog() -> Mapping[str, Mapping[str, Any]]:
    raw = (resources.files("rules") / "clauses.json").read_text(encoding="utf-8")
    clauses: dict[str, Mapping[str, Any]] = json.loads(raw)["clauses"]
    return clauses


def clause_ids() -> tuple[str, ...]:
    """Every clause id with a text, in catalogue order."""
    return tuple(_catalog())


def clause_text(clause_id: str, lang: str = "en") -> ClauseText:
    """The clause ``clause_id`` (a value of ``rules.ruling.CODES``) in ``lang`` (one of :data:`LANGS`)."""
    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r} for clause texts (expected one of {', '.join(LANGS)})")
    entry = _catalog().get(clause_id)
    if entry is None:
        raise ValueError(f"unknown clause {clause_id!r} (no entry in rules/clauses.json)")
    original: str | None = entry["original"]
    note: Mapping[str, str] | None = entry.get("note")
    return ClauseText(id=clause_id, title=entry["title"][lang], text=entry["text"][lang], lang=lang,
                      original_lang=original, is_original=lang == original,
                      original_text=entry["text"][original] if original else None, source=entry["source"],
                      section=entry.get("section"), note=note[lang] if note else None)
