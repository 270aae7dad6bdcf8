"""Tests for registry.evaluation.json_schema: a `json` check's schema patterns match through
RE2 with jsonschema's verdicts; what RE2 cannot express is refused in the verdict (issue 37,
hole 5; the hostile pattern over a long answer is in test_patterns.py)."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from registry.evaluation.json_schema import schema_errors
from registry.evaluation.text_checks import compile_text
from registry.format.checks_schema import JsonCheck
from registry.format.patterns import UnsafePattern

SCHEMAS: list[tuple[dict[str, Any], Any]] = [
    ({"type": "string", "pattern": "^a+$"}, "aaa"), ({"type": "string", "pattern": "^a+$"}, "ab"),
    ({"pattern": r"\d"}, 5), ({"patternProperties": {"^x": {"type": "number"}}}, {"xa": "s"}),
    ({"patternProperties": {"^x": {"type": "number"}}}, {"xa": 1, "y": "s"}),
    ({"patternProperties": {"^x": {}}, "additionalProperties": False}, {"xa": 1, "y": 2}),
    ({"patternProperties": {"^x": {}}, "additionalProperties": False}, {"xa": 1}),
    ({"properties": {"y": {}}, "additionalProperties": False}, {"y": 1, "z": 2, "w": 3}),
    ({"additionalProperties": {"type": "number"}, "patternProperties": {"^s": {}}},
     {"s1": "x", "n": "x"}),
    ({"propertyNames": {"pattern": "^[a-z]+$"}}, {"ok": 1, "Bad": 2}),
    ({"$schema": "http://json-schema.org/draft-04/schema#",
      "patternProperties": {"^x": {"type": "number"}}}, {"xa": "s"}),
    ({"$defs": {"s": {"pattern": "^[0-9]+$"}}, "properties": {"n": {"$ref": "#/$defs/s"}}},
     {"n": "12a"}),
]


@pytest.mark.parametrize(("schema", "data"), SCHEMAS)
def test_the_errors_are_jsonschemas(schema: dict[str, Any], data: Any) -> None:
    expected = jsonschema.validators.validator_for(schema)(schema).iter_errors(data)
    assert sorted((e.json_path, e.message) for e in schema_errors(schema, data)) == \
        sorted((e.json_path, e.message) for e in expected)


def json_check(schema: dict[str, Any]) -> JsonCheck:
    return JsonCheck.model_validate({"type": "json", "schema": schema})


@pytest.mark.parametrize("schema", [
    {"properties": {"k": {"pattern": r"(a)\1"}}},
    {"patternProperties": {"(?=k)": {}}},
    {"patternProperties": {"^k": {}}, "unevaluatedProperties": False},
])
def test_a_pattern_re2_cannot_run_is_refused_in_the_verdict(schema: dict[str, Any]) -> None:
    passed, why = compile_text(json_check(schema))('{"k": "aa"}')
    assert passed is False
    assert why().startswith("refused: ")
    assert "which has no linear-time match; hubskills runs such a pattern only in a sandbox" \
        in why()


def test_the_pair_jsonschema_would_match_with_re_is_named() -> None:
    schema = {"$defs": {"o": {"unevaluatedProperties": False}},
              "patternProperties": {"^k": {}}}
    with pytest.raises(UnsafePattern) as info:
        list(schema_errors(schema, {}))
    assert info.value.message == ("the schema uses patternProperties beside "
                                  "unevaluatedProperties, which has no linear-time match")


def test_a_schema_check_passes_and_fails_with_its_reason() -> None:
    check = json_check({"type": "object", "properties": {"id": {"pattern": "^[A-Z]{3}-\\d+$"}}})
    assert compile_text(check)('{"id": "ABC-12"}')[0] is True
    passed, why = compile_text(check)('{"id": "abc-12"}')
    assert passed is False
    assert why() == "schema error at $.id: 'abc-12' does not match '^[A-Z]{3}-\\\\d+$'"
