"""`hubskills eval skills/kernel-builder-cuda-kernels --mode agent` end to end, as users run it:
the CLI in its own process, real bubblewrap, a scripted model on 127.0.0.1 that does the
kernel-builder cases right only after reading the skill's SKILL.md. Once through hubskills' own
agent loop, once through the real Claude Code CLI (`--harness claude-code`)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from space.transcripts import transcript_cases, transcript_pair
from tests.agent_clis_required import agent_cli
from tests.cli_process import REPO_ROOT, hubskills, runs
from tests.fakes.kernel_script import CASE_IDS, SKILL_NAME, KernelHarnessServer, KernelScript
from tests.fakes.openai_server import FakeOpenAIServer
from tests.sandbox_required import bwrap_sandbox

SKILL = REPO_ROOT / "skills" / SKILL_NAME
#: The check each case's baseline fails: the fact only SKILL.md gave the skill arm.
BASELINE_FAILS = {"torch-binding": ["REGISTER_EXTENSION last"], "a100-too": ["A100 built"]}


def _eval(*args: str, **env: str):
    """`hubskills eval` of the two cases in agent mode, one run each."""
    return hubskills("eval", SKILL, "--mode", "agent", "--cases", ",".join(CASE_IDS),
                     "--runs", "1", "-v", *args, **env)


def _rows(run_id: str) -> list[dict[str, Any]]:
    path = Path(os.environ["HUBSKILLS_HOME"]) / "runs" / run_id / "rows.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def _failed(row: dict[str, Any]) -> list[str]:
    return [c["label"] for c in row["checks"] if not c["passed"]]


def _assert_rows(rows: list[dict[str, Any]], protocol: str) -> None:
    """Both arms answered; the skill arm read SKILL.md and passed, the baseline failed the
    check its case hides in the skill."""
    assert sorted((r["case_id"], r["arm"]) for r in rows) == sorted(
        (case, arm) for case in CASE_IDS for arm in ("baseline", "skill"))
    for row in rows:
        assert (row["protocol"], row["stop_reason"], row["error"]) == (protocol, "answered", None)
        if row["arm"] == "skill":
            assert row["passed"] and row["activated"] is True and "SKILL.md" in row["skill_files"]
        else:
            assert not row["passed"] and row["activated"] is None and row["skill_files"] == []
            assert _failed(row) == BASELINE_FAILS[row["case_id"]]


def _arm_line(output: str, model: str, arm: str, protocol: str) -> str:
    """The agent-mode table's line for `model` and `arm`."""
    sep = r"[\s│]+"  # with or without column rules
    pattern = rf"{re.escape(model)}{sep}{arm}{sep}{re.escape(protocol)}{sep}(\d+%)"
    found = re.search(pattern, output)
    assert found, output
    return found.group(1)


def test_own_agent_loop_end_to_end_and_a_rerun_makes_no_model_request():
    bwrap_sandbox()
    script = KernelScript()
    with FakeOpenAIServer(responder=script) as server:
        first = _eval("-m", "local/fake-agent", "--base-url", server.url)
        assert first.returncode == 0, first.stderr
        requests = script.requests
        # skill arm: read SKILL.md + 3 steps; baseline: 3 steps; two cases
        assert requests == 2 * (4 + 3)
        again = _eval("-m", "local/fake-agent", "--base-url", server.url, "--json")
        assert again.returncode == 0, again.stderr
        assert script.requests == requests  # every turn came from the response cache

    out = first.stdout
    assert f"{SKILL_NAME} · 2 of 10 cases × 1 run · agent" in out
    assert _arm_line(out, "local/fake-agent", "baseline", "tools") == "0%"
    assert _arm_line(out, "local/fake-agent", "skill", "tools") == "100%"
    assert "activation recall 100% (2 of 2 samples read SKILL.md)" in out

    first_run, second_run = (m["run_id"] for m in runs(Path(os.environ["HUBSKILLS_HOME"])))
    rows = _rows(first_run)
    _assert_rows(rows, "tools")
    assert {r["case_id"]: r["turns"] for r in rows if r["arm"] == "skill"} == \
        {"torch-binding": 4, "a100-too": 4}
    replayed = _rows(second_run)
    assert all(r["cached"] for r in replayed)
    assert sorted((r["case_id"], r["arm"], r["passed"], r["activated"]) for r in replayed) == \
        sorted((r["case_id"], r["arm"], r["passed"], r["activated"]) for r in rows)
    summary = json.loads(again.stdout)["summaries"][0]
    stats = summary["stats"]
    assert (stats["baseline"]["pass_rate"], stats["skill"]["pass_rate"]) == (0.0, 1.0)
    assert summary["activation"]["recall"] == 1.0

    shown = hubskills("runs", "show", first_run, "--case", "torch-binding")
    assert shown.returncode == 0, shown.stderr
    text = shown.stdout
    assert "skill · case torch-binding · repeat 0 · tools · stopped: answered" in text
    assert f"→ read_file(path='.agents/skills/{SKILL_NAME}/SKILL.md')" in text
    assert "- Last line of torch_binding.cpp" in text  # the result the model read
    assert "→ run(command=\"grep -n 'ops.def' torch-ext/torch_binding.cpp\")" in text
    assert "added torch-ext/torch_binding.cpp" in text
    assert "+REGISTER_EXTENSION(TORCH_EXTENSION_NAME)" in text
    baseline = hubskills("runs", "show", first_run, "--case", "a100-too", "--arm", "baseline")
    assert "baseline · case a100-too" in baseline.stdout
    assert "SKILL.md" not in baseline.stdout
    assert '+capabilities = ["8.9", "9.0"]' in baseline.stdout  # the L4, not the A100


