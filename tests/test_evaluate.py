"""The evaluation engine against a fake OpenAI-compatible server over real HTTP."""

from __future__ import annotations

import json
import random
import threading
from pathlib import Path

import pytest
from fakes.openai_server import FakeOpenAIServer

from registry.config import Settings
from registry.errors import HubskillsError, MissingCredentials
from registry.evaluation.config import EvalConfig
from registry.evaluation.engine import run_evaluation
from registry.providers import RetryPolicy
from registry.results.report import summarize
from registry.results.runs import list_runs, read_rows
from registry.results.stats import mcnemar_exact
from registry.secrets import MASK

FAST = RetryPolicy(attempts=8, base_delay=0.001, max_delay=0.005, max_retry_after=0.01)
FACT = "The secret port of the zorblax daemon is 4417."
N_CASES = 6


def make_skill(root: Path, n_cases: int = N_CASES) -> Path:
    """A skill teaching one fact, and a suite whose checks need that fact."""
    folder = root / "zorblax-ports"
    (folder / "evals").mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: zorblax-ports\ndescription: \"Ports of the zorblax daemon. Use when "
        "configuring zorblax.\"\nmetadata:\n  version: \"1.0.0\"\n---\n\n" + FACT + "\n")
    cases = [{"id": f"q{i}", "prompt": f"Question {i}: which port does zorblax use?",
              "checks": [{"type": "contains", "value": ["4417"]},
                         {"type": "not_contains", "value": ["banana"]}]}
             for i in range(n_cases)]
    (folder / "evals" / "evals.json").write_text(
        json.dumps({"skill_name": "zorblax-ports", "cases": cases}))
    return folder


def knows_fact_if_told(body: dict) -> str:
    """A model that answers right only when the skill is in its context."""
    told = any("4417" in json.dumps(m.get("content")) for m in body["messages"])
    return "Zorblax listens on port 4417." if told else "Probably port 8080."


@pytest.fixture
def server():
    with FakeOpenAIServer(responder=knows_fact_if_told) as srv:
        yield srv


@pytest.fixture
def settings(server, tmp_path) -> Settings:
    return Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "home"),
                              "HUBSKILLS_BASE_URL": server.url})


def config(**overrides) -> EvalConfig:
    values = {"models": ["local/fake-student"], "runs": 2, "retry": FAST}
    values.update(overrides)
    return EvalConfig(**values)


def completions(server) -> list[dict]:
    return [r for r in server.requests if r["path"].endswith("/chat/completions")]


def test_lift_and_statistics_from_a_run(server, settings, tmp_path):
    run = run_evaluation(make_skill(tmp_path, 12), config(), settings)
    [summary] = summarize(run.rows)
    assert len(run.rows) == 12 * 2 * 2
    assert summary.stats.baseline.pass_rate == 0.0
    assert summary.stats.skill.pass_rate == 1.0
    assert summary.stats.lift == 1.0 and summary.stats.verdict == "helps"
    assert summary.stats.b == 12 and summary.stats.c == 0
    assert summary.stats.p_value == pytest.approx(mcnemar_exact(12, 0))
    assert not run.manifest.is_partial and run.manifest.samples_done == 48
    assert summary.skill_overhead_tokens > 0
    assert summary.skill.cost_usd == 0.0  # local servers are free, and say so
    # the not_contains check passes in both arms every time: flagged
    assert all("not_contains" in name for name in summary.non_discriminating)
    assert len(summary.non_discriminating) == 12
    assert run.manifest.status == "complete"


def test_arms_differ_only_by_the_skill(server, settings, tmp_path, monkeypatch):
    (tmp_path / "cwd").mkdir()
    (tmp_path / "cwd" / "NOTES.md").write_text("CWD-MARKER do not leak")
    monkeypatch.chdir(tmp_path / "cwd")
    run_evaluation(make_skill(tmp_path), config(runs=1), settings)
    bodies = [json.loads(json.dumps(b)) for b in server.bodies]
    assert not any("CWD-MARKER" in json.dumps(b) for b in bodies)
    by_arm: dict[bool, list[dict]] = {True: [], False: []}
    for body in bodies:
        by_arm["4417" in json.dumps(body)].append(body)
    assert len(by_arm[True]) == len(by_arm[False]) == N_CASES
    for base, skill in zip(sorted(by_arm[False], key=json.dumps),
                           sorted(by_arm[True], key=json.dumps), strict=True):
        assert base["messages"][0] == skill["messages"][0]  # the same neutral system prompt
        assert skill["messages"][1]["content"].endswith(base["messages"][1]["content"])
        assert {k: v for k, v in base.items() if k != "messages"} == \
            {k: v for k, v in skill.items() if k != "messages"}


def test_system_placement_changes_only_the_system_prompt(server, settings, tmp_path):
    run_evaluation(make_skill(tmp_path, 1), config(runs=1, placement="system"), settings)
    base, skill = sorted(server.bodies, key=lambda b: "4417" in json.dumps(b))
    assert base["messages"][1] == skill["messages"][1]
    assert FACT in skill["messages"][0]["content"]
    assert skill["messages"][0]["content"].startswith(base["messages"][0]["content"])


