"""`eval --mode trigger`: a fresh session per query with the skill among distractors, against a
fake tool-calling model (real HTTP, OpenAI wire format) that opens the skill sharing the most
words with the query, so recall and false triggers are computable by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from fakes.openai_server import FakeOpenAIServer
from fakes.trigger_model import TriggerModel
from stats_reference import wilson

from registry.cli import cli
from registry.config import Settings
from registry.errors import HubskillsError
from registry.evaluation.config import EvalConfig
from registry.evaluation.distractors import bundled_distractors
from registry.evaluation.trigger_report import summarize_triggers
from registry.evaluation.trigger_run import run_trigger_eval
from registry.providers import RetryPolicy
from registry.results.runs import list_runs

FAST = RetryPolicy(attempts=2, base_delay=0.001, max_delay=0.005, max_retry_after=0.01)
DESCRIPTION = "Configure ports of the zorblax daemon and its widgets. Use when configuring zorblax."
# (id, query, should_trigger): what the fake does is in the comment (words shared).
QUERIES = [
    ("s1", "configure zorblax ports", True),  # skill 3: triggered
    ("s2", "zorblax daemon crashed", True),  # skill 2: triggered
    ("s3", "set up zorblax now", True),  # skill 1 < threshold: missed, nothing opened
    ("s4", "bake bread in the zorblax oven", True),  # skill 1, baking-bread 3: distractor wins
    ("s5", "look around then configure zorblax ports", True),  # list_files, then triggered
    ("e1", "explode zorblax ports", True),  # HTTP 400: a session error
    ("n1", "bake bread", False),  # baking-bread: right, not triggered
    ("n2", "configure daemon widgets generally", False),  # skill 3: a false trigger
    ("n3", "what time is it", False),  # nothing
]
DISTRACTORS = {"baking-bread": "Bake bread and cakes in an oven.",
               "tax-forms": "Fill in tax forms and receipts."}


def make_skill(root: Path) -> Path:
    folder = root / "zorblax-ports"
    (folder / "evals").mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: zorblax-ports\ndescription: \"{DESCRIPTION}\""
                                     "\n---\n\nZorblax listens on port 4417.\n")
    queries = [{"id": i, "query": q, "should_trigger": s} for i, q, s in QUERIES]
    (folder / "evals" / "triggers.json").write_text(json.dumps({"queries": queries}))
    return folder


def make_distractors(root: Path) -> Path:
    for name, description in DISTRACTORS.items():
        (root / "installed" / name).mkdir(parents=True, exist_ok=True)
        (root / "installed" / name / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: \"{description}\"\n---\nBody.\n")
    return root / "installed"


@pytest.fixture
def model():
    return TriggerModel(threshold=2)


@pytest.fixture
def server(model):
    with FakeOpenAIServer(responder=model) as srv:
        yield srv


def settings_for(server, tmp_path) -> Settings:
    return Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "home"),
                              "HUBSKILLS_BASE_URL": server.url})


def config(tmp_path, **overrides) -> EvalConfig:
    values = {"models": ["local/fake-trigger"], "runs": 2, "retry": FAST,
              "distractors": make_distractors(tmp_path)}
    return EvalConfig(mode="trigger", **{**values, **overrides})


def test_recall_false_triggers_errors_and_the_distractor_opened_instead(server, model, tmp_path):
    skill = make_skill(tmp_path)
    run = run_trigger_eval(skill, config(tmp_path), settings_for(server, tmp_path))
    assert run.manifest.status == "complete" and run.manifest.mode == "trigger"
    assert run.manifest.samples_planned == 9 * 2 and len(run.rows) == 18
    (summary,) = summarize_triggers(run.rows)
    assert (summary.recall.rate, summary.recall.queries, summary.recall.samples) == (0.6, 5, 10)
    assert (summary.recall.lo, summary.recall.hi) == pytest.approx(wilson(3, 5))
    assert summary.false_triggers.rate == pytest.approx(1 / 3)
    assert (summary.false_triggers.lo, summary.false_triggers.hi) == \
        pytest.approx(wilson(1, 3))
    assert summary.accuracy.rate == pytest.approx(5 / 8)
    assert summary.errors == 2  # e1 in both runs: apart, in no denominator
    assert summary.opened_instead == {"(none)": 2, "baking-bread": 2}
    by_case = {(r.case_id, r.repeat): r for r in run.rows}
    assert by_case["s4", 0].opened_skill == "baking-bread" and not by_case["s4", 0].activated
    assert by_case["s5", 1].turns == 2 and by_case["s5", 1].activated
    assert by_case["e1", 0].is_error and by_case["e1", 0].activated is None
    assert by_case["n2", 0].activated and by_case["n2", 0].passed is False
    assert {r.turns for k, r in by_case.items() if k[0] != "s5" and not r.is_error} == {1}
    # each session listed the skill among both distractors, the query first in its own chat
    first = server.bodies[0]["messages"]
    assert [m["role"] for m in first] == ["system", "user"]
    assert all(f"- {n}: " in first[0]["content"] for n in [*DISTRACTORS, "zorblax-ports"])


def test_a_rerun_is_served_from_the_cache_and_a_resume_runs_only_what_is_missing(server,
                                                                                 tmp_path):
    skill, settings = make_skill(tmp_path), settings_for(server, tmp_path)
    first = run_trigger_eval(skill, config(tmp_path), settings)
    calls = len(server.bodies)  # model calls (the endpoint probe is no call)
    again = run_trigger_eval(skill, config(tmp_path), settings)
    assert len(server.bodies) == calls + 2  # only e1's failing calls are asked again
    assert all(r.cached for r in again.rows if not r.is_error)
    rows_file = settings.runs_dir / first.manifest.run_id / "rows.jsonl"
    kept = [line for line in rows_file.read_text().splitlines()
            if json.loads(line)["case_id"] not in ("s1", "n1")]
    rows_file.write_text("\n".join(kept) + "\n")
    before = len(server.bodies)
    resumed = run_trigger_eval(skill, config(tmp_path, use_cache=False), settings,
                               resume=first.manifest.run_id)
    # s1 and n1 in 2 runs, and e1's two error rows retried
    assert len(server.bodies) - before == 6
    assert len(resumed.rows) == 18 and resumed.manifest.status == "complete"


def test_the_bundled_distractors_are_listed_by_default(server, tmp_path):
    skill = make_skill(tmp_path)
    bundled = bundled_distractors()
    assert len(bundled) >= 20 and len({d.name for d in bundled}) == len(bundled)
    run = run_trigger_eval(skill, config(tmp_path, distractors=None, runs=1,
                                         case_ids=["s1"]), settings_for(server, tmp_path))
    system = server.bodies[0]["messages"][0]["content"]
    assert all(f"- {d.name}: {d.description} " in system for d in bundled)
    assert run.manifest.distractors == [d.name for d in bundled]  # type: ignore[attr-defined]
    assert run.rows[0].activated


def test_max_cost_stops_the_run(tmp_path):
    model = TriggerModel()
    with FakeOpenAIServer(responder=model, api_key="k") as srv:
        settings = Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "home"),
                                      "OPENAI_API_KEY": "k", "OPENAI_BASE_URL": srv.url})
        run = run_trigger_eval(make_skill(tmp_path), config(
            tmp_path, models=["openai/gpt-4.1"], max_cost=1e-9, concurrency=1), settings)
    assert run.manifest.status == "stopped" and "--max-cost" in run.manifest.note
    assert len(run.rows) == 0 == model.requests  # no call's worst case fits: none is sent


def test_a_model_without_tools_and_a_skill_without_triggers_are_refused(tmp_path):
    skill = make_skill(tmp_path)
    settings = Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "home")})
    with pytest.raises(HubskillsError, match="cannot call tools"):
        run_trigger_eval(skill, config(tmp_path, models=["embedded/smollm2-135m"]), settings)
    (skill / "evals" / "triggers.json").unlink()
    with pytest.raises(HubskillsError, match="no evals/triggers.json") as caught:
        run_trigger_eval(skill, config(tmp_path), settings)
    assert "should_trigger" in caught.value.hint
    assert list_runs(settings.runs_dir) == []


def test_the_cli_runs_reports_and_shows_a_trigger_run(server, tmp_path):
    skill, installed = make_skill(tmp_path), make_distractors(tmp_path)
    args = ["eval", str(skill), "--mode", "trigger", "-m", "local/fake-trigger", "--base-url",
            server.url, "--distractors", str(installed), "--runs", "1"]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "60% [23–88%]" in result.output  # recall 3/5, Wilson over queries
    assert "33% [6–79%]" in result.output and "baking-bread ×1" in result.output
    shown = CliRunner().invoke(cli, [*args, "--json"])
    data = json.loads(shown.stdout)
    (summary,) = data["summaries"]
    assert summary["recall"]["rate"] == 0.6 and summary["errors"] == 1
    run_id = data["manifest"]["run_id"]
    again = CliRunner().invoke(cli, ["runs", "show", run_id, "-v"])
    assert again.exit_code == 0 and "60% [23–88%]" in again.output and "s4" in again.output


def test_the_cli_refuses_what_trigger_mode_does_not_use(tmp_path):
    skill = make_skill(tmp_path)
    used = CliRunner().invoke(cli, ["eval", str(skill), "--mode", "trigger", "--judge", "x"])
    assert "--judge cannot be used with --mode trigger" in str(used.exception)
    alone = CliRunner().invoke(cli, ["eval", str(skill), "--distractors", str(tmp_path)])
    assert "only with --mode trigger" in str(alone.exception)


def test_a_pushed_trigger_run_joins_the_registry_as_its_own_mode(server, tmp_path):
    skill = make_skill(tmp_path)
    (skill / "SKILL.md").write_text((skill / "SKILL.md").read_text().replace(
        "\n---\n", "\nmetadata:\n  version: \"1.0.0\"\n---\n", 1))
    runner = CliRunner()
    published = runner.invoke(cli, ["publish", str(skill), "--force"],  # few queries, no suite
                              catch_exceptions=False)
    assert published.exit_code == 0
    pushed = runner.invoke(cli, ["eval", str(skill), "--mode", "trigger", "-m",
                                 "local/fake-trigger", "--base-url", server.url,
                                 "--distractors", str(make_distractors(tmp_path)), "--runs",
                                 "1", "--push"], catch_exceptions=False)
    assert pushed.exit_code == 0 and "Pushed 9 trigger rows" in pushed.output
    board = runner.invoke(cli, ["leaderboard", "--json"], catch_exceptions=False)
    records = [r for r in json.loads(board.output) if r["mode"] == "trigger"]
    assert len(records) == 1 and records[0]["model"] == "local/fake-trigger"
    info = runner.invoke(cli, ["info", "local/zorblax-ports"], catch_exceptions=False)
    assert info.exit_code == 0
