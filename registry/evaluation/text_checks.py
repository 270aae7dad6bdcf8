"""Checks of an answer's text: substrings, patterns, equality and JSON, deterministic and
in-process (the check engine, `checks.py`, dispatches to them; `verify` replays them).

Patterns (`regex`, `not_regex`, a JSON Schema's) match through RE2 in linear time
(`format/patterns.py`), never through Python's `re`; one RE2 cannot express is refused here
(`refusal`), and the check engine runs such a `regex` check in the sandbox instead.

Each check compiles (`compile_text`) to a grader: a function of the answer's text returning
its verdict and a way to say why. The engine's runners (`TEXT_RUNNERS`) take the check and the
graded answer (anything with an `output`) and call its grader.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import suppress
from typing import Any, Protocol

from registry.format import checks_schema as cs
from registry.format.markdown import fenced_blocks
from registry.format.patterns import UnsafePattern


class Answer(Protocol):
    """What a text check reads: the model's final answer."""

    output: str


Why = Callable[[], str]
Grader = Callable[[str], tuple[bool, Why]]
"""A compiled text check: the answer's text -> (passed, why), `why()` the reason; a reason is
written only where it is read (`verify` reads one only where a verdict differs)."""


def clip(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, ending in an ellipsis when cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _show(values: list[str]) -> str:
    return ", ".join(repr(clip(v, 60)) for v in values)


Needles = list[tuple[str, str]]  # (value, what is looked for)


def _needles(check: cs.Contains | cs.ContainsAny | cs.NotContains) -> tuple[bool, Needles]:
    """Whether `check` is case-sensitive, and each of its values with what is looked for
    (case-folded once unless it is)."""
    sensitive = check.case_sensitive and check.type != "icontains"
    values = check.values()
    return sensitive, [(v, v) for v in values] if sensitive else [(v, v.casefold())
                                                                   for v in values]


def _contains(check: cs.Contains) -> Grader:
    sensitive, needles = _needles(check)

    def grade(output: str) -> tuple[bool, Why]:
        haystack = output if sensitive else output.casefold()
        for _, needle in needles:
            if needle not in haystack:
                return False, lambda: "missing " + _show(
                    [v for v, needle in needles if needle not in haystack])
        return True, lambda: f"found {_show([v for v, _ in needles])}"

    return grade


def _contains_any(check: cs.ContainsAny) -> Grader:
    sensitive, needles = _needles(check)

    def grade(output: str) -> tuple[bool, Why]:
        haystack = output if sensitive else output.casefold()
        found = next((v for v, needle in needles if needle in haystack), None)
        if found is not None:
            return True, lambda: f"found {_show([found])}"
        return False, lambda: f"none of {_show([v for v, _ in needles])}"

    return grade


def _not_contains(check: cs.NotContains) -> Grader:
    sensitive, needles = _needles(check)

    def grade(output: str) -> tuple[bool, Why]:
        haystack = output if sensitive else output.casefold()
        for _, needle in needles:
            if needle in haystack:
                return False, lambda: "found " + _show(
                    [v for v, needle in needles if needle in haystack])
        return True, lambda: "none present"

    return grade


PATTERN_CHECKS = (cs.Regex, cs.NotRegex, cs.FileRegex)


def unsafe_pattern(check: Any) -> UnsafePattern | None:
    """Why the pattern of `check` (a `regex`, `not_regex` or `file_regex` check) cannot be
    matched in-process, or None (also for any other check). The check engine runs such a check
    in the sandbox; a grader of this module refuses it (`refusal`)."""
    if not isinstance(check, PATTERN_CHECKS):
        return None
    try:
        check.compiled()
    except UnsafePattern as unsafe:
        return unsafe
    return None


def refusal(unsafe: UnsafePattern) -> str:
    """The verdict's reason for a pattern refused in-process."""
    return f"refused: {unsafe.message}; hubskills runs such a pattern only in a sandbox " \
        f"({unsafe.hint})"


def _regex(check: cs.Regex | cs.NotRegex) -> Grader:
    wanted = check.type == "regex"
    no_match = f"no match for /{check.pattern}/"
    try:
        pattern = check.compiled()  # RE2: linear in the answer, whatever the suite wrote
    except UnsafePattern as unsafe:
        reason = refusal(unsafe)
        return lambda output: (False, lambda: reason)

    def grade(output: str) -> tuple[bool, Why]:
        match = pattern.search(output)
        if match:
            return wanted, lambda: f"/{check.pattern}/ matched {clip(match.group(0), 80)!r}"
        return not wanted, lambda: no_match

    return grade


def _equals(check: cs.Equals) -> Grader:
    def grade(output: str) -> tuple[bool, Why]:
        got, want = output, check.value
        if check.strip:
            got, want = got.strip(), want.strip()
        if not check.case_sensitive:
            got, want = got.casefold(), want.casefold()
        if got == want:
            return True, lambda: "equal"
        return False, lambda: f"expected {clip(check.value, 80)!r}, got {clip(output, 80)!r}"

    return grade


def _json(check: cs.JsonCheck) -> Grader:
    def grade(output: str) -> tuple[bool, Why]:
        passed, reason = _json_verdict(check, output)
        return passed, lambda: reason

    return grade


def _json_verdict(check: cs.JsonCheck, output: str) -> tuple[bool, str]:
    blocks = fenced_blocks(output)
    json_blocks = [b.body for b in blocks if b.info.split()[:1] == ["json"]]
    candidates = [output, *json_blocks[:1], *[b.body for b in blocks[:1]]]
    for text in candidates:
        with suppress(ValueError):
            data = json.loads(text)
            break
    else:
        return False, "no valid JSON in the output or its first fenced block"
    if check.json_schema is None:
        return True, "valid JSON"
    import jsonschema

    from registry.evaluation.json_schema import schema_errors

    try:
        error = jsonschema.exceptions.best_match(schema_errors(check.json_schema, data))
    except UnsafePattern as unsafe:
        return False, refusal(unsafe)
    if error is None:
        return True, "valid JSON matching the schema"
    return False, f"schema error at {error.json_path}: {error.message}"


_COMPILERS: dict[type, Callable[[Any], Grader]] = {
    cs.Contains: _contains, cs.ContainsAny: _contains_any, cs.NotContains: _not_contains,
    cs.Regex: _regex, cs.NotRegex: _regex, cs.Equals: _equals, cs.JsonCheck: _json,
}


def compile_text(check: Any) -> Grader:
    """`check` (a text check) as a function of the output alone, with what depends only on
    the check (its values case-folded, its pattern compiled) worked out once: `verify` grades
    every sample of a case with the same graders."""
    return _COMPILERS[type(check)](check)


def _runner(check: Any, ctx: Answer) -> tuple[bool, str]:
    passed, why = compile_text(check)(ctx.output)
    return passed, why()


TEXT_RUNNERS: dict[type, Callable[[Any, Any], tuple[bool, str]]] = dict.fromkeys(
    _COMPILERS, _runner)
