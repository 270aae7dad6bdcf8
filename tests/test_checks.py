"""Tests for registry.evaluation.checks: every check type, files, sandboxing, scoring.

Code checks (`python`, `exec`) run in the bwrap sandbox (`sandbox` fixture: skipped without
bubblewrap, failed under HUBSKILLS_REQUIRE_SANDBOX=1); the escapes are in test_sandbox_escapes.
"""

from __future__ import annotations

import asyncio
import shutil
import textwrap
from pathlib import Path
from typing import Any

import pytest
from sandbox_required import bwrap_sandbox

from registry.errors import ProviderError
from registry.evaluation.checks import NO_SANDBOX, case_score, extract_files, run_checks
from registry.format.suite import Case
from registry.results.runs import CheckVerdict
from registry.sandbox import BwrapSandbox


def grade(checks: list[dict[str, Any]], output: str, **kwargs: Any) -> list[CheckVerdict]:
    """Run `checks` (and any `assertions=` given) over `output` in a fresh event loop."""
    assertions = kwargs.pop("assertions", [])
    case = Case.model_validate(
        {"id": "c1", "prompt": "Write the kernel.", "checks": checks, "assertions": assertions}
    )
    return asyncio.run(run_checks(case, output, **kwargs))


def one(check: dict[str, Any], output: str, **kwargs: Any) -> CheckVerdict:
    [result] = grade([check], output, **kwargs)
    return result


@pytest.fixture
def sandbox() -> BwrapSandbox:
    return bwrap_sandbox()


def python_check(body: str, timeout: float = 10) -> dict[str, Any]:
    code = "def check(output, files):\n" + textwrap.indent(textwrap.dedent(body), "    ")
    return {"type": "python", "code": code, "timeout": timeout}


# --- substring, pattern and equality checks -------------------------------------------------


def test_contains_all_values_case_insensitive_by_default() -> None:
    result = one({"type": "contains", "value": ["SM_90", "wgmma"]}, "Use sm_90 and WGMMA.")
    assert result.passed is True
    assert (result.type, result.label, result.weight, result.skipped) == (
        "contains", "contains", 1.0, False,
    )


def test_contains_failure_names_every_missing_value() -> None:
    result = one({"type": "contains", "value": ["sm_90", "tma", "wgmma"]}, "only sm_90 here")
    assert result.passed is False
    assert "'tma'" in result.reason and "'wgmma'" in result.reason
    assert "sm_90" not in result.reason


def test_contains_case_sensitive() -> None:
    check = {"type": "contains", "value": "CUDA", "case_sensitive": True}
    assert one(check, "uses CUDA").passed is True
    failed = one(check, "uses cuda")
    assert failed.passed is False and "'CUDA'" in failed.reason


def test_icontains_is_always_insensitive() -> None:
    assert one({"type": "icontains", "value": "Hello"}, "HELLO world").passed is True
    assert one({"type": "icontains", "value": "bye"}, "HELLO world").passed is False


def test_contains_any() -> None:
    check = {"type": "contains_any", "value": ["fp8", "bfloat16"]}
    passed = one(check, "cast to BFloat16")
    assert passed.passed is True and "'bfloat16'" in passed.reason and "fp8" not in passed.reason
    failed = one(check, "cast to float32")
    assert failed.passed is False and "'fp8', 'bfloat16'" in failed.reason


def test_not_contains_names_the_value_found() -> None:
    check = {"type": "not_contains", "value": ["TODO", "FIXME"]}
    assert one(check, "finished code").passed is True
    failed = one(check, "x = 1  # todo later")
    assert failed.passed is False and "'TODO'" in failed.reason and "FIXME" not in failed.reason


def test_not_contains_case_sensitive() -> None:
    check = {"type": "not_contains", "value": "TODO", "case_sensitive": True}
    assert one(check, "a todo list").passed is True


