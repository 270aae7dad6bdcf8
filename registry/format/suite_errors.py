"""What a suite that does not validate says: each pydantic error in plain words, naming its
case and field, and one error many cases share said once, naming the cases."""

from __future__ import annotations

import difflib
import json
from typing import Any

from pydantic import ValidationError

from registry.format.checks_schema import CHECK_TYPES


def describe(exc: ValidationError, data: Any, source: str) -> str:
    """`source: case N ('id'): field a.b: message` for the first few errors; one error in
    several cases said once, naming them (a walk: one mistyped check type in 11 cases printed
    the 18 allowed types 11 times, 39 lines)."""
    groups: dict[tuple[str, int], list[str]] = {}  # what is wrong -> the cases it is in
    for number, error in enumerate(exc.errors(), 1):
        where, what = _describe_one(error, data)
        groups.setdefault((what, 0 if where else number), []).append(where)  # no case: alone
    shown = list(groups.items())
    parts = [_cases(where) + what for (what, _), where in shown[:_SHOWN_ERRORS]]
    more = sum(len(where) for _, where in shown[_SHOWN_ERRORS:])
    return f"{source}: " + "; ".join(parts) + (
        f"; and {more} more error{'s' if more > 1 else ''} (fix these first)" if more > 0 else "")


_SHOWN_ERRORS = 8
_SHOWN_CASES = 6


def _cases(where: list[str]) -> str:
    """`case 1 ('a'): `, or for several `cases 1 ('a'), 2 ('b') … (11): `."""
    if len(where) == 1:
        return f"case {where[0]}: " if where[0] else ""
    shown = ", ".join(where[:_SHOWN_CASES]) + (" …" if len(where) > _SHOWN_CASES else "")
    return f"cases {shown} ({len(where)}): "


def _plain(error: Any) -> str:
    """What pydantic says, in plain words with the allowed values where it knows them."""
    kind, ctx = error["type"], error.get("ctx") or {}
    given = json.dumps(error.get("input"), default=str)[:40]
    if kind == "union_tag_invalid":
        allowed = [t.strip(" '") for t in str(ctx.get("expected_tags", "")).split(",")]
        close = difflib.get_close_matches(str(ctx.get("tag")), allowed, n=1)
        return (f"'{ctx.get('tag')}' is not a check type"
                + (f" (did you mean '{close[0]}'?)" if close else "")
                + f"; allowed: {', '.join(allowed)}")
    if kind == "union_tag_not_found":
        return f"every check needs a 'type', one of: {', '.join(CHECK_TYPES)}"
    if kind == "missing":
        return "missing (it is required)"
    if kind == "extra_forbidden":
        return f"not a field of this object (given {given})"
    if kind in ("literal_error", "enum"):
        return f"{given} is not allowed; allowed: {ctx.get('expected')}"
    if kind in _TYPES:
        return f"must be {_TYPES[kind]}, not {given}"
    return str(error["msg"]).removeprefix("Value error, ")


_TYPES = {"string_type": "text", "list_type": "a list", "int_type": "a whole number",
          "int_parsing": "a whole number", "float_type": "a number",
          "float_parsing": "a number", "bool_type": "true or false",
          "bool_parsing": "true or false", "dict_type": "an object ({...})",
          "model_type": "an object ({...})"}


def _describe_one(error: Any, data: Any) -> tuple[str, str]:
    """Which case (`1 ('id')`, empty for the suite itself) and `field a.b: message`."""
    loc = list(error["loc"])
    message = _plain(error)
    if loc == ["cases"] and message.startswith("case "):
        return "", message  # the suite-level validator already names the case and the field
    where = ""
    if len(loc) >= 2 and loc[0] == "cases" and isinstance(loc[1], int):
        index, loc = loc[1], loc[2:]
        cases = data.get("cases") if isinstance(data, dict) else None
        case = cases[index] if isinstance(cases, list) and index < len(cases) else None
        case_id = case.get("id") if isinstance(case, dict) else None
        where = f"{index + 1}" + (f" ('{case_id}')" if case_id is not None else "")
    if error["type"] in ("union_tag_invalid", "union_tag_not_found"):
        loc.append("type")
    field = ""
    for part in loc:
        if isinstance(part, int):
            field += f"[{part}]"
        elif part not in _UNION_TAGS or not field.endswith("]"):
            field += f".{part}" if field else str(part)
    return where, f"field {field or '(case)'}: {message}"


_UNION_TAGS = set(CHECK_TYPES)
