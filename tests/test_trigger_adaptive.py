"""Adaptive trigger evals (issue 41): rounds planned by `results.sequential_rates`, against the
fake tool-calling model of tests/test_trigger.py (real HTTP): a description that always opens
on its should-trigger queries and never on the others settles every query after two runs, so
the run stops with half the fixed plan's sessions; a fixed run is today's; verify replays the
rounds and catches rows cut where the design had not stopped; a resume continues the design."""

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
from registry.evaluation.trigger_report import summarize_triggers
from registry.evaluation.trigger_run import run_trigger_eval
from registry.providers import RetryPolicy
from registry.results.sequential_rates import RateDesign, look_alpha
from registry.verify.trigger import local_trigger

FAST = RetryPolicy(attempts=2, base_delay=0.001, max_delay=0.005, max_retry_after=0.01)
DESCRIPTION = "Configure ports of the zorblax daemon and its widgets. Use when configuring zorblax."
SHOULD = ["configure zorblax ports", "zorblax daemon crashed", "zorblax widgets ports",
          "restart zorblax daemon", "zorblax ports configure now", "daemon widgets zorblax"]
SHOULD_NOT = ["bake bread", "what time is it", "fill tax forms", "bread and cakes",
              "receipts for taxes", "weather tomorrow"]
DISTRACTORS = {"baking-bread": "Bake bread and cakes in an oven.",
               "tax-forms": "Fill in tax forms and receipts."}
RUNS = 4


def make_skill(root: Path) -> Path:
    folder = root / "zorblax-ports"
    (folder / "evals").mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: zorblax-ports\ndescription: \"{DESCRIPTION}\""
                                     "\n---\n\nZorblax listens on port 4417.\n")
    queries = [{"id": f"s{i}", "query": q, "should_trigger": True} for i, q in enumerate(SHOULD)]
    queries += [{"id": f"n{i}", "query": q, "should_trigger": False}
                for i, q in enumerate(SHOULD_NOT)]
    (folder / "evals" / "triggers.json").write_text(json.dumps({"queries": queries}))
    for name, description in DISTRACTORS.items():
        (root / "installed" / name).mkdir(parents=True, exist_ok=True)
        (root / "installed" / name / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: \"{description}\"\n---\nBody.\n")
    return folder


@pytest.fixture
def server():
    with FakeOpenAIServer(responder=TriggerModel(threshold=2)) as srv:
        yield srv


def settings_for(server, tmp_path) -> Settings:
    return Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "home"),
                              "HUBSKILLS_BASE_URL": server.url})


def config(tmp_path, **overrides) -> EvalConfig:
    values = {"models": ["local/fake-trigger"], "runs": RUNS, "retry": FAST,
              "distractors": tmp_path / "installed", "design": "auto"}
    return EvalConfig(mode="trigger", **{**values, **overrides})


def cut_after_round_1(folder: Path, **manifest_fields) -> None:
    """Keep a run's round-1 rows alone, its manifest counting them (and ``manifest_fields``)."""
    rows = folder / "rows.jsonl"
    kept = [line for line in rows.read_text().splitlines() if json.loads(line)["round"] == 1]
    rows.write_text("\n".join(kept) + "\n")
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest.update(manifest_fields, samples_done=len(kept))
    (folder / "manifest.json").write_text(json.dumps(manifest))


def test_a_description_that_always_decides_right_stops_with_half_the_sessions(server, tmp_path):
    skill, settings = make_skill(tmp_path), settings_for(server, tmp_path)
    run = run_trigger_eval(skill, config(tmp_path), settings)
    m = run.manifest
    assert m.design == RateDesign(runs=RUNS).to_dict() and m.status == "complete"
    assert not m.is_partial and m.samples_planned == 12 * RUNS
    # every query agreed over its first 2 runs: settled, so rounds 3 and 4 asked nothing
    assert len(run.rows) == 12 * 2 == len(server.bodies) < 12 * RUNS
    assert sorted({r.round for r in run.rows}) == [1, 2]
    assert m.design_stops == {"local/fake-trigger": {"round": RUNS, "reason": "plan complete",
                                                     "settled": 12}}
    (stored,) = m.summaries
    level = 1 - look_alpha(RateDesign(runs=RUNS), RUNS)  # the stopping look's level
    assert stored["level"] == pytest.approx(level) and level > 0.95
    assert stored["recall"]["rate"] == 1.0 and stored["false_triggers"]["rate"] == 0.0
    assert stored["recall"]["lo"] < wilson(6, 6)[0]  # wider than the 95% interval
    assert local_trigger(m.run_id, settings).status == "verified"