def test_regex_searches_anywhere_with_flags() -> None:
    check = {"type": "regex", "pattern": r"__global__\s+void\s+(\w+)"}
    passed = one(check, "The kernel:\n__global__ void scale(float* x)")
    assert passed.passed is True and "__global__ void scale" in passed.reason
    assert one(check, "no kernel here").passed is False
    assert one({"type": "regex", "pattern": "^KERNEL$", "flags": "im"}, "a\nkernel\nb").passed
    assert one({"type": "regex", "pattern": "^KERNEL$"}, "a\nkernel\nb").passed is False


def test_not_regex() -> None:
    check = {"type": "not_regex", "pattern": r"cudaMalloc\w*"}
    assert one(check, "uses torch.empty").passed is True
    failed = one(check, "call cudaMallocManaged(&p, n)")
    assert failed.passed is False and "cudaMallocManaged" in failed.reason


def test_equals_strips_and_is_case_sensitive_by_default() -> None:
    assert one({"type": "equals", "value": "42"}, "  42\n").passed is True
    failed = one({"type": "equals", "value": "Yes"}, "yes")
    assert failed.passed is False and "'Yes'" in failed.reason and "'yes'" in failed.reason
    assert one({"type": "equals", "value": "Yes", "case_sensitive": False}, " YES ").passed
    assert one({"type": "equals", "value": "42", "strip": False}, "42\n").passed is False


# --- json -----------------------------------------------------------------------------------

SCHEMA = {
    "type": "object",
    "properties": {"arch": {"type": "string"}, "sm": {"type": "integer"}},
    "required": ["arch", "sm"],
}


@pytest.mark.parametrize(
    "output",
    [
        '{"arch": "hopper", "sm": 90}',
        'Here it is:\n```json\n{"arch": "hopper", "sm": 90}\n```\nDone.',
        'Result:\n```\n{"arch": "hopper", "sm": 90}\n```',
    ],
)
def test_json_whole_output_or_fenced_block_matching_schema(output: str) -> None:
    result = one({"type": "json", "schema": SCHEMA}, output)
    assert result.passed is True, result.reason


def test_json_prefers_the_json_block() -> None:
    output = "```python\nprint(1)\n```\n```json\n[1, 2]\n```"
    assert one({"type": "json"}, output).passed is True


def test_json_invalid() -> None:
    result = one({"type": "json"}, "{'arch': hopper}")
    assert result.passed is False and "no valid JSON" in result.reason


def test_json_schema_error_is_reported() -> None:
    result = one({"type": "json", "schema": SCHEMA}, '{"arch": "hopper", "sm": "ninety"}')
    assert result.passed is False
    assert "$.sm" in result.reason and "'ninety' is not of type 'integer'" in result.reason


# --- scoring --------------------------------------------------------------------------------


def result(passed: bool | None, weight: float = 1.0, skipped: bool = False) -> CheckVerdict:
    return CheckVerdict(type="contains", label="x", passed=passed, weight=weight, skipped=skipped)


def test_case_score_is_the_weighted_share() -> None:
    results = grade(
        [
            {"type": "contains", "value": "a"},
            {"type": "contains", "value": "zzz", "weight": 2},
            {"type": "contains", "value": "c", "name": "has c"},
        ],
        "a b c",
    )
    assert [r.passed for r in results] == [True, False, True]
    assert [r.weight for r in results] == [1.0, 2.0, 1.0]
    assert results[2].label == "has c"
    assert case_score(results) == (False, 0.5)


def test_case_score_all_passed() -> None:
    assert case_score([result(True), result(True, 3)]) == (True, 1.0)


def test_skipped_checks_are_excluded_from_the_score() -> None:
    results = [result(True), result(False, 2), result(None, 5, skipped=True)]
    assert case_score(results) == (False, pytest.approx(1 / 3))
    assert case_score([result(True), result(None, 5, skipped=True)]) == (True, 1.0)


def test_every_check_skipped_gives_no_verdict() -> None:
    assert case_score([result(None, skipped=True)]) == (None, 0.0)
    assert case_score([]) == (None, 0.0)