def _model_calls(server) -> int:
    """Requests other than the run's probe of the endpoint (a model listing, at no cost)."""
    return sum(path != "/v1/models" for path, _ in server.requests)


@pytest.mark.slow
def test_claude_code_harness_end_to_end():
    agent_cli("claude-code")
    bwrap_sandbox()
    description = SKILL.joinpath("SKILL.md").read_text().split("description: \"")[1][:60]
    with KernelHarnessServer(root="/workspace", skill=(SKILL_NAME, description),
                             skill_dir=".claude/skills") as server:
        result = _eval("-m", "anthropic/fake", "--harness", "claude-code",
                       ANTHROPIC_API_KEY="sk-hubskills-e2e-key", ANTHROPIC_BASE_URL=server.url)
        assert result.returncode == 0, result.stderr
        asked = _model_calls(server)
        assert asked  # the CLI called the fake model
        again = _eval("-m", "anthropic/fake", "--harness", "claude-code",
                      ANTHROPIC_API_KEY="sk-hubskills-e2e-key", ANTHROPIC_BASE_URL=server.url)
        assert again.returncode == 0, again.stderr
        assert _model_calls(server) == asked  # the rerun's model answers came from the cache

    out = result.stdout
    assert again.stdout.count("100%") == out.count("100%")  # and gave the same table
    assert _arm_line(out, "anthropic/fake", "baseline", "harness:claude-code") == "0%"
    assert _arm_line(out, "anthropic/fake", "skill", "harness:claude-code") == "100%"
    assert "activation recall 100% (2 of 2 samples read SKILL.md)" in out

    manifest, rerun = runs(Path(os.environ["HUBSKILLS_HOME"]))  # the same answers in both
    assert manifest["harness"] == rerun["harness"] == "claude-code"
    rows = _rows(manifest["run_id"])
    _assert_rows(rows, "harness:claude-code")
    # the CLI's own tools wrote the files the workspace checks graded
    binding = next(r for r in rows if r["case_id"] == "torch-binding" and r["arm"] == "skill")
    assert {t["tool"] for t in binding["tool_calls"]} == {"Bash", "Write"}
    register = next(c for c in binding["checks"] if c["label"] == "REGISTER_EXTENSION last")
    assert register["passed"] and "matched" in register["reason"]

    shown = hubskills("runs", "show", manifest["run_id"], "--case", "torch-binding")
    assert shown.returncode == 0, shown.stderr
    text = shown.stdout
    assert "skill · case torch-binding · repeat 0 · harness:claude-code · stopped: answered" \
        in text
    assert f"→ Bash(command='cat .claude/skills/{SKILL_NAME}/SKILL.md'" in text
    assert "→ Write(file_path='/workspace/torch-ext/torch_binding.cpp'" in text
    assert "+REGISTER_EXTENSION(TORCH_EXTENSION_NAME)" in text
    assert "sk-hubskills-e2e-key" not in text

    runs_dir = Path(os.environ["HUBSKILLS_HOME"]) / "runs"  # the Space's side by side view
    assert transcript_cases(runs_dir, manifest["run_id"]) == sorted(CASE_IDS)
    base_md, skill_md = transcript_pair(runs_dir, manifest["run_id"], "torch-binding")
    assert "harness:claude-code · stopped: answered · skill files read: SKILL.md" in skill_md
    assert "skill files read: none" in base_md and ".claude/skills" not in base_md
    assert r"→ `Write` file\_path='/workspace/torch-ext/torch\_binding.cpp'" in base_md
    assert "+REGISTER_EXTENSION(TORCH_EXTENSION_NAME)" in skill_md
    assert "+REGISTER_EXTENSION" not in base_md


@pytest.mark.parametrize(("args", "env", "expected"), [
    (("-m", "local/fake", "--base-url", "http://127.0.0.1:9"), {},
     "the claude-code harness speaks the anthropic API; local/fake is served by local"),
    (("-m", "anthropic/fake", "--skip-code-checks"), {"ANTHROPIC_API_KEY": "sk-e2e"},
     "the claude-code harness runs only inside the bwrap sandbox (this run has none: "
     "--skip-code-checks)"),
])
def test_a_harness_that_cannot_run_fails_before_the_run_starts(args, env, expected):
    result = _eval("--harness", "claude-code", *args, **env)
    assert result.returncode == 1, result.stderr
    assert f"Error: {expected}" in result.stderr and "Traceback" not in result.stderr
    assert "answers to get" not in result.stderr
    assert runs(Path(os.environ["HUBSKILLS_HOME"])) == []  # nothing saved