def test_a_fixed_trigger_run_is_unchanged(server, tmp_path):
    skill, settings = make_skill(tmp_path), settings_for(server, tmp_path)
    run = run_trigger_eval(skill, config(tmp_path, design="fixed"), settings)
    assert len(run.rows) == 12 * RUNS and {r.round for r in run.rows} == {None}
    assert run.manifest.design == {"kind": "fixed", "runs": RUNS}
    assert not run.manifest.design_stops
    assert run.manifest.summaries == [s.to_dict() for s in summarize_triggers(run.rows)]
    assert "level" not in run.manifest.summaries[0]
    assert (run.manifest.summaries[0]["recall"]["lo"], 1.0) == pytest.approx(wilson(6, 6))
    # and "auto" on a suite too small to settle (fewer than 10 queries) is the fixed plan
    small = run_trigger_eval(skill, config(tmp_path, case_ids=["s0", "s1", "n0"]), settings)
    assert small.manifest.design == {"kind": "fixed", "runs": RUNS}


def test_verify_catches_a_trigger_run_cut_where_its_design_had_not_stopped(server, tmp_path):
    skill, settings = make_skill(tmp_path), settings_for(server, tmp_path)
    run = run_trigger_eval(skill, config(tmp_path), settings)
    cut_after_round_1(settings.runs_dir / run.manifest.run_id)  # still "complete"
    found = local_trigger(run.manifest.run_id, settings)
    assert found.status == "mismatch"
    assert any("where the design had not stopped" in p for p in found.problems)


def test_verify_names_a_trigger_row_claiming_a_round_far_past_the_plan(server, tmp_path):
    """A row's round sizes the replay's list of rounds: a submitter's round 10**12 is named,
    not allocated (as for A/B runs, tests/test_verify_design.py)."""
    skill, settings = make_skill(tmp_path), settings_for(server, tmp_path)
    run = run_trigger_eval(skill, config(tmp_path), settings)
    rows = settings.runs_dir / run.manifest.run_id / "rows.jsonl"
    lines = rows.read_text().splitlines()
    rows.write_text("\n".join([json.dumps({**json.loads(lines[0]), "round": 10**12}),
                               *lines[1:]]) + "\n")
    found = local_trigger(run.manifest.run_id, settings)
    assert found.status == "mismatch"
    assert any(f"past the design's {RUNS}, first round 1000000000000" in p
               for p in found.problems)


def test_a_resume_continues_the_design_and_refuses_another(server, tmp_path):
    skill, settings = make_skill(tmp_path), settings_for(server, tmp_path)
    run = run_trigger_eval(skill, config(tmp_path), settings)
    cut_after_round_1(settings.runs_dir / run.manifest.run_id, partial=True,
                      status="interrupted", design_stops={})
    before = len(server.bodies)
    with pytest.raises(HubskillsError, match="continues the same design"):
        run_trigger_eval(skill, config(tmp_path, design="fixed"), settings,
                         resume=run.manifest.run_id)
    assert len(server.bodies) == before  # refused before any call
    resumed = run_trigger_eval(skill, config(tmp_path, design=None, use_cache=False), settings,
                               resume=run.manifest.run_id)
    assert len(server.bodies) - before == 12  # round 2 only
    assert len(resumed.rows) == 24 and not resumed.manifest.is_partial
    assert resumed.manifest.design_stops == run.manifest.design_stops
    assert local_trigger(run.manifest.run_id, settings).status == "verified"


def test_a_design_parameter_out_of_range_is_refused_before_any_call(server, tmp_path):
    skill, settings = make_skill(tmp_path), settings_for(server, tmp_path)
    with pytest.raises(HubskillsError, match="width must be in"):
        run_trigger_eval(skill, config(tmp_path, design_options={"width": 2}), settings)
    with pytest.raises(HubskillsError, match="unknown trigger design parameters: futility"):
        run_trigger_eval(skill, config(tmp_path, design_options={"futility": 0.1}), settings)
    assert not server.bodies