def test_cached_rerun_makes_no_calls(server, settings, tmp_path):
    skill = make_skill(tmp_path)
    first = run_evaluation(skill, config(), settings)
    calls = len(completions(server))
    second = run_evaluation(skill, config(), settings)
    assert len(completions(server)) == calls
    assert all(row.cached for row in second.rows)
    assert second.manifest.run_id != first.manifest.run_id
    assert len(list_runs(settings.runs_dir)) == 2  # a run is never overwritten
    assert [r.passed for r in sorted(first.rows, key=_key)] == \
        [r.passed for r in sorted(second.rows, key=_key)]


def test_no_cache_calls_again(server, settings, tmp_path):
    skill = make_skill(tmp_path, 2)
    run_evaluation(skill, config(runs=1), settings)
    calls = len(completions(server))
    run_evaluation(skill, config(runs=1, use_cache=False), settings)
    assert len(completions(server)) == 2 * calls


def _key(row):
    return (row.model, row.arm, row.case_id, row.repeat)


def test_faults_give_the_same_verdicts_as_a_clean_run(tmp_path):
    rng = random.Random(7)
    lock = threading.Lock()

    def flaky(body: dict):
        with lock:
            roll = rng.random()
        if roll < 0.15:
            return {"status": 429, "error": {"message": "slow down", "type": "rate_limit"},
                    "headers": {"Retry-After": "0"}}
        if roll < 0.30:
            return {"status": 500, "error": {"message": "boom", "type": "server_error"}}
        return knows_fact_if_told(body)

    verdicts = []
    for responder, latency in ((knows_fact_if_told, 0.0), (flaky, 0.02)):
        with FakeOpenAIServer(responder=responder, latency=latency) as srv:
            home = tmp_path / f"home-{len(verdicts)}"
            settings = Settings.from_env({"HUBSKILLS_HOME": str(home),
                                          "HUBSKILLS_BASE_URL": srv.url})
            run = run_evaluation(make_skill(tmp_path / str(len(verdicts))), config(), settings)
            verdicts.append({_key(r): r.passed for r in run.rows})
            if responder is flaky:
                assert len(completions(srv)) > len(run.rows)  # faults were injected
    assert verdicts[0] == verdicts[1]


def test_persistent_errors_are_recorded_and_kept_out_of_rates(tmp_path):
    def broken_for_q0(body: dict):
        if "Question 0" in json.dumps(body):
            return {"status": 500, "error": {"message": "down", "type": "server_error"}}
        return knows_fact_if_told(body)

    with FakeOpenAIServer(responder=broken_for_q0) as srv:
        settings = Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "h"),
                                      "HUBSKILLS_BASE_URL": srv.url})
        fast_fail = RetryPolicy(attempts=2, base_delay=0.001, max_delay=0.001)
        run = run_evaluation(make_skill(tmp_path), config(retry=fast_fail), settings)
    [summary] = summarize(run.rows)
    errors = [r for r in run.rows if r.is_error]
    assert len(errors) == 4 and {r.case_id for r in errors} == {"q0"}
    assert summary.baseline.errors == summary.skill.errors == 2
    assert summary.stats.n_cases == N_CASES - 1
    assert summary.stats.skill.pass_rate == 1.0


def test_resume_after_a_kill_makes_no_repeated_calls(server, settings, tmp_path):
    skill = make_skill(tmp_path)
    first = run_evaluation(skill, config(), settings)
    # simulate a run killed after 10 rows: keep them, drop the cache
    rows_file = settings.runs_dir / first.manifest.run_id / "rows.jsonl"
    lines = rows_file.read_text().splitlines()
    rows_file.write_text("\n".join(lines[:10]) + "\n" + lines[10][:25])  # torn last line
    settings.cache_path.unlink()
    for extra in ("-wal", "-shm"):
        Path(str(settings.cache_path) + extra).unlink(missing_ok=True)
    server.reset()
    resumed = run_evaluation(skill, config(), settings, resume=first.manifest.run_id)
    assert len(completions(server)) == len(lines) - 10
    assert resumed.manifest.run_id == first.manifest.run_id
    assert len(resumed.rows) == len(lines)
    assert resumed.manifest.status == "complete"


def test_resume_refuses_a_changed_skill(server, settings, tmp_path):
    skill = make_skill(tmp_path, 1)
    first = run_evaluation(skill, config(runs=1), settings)
    (skill / "SKILL.md").write_text((skill / "SKILL.md").read_text() + "\nMore.\n")
    with pytest.raises(HubskillsError, match="different version"):
        run_evaluation(skill, config(), settings, resume=first.manifest.run_id)


def test_max_cost_stops_cleanly_and_saves_what_was_done(tmp_path):
    with FakeOpenAIServer(responder=knows_fact_if_told) as srv:
        settings = Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "h"),
                                      "OPENAI_API_KEY": "sk-test",
                                      "OPENAI_BASE_URL": srv.url})
        run = run_evaluation(make_skill(tmp_path),
                             config(models=["openai/gpt-4o-mini"], max_cost=1e-9,
                                    concurrency=1), settings)
        assert run.manifest.status == "stopped"
        assert "max-cost" in (run.manifest.note or "")
        assert len(completions(srv)) == 0  # no call's worst case fits: none is sent
    assert read_rows(settings.runs_dir, run.manifest.run_id) == []