def test_an_erroring_check_makes_the_case_an_error() -> None:
    passed, score = case_score([result(True), result(None)])
    assert passed is None and score == 1.0


# --- extract_files --------------------------------------------------------------------------

KERNEL = "__global__ void k(float* x) { x[0] = 1; }"


@pytest.mark.parametrize(
    "output",
    [
        f'```python title="kernel.cu"\n{KERNEL}\n```',
        f"```cuda {{filename=kernel.cu}}\n{KERNEL}\n```",
        f"```cuda kernel.cu\n{KERNEL}\n```",
        f"```cuda:kernel.cu\n{KERNEL}\n```",
        f"```kernel.cu\n{KERNEL}\n```",
        f"**kernel.cu**\n```cuda\n{KERNEL}\n```",
        f"**File: kernel.cu**\n\n```cuda\n{KERNEL}\n```",
        f"File: kernel.cu\n```cuda\n{KERNEL}\n```",
        f"# kernel.cu\n```cuda\n{KERNEL}\n```",
        f"### `kernel.cu`\n```cuda\n{KERNEL}\n```",
        f"`kernel.cu`:\n```cuda\n{KERNEL}\n```",
        f"Some text.\n\n~~~cuda kernel.cu\n{KERNEL}\n~~~\n",
        f"1. The kernel:\n   ```cuda kernel.cu\n   {KERNEL}\n   ```",
    ],
)
def test_extract_files_conventions(output: str) -> None:
    assert extract_files(output) == {"kernel.cu": KERNEL + "\n"}


@pytest.mark.parametrize(
    ("first_line", "name"),
    [("// kernel.cu", "kernel.cu"), ("# file: build.toml", "build.toml"),
     ("/* src/k.cu */", "src/k.cu"), ("-- schema.sql", "schema.sql")],
)
def test_extract_files_first_line_comment(first_line: str, name: str) -> None:
    output = f"Here:\n```\n{first_line}\nbody\n```"
    assert extract_files(output) == {name: f"{first_line}\nbody\n"}


def test_extract_files_ignores_unnamed_blocks_and_prose() -> None:
    output = (
        "Here is the code:\n```python\n#!/usr/bin/env python\nprint(1)\n```\n"
        "e.g.\n```c\n#include <stdio.h>\n```\n```python 3.11.\nx\n```"
    )
    assert extract_files(output) == {}


def test_extract_files_later_blocks_win_and_paths_are_normalised() -> None:
    output = "```py ./pkg/a.py\nold\n```\ntext\n```py pkg/a.py\nnew\n```\n```b.txt\n```"
    assert extract_files(output) == {"pkg/a.py": "new\n", "b.txt": ""}


def test_extract_files_longer_fences_nest() -> None:
    output = "````markdown README.md\n# Title\n```bash\nls\n```\n````\n"
    assert extract_files(output) == {"README.md": "# Title\n```bash\nls\n```\n"}


@pytest.mark.parametrize(
    "header",
    ["```python ../x.py", "```python /etc/passwd", "```python a\\b.py", "```c:/x.py",
     "**../../etc/cron.d/x**\n```", f"```py {'a' * 201}.py", "```\n// ../escape.py"],
)
def test_extract_files_ignores_hostile_names(header: str) -> None:
    assert extract_files(f"{header}\nboom\n```\n```ok.py\nfine\n```") == {"ok.py": "fine\n"}


def test_extract_files_deeply_indented_fence() -> None:
    output = "- step\n    - nested\n      ```py a.py\n      if x:\n          y()\n      ```\n"
    assert extract_files(output) == {"a.py": "if x:\n    y()\n"}


def test_extract_files_survives_pathological_lines() -> None:
    output = "." * 20000 + " \n```" + " " * 20000 + "x\n" + "/" * 20000 + "\n```\n"
    assert extract_files(output) == {}