def test_the_cli_says_what_the_design_does_and_what_it_saved(server, tmp_path, monkeypatch):
    skill = make_skill(tmp_path)
    monkeypatch.setenv("HUBSKILLS_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HUBSKILLS_BASE_URL", server.url)
    result = CliRunner().invoke(cli, ["eval", str(skill), "--mode", "trigger", "-m",
                                      "local/fake-trigger", "--runs", str(RUNS),
                                      "--distractors", str(tmp_path / "installed")],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "round 2 of 4 · 0 queries settled · figures not yet settled" in result.output
    assert "stopped at 50% of the planned sessions (24 of 48): plan complete" in result.output
    assert "intervals at the level of the look the adaptive design stopped at" in result.output
    (run_id,) = [p.name for p in (tmp_path / "home" / "runs").iterdir() if p.is_dir()]
    shown = CliRunner().invoke(cli, ["runs", "show", run_id, "--json"], catch_exceptions=False)
    (summary,) = json.loads(shown.stdout)["summaries"]
    assert summary["level"] == pytest.approx(1 - look_alpha(RateDesign(runs=RUNS), RUNS))
    verified = CliRunner().invoke(cli, ["verify", run_id], catch_exceptions=False)
    assert verified.exit_code == 0, verified.output


def test_tune_scores_each_candidate_with_an_adaptive_trigger_eval(server, tmp_path):
    from registry.generate.tune import tune_description

    skill, settings = make_skill(tmp_path), settings_for(server, tmp_path)
    suite = skill / "evals" / "triggers.json"
    queries = json.loads(suite.read_text())["queries"]
    for i, q in enumerate(queries):  # half of each kind held out
        q["split"] = "holdout" if i % 2 else "train"
    suite.write_text(json.dumps({"queries": queries}))
    config = EvalConfig(models=["local/fake-trigger"], mode="trigger", runs=RUNS, retry=FAST,
                        distractors=tmp_path / "installed")  # design: auto, as `tune` does
    result = tune_description(skill, config, settings, teacher="local/fake-trigger", rounds=1)
    assert result.design == RateDesign(runs=RUNS).to_dict()
    original = result.candidates[0]
    assert len(original.rows) == 24 < 12 * RUNS  # settled after 2 runs, as an eval
    assert original.stop == {"round": RUNS, "reason": "plan complete", "settled": 12}
    assert original.level == pytest.approx(1 - look_alpha(RateDesign(runs=RUNS), RUNS))
    assert original.holdout.recall.rate == 1.0
    assert original.holdout.recall.lo < wilson(3, 3)[0]  # at the stopping look's level
    report = json.loads((result.saved / "report.json").read_text())
    assert report["design"]["kind"] == "adaptive" and report["candidates"][0]["level"] > 0.95


def test_a_pushed_adaptive_run_is_whole_on_the_board_with_the_runs_own_intervals(server,
                                                                                 tmp_path,
                                                                                 monkeypatch):
    skill = make_skill(tmp_path)
    (skill / "SKILL.md").write_text((skill / "SKILL.md").read_text().replace(
        "\n---\n", "\nmetadata:\n  version: \"1.0.0\"\n---\n", 1))
    monkeypatch.setenv("HUBSKILLS_HOME", str(tmp_path / "home"))
    runner = CliRunner()
    assert runner.invoke(cli, ["publish", str(skill), "--force"],
                         catch_exceptions=False).exit_code == 0
    pushed = runner.invoke(cli, ["eval", str(skill), "--mode", "trigger", "-m",
                                 "local/fake-trigger", "--base-url", server.url, "--runs",
                                 str(RUNS), "--distractors", str(tmp_path / "installed"),
                                 "--push", "--json"], catch_exceptions=False)
    assert pushed.exit_code == 0, pushed.output
    shown = json.loads(pushed.stdout)
    (summary,) = shown["summaries"]
    board = runner.invoke(cli, ["leaderboard", "--json"], catch_exceptions=False)
    (record,) = [r for r in json.loads(board.output) if r["mode"] == "trigger"]
    assert record["status"] == "" and record["verification"] == "replayed"
    assert (record["recall"], record["recall_lo"], record["false_hi"]) == (
        summary["recall"]["rate"], summary["recall"]["lo"], summary["false_triggers"]["hi"])


def test_a_budget_below_one_round_is_refused_before_any_call(tmp_path):
    skill = make_skill(tmp_path)
    settings = Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "home"),
                                  "OPENAI_API_KEY": "sk-test-not-sent"})
    cheap = config(tmp_path, models=["openai/gpt-4.1-mini"], max_cost=0.0001)
    with pytest.raises(HubskillsError, match=r"below the \$0\.0\d+ its next round costs at "
                                             r"least \(12 sessions\)") as caught:
        run_trigger_eval(skill, cheap, settings)
    assert "--design fixed" in caught.value.hint
    assert not list(settings.runs_dir.glob("*/rows.jsonl"))  # nothing written, nothing asked
