"""JSON Schema validation for `json` checks, its patterns matched by RE2 (`format/patterns.py`).

jsonschema matches `pattern`, `patternProperties` and (through those) `additionalProperties`
with Python's backtracking `re`; a suite's schema is as untrusted as its `regex` checks, so
those keywords are replaced here by ones that match through `compile_pattern`. A pattern RE2
cannot express raises `UnsafePattern` out of the validation, and so does a schema holding both
`patternProperties` and `unevaluatedProperties` (jsonschema evaluates that pair with `re` deep
inside its own helpers): the check's verdict says it was refused.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

from registry.format.patterns import UnsafePattern, compile_pattern


def schema_errors(schema: dict[str, Any], data: Any) -> Iterator[Any]:
    """The `jsonschema.ValidationError`s of `data` against `schema`, patterns matched by RE2.

    Raises:
        UnsafePattern: a pattern of the schema RE2 cannot run in linear time (raised while the
            errors are iterated, when that pattern is first matched).
    """
    import jsonschema

    if _holds_key(schema, "patternProperties") and _holds_key(schema, "unevaluatedProperties"):
        raise UnsafePattern("", "patternProperties beside unevaluatedProperties")
    base = jsonschema.validators.validator_for(schema)
    return _linear(base)(schema).iter_errors(data)


def _holds_key(value: Any, key: str) -> bool:
    if isinstance(value, dict):
        return key in value or any(_holds_key(v, key) for v in value.values())
    return isinstance(value, list) and any(_holds_key(v, key) for v in value)


@functools.cache
def _linear(base: Any) -> Any:
    """`base` (a jsonschema validator class) with its pattern keywords matched by RE2."""
    import jsonschema

    return jsonschema.validators.extend(base, {
        "pattern": _pattern, "patternProperties": _pattern_properties,
        "additionalProperties": _additional_properties,
    })


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    if validator.is_type(instance, "string") and compile_pattern(pattern).search(instance) is None:
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator: Any, patterns: dict[str, Any], instance: Any,
                        schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        compiled = compile_pattern(pattern)
        for key, value in instance.items():
            if compiled.search(key) is not None:
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(validator: Any, allowed: Any, instance: Any,
                           schema: Any) -> Iterator[Any]:
    """jsonschema's `additionalProperties`, the properties its patterns cover found by RE2."""
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "object"):
        return
    named = schema.get("properties", {})
    patterns = [compile_pattern(p) for p in schema.get("patternProperties", {})]
    extras = [key for key in instance if key not in named
              and not any(p.search(key) is not None for p in patterns)]
    if validator.is_type(allowed, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], allowed, path=extra)
    elif not allowed and extras:
        shown = ", ".join(repr(extra) for extra in sorted(extras, key=str))
        if patterns:
            listed = ", ".join(repr(p) for p in sorted(schema["patternProperties"]))
            verb = "does" if len(extras) == 1 else "do"
            yield ValidationError(f"{shown} {verb} not match any of the regexes: {listed}")
        else:
            verb = "was" if len(extras) == 1 else "were"
            yield ValidationError(f"Additional properties are not allowed ({shown} {verb} "
                                  "unexpected)")
