"""`eval --mode trigger --harness claude-code`: the real Claude Code CLI, in bubblewrap, lists the
skill among the distractors from its own skills folder and the fake model (real HTTP, the
Anthropic wire) opens the closest one with the CLI's shell tool; triggered = that read."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from test_trigger import make_distractors, make_skill

from registry.agent import TranscriptEntry
from registry.cli import cli
from registry.evaluation.trigger_harness import opened_by_cli
from tests.agent_clis_required import agent_cli
from tests.fakes.trigger_harness_server import TriggerHarnessServer
from tests.sandbox_required import bwrap_sandbox

# (id, query, should_trigger): what the fake model does
QUERIES = [
    ("s1", "configure zorblax ports", True),  # zorblax-ports: triggered
    ("s4", "bake bread in the zorblax oven", True),  # baking-bread wins: missed
    ("n1", "bake bread", False),  # baking-bread: right
    ("n2", "configure daemon widgets generally", False),  # zorblax-ports: a false trigger
    ("e1", "explode zorblax ports", True),  # HTTP 400: the CLI fails, an error row
]


@pytest.mark.slow
def test_the_clis_own_skill_read_is_the_trigger(tmp_path):
    agent_cli("claude-code")
    bwrap_sandbox()
    skill = make_skill(tmp_path)
    queries = [{"id": i, "query": q, "should_trigger": s} for i, q, s in QUERIES]
    (skill / "evals" / "triggers.json").write_text(json.dumps({"queries": queries}))
    with TriggerHarnessServer([q for _, q, _ in QUERIES]) as server:
        env = {"HUBSKILLS_HOME": str(tmp_path / "home"), "ANTHROPIC_API_KEY": "sk-real",
               "ANTHROPIC_BASE_URL": server.url, "NO_COLOR": "1", "COLUMNS": "200"}
        result = CliRunner(env=env).invoke(cli, [
            "eval", str(skill), "--mode", "trigger", "--harness", "claude-code", "-m",
            "anthropic/claude-fake", "--distractors",
            str(make_distractors(tmp_path)), "--runs", "1", "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    (summary,) = data["summaries"]
    assert (summary["recall"]["rate"], summary["recall"]["queries"]) == (0.5, 2)
    assert (summary["false_triggers"]["rate"], summary["errors"]) == (0.5, 1)
    assert summary["opened_instead"] == {"baking-bread": 1}
    assert data["manifest"]["harness"] == "claude-code"
    assert any("The following skills are available" in body for body in
               (json.dumps(b) for _, b in server.requests))  # the CLI's own listing
    assert all(h.get("x-api-key") == "sk-real" for h in server.headers)  # the proxy's key


def test_a_skill_tool_call_or_a_skill_md_read_is_an_opening():
    names = {"zorblax-ports", "baking-bread"}
    assert opened_by_cli([TranscriptEntry("tool_call", tool="Skill",
                                          arguments={"skill": "baking-bread"})],
                         names) == "baking-bread"
    read = TranscriptEntry("tool_call", tool="Bash",
                           arguments={"command": "cat .claude/skills/zorblax-ports/SKILL.md"})
    listed = TranscriptEntry("tool_call", tool="Bash", arguments={"command": "ls .claude/skills"})
    assert opened_by_cli([listed, read], names) == "zorblax-ports"
    assert opened_by_cli([listed], names) is None
    other = TranscriptEntry("tool_call", tool="Skill", arguments={"skill": "not-listed"})
    assert opened_by_cli([other], names) is None
