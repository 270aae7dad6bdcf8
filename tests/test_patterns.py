"""Tests for registry.format.patterns: a suite's patterns run in linear time (RE2), never by
Python's backtracking `re` in the grading process; what RE2 cannot express runs in the sandbox
or is refused with its reason (issue 37, hole 5). JSON Schema patterns: test_json_schema.py.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from sandbox_required import bwrap_sandbox

import registry
from registry.evaluation.checks import has_code_checks, run_checks
from registry.evaluation.text_checks import compile_text
from registry.format.checks_schema import Regex
from registry.format.patterns import UnsafePattern, compile_pattern
from registry.format.suite import Case
from registry.results.runs import CheckVerdict

HOSTILE = "^(.+)+Q"  # exponential for a backtracking engine on a long answer without a Q
LONG = "a" * 50_000

# Grades a long answer against hostile patterns in a child process whose `re` refuses them:
# the suite loads first (its patterns are syntax-checked with `re.compile`, which never
# matches), then every `re` entry point raises on a hostile pattern.
_CHILD = textwrap.dedent("""
    import asyncio, json, re, sys
    from registry.evaluation.checks import run_checks
    from registry.format.suite import Case

    data = json.loads(sys.stdin.read())
    cases = [Case.model_validate(case) for case in data["cases"]]
    real = re._compile

    def guarded(pattern, flags):
        if "(.+)+" in str(pattern):
            raise AssertionError(f"a suite's pattern went through re: {pattern!r}")
        return real(pattern, flags)

    re._compile = guarded
    verdicts = [[[v.passed, v.reason] for v in asyncio.run(run_checks(case, output))]
                for case, output in zip(cases, data["outputs"])]
    print(json.dumps(verdicts))