def test_extract_files_unclosed_fence_runs_to_the_end() -> None:
    assert extract_files("```py a.py\nx = 1\ny = 2") == {"a.py": "x = 1\ny = 2\n"}


# --- python checks --------------------------------------------------------------------------

MODEL_OUTPUT = f"Kernel:\n```cuda kernel.cu\n{KERNEL}\n```\n"


def test_python_check_passes_and_fails(sandbox) -> None:
    passed = one(python_check("return 'kernel' in output.lower()"), MODEL_OUTPUT, sandbox=sandbox)
    assert passed.passed is True
    failed = one(python_check("return False"), MODEL_OUTPUT, sandbox=sandbox)
    assert failed.passed is False and failed.reason


def test_python_check_reason_tuple(sandbox) -> None:
    result = one(python_check("return False, f'{len(files)} file(s), no launch'"), MODEL_OUTPUT,
                 sandbox=sandbox)
    assert (result.passed, result.reason) == (False, "1 file(s), no launch")
    assert one(python_check("return (True, 'ok')"), "x", sandbox=sandbox).reason == "ok"


def test_python_check_exception_fails_with_its_text(sandbox) -> None:
    result = one(python_check("raise ValueError('bad launch config')"), "x", sandbox=sandbox)
    assert result.passed is False
    assert result.reason == "ValueError: bad launch config"


def test_python_check_wrong_return_type_fails(sandbox) -> None:
    result = one(python_check("return 'yes'"), "x", sandbox=sandbox)
    assert result.passed is False and "expected a bool" in result.reason


def test_python_check_prints_do_not_break_the_verdict(sandbox) -> None:
    result = one(python_check("print('debug', output)\nreturn True"), "x", sandbox=sandbox)
    assert result.passed is True


def test_python_check_infinite_loop_times_out(sandbox) -> None:
    result = one(python_check("while True:\n    pass", timeout=1), "x", sandbox=sandbox)
    assert (result.passed, result.reason) == (False, "timed out after 1s")


def test_python_check_has_no_network(sandbox) -> None:
    body = """
    import socket
    return [socket.if_nameindex(), socket.getaddrinfo("huggingface.co", 443)]
    """
    result = one(python_check(body), "x", sandbox=sandbox)
    assert result.passed is False and result.reason.startswith("gaierror"), result.reason


def test_python_check_memory_is_capped(sandbox) -> None:
    result = one(python_check("data = bytearray(4 * 1024 ** 3)\nreturn True"), "x",
                 sandbox=sandbox)
    assert result.passed is False and "MemoryError" in result.reason


def test_python_check_sees_the_models_files_only(sandbox) -> None:
    body = """
    import os
    on_disk = open("kernel.cu").read()
    return files == {"kernel.cu": on_disk} and sorted(os.listdir(".")) == ["kernel.cu"]
    """
    assert one(python_check(body), MODEL_OUTPUT, sandbox=sandbox).passed is True


