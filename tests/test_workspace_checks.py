"""Workspace checks: the file checks read the final workspace without following links, `command`
runs in the real bubblewrap sandbox (no network, a copy of the workspace), chat answers are
graded through their fenced files, and upskill's verifiers import onto them.

The kernel-builder skill's agent-mode cases are graded in tests/test_example_agent_suite.py.
"""

from __future__ import annotations

import asyncio
import os
import socket
import threading
from pathlib import Path
from typing import Any

import pytest
from sandbox_required import bwrap_sandbox

from registry.errors import InvalidSuite
from registry.evaluation.checks import NO_SANDBOX, case_score, has_code_checks, run_checks
from registry.format.suite import Case, parse_suite
from registry.results.runs import CheckVerdict
from registry.sandbox import BwrapSandbox

TOML = """[general]
name = "fused_gelu"
backends = ["cuda"]

[general.cuda]
capabilities = ["9.0"]

[kernel.fused_gelu]
depends = ["torch"]
src = ["fused_gelu_cuda/fused_gelu.cu"]
"""
KERNEL = "#if __CUDA_ARCH__ >= 900\n  wgmma();\n#endif\n__global__ void fused_gelu() {}\n"


def grade(checks: list[dict[str, Any]], output: str = "", *, files: dict[str, str] | None = None,
          **kwargs: Any) -> list[CheckVerdict]:
    case = Case.model_validate({"id": "c1", "prompt": "Build the kernel.", "checks": checks,
                                "files": files or {}})
    return asyncio.run(run_checks(case, output, **kwargs))


