"""What a run's numbers mean: arm-caused errors, transport errors, partial and subset runs.

Against a fake OpenAI-compatible server over real HTTP. The model knows the fact only when the
skill is in its context; in some tests it also knows it unaided for the first cases.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from fakes.openai_server import FakeOpenAIServer
from test_evaluate import FAST, config, knows_fact_if_told, make_skill

from registry.cli import cli
from registry.config import Settings
from registry.errors import HubskillsError
from registry.evaluation.arms import MAX_TOOL_TURNS
from registry.evaluation.engine import run_evaluation
from registry.providers import RetryPolicy
from registry.publishing.push import push_run
from registry.results.report import summarize
from registry.results.runs import read_manifest

N = 12


def knows_first_six(body: dict) -> str:
    """Baseline passes cases q0..q5; with the skill every case passes."""
    text = json.dumps(body)
    if any(f"Question {i}:" in text for i in range(6)):
        return "Port 4417."
    return knows_fact_if_told(body)


def settings_for(server: FakeOpenAIServer, tmp_path) -> Settings:
    return Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "home"),
                              "HUBSKILLS_BASE_URL": server.url})


def long_skill(tmp_path):
    """The zorblax skill with a long body, so only the skill arm overflows a small context."""
    skill = make_skill(tmp_path, N)
    text = (skill / "SKILL.md").read_text()
    (skill / "SKILL.md").write_text(text + "\n" + "Background words. " * 150 + "\n")
    return skill


def test_a_context_overflow_is_a_failure_of_the_skill_arm(tmp_path):
    with FakeOpenAIServer(responder=knows_first_six, context_window=200) as server:
        run = run_evaluation(long_skill(tmp_path), config(runs=1), settings_for(server, tmp_path))
    skill_rows = [r for r in run.rows if r.arm == "skill"]
    assert {(r.error_kind, r.passed) for r in skill_rows} == {("arm", False)}
    assert all("context window" in r.error for r in skill_rows)
    [s] = summarize(run.rows)
    # not "+100 helps" over the cases the skill did not break: the skill arm fails them all
    assert (s.stats.baseline.pass_rate, s.stats.skill.pass_rate) == (0.5, 0.0)
    assert s.stats.lift == -0.5 and s.stats.n_cases == N and s.stats.verdict == "hurts"
    assert s.skill.errors == 0 and s.skill.samples == N  # failures, not lost samples


def test_a_refusal_and_a_runaway_tool_loop_are_failures_of_the_arm(tmp_path):
    def refuses_with_skill(body: dict):
        if "4417" in json.dumps(body["messages"]):
            return {"text": "I cannot help with that.", "finish_reason": "content_filter"}
        return "Probably 8080."

    with FakeOpenAIServer(responder=refuses_with_skill) as server:
        run = run_evaluation(make_skill(tmp_path, N), config(runs=1),
                             settings_for(server, tmp_path))
    refused = [r for r in run.rows if r.arm == "skill"]
    assert {(r.error_kind, r.passed, r.error) for r in refused} == {
        ("arm", False, "the model refused (content filter)")}

    def loops(body: dict):
        return {"tool_calls": [{"name": "load_skill", "arguments": {}}]}

    with FakeOpenAIServer(responder=loops) as server:
        run = run_evaluation(make_skill(tmp_path / "t", N), config(runs=1, mode="tool"),
                             settings_for(server, tmp_path / "t"))
        calls = len([r for r in server.requests if r["path"].endswith("/chat/completions")])
    assert calls == N + N * MAX_TOOL_TURNS  # the baseline arm has no tools to call
    assert {(r.error_kind, r.passed) for r in run.rows if r.arm == "skill"} == {("arm", False)}
    assert all("tool loop" in r.error for r in run.rows if r.arm == "skill")
    assert summarize(run.rows)[0].stats.skill.n_samples == N


def test_transport_errors_on_one_arm_make_the_verdict_inconclusive(tmp_path):
    def skill_arm_down_for_q0(body: dict):
        text = json.dumps(body)
        if "Question 0:" in text and "4417" in json.dumps(body["messages"]):
            return {"status": 500, "error": {"message": "down", "type": "server_error"}}
        return knows_fact_if_told(body)

    fail_fast = RetryPolicy(attempts=2, base_delay=0.001, max_delay=0.001)
    with FakeOpenAIServer(responder=skill_arm_down_for_q0) as server:
        run = run_evaluation(make_skill(tmp_path, N), config(runs=2, retry=fail_fast),
                             settings_for(server, tmp_path))
    [s] = summarize(run.rows)
    assert {r.error_kind for r in run.rows if r.is_error} == {"transport"}
    assert (s.skill.errors, s.stats.uneven, s.stats.n_cases) == (2, 1, N - 1)
    assert s.stats.verdict == "inconclusive: errors in 1 case"
    assert not run.manifest.is_partial  # every sample was answered or failed in transport


def test_a_run_stopped_by_its_budget_is_partial_and_cannot_be_pushed(tmp_path):
    prices = {"usage": {"prompt_tokens": 1000, "completion_tokens": 1000}}

    def priced(body: dict):
        return {"text": knows_fact_if_told(body), **prices}

    with FakeOpenAIServer(responder=priced) as server:
        settings = settings_for(server, tmp_path)
        run = run_evaluation(make_skill(tmp_path, N),
                             config(models=["openai/gpt-4.1-mini"], runs=2, max_cost=0.0001,
                                    concurrency=1),
                             settings.with_(openai_api_key="sk-test", openai_base_url=server.url))
    manifest = read_manifest(settings.runs_dir, run.manifest.run_id)
    assert manifest.status == "stopped" and manifest.is_partial
    assert manifest.samples_done < manifest.samples_planned == N * 2 * 2
    # a stop before the first answer never got one: labelled so, never as a partial run
    assert manifest.label.startswith("partial: " if manifest.samples_done else
                                     "failed to start: --max-cost $0.0001 reached")
    from registry.registries import get_store

    with pytest.raises(HubskillsError) as refused:
        push_run(get_store(settings), manifest, run.rows, skill_dir="SKILL")
    assert f"--resume {manifest.run_id}" in refused.value.hint


def test_a_subset_run_is_labelled_and_resumable(tmp_path):
    with FakeOpenAIServer(responder=knows_fact_if_told) as server:
        settings = settings_for(server, tmp_path)
        skill = make_skill(tmp_path, N)
        run = run_evaluation(skill, config(runs=1, case_ids=["q1", "q2"]), settings)
        again = run_evaluation(skill, config(), settings, resume=run.manifest.run_id)
    m = again.manifest
    assert (m.suite_cases, m.case_ids, m.subset, m.is_partial) == (N, ["q1", "q2"], True, False)
    assert m.label == f"subset: 2 of {N} cases"
    assert {(r.suite_cases, r.run_cases, r.planned_runs) for r in again.rows} == {(N, 2, 1)}


def invoke(*args: str, **env: str):
    return CliRunner().invoke(cli, list(args), env={"NO_COLOR": "1", "COLUMNS": "200", **env},
                              catch_exceptions=False)


def test_runs_lists_partial_and_subset_runs(tmp_path):
    with FakeOpenAIServer(responder=knows_fact_if_told) as server:
        skill = make_skill(tmp_path, N)
        invoke("eval", str(skill), "-m", "local/fake", "--base-url", server.url, "--runs", "1",
               "--cases", "q1,q2")
    listing = invoke("runs")
    assert f"subset: 2 of {N} cases" in listing.output and "2 of 12 × 1" in listing.output
    [data] = json.loads(invoke("runs", "--json").output)
    assert (data["subset"], data["partial"], data["suite_cases"]) == (True, False, N)
    shown = invoke("runs", "show", data["run_id"])
    assert f"This run asked 2 of the suite's {N} cases: a subset of the suite is never ranked" \
        in " ".join(shown.output.split())
    assert "too few cases (2)" in shown.output


def test_fast_retry_policy_is_the_one_tests_share():
    assert FAST.attempts >= 2