def test_python_check_environment_has_no_secrets_and_a_home_of_its_own(
    sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_TOKEN", "hf_secret")
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy:3128")
    body = """
    import os
    leaked = {"HF_TOKEN", "HTTPS_PROXY"} & set(os.environ)
    return not leaked and os.environ["HOME"] == "/tmp/home", str(sorted(os.environ))
    """
    result = one(python_check(body), "x", sandbox=sandbox)
    assert result.passed is True, result.reason


def test_sandbox_folders_are_removed(sandbox, tmp_path: Path) -> None:
    root = tmp_path / "sandboxes"
    root.mkdir()
    results = grade(
        [python_check("return True"), {"type": "exec", "command": "python3 -c pass"}],
        MODEL_OUTPUT, sandbox_root=root, sandbox=sandbox,
    )
    assert [r.passed for r in results] == [True, True]
    assert list(root.iterdir()) == []


# --- exec checks ----------------------------------------------------------------------------

CONFIG_OUTPUT = "Config:\n```toml build.toml\n[general]\nname = 'relu'\n```\n"
READ_CONFIG = "python3 -c \"import sys; sys.exit(0 if 'relu' in open('build.toml').read() else 3)\""


def test_exec_passes_on_the_expected_exit_code(sandbox) -> None:
    result = one({"type": "exec", "command": READ_CONFIG}, CONFIG_OUTPUT, sandbox=sandbox)
    assert result.passed is True and result.reason.startswith("exit 0")


def test_exec_fails_on_another_exit_code_with_output_tail(sandbox) -> None:
    command = ["python3", "-c", "import sys; print('compiling'); sys.exit('error: no relu')"]
    result = one({"type": "exec", "command": command}, CONFIG_OUTPUT, sandbox=sandbox)
    assert result.passed is False
    assert "exit 1 (expected 0)" in result.reason
    assert "stdout: compiling" in result.reason and "stderr: error: no relu" in result.reason


def test_exec_expect_exit(sandbox) -> None:
    check = {"type": "exec", "command": READ_CONFIG, "expect_exit": 3}
    assert one(check, "```toml build.toml\nname = 'gelu'\n```", sandbox=sandbox).passed is True
    assert one(check, CONFIG_OUTPUT, sandbox=sandbox).passed is False


def test_exec_missing_executable_is_skipped(sandbox) -> None:
    result = one({"type": "exec", "command": "hubskills-no-such-tool --check"}, "x",
                 sandbox=sandbox)
    assert (result.passed, result.skipped) == (None, True)
    assert result.reason == "hubskills-no-such-tool not found on PATH; check skipped"
    assert case_score([result]) == (None, 0.0)


def test_exec_requires_are_checked_on_path(sandbox) -> None:
    check = {"type": "exec", "command": "python3 -c pass", "requires": ["hubskills-no-cc"]}
    reason = one(check, "x", sandbox=sandbox).reason
    assert reason == "hubskills-no-cc not found on PATH; check skipped"


def test_exec_nvcc_runs_or_is_skipped(sandbox) -> None:
    check = {"type": "exec", "command": "nvcc -c kernel.cu -o kernel.o", "requires": ["nvcc"],
             "timeout": 120}
    result = one(check, MODEL_OUTPUT, sandbox=sandbox)
    if shutil.which("nvcc") is None:
        assert (result.passed, result.skipped) == (None, True)
        assert result.reason == "nvcc not found on PATH; check skipped"
    else:
        assert (result.passed, result.skipped) == (True, False), result.reason


def test_exec_nvcc_is_skipped_without_nvcc(
    sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty PATH: no compiler on this "machine"
    result = one({"type": "exec", "command": "nvcc -c kernel.cu"}, MODEL_OUTPUT,
                 sandbox=sandbox)
    assert (result.passed, result.skipped, result.reason) == (
        None, True, "nvcc not found on PATH; check skipped",
    )


def test_exec_times_out(sandbox) -> None:
    check = {"type": "exec", "command": "python3 -c 'import time; time.sleep(60)'", "timeout": 1}
    result = one(check, "x", sandbox=sandbox)
    assert (result.passed, result.reason) == (False, "timed out after 1s")


def test_exec_environment_is_stripped(sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    command = ["python3", "-c", "import os, sys; sys.exit('OPENAI_API_KEY' in os.environ)"]
    assert one({"type": "exec", "command": command}, "x", sandbox=sandbox).passed is True


def test_exec_bad_command_fails(sandbox) -> None:
    result = one({"type": "exec", "command": "python3 -c 'unbalanced"}, "x", sandbox=sandbox)
    assert result.passed is False and "invalid command" in result.reason


def test_exec_absolute_path_goes_through_the_requires_test(sandbox, tmp_path: Path) -> None:
    tool = tmp_path / "tool.sh"  # on the host, outside anything the sandbox can see
    tool.write_text(f"#!/bin/sh\ntouch {tmp_path}/ran\n")
    tool.chmod(0o755)
    result = one({"type": "exec", "command": [str(tool)]}, "x", sandbox=sandbox)
    assert (result.passed, result.skipped) == (None, True)
    assert result.reason == f"{tool} not found in the sandbox; check skipped"
    required = {"type": "exec", "command": ["/bin/sh", "-c", "true"], "requires": ["no-cc-x"]}
    assert one(required, "x", sandbox=sandbox).skipped is True
    assert not (tmp_path / "ran").exists()


def test_exec_absolute_path_runs_inside_the_sandbox(sandbox, tmp_path: Path) -> None:
    target = tmp_path / "written-by-exec"
    command = ["/bin/sh", "-c", f"echo x > {target}"]
    result = one({"type": "exec", "command": command}, "x", sandbox=sandbox)
    assert result.passed is False and "exit 2" in result.reason  # no such folder inside
    assert not target.exists()


# --- without a sandbox, code never runs -----------------------------------------------------


def test_code_checks_without_a_sandbox_are_skipped_and_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    results = grade(
        [python_check(f"open({str(marker)!r}, 'w').write('x')\nreturn True"),
         {"type": "exec", "command": ["/bin/sh", "-c", f"touch {marker}"]},
         {"type": "contains", "value": "x"}], "x")
    assert [(r.passed, r.skipped, r.reason) for r in results[:2]] == [(None, True, NO_SANDBOX)] * 2
    assert case_score(results) == (True, 1.0)
    custom = grade([python_check("return True")], "x", skip_reason="left out: --skip-code-checks")
    assert custom[0].reason == "left out: --skip-code-checks"
    assert not marker.exists()


# --- judge checks and assertions ------------------------------------------------------------


class ScriptedJudge:
    """A judge that passes a rubric when its scripted keyword is in the output."""

    def __init__(self, keywords: dict[str, str]) -> None:
        self.keywords = keywords
        self.seen: list[tuple[str, str, str]] = []

    async def __call__(self, rubric: str, prompt: str, output: str) -> tuple[bool, str]:
        self.seen.append((rubric, prompt, output))
        if rubric == "explode":
            raise ProviderError("judge model unavailable", status=503)
        keyword = self.keywords[rubric]
        return keyword in output, f"looked for {keyword}"


def test_judge_checks_and_assertions_go_through_the_judge() -> None:
    judge = ScriptedJudge({"explains tiling": "tile", "mentions occupancy": "occupancy",
                           "Uses shared memory": "__shared__"})
    results = grade(
        [{"type": "judge", "rubric": "explains tiling", "weight": 2},
         {"type": "judge", "rubric": "mentions occupancy", "name": "occupancy"}],
        "We tile the matrix into __shared__ memory.",
        assertions=["Uses shared memory"], judge=judge,
    )
    assert [(r.type, r.label, r.passed) for r in results] == [
        ("judge", "judge", True), ("judge", "occupancy", False),
        ("assertion", "Uses shared memory", True),
    ]
    assert results[1].reason == "looked for occupancy"
    assert case_score(results) == (False, 0.75)
    assert sorted(judge.seen)[0] == (
        "Uses shared memory", "Write the kernel.", "We tile the matrix into __shared__ memory.",
    )


def test_without_a_judge_judged_items_are_skipped() -> None:
    results = grade([{"type": "judge", "rubric": "clear"}, {"type": "contains", "value": "a"}],
                    "a", assertions=["is polite"])
    assert [(r.passed, r.skipped, r.reason) for r in results] == [
        (None, True, "no --judge model given"), (True, False, "found 'a'"),
        (None, True, "no --judge model given"),
    ]
    assert case_score(results) == (True, 1.0)


def test_a_judge_error_makes_the_case_an_error() -> None:
    results = grade([{"type": "contains", "value": "a"}], "a", assertions=["explode"],
                    judge=ScriptedJudge({}))
    assert (results[1].passed, results[1].skipped) == (None, False)
    assert results[1].reason == "judge error: judge model unavailable"
    assert case_score(results) == (None, 1.0)