def one(check: dict[str, Any], output: str = "", **kwargs: Any) -> CheckVerdict:
    [result] = grade([check], output, **kwargs)
    return result


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A finished workspace: a small kernel-builder project."""
    root = tmp_path / "ws"
    for name, text in {"build.toml": TOML, "fused_gelu_cuda/fused_gelu.cu": KERNEL,
                       "meta.json": '{"a": {"b": [1, true, "x"]}}',
                       "conf.yaml": "general:\n  cuda:\n    capabilities: ['9.0']\n"}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


@pytest.fixture
def sandbox() -> BwrapSandbox:
    return bwrap_sandbox()


# --- file_exists ------------------------------------------------------------------------------


def test_file_exists_plain_paths_list_and_globs(ws: Path) -> None:
    found = one({"type": "file_exists", "path": ["build.toml", "fused_gelu_cuda", "**/*.cu"]},
                workspace=ws)
    assert found.passed is True and "fused_gelu_cuda/fused_gelu.cu" in found.reason
    missing = one({"type": "file_exists", "path": ["build.toml", "torch-ext/a.cpp", "*.cu"]},
                  workspace=ws)
    assert missing.passed is False
    assert "torch-ext/a.cpp: no such file" in missing.reason
    assert "nothing matches *.cu" in missing.reason  # `*` stays in its folder; `**/` descends


def test_globs_never_match_the_skill_folders(ws: Path) -> None:
    skill = ws / ".agents" / "skills" / "k" / "examples"
    skill.mkdir(parents=True)
    (skill / "ref.cpp").write_text("// the skill's own example\n")
    result = one({"type": "file_exists", "path": "**/*.cpp"}, workspace=ws)
    assert result.passed is False
    (ws / "torch-ext").mkdir()
    (ws / "torch-ext" / "b.cpp").write_text("")
    assert one({"type": "file_exists", "path": "**/*.cpp"}, workspace=ws).passed is True


# --- file_contains, file_not_contains, file_regex ----------------------------------------------


def test_file_contains_needs_every_value_case_insensitive_by_default(ws: Path) -> None:
    check = {"type": "file_contains", "path": "build.toml", "value": ["BACKENDS", "9.0"]}
    assert one(check, workspace=ws).passed is True
    strict = one({**check, "case_sensitive": True}, workspace=ws)
    assert strict.passed is False and "lacks 'BACKENDS'" in strict.reason
    absent = one({**check, "path": "CMakeLists.txt"}, workspace=ws)
    assert (absent.passed, absent.reason) == (False, "CMakeLists.txt: no such file")


def test_file_not_contains_passes_only_on_an_existing_file_without_the_values(ws: Path) -> None:
    check = {"type": "file_not_contains", "path": "build.toml", "value": ["minver", "maxver"]}
    assert one(check, workspace=ws).passed is True
    found = one({**check, "value": "CAPABILITIES"}, workspace=ws)
    assert found.passed is False and "holds 'CAPABILITIES'" in found.reason
    assert one({**check, "path": "nothing.toml"}, workspace=ws).passed is False


def test_file_regex_with_flags(ws: Path) -> None:
    check = {"type": "file_regex", "path": "fused_gelu_cuda/fused_gelu.cu",
             "pattern": r"^#if __cuda_arch__ >= 900$", "flags": "im"}
    assert one(check, workspace=ws).passed is True
    assert one({**check, "flags": "m"}, workspace=ws).passed is False


def test_large_and_binary_files_fail_with_a_reason(ws: Path) -> None:
    (ws / "big.txt").write_bytes(b"x" * (4 * 1024 * 1024 + 1))
    (ws / "blob.bin").write_bytes(b"\xff\xfe\x00")
    big = one({"type": "file_contains", "path": "big.txt", "value": "x"}, workspace=ws)
    blob = one({"type": "file_contains", "path": "blob.bin", "value": "x"}, workspace=ws)
    assert (big.passed, big.reason) == (False, "big.txt is larger than 4 MiB")
    assert (blob.passed, blob.reason) == (False, "blob.bin is not UTF-8 text")


# --- file_parses --------------------------------------------------------------------------------


@pytest.mark.parametrize(("check", "passed"), [
    ({"path": "build.toml", "format": "toml"}, True),
    ({"path": "build.toml", "format": "toml", "key": "general.backends", "equals": ["cuda"]}, True),
    ({"path": "build.toml", "format": "toml", "key": "general.cuda.capabilities",
      "contains": "9.0"}, True),
    ({"path": "build.toml", "format": "toml", "key": "general.cuda.capabilities",
      "contains": ["8.0", "9.0"]}, False),
    ({"path": "build.toml", "format": "toml", "key": "general.name", "contains": "gelu"}, True),
    ({"path": "build.toml", "format": "toml", "key": "general", "contains": "cuda"}, True),
    ({"path": "build.toml", "format": "toml", "key": "general.cuda.capabilities",
      "equals": [9.0]}, False),  # "9.0" is a string in build.toml
    ({"path": "meta.json", "format": "json", "key": "a.b.1", "equals": True}, True),
    ({"path": "meta.json", "format": "json", "key": "a.b.1", "equals": 1}, False),
    ({"path": "meta.json", "format": "json", "key": "a.b", "contains": "x"}, True),
    ({"path": "conf.yaml", "format": "yaml", "key": "general.cuda.capabilities",
      "equals": ["9.0"]}, True),
    ({"path": "build.toml", "format": "json"}, False),
])
def test_file_parses(ws: Path, check: dict[str, Any], passed: bool) -> None:
    assert one({"type": "file_parses", **check}, workspace=ws).passed is passed


def test_file_parses_reasons_name_what_is_there(ws: Path) -> None:
    missing = one({"type": "file_parses", "path": "build.toml", "format": "toml",
                   "key": "general.hub.repo-id"}, workspace=ws)
    assert missing.passed is False
    assert missing.reason == "no key general.hub.repo-id: 'hub' missing at general " \
                             "(it has name, backends, cuda)"
    (ws / "bad.toml").write_text('[general]\nname = "x\n')
    bad = one({"type": "file_parses", "path": "bad.toml", "format": "toml"}, workspace=ws)
    assert bad.passed is False and bad.reason.startswith("bad.toml is not valid TOML: ")
    wrong = one({"type": "file_parses", "path": "build.toml", "format": "toml",
                 "key": "general.cuda.capabilities", "equals": ["8.0"]}, workspace=ws)
    assert wrong.reason == 'build.toml general.cuda.capabilities = ["9.0"]; expected it ' \
                           'equals ["8.0"]'


def test_yaml_aliases_are_refused(ws: Path) -> None:
    (ws / "bomb.yaml").write_text("a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n")
    result = one({"type": "file_parses", "path": "bomb.yaml", "format": "yaml"}, workspace=ws)
    assert result.passed is False and "aliases" in result.reason


# --- links the agent planted, and paths that leave the workspace ------------------------------


def test_a_planted_symlink_fails_and_its_target_is_never_read(tmp_path: Path, ws: Path) -> None:
    secret = tmp_path / "host-secret.txt"
    secret.write_text("hf_s3cretvalue capabilities")
    (ws / "notes.txt").symlink_to(secret)
    (ws / "linked").symlink_to(tmp_path, target_is_directory=True)
    checks = [{"type": "file_contains", "path": "notes.txt", "value": "hf_s3cretvalue"},
              {"type": "file_regex", "path": "linked/host-secret.txt", "pattern": "s3cret"},
              {"type": "file_parses", "path": "notes.txt", "format": "yaml"},
              {"type": "file_exists", "path": ["notes.txt"]},
              {"type": "file_exists", "path": "**/host-secret.txt"}]
    results = grade(checks, workspace=ws)
    assert [r.passed for r in results] == [False] * 5
    link = "notes.txt is a symbolic link (not followed)"
    assert [r.reason for r in results[:4]] == [
        link, "linked is a symbolic link (not followed)", link, link]
    assert results[4].reason == "nothing matches **/host-secret.txt"
    assert not any("s3cret" in r.reason.replace("/s3cret/", "") for r in results)


def test_a_fifo_fails_without_blocking(ws: Path) -> None:
    os.mkfifo(ws / "pipe.txt")
    result = one({"type": "file_contains", "path": "pipe.txt", "value": "x"}, workspace=ws)
    assert (result.passed, result.reason) == (False, "pipe.txt is not a regular file")


@pytest.mark.parametrize(("check", "field", "message"), [
    ({"type": "file_exists", "path": "../outside"}, "checks[0].path", "stay inside"),
    ({"type": "file_exists", "path": ["ok.txt", "/etc/passwd"]}, "checks[0].path", "relative"),
    ({"type": "file_contains", "path": "a/../../b", "value": "x"}, "checks[0].path", "inside"),
    ({"type": "file_regex", "path": "~/.ssh/id_rsa", "pattern": "x"}, "checks[0].path", "~"),
    ({"type": "file_parses", "path": "C:\\x.toml", "format": "toml"}, "checks[0].path", "drive"),
    ({"type": "file_contains", "path": "*.cu", "value": "x"}, "checks[0].path", "wildcards"),
    ({"type": "file_parses", "path": "a.toml", "format": "ini"}, "checks[0].format", "json"),
    ({"type": "file_parses", "path": "a.toml", "format": "toml", "key": "a..b"}, "checks[0].key",
     "dotted"),
    ({"type": "file_parses", "path": "a.toml", "format": "toml", "equals": 1, "contains": 1},
     "checks[0]", "not both"),
    ({"type": "command", "command": "true", "timeout_s": 0}, "checks[0].timeout_s", "greater"),
    ({"type": "command", "command": "true", "output_contains": []}, "checks[0].output_contains",
     "non-empty"),
])
def test_bad_workspace_checks_are_refused_at_suite_load(check: dict[str, Any], field: str,
                                                        message: str) -> None:
    with pytest.raises(InvalidSuite) as err:
        parse_suite({"cases": [{"id": "k", "prompt": "p", "checks": [check]}]})
    assert f"case 1 ('k'): field {field}: " in err.value.message
    assert message in err.value.message


# --- command: in the real sandbox -------------------------------------------------------------


def test_command_passes_on_exit_0_and_output_contains(sandbox: BwrapSandbox, ws: Path) -> None:
    read = ("python3 -c \"import tomllib; print(tomllib.load(open('build.toml', 'rb'))"
            "['general']['cuda']['capabilities'])\"")
    ok = one({"type": "command", "command": read, "output_contains": "9.0"}, workspace=ws,
             sandbox=sandbox)
    assert (ok.passed, ok.reason) == (True, "exit 0, output holds '9.0'")
    lacks = one({"type": "command", "command": read, "output_contains": ["9.0", "8.0"]},
                workspace=ws, sandbox=sandbox)
    assert lacks.passed is False and "lacks '8.0'" in lacks.reason and "['9.0']" in lacks.reason
    failed = one({"type": "command", "command": "test -f CMakeLists.txt"}, workspace=ws,
                 sandbox=sandbox)
    assert (failed.passed, failed.reason) == (False, "exit 1")


def test_command_works_on_a_copy_and_sees_no_skill_folder(sandbox: BwrapSandbox,
                                                          ws: Path) -> None:
    (ws / ".agents" / "skills" / "k").mkdir(parents=True)
    (ws / ".agents" / "skills" / "k" / "SKILL.md").write_text("skill")
    checks = [{"type": "command", "command": "rm build.toml && echo gone > new.txt"},
              {"type": "command", "command": "test ! -e .agents/skills/k/SKILL.md"}]
    assert [r.passed for r in grade(checks, workspace=ws, sandbox=sandbox)] == [True, True]
    assert (ws / "build.toml").read_text() == TOML and not (ws / "new.txt").exists()


def test_command_has_no_network(sandbox: BwrapSandbox, ws: Path) -> None:
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    threading.Thread(target=lambda: server.accept(), daemon=True).start()
    try:
        dial = (f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 3);"
                f" print('connected')\"")
        result = one({"type": "command", "command": dial}, workspace=ws, sandbox=sandbox)
    finally:
        server.close()
    assert result.passed is False and "connected" not in result.reason.replace("connect(", "")
    assert "ConnectionRefusedError" in result.reason


def test_command_times_out(sandbox: BwrapSandbox, ws: Path) -> None:
    result = one({"type": "command", "command": "sleep 30", "timeout_s": 1}, workspace=ws,
                 sandbox=sandbox)
    assert (result.passed, result.reason) == (False, "timed out after 1s")


def test_missing_tool_or_sandbox_skips_the_command_never_passes(sandbox: BwrapSandbox,
                                                               ws: Path) -> None:
    check = {"type": "command", "command": "nvcc -c k.cu", "requires": ["nvcc-hubskills-x"]}
    tool = one(check, workspace=ws, sandbox=sandbox)
    assert (tool.passed, tool.skipped) == (None, True)
    assert tool.reason == "nvcc-hubskills-x not found in the sandbox; check skipped"
    nobox = one(check, workspace=ws)
    assert (nobox.passed, nobox.skipped, nobox.reason) == (None, True, NO_SANDBOX)
    graded = grade([check, {"type": "file_exists", "path": "build.toml"}], workspace=ws)
    assert case_score(graded) == (True, 1.0)  # the skipped check counts for neither
    assert has_code_checks([Case.model_validate({"id": "a", "prompt": "p", "checks": [check]})])


# --- chat mode: the answer's fenced files ------------------------------------------------------

ANSWER = """Here is the project.

