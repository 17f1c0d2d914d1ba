"""The JSON contracts: schemas in docs/ match the code, and what the code emits validates."""
import ast
import json
import pathlib
import sys

import jsonschema
import pytest

from rules import CODES
from rules.i18n import LANGS, catalog, text_for
from rules.record import EVENT_FIELDS
from tests.novuss_records import contact, engine, pocket, record

ROOT = pathlib.Path(__file__).resolve().parents[1]
SHOT = json.loads((ROOT / "docs/schemas/shot-record.schema.json").read_text())
RULING = json.loads((ROOT / "docs/schemas/ruling.schema.json").read_text())


def test_shot_schema_lists_exactly_the_event_kinds_the_parser_knows():
    kinds = {e["title"] for e in SHOT["properties"]["events"]["items"]["oneOf"]}
    assert kinds == set(EVENT_FIELDS)
    for e in SHOT["properties"]["events"]["items"]["oneOf"]:
        required, optional = EVENT_FIELDS[e["title"]]
        assert e["required"] == ["t", "kind", *required]
        assert set(e["properties"]) == {"t", "kind", "t_err", "confidence", *required, *optional}


def test_ruling_schema_lists_exactly_the_call_codes():
    assert RULING["properties"]["calls"]["items"]["properties"]["code"]["enum"] == sorted(CODES)


def test_records_and_rulings_validate_against_their_schemas():
    rec = record({"A1": (-112.0, 484.0), "B1": (-112.0, -484.0)}, {"B1": (0.0, -300.0)},
                 [contact(0.1, "bat", "A1", t_err=0.001), contact(0.1005, "bat", "B1"), pocket(0.4, "A1", "NW")])
    jsonschema.validate(rec.to_dict(), SHOT)
    eng = engine()
    _, ruling = eng.apply(eng.initial(), rec)
    for lang in LANGS:
        jsonschema.validate(ruling.to_dict(lang), RULING)
    bad = rec.to_dict()
    bad["events"][0]["kind"] = "bounce"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, SHOT)


@pytest.mark.parametrize("lang", LANGS)
def test_every_call_code_has_text_in_every_language(lang):
    cat = catalog(lang)
    assert set(cat) == set(CODES)
    assert all(cat[c].strip() for c in CODES)


def test_call_text_fills_in_evidence():
    assert text_for("opponent_pawn_first", "ru", {"piece": ["B3"]}) == "Бита сначала коснулась пешки соперника (B3): штрафная пешка."


def test_rules_imports_only_the_standard_library():
    stdlib = set(sys.stdlib_module_names)
    for path in (ROOT / "rules").rglob("*.py"):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    continue
                names = [node.module]
            else:
                continue
            for name in names:
                assert name.split(".")[0] in stdlib, f"{path.name} imports {name}"
