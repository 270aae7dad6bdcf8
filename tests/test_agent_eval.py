"""`--mode agent` in the evaluation engine, the report and the CLI, against a fake server
speaking the OpenAI wire format over real HTTP, with commands in real bubblewrap."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from fakes.openai_server import FakeOpenAIServer
from fakes.tool_script import GUESSED_PORT, SKILL_MD, SKILL_PORT, AgentScript
from sandbox_required import bwrap_sandbox

from registry.agent import AgentTask, seed_workspace
from registry.cli import cli, main
from registry.config import Settings
from registry.errors import HubskillsError
from registry.evaluation.agent_mode import SingleTurnRunner, agent_suite_path
from registry.evaluation.config import EvalConfig
from registry.evaluation.engine import run_evaluation
from registry.format.suite import load_suite
from registry.providers import EMBEDDED_REF, RetryPolicy, resolve
from registry.providers import embedded_availability as availability
from registry.results.report import activation, summarize
from registry.results.runs import ResultRow, read_transcripts
from space.transcripts import NO_TRANSCRIPT, render, transcript_cases, transcript_pair

FAST = RetryPolicy(attempts=3, base_delay=0.001, max_delay=0.005, max_retry_after=0.01)
SECRET = "sk-zorblax-agent-secret-0123456789"
# (prompt names zorblax?, expect_skill): the script reads SKILL.md only when it does.
CASES = {"c1": (True, True), "c2": (True, True), "c3": (True, True), "c4": (False, True),
         "c5": (True, False), "c6": (False, False)}


def make_skill(root: Path) -> Path:
    """A skill with an agent suite (and a chat suite the agent mode must not pick)."""
    folder = root / "zorblax-ports"
    (folder / "evals").mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL_MD)
    cases = [{"id": case, "expect_skill": expect,
              "prompt": f"Task {case}: write config.toml for " + (
                  "the zorblax daemon." if named else "the daemon."),
              "checks": [{"type": "contains", "value": [SKILL_PORT]}]}
             for case, (named, expect) in CASES.items()]
    (folder / "evals" / "agent.json").write_text(json.dumps({"cases": cases}))
    (folder / "evals" / "evals.json").write_text(json.dumps({"cases": [
        {"id": "chat", "prompt": "Which port?", "checks": [{"type": "contains",
                                                            "value": ["1"]}]}]}))
    return folder


@pytest.fixture
def server():
    with FakeOpenAIServer(responder=AgentScript(skill="zorblax-ports",
                                                trigger="zorblax")) as srv:
        yield srv


def settings_for(server, tmp_path) -> Settings:
    return Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "home"),
                              "HUBSKILLS_BASE_URL": server.url})


def agent_config(**overrides) -> EvalConfig:
    values = {"models": ["local/fake-agent"], "runs": 2, "mode": "agent", "retry": FAST}
    return EvalConfig(**{**values, **overrides})


def calls(server) -> int:
    return sum(r["path"].endswith("/chat/completions") for r in server.requests)


def test_agent_mode_end_to_end_and_a_rerun_makes_no_model_call(server, tmp_path):
    bwrap_sandbox()
    skill, settings = make_skill(tmp_path), settings_for(server, tmp_path)
    assert agent_suite_path(skill).name == "agent.json"
    run = run_evaluation(skill, agent_config(), settings)
    assert run.manifest.mode == "agent" and run.manifest.case_ids == list(CASES)
    assert run.manifest.agent_budget["max_turns"] == 20 and run.manifest.sandbox == "bwrap"
    assert len(run.rows) == 6 * 2 * 2 and not any(r.is_error for r in run.rows)
    assert calls(server) == 24 * 5  # five turns per sample, one model call each
    row = next(r for r in run.rows if r.arm == "skill" and r.case_id == "c1")
    assert (row.protocol, row.turns, row.stop_reason) == ("tools", 5, "answered")
    assert row.tool_counts() == {"edit_file": 1, "read_file": 1, "run": 2, "write_file": 1}
    assert row.skill_files == ["SKILL.md"] and row.activated and row.passed
    assert all(r.activated is None and not r.passed for r in run.rows if r.arm == "baseline")
    assert all(GUESSED_PORT in r.output for r in run.rows if r.arm == "baseline")

    [summary] = summarize(run.rows)
    # Skill arm: it reads SKILL.md in c1, c2, c3, c5 (their prompts name zorblax) and passes.
    assert summary.stats.skill.pass_rate == pytest.approx(8 / 12)
    assert summary.stats.baseline.pass_rate == 0.0
    act = summary.activation
    assert (act.expected, act.activated, act.recall) == (8, 6, 0.75)
    assert (act.unexpected, act.false_activations, act.false_rate) == (4, 2, 0.5)
    skill_arm = summary.agent["skill"]
    assert skill_arm.mean_turns == 5 and skill_arm.tool_calls["read_file"] == 8
    assert skill_arm.tokens_per_pass == pytest.approx(
        sum(r.input_tokens + r.output_tokens for r in run.rows if r.arm == "skill") / 8)
    assert summary.agent["baseline"].tokens_per_pass is None  # no passing sample

    transcripts = read_transcripts(settings.runs_dir, run.manifest.run_id)
    assert len(transcripts) == 24
    record = next(t for t in transcripts if t["case_id"] == "c1" and t["arm"] == "skill")
    assert [c["path"] for c in record["diff"]] == ["config.toml"]
    assert '+hosts = ["a", "b"]' in record["diff"][0]["diff"]

    again = run_evaluation(skill, agent_config(), settings)
    assert calls(server) == 24 * 5 and all(r.cached for r in again.rows)
    assert sorted((r.case_id, r.arm, r.repeat, r.passed) for r in again.rows) == \
        sorted((r.case_id, r.arm, r.repeat, r.passed) for r in run.rows)


def test_activation_recall_and_false_activations_by_hand():
    def row(arm, activated, expect, **extra):
        fields = {"passed": True, **extra}
        return ResultRow(run_id="r", skill_name="s", model="m", arm=arm, case_id="c",
                         mode="agent", activated=activated, expect_skill=expect, **fields)

    rows = [row("skill", True, True), row("skill", False, True), row("skill", True, True),
            row("skill", True, None),  # older cases: the skill applies
            row("skill", True, False), row("skill", False, False), row("skill", False, False),
            row("skill", True, True, error="timeout", passed=None),  # a transport error
            row("baseline", None, True), row("skill", None, True)]  # not measured
    act = activation(rows)
    assert (act.expected, act.activated, act.recall) == (4, 3, 0.75)
    assert (act.unexpected, act.false_activations) == (3, 1)
    assert act.false_rate == pytest.approx(1 / 3)
    assert activation([row("baseline", None, True)]) is None


def test_transcripts_are_scrubbed(server, tmp_path, monkeypatch):
    bwrap_sandbox()
    monkeypatch.setenv("ZORBLAX_API_KEY", SECRET)
    skill, settings = make_skill(tmp_path), settings_for(server, tmp_path)
    suite = json.loads((skill / "evals" / "agent.json").read_text())
    suite["cases"][0]["prompt"] += f" Use the key {SECRET}."
    (skill / "evals" / "agent.json").write_text(json.dumps(suite))
    run = run_evaluation(skill, agent_config(runs=1, case_ids=["c1"]), settings)
    text = (settings.runs_dir / run.manifest.run_id / "transcripts.jsonl").read_text()
    assert "Use the key (redacted)" in text and SECRET not in text


def test_single_turn_fallback_writes_fenced_files(server, tmp_path):
    skill = make_skill(tmp_path)
    [case] = load_suite(skill / "evals" / "agent.json").select(["c1"]).cases
    answer = "Here it is.\n\nconfig.toml\n```toml\nport = 4417\n```\n\n`../evil.txt`\n```\nx\n```"
    settings = settings_for(server, tmp_path)
    model = resolve("local/fake", settings)

    async def complete(messages, tools, seed):
        assert tools == []
        return (await model.complete(messages, seed=seed)), False

    ws = seed_workspace(tmp_path / "ws", {"notes.md": "hi"})
    server.enqueue(answer)
    runner = SingleTurnRunner(complete, case, None)
    outcome = asyncio.run(runner.run(AgentTask(case.prompt, ws.path)))
    assert outcome.protocol == "single-turn" and outcome.turns == 1
    assert (ws.path / "config.toml").read_text() == "port = 4417\n"
    assert [c.path for c in ws.diff()] == ["config.toml"]
    assert not (tmp_path / "evil.txt").exists()


@pytest.mark.skipif(not availability()[0], reason="the embedded model is not installed")
def test_a_model_without_tools_runs_single_turn_with_a_note(tmp_path):
    bwrap_sandbox()
    notes: list[str] = []
    skill = make_skill(tmp_path)
    settings = Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "home")})
    run = run_evaluation(skill, agent_config(models=[EMBEDDED_REF], runs=1, case_ids=["c1"],
                                             max_tokens=24), settings, warn=notes.append)
    assert any("cannot call tools" in n and "single-turn" in n for n in notes)
    assert {r.protocol for r in run.rows} == {"single-turn"}
    assert all(r.activated is None for r in run.rows)
    [summary] = summarize(run.rows)
    assert summary.agent["skill"].protocols == ["single-turn"] and summary.activation is None


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), env={"NO_COLOR": "1", "COLUMNS": "200"},
                              catch_exceptions=False)


def test_cli_agent_mode_and_runs_show_case(server, tmp_path, capsys):
    bwrap_sandbox()
    skill = make_skill(tmp_path)
    result = invoke("eval", str(skill), "-m", "local/fake-agent", "--base-url", server.url,
                    "--mode", "agent", "--runs", "1", "--max-turns", "8", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    run_id = data["manifest"]["run_id"]
    assert data["manifest"]["agent_budget"]["max_turns"] == 8
    assert data["summaries"][0]["activation"]["recall"] == 0.75

    shown = invoke("runs", "show", run_id)
    assert "Agent mode" in shown.output and "activation recall 75% (3 of 4" in shown.output
    assert "false activations 1 of 2 (50%)" in shown.output

    skill_arm = invoke("runs", "show", run_id, "--case", "c1")
    assert skill_arm.exit_code == 0, skill_arm.output
    out = skill_arm.output
    assert "→ read_file(path='.agents/skills/zorblax-ports/SKILL.md')" in out
    assert "← exit code 1" in out and "← exit code 0" in out
    assert "workspace diff: 1 file changed" in out and '+hosts = ["a", "b"]' in out
    baseline = invoke("runs", "show", run_id, "--case", "c1", "--arm", "baseline").output
    assert "read_file" not in baseline and "→ write_file(path='config.toml'" in baseline

    runs_dir = Settings.from_env().runs_dir
    assert transcript_cases(runs_dir, run_id) == list(CASES)
    base_md, skill_md = transcript_pair(runs_dir, run_id, "c1")
    assert "→ `read_file` path='.agents/skills/zorblax-ports/SKILL.md'" in skill_md
    assert "read_file" not in base_md and "→ `write_file` path='config.toml'" in base_md
    assert "**Workspace diff** (1 file(s))" in skill_md and "````diff" in skill_md
    assert transcript_pair(runs_dir, run_id, "nope") == (NO_TRANSCRIPT, NO_TRANSCRIPT)

    with pytest.raises(SystemExit) as missing:
        main(["runs", "show", run_id, "--case", "nope"])
    err = capsys.readouterr().err
    assert missing.value.code == 1 and "no skill transcript of case 'nope'" in err


def test_harness_needs_agent_mode(tmp_path, capsys):
    with pytest.raises(SystemExit) as failed:
        main(["eval", str(make_skill(tmp_path)), "--harness", "codex"])
    assert failed.value.code == 1 and "--mode agent" in capsys.readouterr().err


def test_space_transcripts_show_visitor_text_as_text():
    record = {"model": "m", "arm": "skill", "protocol": "tools", "stop_reason": "answered",
              "transcript": [{"kind": "assistant", "text": "<img src=x onerror=alert(1)> [a](b)"},
                             {"kind": "tool_result", "text": "````\n<b>x</b>"}],
              "diff": []}
    md = render(record)
    assert md.count("<img") == md.count("\\<img") == 1 and "\\[a\\](b)" in md
    assert md.count("`````") == 2  # a longer fence: the result's own cannot close the block


def test_agent_mode_refuses_an_unsandboxed_run_before_any_call(server, tmp_path):
    skill, settings = make_skill(tmp_path), settings_for(server, tmp_path)
    with pytest.raises(HubskillsError, match="--sandbox none is refused") as caught:
        run_evaluation(skill, agent_config(sandbox="none"), settings)
    assert "bubblewrap" in caught.value.hint and calls(server) == 0
