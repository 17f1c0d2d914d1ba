"""rules/clauses.json: every clause a call cites has its text in en, cs, ru and lv; the original's text (which
prevails) and the English working translation are quoted word for word from the rule files, so a paraphrase
fails here."""
import json
import os
import re
import tomllib
from pathlib import Path

import pytest

from rules import CODES, Call, Ruling
from rules.clauses import LANGS, ClauseText, clause_ids, clause_text

ROOT = Path(__file__).resolve().parents[1]
RAW = json.loads((ROOT / "rules" / "clauses.json").read_text(encoding="utf-8"))["clauses"]
CITED = set(CODES.values())
#: original file and English working translation per game (in shared/rules/)
FILES = {"novuss": ("novuss-amateur.ru.txt", "novuss-amateur.en.md"), "cvrnkana": ("cvrnkana.cs.txt", "cvrnkana.en.md")}
ORIGINAL_LANG = {"novuss": "ru", "cvrnkana": "cs"}


def _rules_dir() -> Path | None:
    """shared/rules/: $SHOTJUDGE_RULES_DIR, else next to or above the checkout (docs say ``../shared/rules/``)."""
    candidates = [os.environ.get("SHOTJUDGE_RULES_DIR"), ROOT / "shared" / "rules", ROOT.parent / "shared" / "rules",
                  "/work/shared/rules"]
    for c in candidates:
        if c and (Path(c) / "novuss-amateur.ru.txt").is_file():
            return Path(c)
    return None


RULES_DIR = _rules_dir()
needs_sources = pytest.mark.skipif(RULES_DIR is None, reason="shared/rules/ not found (set SHOTJUDGE_RULES_DIR)")


def _norm(text: str) -> str:
    """Whitespace runs to one space; markdown bold (``**``) dropped (the English files use it for emphasis)."""
    return " ".join(text.replace("**", "").split())


def _source(name: str) -> str:
    assert RULES_DIR is not None
    return _norm((RULES_DIR / name).read_text(encoding="utf-8"))


def _quoted_in_order(text: str, source: str) -> bool:
    """Each line of ``text`` (a clause in pieces has one line per piece) is in ``source``, in the source's order."""
    at = 0
    for line in text.split("\n"):
        found = source.find(_norm(line), at)
        if not line.strip() or found < 0:
            return False
        at = found + len(_norm(line))
    return True


def _game(clause_id: str) -> str:
    return clause_id.split(".")[0]


def test_every_cited_clause_has_a_title_and_text_in_all_four_languages():
    assert LANGS == ("en", "cs", "ru", "lv")
    missing = sorted(CITED - set(clause_ids()))
    assert not missing, f"clauses cited by CODES without an entry: {missing}"
    for cid in clause_ids():
        for field in ("title", "text"):
            assert set(RAW[cid][field]) == set(LANGS), (cid, field)
            assert all(RAW[cid][field][lang].strip() for lang in LANGS), (cid, field)
        if "note" in RAW[cid]:
            assert set(RAW[cid]["note"]) == set(LANGS) and all(v.strip() for v in RAW[cid]["note"].values()), cid
        assert RAW[cid]["source"].strip(), cid


def test_every_entry_is_cited_or_is_the_section_of_a_cited_clause():
    sections = {RAW[cid]["section"] for cid in CITED if "section" in RAW[cid]}
    assert sections == {"novuss.II", "novuss.III", "cvrnkana.7"}
    assert set(clause_ids()) - CITED == {"novuss.III"}
    assert set(clause_ids()) <= CITED | sections
    for cid, entry in RAW.items():
        if "section" in entry:
            assert cid.startswith(entry["section"]) and entry["section"] in RAW, cid


@needs_sources
@pytest.mark.parametrize("clause_id", [c for c in RAW if RAW[c]["original"]])
def test_the_original_text_is_quoted_verbatim_from_the_original_file(clause_id):
    lang = RAW[clause_id]["original"]
    assert lang == ORIGINAL_LANG[_game(clause_id)]
    assert _quoted_in_order(RAW[clause_id]["text"][lang], _source(FILES[_game(clause_id)][0])), clause_id


@needs_sources
@pytest.mark.parametrize("clause_id", [c for c in RAW if RAW[c]["original"]])
def test_the_english_text_is_quoted_verbatim_from_the_working_translation(clause_id):
    text = RAW[clause_id]["text"]["en"]
    assert "**" not in text
    assert _quoted_in_order(text, _source(FILES[_game(clause_id)][1])), clause_id


@needs_sources
def test_the_verbatim_check_catches_a_paraphrase_and_a_reordering():
    ru = _source("novuss-amateur.ru.txt")
    assert _quoted_in_order("Забивший первым все СВОИ пешки выигрывает.", ru)
    assert not _quoted_in_order("Забивший первым все свои пешки выигрывает.", ru)  # case changed
    assert _quoted_in_order("Удар производится тонким концом кия.\nИгрок теряет право на удар:", ru)
    assert not _quoted_in_order("Игрок теряет право на удар:\nУдар производится тонким концом кия.", ru)
    en = _source("novuss-amateur.en.md")
    assert _quoted_in_order("The first to pocket all their own pawns wins.", en)  # written **all their own pawns wins**
    assert not _quoted_in_order("The first to pocket all own pawns wins.", en)


