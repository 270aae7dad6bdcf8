"""hubskills' own agent loop: a real model client (fake server over HTTP), real bubblewrap."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest
from fakes.anthropic_server import FakeAnthropicServer
from fakes.openai_server import FakeOpenAIServer
from fakes.tool_script import CHECK, SKILL_MD, SKILL_PORT, AgentScript
from sandbox_required import bwrap_sandbox

from registry.agent import (
    AgentOutcome,
    AgentTask,
    Budget,
    ToolLoopRunner,
    WorkspaceTools,
    seed_workspace,
)
from registry.config import Settings
from registry.format.skill import load_skill
from registry.providers import Message, ToolCall, ToolSpec, resolve


@pytest.fixture
def skill(tmp_path):
    folder = tmp_path / "zorblax-ports"
    (folder / "scripts").mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL_MD)
    (folder / "scripts" / "port.py").write_text(f"print({SKILL_PORT})\n")
    return load_skill(folder)


def model_complete(url: str, tmp_path: Path):
    settings = Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "home"),
                                  "HUBSKILLS_BASE_URL": url})
    model = resolve("local/fake-agent", settings)

    async def complete(messages: list[Message], tools: list[ToolSpec], seed: int):
        return await model.complete(messages, tools=tools or None, seed=seed), False
    return complete


def run_agent(script, tmp_path: Path, skill=None, budget: Budget | None = None, *,
              sandbox=None, clock=None, files=None) -> tuple[AgentOutcome, object, list]:
    with FakeOpenAIServer(responder=script) as server:
        ws = seed_workspace(tmp_path / f"ws-{len(list(tmp_path.iterdir()))}", files or {},
                            skill=skill)
        task = AgentTask("Configure zorblax in config.toml.", ws.path,
                         skill_name=skill and skill.name,
                         skill_description=skill and skill.description,
                         skill_path=ws.skill_path, budget=budget or Budget())
        extra = {"clock": clock} if clock else {}
        runner = ToolLoopRunner(model_complete(server.url, tmp_path), sandbox, **extra)
        outcome = asyncio.run(runner.run(task))
        bodies = [r["body"] for r in server.requests if r["path"].endswith("/completions")]
    return outcome, ws, bodies


def test_a_scripted_five_turn_trajectory_in_both_arms(tmp_path, skill):
    sandbox = bwrap_sandbox()
    with_skill, ws, bodies = run_agent(AgentScript(skill=skill.name), tmp_path, skill,
                                       sandbox=sandbox)
    assert with_skill.stop_reason == "answered" and with_skill.turns == 5
    assert with_skill.tool_calls == {"read_file": 1, "write_file": 1, "run": 2, "edit_file": 1}
    assert with_skill.skill_files == ["SKILL.md"] and with_skill.activated
    assert SKILL_PORT in with_skill.final_text
    assert (ws.path / "config.toml").read_text().endswith('hosts = ["a", "b"]\n')
    results = [e for e in with_skill.transcript if e.kind == "tool_result" and e.tool == "run"]
    assert results[0].text.startswith("exit code 1") and "TOMLDecodeError" in results[0].text
    assert results[1].text.splitlines()[0] == "exit code 0"
    assert "Ports of the zorblax daemon" in bodies[0]["messages"][0]["content"]
    assert [c.path for c in ws.diff()] == ["config.toml"]

    baseline, ws, bodies = run_agent(AgentScript(skill=skill.name), tmp_path, None,
                                     sandbox=sandbox)
    assert baseline.turns == 5 and baseline.stop_reason == "answered"
    assert "read_file" not in baseline.tool_calls and baseline.skill_files == []
    assert not baseline.activated and SKILL_PORT not in baseline.final_text
    assert "zorblax" not in bodies[0]["messages"][0]["content"].lower()
    assert not (ws.path / ".agents").exists()


def test_the_skill_arm_workspace_holds_the_skill_but_not_its_suite(tmp_path, skill):
    (skill.path / "evals").mkdir()
    (skill.path / "evals" / "agent.json").write_text('{"cases": []}')
    ws = seed_workspace(tmp_path / "ws", {"a.txt": "a"}, skill=skill)
    assert sorted(ws.files()) == [".agents/skills/zorblax-ports/SKILL.md",
                                  ".agents/skills/zorblax-ports/scripts/port.py", "a.txt"]


def test_placing_a_skill_never_changes_a_file_its_links_point_to(tmp_path, skill):
    """The copy kept a skill's link as a link, then chmod followed it out: a red-team skill
    linking to a setuid file on the host had its mode rewritten to 755 (as root)."""
    victim = tmp_path / "victim"
    victim.write_text("the host's\n")
    victim.chmod(0o4711)
    os.symlink(victim, skill.path / "linked")
    seed_workspace(tmp_path / "ws", {}, skill=load_skill(skill.path))
    assert victim.stat().st_mode & 0o7777 == 0o4711


def test_the_two_arms_prompts_differ_only_by_the_listing(tmp_path, skill):
    _, _, with_skill = run_agent(AgentScript(skill=skill.name), tmp_path, skill)
    _, _, baseline = run_agent(AgentScript(skill=skill.name), tmp_path, None)
    system_skill = with_skill[0]["messages"][0]["content"]
    system_base = baseline[0]["messages"][0]["content"]
    assert system_skill.startswith(system_base) and system_skill != system_base
    assert ".agents/skills/zorblax-ports/SKILL.md" in system_skill
    assert with_skill[0]["messages"][1:] == baseline[0]["messages"][1:]
    assert with_skill[0]["tools"] == baseline[0]["tools"]


@pytest.mark.parametrize(("budget", "reason", "turns"), [
    (Budget(max_turns=3), "turns", 3),
    (Budget(max_tool_calls=5), "tool_calls", 3),
    (Budget(max_tokens=150), "tokens", None),
])
def test_each_budget_stops_the_loop(tmp_path, skill, budget, reason, turns):
    outcome, _, bodies = run_agent(AgentScript(skill=skill.name, loop_forever=True), tmp_path,
                                   skill, budget, sandbox=bwrap_sandbox())
    assert outcome.stop_reason == reason
    assert len(bodies) == outcome.turns
    if turns is not None:
        assert outcome.turns == turns
    if reason == "tool_calls":
        assert sum(outcome.tool_calls.values()) == 5
    if reason == "tokens":
        assert outcome.input_tokens + outcome.output_tokens >= 150 and len(bodies) > 1
    assert outcome.transcript[-1].text == f"stopped: {reason} budget reached"


def test_the_wall_time_budget_stops_the_loop(tmp_path, skill):
    ticks = iter(range(0, 10_000, 10))  # each reading of the clock is 10 s later
    outcome, _, bodies = run_agent(AgentScript(skill=skill.name, loop_forever=True), tmp_path,
                                   skill, Budget(wall_s=45), sandbox=bwrap_sandbox(),
                                   clock=lambda: next(ticks))
    assert outcome.stop_reason == "wall_time" and 0 < len(bodies) < 5


def tools_in(tmp_path: Path, sandbox=None, **budget) -> tuple[WorkspaceTools, AgentOutcome]:
    (tmp_path / "ws").mkdir(exist_ok=True)
    outcome = AgentOutcome()
    return WorkspaceTools(tmp_path / "ws", sandbox, Budget(**budget), outcome,
                          ".agents/skills/s"), outcome


def call(tools: WorkspaceTools, name: str, **arguments) -> tuple[str, bool]:
    return asyncio.run(tools.call(ToolCall("c1", name, arguments)))


def test_paths_outside_the_workspace_are_refused(tmp_path):
    tools, _ = tools_in(tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text("do not read")
    os.symlink(secret, tmp_path / "ws" / "link.txt")
    os.symlink(tmp_path, tmp_path / "ws" / "up")
    for path in ("../secret.txt", str(secret), "a/../../secret.txt", "link.txt",
                 "up/secret.txt", "a\\..\\x"):
        text, failed = call(tools, "read_file", path=path)
        assert failed and "do not read" not in text, path
    for path in ("../evil.txt", "/tmp/evil.txt", "link.txt", "up/evil.txt"):
        _, failed = call(tools, "write_file", path=path, content="x")
        assert failed, path
    assert secret.read_text() == "do not read" and not (tmp_path / "evil.txt").exists()
    listing, failed = call(tools, "list_files")
    assert not failed and listing.splitlines() == ["link.txt (symlink)", "up (symlink)"]
    _, failed = call(tools, "list_files", path="up")
    assert failed


def test_a_fifo_is_refused_not_waited_on(tmp_path):
    tools, _ = tools_in(tmp_path)
    os.mkfifo(tmp_path / "ws" / "pipe")
    for name, extra in (("read_file", {}), ("write_file", {"content": "x"}),
                        ("edit_file", {"old_string": "a", "new_string": "b"})):
        text, failed = call(tools, name, path="pipe", **extra)
        assert failed and "pipe is not a regular file" in text, name


def test_file_tools_write_edit_and_list_in_order(tmp_path):
    tools, outcome = tools_in(tmp_path)
    assert call(tools, "write_file", path="src/b.py", content="x = 1\nx = 1\n")[1] is False
    assert call(tools, "write_file", path="a.txt", content="hello")[1] is False
    assert call(tools, "list_files")[0] == "a.txt\nsrc/b.py"
    text, failed = call(tools, "edit_file", path="src/b.py", old_string="y", new_string="z")
    assert failed and "was not found" in text
    text, failed = call(tools, "edit_file", path="src/b.py", old_string="x = 1",
                        new_string="x = 2")
    assert failed and "occurs 2 times" in text
    assert call(tools, "edit_file", path="src/b.py", old_string="x = 1\nx = 1",
                new_string="x = 2")[1] is False
    assert (tmp_path / "ws" / "src" / "b.py").read_text() == "x = 2\n"
    assert call(tools, "read_file", path="./a.txt") == ("hello", False)
    text, failed = call(tools, "nope")
    assert failed and "unknown tool" in text
    assert outcome.tool_calls == {"write_file": 2, "list_files": 1, "edit_file": 3,
                                  "read_file": 1, "nope": 1}


def test_run_is_sandboxed_clipped_and_timed(tmp_path):
    sandbox = bwrap_sandbox()
    tools, _ = tools_in(tmp_path, sandbox, output_chars=300, command_timeout_s=1)
    text, failed = call(tools, "run", command="python3 -c \"print('y' * 5000)\"")
    assert not failed and text.startswith("exit code 0") and len(text) < 400
    assert "characters clipped" in text
    text, _ = call(tools, "run", command="cat /etc/hostname /root/.bashrc 2>&1; pwd; touch ok")
    assert "/workspace" in text and (tmp_path / "ws" / "ok").exists()
    text, _ = call(tools, "run", command="python3 -c \"import socket; "
                   "socket.create_connection(('1.1.1.1', 80), timeout=1)\"")
    assert text.startswith("exit code 1")
    text, _ = call(tools, "run", command="sleep 5")
    assert text.startswith("timed out after 1 s")


def test_activation_counts_reads_and_commands_under_the_skill(tmp_path):
    tools, outcome = tools_in(tmp_path, bwrap_sandbox())
    skill = tmp_path / "ws" / ".agents" / "skills" / "s"
    (skill / "references").mkdir(parents=True)
    (skill / "references" / "api.md").write_text("API")
    (skill / "scripts").mkdir()
    (skill / "scripts" / "go.py").write_text("print('go')")
    call(tools, "read_file", path=".agents/skills/s/references/api.md")
    call(tools, "run", command="python3 .agents/skills/s/scripts/go.py && echo done")
    call(tools, "read_file", path="notes.txt")  # missing, outside the skill
    assert outcome.skill_files == ["references/api.md", "scripts/go.py"]
    assert not outcome.activated


def test_results_are_deterministic_for_the_same_workspace(tmp_path, skill):
    first, _, _ = run_agent(AgentScript(skill=skill.name), tmp_path, skill,
                            sandbox=bwrap_sandbox())
    second, _, _ = run_agent(AgentScript(skill=skill.name), tmp_path, skill,
                             sandbox=bwrap_sandbox())
    assert [e.to_dict() for e in first.transcript] == [e.to_dict() for e in second.transcript]
    assert json.dumps(CHECK) in json.dumps([e.to_dict() for e in first.transcript])


def test_the_trajectory_over_the_anthropic_messages_api(tmp_path, skill):
    script = AgentScript(skill=skill.name)
    with FakeAnthropicServer(responder=script, api_key="sk-ant-test") as server:
        settings = Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "home"),
                                      "ANTHROPIC_API_KEY": "sk-ant-test",
                                      "ANTHROPIC_BASE_URL": server.url})
        model = resolve("anthropic/claude-sonnet-5-5", settings)

        async def complete(messages, tools, seed):
            return await model.complete(messages, tools=tools or None, seed=seed), False

        ws = seed_workspace(tmp_path / "ws", {}, skill=skill)
        task = AgentTask("Configure zorblax in config.toml.", ws.path, skill_name=skill.name,
                         skill_description=skill.description, skill_path=ws.skill_path)
        outcome = asyncio.run(ToolLoopRunner(complete, bwrap_sandbox()).run(task))
        last = server.requests[-1]["body"]
    assert outcome.stop_reason == "answered" and outcome.turns == 5 and outcome.activated
    assert SKILL_PORT in outcome.final_text and outcome.cost_usd and outcome.cost_usd > 0
    assert "zorblax-ports/SKILL.md" in json.dumps(last["system"])
    results = [b for m in last["messages"] if m["role"] == "user" and isinstance(m["content"],
                                                                                  list)
               for b in m["content"] if b.get("type") == "tool_result"]
    assert len(results) == 5 and "exit code 0" in json.dumps(results[-1])