""")


def grade_in_child(cases: list[dict[str, Any]], outputs: list[str]) -> list[list[list[Any]]]:
    """The verdicts of `cases` on `outputs`, graded in a child process (killed if it hangs)."""
    root = Path(registry.__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(root)}
    try:
        done = subprocess.run([sys.executable, "-c", _CHILD], input=json.dumps(
            {"cases": cases, "outputs": outputs}), capture_output=True, text=True, env=env,
            cwd=root, timeout=240)  # a bound for a broken run; the fix takes well under 1 s
    except subprocess.TimeoutExpired:
        pytest.fail("grading a hostile pattern did not finish: it backtracked")
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def test_a_catastrophic_pattern_on_a_long_answer_is_graded_without_re() -> None:
    answer = LONG + "\n\n```notes.txt\n" + LONG + "\n```\n"
    document = json.dumps({"key": LONG, LONG: 1})
    pattern_checks = [{"type": "regex", "pattern": HOSTILE},
                      {"type": "not_regex", "pattern": HOSTILE, "flags": "is"},
                      {"type": "file_regex", "path": "notes.txt", "pattern": HOSTILE}]
    schema_checks = [
        {"type": "json", "schema": {"properties": {"key": {"pattern": HOSTILE}}}},
        {"type": "json", "schema": {"patternProperties": {HOSTILE: {}},
                                    "additionalProperties": False}},
        {"type": "json", "schema": {"properties": {"key": {"pattern": "^a+$"}}}},
    ]
    [texts, schemas] = grade_in_child(
        [{"id": "text", "prompt": "p", "checks": pattern_checks},
         {"id": "schema", "prompt": "p", "checks": schema_checks}], [answer, document])
    assert [passed for passed, _ in texts] == [False, True, False]
    assert texts[0][1] == f"no match for /{HOSTILE}/"
    assert texts[2][1] == f"notes.txt: no match for /{HOSTILE}/"
    assert [passed for passed, _ in schemas] == [False, False, True]
    assert "does not match '^(.+)+Q'" in schemas[0][1]
    assert "do not match any of the regexes: '^(.+)+Q'" in schemas[1][1]


# --- Python's meaning, kept ------------------------------------------------------------------

SAME_AS_RE = [
    (r"^KERNEL$", "im", "a\nkernel\nb"), (r"^KERNEL$", "", "a\nkernel\nb"),
    (r"kernel$", "", "kernel\nx"), (r"NAME\);?\s*\Z", "", "NAME);\n\n"), (r"\Z", "", "x\n"),
    (r"a{,3}b", "", "aab"), (r"a{,3}b", "", "a{,3}b"), (r"x{}", "", "x{}"), (r"a{2,}?", "", "aaa"),
    (r"[]a]", "", "]"), (r"[^]a]", "", "]"), (r"[[:alpha:]]", "", "b"), (r"[\d-]", "", "-"),
    (r"\N{EM DASH}", "", "a—b"), (r"\u00e9", "", "é"), (r"\101[\102]", "", "AB"),
    ("a b # comment\n c", "x", "abc"), ("a\\ b", "x", "a b"), ("[ ]", "x", " "),
    (r"(?x) a b", "", "ab"), (r"(?i)abc", "", "ABC"), (r"(?i:a)b", "", "AB"),
    (r"(?-i:a)b", "i", "AB"), (r"a(?#x)b", "", "ab"), (r".", "", "\n"), (r".", "s", "\n"),
    (r"(?s:.)", "", "\n"), (r"(?P<n>ab)+", "", "abab"), (r"\bnix\b", "i", "use Nix now"),
    (r"\bnix\b", "i", "unix"), (r"[\s\S]+", "", "a\nb"), (r"é", "i", "É"),
    (r"\w+", "", "héllo"), (r"\d+", "", "x٣٤"), (r"\s", "", "\u2003"), (r"\S+", "", "\xa0x"),
    (r"[^\d]+", "", "٣a"), (r"[a\W]+", "", "a-é"), (r"\$\d+(?:\.\d\d)?", "", "$12.50"),
]


@pytest.mark.filterwarnings("ignore:Possible nested set:FutureWarning")
@pytest.mark.parametrize(("pattern", "flags", "text"), SAME_AS_RE)
def test_a_pattern_matches_as_python_would(pattern: str, flags: str, text: str) -> None:
    bits = 0
    for letter in flags:
        bits |= {"i": re.I, "m": re.M, "s": re.S, "x": re.X}[letter]
    want = re.search(pattern, text, bits)
    got = compile_pattern(pattern, flags).search(text)
    assert (got and got.group(0)) == (want and want.group(0))


def test_an_end_anchor_before_a_final_newline_keeps_the_verdict() -> None:
    found = compile_pattern("kernel$").search("kernel\n")
    assert found is not None and found.group(0).rstrip("\n") == "kernel"
    assert compile_pattern("kernel$").search("kernel\nx") is None


def test_an_answer_with_lone_surrogates_is_searched() -> None:
    assert compile_pattern(r"a\d").search("\ud800a1").group(0) == "a1"  # type: ignore[union-attr]


# --- what RE2 cannot express ------------------------------------------------------------------

UNSAFE = [(r"(ab)\1", r"a backreference \1"), ("(?P<x>a)(?P=x)", "a backreference (?P=",
          ), ("a(?=b)", "a lookahead (?="), ("a(?!b)", "a lookahead (?!"),
          ("(?<=a)b", "a lookbehind (?<="), ("(?<!a)b", "a lookbehind (?<!"),
          ("(?>a)", "an atomic group"), ("a++", "a possessive repeat"),
          ("a{2000}", "a repeat count over 1000"), (r"(?a)\w", "the inline flag (?a)"),
          (r"[^\W\d]", "a negated class"), ("(a)?(?(1)b|c)", "a conditional group")]


@pytest.mark.parametrize(("pattern", "why"), UNSAFE)
def test_what_re2_cannot_express_is_named(pattern: str, why: str) -> None:
    with pytest.raises(UnsafePattern) as info:
        compile_pattern(pattern)
    assert why in info.value.why
    assert info.value.message.startswith(f"/{pattern}/ uses ")
    assert "python check" in (info.value.hint or "")


def test_an_in_process_grader_refuses_an_unsafe_pattern_with_its_reason() -> None:
    for kind in ("regex", "not_regex"):
        passed, why = compile_text(Regex.model_validate(
            {"type": "regex", "pattern": r"(a+)+\1Q"}).model_copy(update={"type": kind}))(LONG)
        assert passed is False
        assert why().startswith(r"refused: /(a+)+\1Q/ uses a backreference \1, which has no "
                                "linear-time match; hubskills runs such a pattern only in a "
                                "sandbox")


def grade(checks: list[dict[str, Any]], output: str, **kwargs: Any) -> list[CheckVerdict]:
    case = Case.model_validate({"id": "c", "prompt": "p", "checks": checks})
    return asyncio.run(run_checks(case, output, **kwargs))


LOOKAROUNDS = [{"type": "regex", "pattern": r"(ab)\1"},
               {"type": "not_regex", "pattern": r"x(?=y)"},
               {"type": "file_regex", "path": "a.py", "pattern": r"(?<=def )f\b"}]
ANSWER = "abab xy\n```a.py\ndef f(): pass\n```\n"


def test_an_unsafe_pattern_is_a_code_check_skipped_without_a_sandbox() -> None:
    assert has_code_checks([Case.model_validate({"id": "c", "prompt": "p",
                                                 "checks": LOOKAROUNDS[:1]})])
    assert not has_code_checks([Case.model_validate(
        {"id": "c", "prompt": "p", "checks": [{"type": "regex", "pattern": HOSTILE}]})])
    verdicts = grade(LOOKAROUNDS, ANSWER)
    assert all(v.passed is None and v.skipped for v in verdicts)
    assert verdicts[0].reason == (r"/(ab)\1/ uses a backreference \1, which has no linear-time "
                                  "match, so it runs only in a sandbox; code check left out: "
                                  "no sandbox was given")


def test_an_unsafe_pattern_runs_in_the_sandbox() -> None:
    verdicts = grade(LOOKAROUNDS, ANSWER, sandbox=bwrap_sandbox())
    assert [v.passed for v in verdicts] == [True, False, True]
    assert [v.reason for v in verdicts] == [
        r"/(ab)\1/ matched 'abab' (in the sandbox)", "/x(?=y)/ matched 'x' (in the sandbox)",
        r"a.py: /(?<=def )f\b/ matched 'f' (in the sandbox)"]