def test_missing_key_fails_before_any_call(tmp_path):
    settings = Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "h")})
    with pytest.raises(MissingCredentials) as err:
        run_evaluation(make_skill(tmp_path), config(models=["openai/gpt-4o-mini"]), settings)
    assert err.value.variable == "OPENAI_API_KEY"
    assert list_runs(settings.runs_dir) == []


def test_tool_mode_records_skill_loading(tmp_path):
    def loader(body: dict):
        roles = [m["role"] for m in body["messages"]]
        if body.get("tools") and "tool" not in roles:
            return {"text": "", "tool_calls": [
                {"name": "load_skill", "arguments": {"name": "zorblax-ports"}}]}
        return knows_fact_if_told(body)

    with FakeOpenAIServer(responder=loader) as srv:
        settings = Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "h"),
                                      "HUBSKILLS_BASE_URL": srv.url})
        run = run_evaluation(make_skill(tmp_path, 2), config(runs=1, mode="tool"), settings)
        tool_bodies = [b for b in srv.bodies if b.get("tools")]
    [summary] = summarize(run.rows)
    assert summary.invocation_rate == 1.0
    assert summary.stats.skill.pass_rate == 1.0 and summary.stats.baseline.pass_rate == 0.0
    assert {t["function"]["name"] for t in tool_bodies[0]["tools"]} == \
        {"load_skill", "read_skill_file"}
    # the skill arm's first request lists only name and description, not the body
    assert FACT not in json.dumps(tool_bodies[0]["messages"])


def test_judge_assertions_are_graded_by_the_judge_model(tmp_path):
    def student_or_judge(body: dict):
        text = json.dumps(body["messages"])
        if "VERDICT" in text:  # the judge's instructions
            ok = "4417" in body["messages"][-1]["content"].split("<answer>")[1]
            return f"VERDICT: {'PASS' if ok else 'FAIL'}\nREASON: checked the port."
        return knows_fact_if_told(body)

    folder = make_skill(tmp_path, 2)
    suite = json.loads((folder / "evals" / "evals.json").read_text())
    for case in suite["cases"]:
        case["checks"] = []
        case["assertions"] = ["The answer names port 4417."]
    (folder / "evals" / "evals.json").write_text(json.dumps(suite))
    with FakeOpenAIServer(responder=student_or_judge) as srv:
        settings = Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "h"),
                                      "HUBSKILLS_BASE_URL": srv.url})
        run = run_evaluation(folder, config(runs=1, judge="local/fake-judge"), settings)
    [summary] = summarize(run.rows)
    assert summary.stats.skill.pass_rate == 1.0 and summary.stats.baseline.pass_rate == 0.0
    assert run.rows[0].checks[0].reason == "checked the port."


def test_keys_never_reach_saved_results(tmp_path):
    key = "sk-test-key-0123456789abcdef"
    with FakeOpenAIServer(responder=lambda body: f"I was called with {key}, port 4417",
                          api_key=key) as srv:
        settings = Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "h"),
                                      "OPENAI_API_KEY": key, "OPENAI_BASE_URL": srv.url})
        run = run_evaluation(make_skill(tmp_path, 1), config(models=["openai/gpt-4o-mini"],
                                                             runs=1), settings)
    assert all(MASK in row.output for row in run.rows)
    saved = "".join(p.read_text() for p in settings.runs_dir.rglob("*") if p.is_file())
    assert key not in saved and "port 4417" in saved


def test_a_run_told_which_samples_are_done_asks_only_for_the_others(server, settings, tmp_path):
    skill = make_skill(tmp_path, 3)
    first = run_evaluation(skill, config(), settings)
    given = first.rows[:5] + [first.rows[5].model_copy(update={"error": "lost",
                                                               "error_kind": "transport"})]
    calls = len(completions(server))
    run = run_evaluation(skill, config(use_cache=False), settings, done=given)
    assert len(completions(server)) - calls == 3 * 2 * 2 - 5  # the error row is asked again
    assert run.manifest.status == "complete" and not run.manifest.is_partial
    assert run.manifest.samples_done == run.manifest.samples_planned == 12
    assert {r.run_id for r in run.rows} == {run.manifest.run_id} != {first.manifest.run_id}


def test_samples_of_another_skill_version_are_not_taken_as_done(server, settings, tmp_path):
    skill = make_skill(tmp_path, 2)
    rows = run_evaluation(skill, config(), settings).rows
    (skill / "SKILL.md").write_text((skill / "SKILL.md").read_text() + "\nAlso: 4418.\n")
    calls = len(completions(server))
    with pytest.raises(HubskillsError, match="different version of the skill"):
        run_evaluation(skill, config(), settings, done=rows)
    assert len(completions(server)) == calls  # refused before any model call