def test_only_the_federation_clauses_have_no_original_and_they_say_so():
    without = {cid for cid, e in RAW.items() if e["original"] is None}
    assert without == {"novuss.federation.last_pawn", "novuss.federation.last_pawns_together"}
    for cid in without:
        assert "federation practice, not in the amateur rules' text" in RAW[cid]["source"]
        assert RAW[cid]["text"]["en"].startswith("What shotjudge applies (no rule text):")
        assert "note" in RAW[cid]
    for cid, e in RAW.items():
        if e["original"] is not None:
            assert e["original"] == ORIGINAL_LANG[_game(cid)], cid


def test_a_translation_carries_the_prevailing_text_with_it():
    lv = clause_text("novuss.II.3", "lv")
    ru = clause_text("novuss.II.3", "ru")
    assert (lv.lang, lv.original_lang, lv.is_original) == ("lv", "ru", False)
    assert (ru.is_original, ru.original_text) == (True, ru.text)
    assert lv.original_text == ru.text == RAW["novuss.II.3"]["text"]["ru"]
    assert lv.text == RAW["novuss.II.3"]["text"]["lv"] and lv.section == "novuss.II"
    cs = clause_text("cvrnkana.7a", "cs")
    assert (cs.is_original, cs.original_lang, cs.section) == (True, "cs", "cvrnkana.7")
    assert clause_text("cvrnkana.7a", "en").original_text == cs.text
    fed = clause_text("novuss.federation.last_pawns_together", "cs")
    assert (fed.original_lang, fed.is_original, fed.original_text) == (None, False, None)
    assert fed.note == RAW["novuss.federation.last_pawns_together"]["note"]["cs"]
    assert clause_text("novuss.II.1", "en").note is None


def test_the_four_languages_are_four_texts():
    cyrillic = re.compile("[\u0400-\u04ff]")
    for cid in clause_ids():
        texts = RAW[cid]["text"]
        assert len({texts[lang] for lang in LANGS}) == 4, cid
        assert cyrillic.search(texts["ru"]), cid
        assert not any(cyrillic.search(texts[lang]) for lang in ("en", "cs", "lv")), cid


# The terms (one per language; the report lists them for a native speaker): a clause about a pawn, the bat, a
# marble or the pit uses the same word for it in every translation.
TERMS = {
    "novuss": [({"ru": r"пешк"}, {"cs": r"pěš", "lv": r"kauliņ", "en": r"pawn"}),
               ({"ru": r"\bбит[аыу]"}, {"cs": r"\bbit[auy]\b", "lv": r"\brip[aue]", "en": r"\bbat\b"}),
               ({"ru": r"\bлуз"}, {"cs": r"kaps", "lv": r"maisiņ", "en": r"pocket"})],
    "cvrnkana": [({"cs": r"kuličk"}, {"ru": r"шарик", "lv": r"bumbiņ", "en": r"marble"}),
                 ({"cs": r"důl"}, {"ru": r"лунк", "lv": r"bedrīt", "en": r"\bpits?\b"})],
}


def test_each_term_is_translated_the_same_way_throughout():
    for cid, entry in RAW.items():
        if entry["original"] is None:
            continue
        for when, then in TERMS[_game(cid)]:
            ((lang, pattern),) = when.items()
            if re.search(pattern, entry["text"][lang]):
                for other, expected in then.items():
                    assert re.search(expected, entry["text"][other]), (cid, other, expected)


def test_a_novuss_striker_is_never_called_a_kaulins_and_a_pawn_never_a_ripa():
    assert "ripa" in clause_text("novuss.III.5", "lv").text and "kauliņ" not in clause_text("novuss.II.2", "lv").text
    assert "rip" not in clause_text("novuss.III.1", "lv").text  # only pawns there


def test_unknown_clause_or_language_is_a_value_error_naming_it():
    with pytest.raises(ValueError, match=r"unknown clause 'novuss\.II\.9'"):
        clause_text("novuss.II.9", "en")
    with pytest.raises(ValueError, match=r"unknown clause 'bat_in_zone'"):
        clause_text("bat_in_zone", "en")  # a call code, not a clause
    with pytest.raises(ValueError, match=r"unknown language 'de' .*en, cs, ru, lv"):
        clause_text("novuss.II.3", "de")


def test_a_rulings_calls_reach_their_clause_texts():
    calls = (Call("bat_in_zone", "A"), Call("penalty_debt", "A"), Call("opponent_last_pawn", "B"))
    ruling = Ruling(shot=1, game="novuss", player="A", calls=calls, actions=(), next_player="B", game_over=None,
                    score={})
    texts = [clause_text(c.clause, "lv") for c in ruling.calls]
    assert all(isinstance(t, ClauseText) for t in texts)
    assert [t.id for t in texts] == ["novuss.III.5", "novuss.II.debt", "novuss.federation.last_pawn"]
    assert texts[0].title == "III.5 Ripa atgriežas apmales zonā"
    assert texts[0].original_text == RAW["novuss.III.5"]["text"]["ru"]
    assert texts[2].original_text is None
    for code, clause in CODES.items():
        assert clause_text(Call(code).clause, "cs").id == clause


def test_the_catalogue_ships_as_package_data():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "clauses.json" in pyproject["tool"]["setuptools"]["package-data"]["rules"]