**build.toml**
```toml
{toml}```

```cuda fused_gelu_cuda/fused_gelu.cu
{kernel}```
"""


def test_chat_answers_are_graded_through_their_fenced_files(sandbox: BwrapSandbox) -> None:
    checks = [{"type": "file_parses", "path": "build.toml", "format": "toml",
               "key": "general.cuda.capabilities", "contains": "9.0"},
              {"type": "file_regex", "path": "fused_gelu_cuda/fused_gelu.cu",
               "pattern": r"__CUDA_ARCH__\s*>=\s*900"},
              {"type": "file_exists", "path": ["data/input.txt", "**/*.cu"]},
              {"type": "command", "command": "cat data/input.txt && ls fused_gelu_cuda",
               "output_contains": ["seeded", "fused_gelu.cu"]},
              {"type": "contains", "value": "the project"}]
    files = {"data/input.txt": "seeded by the case\n"}
    answer = ANSWER.format(toml=TOML, kernel=KERNEL)
    right = grade(checks, answer, files=files, sandbox=sandbox)
    assert [r.passed for r in right] == [True] * 5, [r.reason for r in right]
    wrong = ANSWER.format(toml=TOML.replace('"9.0"', '"8.0"'), kernel="__global__ void k();\n")
    assert [r.passed for r in grade(checks, wrong, files=files, sandbox=sandbox)] == [
        False, False, True, True, True]
    prose = grade(checks[:3], "Set capabilities to 9.0 and guard with __CUDA_ARCH__ >= 900.")
    assert [r.reason for r in prose] == ["build.toml: no such file",
                                         "fused_gelu_cuda/fused_gelu.cu: no such file",
                                         "data/input.txt: no such file; nothing matches **/*.cu"]


def test_chat_workspace_is_removed_after_grading(tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    answer = ANSWER.format(toml=TOML, kernel=KERNEL)
    one({"type": "file_exists", "path": "build.toml"}, answer, sandbox_root=scratch)
    assert list(scratch.iterdir()) == []


# --- validate, and upskill's verifiers ---------------------------------------------------------


def test_validate_reports_a_bad_agent_suite_at_its_case(tmp_path: Path) -> None:
    from registry.format.suite_check import check_suite

    folder = tmp_path / "k-facts"
    (folder / "evals").mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: k-facts\ndescription: Facts. Use when building "
                                     "kernels.\n---\nUse sm_90.\n")
    (folder / "evals" / "agent.json").write_text(
        '{"cases": [\n  {"id": "ok", "prompt": "p", "checks": [{"type": "command", '
        '"command": "true"}]},\n  {"id": "out", "prompt": "p", "checks": [{"type": '
        '"file_exists", "path": "../../etc/passwd"}]}\n]}\n')
    [problem] = check_suite(folder)
    assert (problem.code, problem.file, problem.line) == ("invalid-suite", "evals/agent.json", 3)
    assert problem.message.startswith("case 2 ('out'): field checks[0].path: path ")


UPSKILL = {"cases": [
    {"id": "project", "input": "Create the kernel-builder project.",
     "verifiers": [
         {"type": "file_exists", "path": "build.toml"},
         {"type": "file_contains", "path": "build.toml", "contains": ["9.0", "cuda"]},
         {"type": "file_contains", "path": "k.cu", "pattern": r"__CUDA_ARCH__\s*>=\s*900"},
         {"type": "command", "command": "python3 -m pytest -q", "timeout": 120},
         {"type": "command", "run": "grep -q cudaMalloc k.cu", "expect_exit": 1,
          "output_contains": "x"},
         {"type": "screenshot_matches", "path": "ui.png"},
         {"type": "file_contains", "path": "build.toml"}]},
    {"id": "both", "input": "Say 9.0 and write it.", "expected": {"contains": "9.0"},
     "verifiers": [{"type": "file_exists", "path": ["a.txt", "b/*.txt"]}]},
]}


def test_upskill_verifiers_import_as_workspace_checks_and_the_rest_is_warned() -> None:
    suite = parse_suite(UPSKILL)
    assert suite.shape == "upskill"
    dumped = [c.model_dump(mode="json", exclude_unset=True) for c in suite.cases[0].checks]
    assert dumped == [
        {"type": "file_exists", "path": "build.toml"},
        {"type": "file_contains", "path": "build.toml", "value": ["9.0", "cuda"],
         "case_sensitive": True},
        {"type": "file_regex", "path": "k.cu", "pattern": r"__CUDA_ARCH__\s*>=\s*900"},
        {"type": "command", "command": "python3 -m pytest -q", "timeout_s": 120},
        {"type": "command", "command": "( grep -q cudaMalloc k.cu ); test $? -eq 1",
         "output_contains": "x"}]
    assert [c.type for c in suite.cases[1].checks] == ["contains", "file_exists"]
    assert suite.warnings == [
        "case 1 ('project'): verifier 6 ('screenshot_matches') has no hubskills equivalent: "
        "left out; add a workspace check by hand",
        "case 1 ('project'): verifier 7 ('file_contains') has no hubskills equivalent: "
        "left out; add a workspace check by hand"]


def test_imported_verifiers_grade_a_workspace(sandbox: BwrapSandbox, ws: Path) -> None:
    case = parse_suite({"cases": [{"input": "Build it.", "verifiers": [
        {"type": "file_exists", "path": "build.toml"},
        {"type": "file_contains", "path": "build.toml", "contains": "capabilities"},
        {"type": "command", "run": "grep -q cudaMalloc fused_gelu_cuda/fused_gelu.cu",
         "expect_exit": 1}]}]}).cases[0]
    results = asyncio.run(run_checks(case, "", sandbox=sandbox, workspace=ws))
    assert [r.passed for r in results] == [True, True, True]
    (ws / "fused_gelu_cuda" / "fused_gelu.cu").write_text("cudaMalloc(&p, n);\n")
    results = asyncio.run(run_checks(case, "", sandbox=sandbox, workspace=ws))
    assert [r.passed for r in results] == [True, True, False]


@pytest.mark.parametrize(("verifiers", "message"), [
    ([{"type": "file_exists", "path": "/etc/passwd"}], "field checks[0].path"),
    ({"type": "file_exists"}, "field verifiers: expected a list"),
    ([], "field expected.contains: one or more strings required"),
])
def test_bad_upskill_verifiers_are_refused(verifiers: Any, message: str) -> None:
    with pytest.raises(InvalidSuite) as err:
        parse_suite({"cases": [{"id": "v", "input": "Do it.", "verifiers": verifiers}]})
    assert "case 1 ('v'): " + message in err.value.message
