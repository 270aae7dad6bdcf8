"""Checks of an answer's text: substrings, patterns, equality and JSON, deterministic and
in-process (the check engine, `checks.py`, dispatches to them; `verify` replays them).

Each runner takes its check and the graded answer (anything with an `output`) and returns
(passed, reason).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import suppress
from typing import Any, Protocol

from registry.format import checks_schema as cs
from registry.format.markdown import fenced_blocks


class Answer(Protocol):
    """What a text check reads: the model's final answer."""

    output: str


def clip(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, ending in an ellipsis when cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _show(values: list[str]) -> str:
    return ", ".join(repr(clip(v, 60)) for v in values)


def _present(
    check: cs.Contains | cs.ContainsAny | cs.NotContains, output: str
) -> tuple[list[str], list[str]]:
    sensitive = check.case_sensitive and check.type != "icontains"
    haystack = output if sensitive else output.casefold()
    found = [v for v in check.values() if (v if sensitive else v.casefold()) in haystack]
    return found, [v for v in check.values() if v not in found]


def _contains(check: cs.Contains, ctx: Answer) -> tuple[bool, str]:
    found, missing = _present(check, ctx.output)
    return (False, f"missing {_show(missing)}") if missing else (True, f"found {_show(found)}")


def _contains_any(check: cs.ContainsAny, ctx: Answer) -> tuple[bool, str]:
    found, missing = _present(check, ctx.output)
    return (True, f"found {_show(found[:1])}") if found else (False, f"none of {_show(missing)}")


def _not_contains(check: cs.NotContains, ctx: Answer) -> tuple[bool, str]:
    found, _ = _present(check, ctx.output)
    return (False, f"found {_show(found)}") if found else (True, "none present")


def _regex(check: cs.Regex | cs.NotRegex, ctx: Answer) -> tuple[bool, str]:
    match = check.compiled().search(ctx.output)
    wanted = check.type == "regex"
    if match:
        return wanted, f"/{check.pattern}/ matched {clip(match.group(0), 80)!r}"
    return not wanted, f"no match for /{check.pattern}/"


def _equals(check: cs.Equals, ctx: Answer) -> tuple[bool, str]:
    got, want = ctx.output, check.value
    if check.strip:
        got, want = got.strip(), want.strip()
    if not check.case_sensitive:
        got, want = got.casefold(), want.casefold()
    if got == want:
        return True, "equal"
    return False, f"expected {clip(check.value, 80)!r}, got {clip(ctx.output, 80)!r}"


def _json(check: cs.JsonCheck, ctx: Answer) -> tuple[bool, str]:
    blocks = fenced_blocks(ctx.output)
    json_blocks = [b.body for b in blocks if b.info.split()[:1] == ["json"]]
    candidates = [ctx.output, *json_blocks[:1], *[b.body for b in blocks[:1]]]
    for text in candidates:
        with suppress(ValueError):
            data = json.loads(text)
            break
    else:
        return False, "no valid JSON in the output or its first fenced block"
    if check.json_schema is None:
        return True, "valid JSON"
    import jsonschema

    validator = jsonschema.validators.validator_for(check.json_schema)(check.json_schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(data))
    if error is None:
        return True, "valid JSON matching the schema"
    return False, f"schema error at {error.json_path}: {error.message}"


TEXT_RUNNERS: dict[type, Callable[[Any, Any], tuple[bool, str]]] = {
    cs.Contains: _contains, cs.ContainsAny: _contains_any, cs.NotContains: _not_contains,
    cs.Regex: _regex, cs.NotRegex: _regex, cs.Equals: _equals, cs.JsonCheck: _json,
}
