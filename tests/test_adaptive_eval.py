"""The adaptive design in the engine (`evaluation.adaptive`), against fake models over real HTTP:
rounds that stop once the verdict is decided, never more than the fixed plan, a resume that
continues the same design, and the bad input refused before any call."""

from __future__ import annotations

import hashlib
import json
import re

import pytest
from click.testing import CliRunner
from fakes.metered_server import MeteredOpenAIServer, billing_max
from fakes.openai_server import FakeOpenAIServer
from test_evaluate import FAST, knows_fact_if_told, make_skill

from registry.cli import cli
from registry.config import Settings
from registry.errors import HubskillsError
from registry.evaluation.adaptive import saved_line
from registry.evaluation.config import EvalConfig
from registry.evaluation.engine import run_evaluation
from registry.results.sequential import Design, plan_round

PRICED = "openai/gpt-4.1"


def coin(body: dict) -> str:
    """A model the skill does not change: each (question, seed) passes or fails by a hash,
    the same in both arms, so cases disagree across runs and the lift is zero."""
    question = json.dumps(body["messages"][-1]["content"])[-60:]
    digest = hashlib.sha256(f"{question}:{body.get('seed')}".encode()).digest()
    return "port 4417" if digest[0] % 2 else "port 8080"


@pytest.fixture
def server():
    with FakeOpenAIServer(responder=knows_fact_if_told) as srv:
        yield srv


def settings_for(server, tmp_path) -> Settings:
    return Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "home"),
                              "HUBSKILLS_BASE_URL": server.url})


def config(**overrides) -> EvalConfig:
    """An adaptive run whose rounds are whole runs (``splits`` 1), so a round here is a run
    (the default, two rounds a run: `test_eval_is_adaptive_by_default_and_says_...`)."""
    options = {} if overrides.get("design") == "fixed" else {"splits": 1}
    options |= overrides.pop("design_options", {})
    return EvalConfig(**{"models": ["local/fake"], "runs": 3, "retry": FAST, "use_cache": False,
                         "design": "adaptive", "design_options": options, **overrides})


def test_a_decided_verdict_stops_early_with_fewer_calls_than_the_fixed_plan(server, tmp_path):
    skill, settings = make_skill(tmp_path, 20), settings_for(server, tmp_path)
    lines: list[str] = []
    run = run_evaluation(skill, config(), settings, on_round=lines.append)
    # round 1 asks run 1 of every case in both arms: 20 of 20 cases lifted decides "helps"
    # at the first look's level (chained, within the 0.0226 that Pocock spends by a third)
    assert len(server.bodies) == len(run.rows) == 40 < 20 * 3 * 2
    assert {r.round for r in run.rows} == {1} and {r.repeat for r in run.rows} == {0}
    assert run.manifest.status == "complete" and not run.manifest.is_partial
    assert run.manifest.samples_planned == 120 and run.manifest.design["kind"] == "adaptive"
    assert Design.from_dict(run.manifest.design) == Design(kind="adaptive", runs=3, splits=1)
    assert run.manifest.design_stops == {"local/fake": {
        "round": 1, "reason": "helps, decided at round 1", "verdict": "helps", "settled": 0}}
    assert lines == ["round 1 of 3 · 0 cases settled · verdict not yet decided",
                     "round 1 of 3 · 0 cases settled · stopped: helps, decided at round 1"]
    assert saved_line(run.manifest, run.rows) == \
        "stopped at 33% of the planned answers (40 of 120): helps, decided at round 1"


def test_the_fixed_design_asks_every_sample_as_before(server, tmp_path):
    skill, settings = make_skill(tmp_path, 12), settings_for(server, tmp_path)
    run = run_evaluation(skill, config(design="fixed"), settings)
    assert len(server.bodies) == len(run.rows) == 72
    assert {r.round for r in run.rows} == {None} and run.manifest.design_stops is None
    assert run.manifest.design == {"kind": "fixed", "runs": 3}
    assert saved_line(run.manifest, run.rows) is None
    default = run_evaluation(skill, config(design=None), settings)  # the library's default
    assert len(default.rows) == 72 and default.manifest.design["kind"] == "fixed"


def _rows_by_round(run) -> list[list[tuple[str, str, int, bool | None]]]:
    rounds: dict[int, list] = {}
    for r in run.rows:
        rounds.setdefault(r.round, []).append((r.case_id, r.arm, r.repeat,
                                               None if r.is_error else r.passed))
    return [rounds[k] for k in sorted(rounds)]


def test_no_effect_runs_round_by_round_as_the_design_plans_and_never_past_the_cap(tmp_path):
    with FakeOpenAIServer(responder=coin) as server:
        skill, settings = make_skill(tmp_path, 12), settings_for(server, tmp_path)
        run = run_evaluation(skill, config(), settings)
        asked = len(server.bodies)
    assert asked == len(run.rows) <= 72
    # every round's samples are the ones the design planned from the rows before them
    history = {f"q{i}": {"baseline": [], "skill": []} for i in range(12)}
    design = Design.from_dict(run.manifest.design)
    for number, rows in enumerate(_rows_by_round(run), 1):
        plan = plan_round(design, history)
        assert not plan.stop and plan.round == number
        assert sorted((c, r) for c, a, r, _ in rows if a == "skill") == sorted(plan.samples)
        for c, a, _, v in sorted(rows, key=lambda row: row[2]):
            history[c][a].append(v)
    final = plan_round(design, history)
    assert final.stop and run.manifest.design_stops["local/fake"]["reason"] == final.reason
    assert final.verdict != "helps" and not run.manifest.is_partial


def test_a_resumed_adaptive_run_continues_the_same_design(tmp_path):
    with FakeOpenAIServer(responder=coin) as server:
        skill, settings = make_skill(tmp_path, 12), settings_for(server, tmp_path)
        first = run_evaluation(skill, config(design_options={"futility": 0, "settle_after": 2}),
                               settings)
        last = max(r.round for r in first.rows)
        assert last == 3  # no futility stop: the plan runs to its end, settled cases apart
        assert first.manifest.design_stops["local/fake"]["reason"] == "plan complete"
        assert len(first.rows) < 72 and first.manifest.design_stops["local/fake"]["settled"]
        rows_file = settings.runs_dir / first.manifest.run_id / "rows.jsonl"
        kept = [line for line in rows_file.read_text().splitlines()
                if json.loads(line)["round"] < last]
        cut = len(first.rows) - len(kept)
        rows_file.write_text("\n".join(kept) + "\n")
        before = len(server.bodies)
        # no --design: the run's own; the same design said again is accepted too
        resumed = run_evaluation(skill, config(design=None), settings,
                                 resume=first.manifest.run_id)
        assert len(server.bodies) - before == cut  # only the cut round is asked again
    assert resumed.manifest.design == first.manifest.design
    assert resumed.manifest.design_stops == first.manifest.design_stops
    assert sorted((r.case_id, r.arm, r.repeat, r.round, r.passed) for r in resumed.rows) == \
        sorted((r.case_id, r.arm, r.repeat, r.round, r.passed) for r in first.rows)


def test_a_resume_with_another_design_is_refused_before_any_call(server, tmp_path):
    skill, settings = make_skill(tmp_path, 12), settings_for(server, tmp_path)
    fixed = run_evaluation(skill, config(design="fixed", runs=1), settings)
    adaptive = run_evaluation(skill, config(runs=1), settings)
    calls = len(server.bodies)
    with pytest.raises(HubskillsError, match="started with the fixed design") as err:
        run_evaluation(skill, config(runs=1), settings, resume=fixed.manifest.run_id)
    assert "--design fixed" in err.value.hint
    with pytest.raises(HubskillsError, match="started with the adaptive design"):
        run_evaluation(skill, config(design="fixed", runs=1), settings,
                       resume=adaptive.manifest.run_id)
    with pytest.raises(HubskillsError, match="adaptive design"):  # a parameter changed
        run_evaluation(skill, config(runs=1, design_options={"alpha": 0.01}), settings,
                       resume=adaptive.manifest.run_id)
    assert len(server.bodies) == calls


@pytest.mark.parametrize("options, message", [
    ({"alpha": 0.5}, "alpha must be in"), ({"settle_after": 1}, "settle_after must be"),
    ({"spending": "cubic"}, "spending must be one of"), ({"bogus": 1}, "unknown design"),
    ({"alpha": "often"}, "invalid evaluation design"),
])
def test_a_design_parameter_out_of_range_is_refused_before_any_call(server, tmp_path, options,
                                                                    message):
    skill, settings = make_skill(tmp_path, 12), settings_for(server, tmp_path)
    with pytest.raises(HubskillsError, match=message):
        run_evaluation(skill, config(design_options=options), settings)
    assert server.bodies == [] and not settings.runs_dir.exists() or \
        not any(settings.runs_dir.iterdir())


def test_a_budget_below_one_round_is_refused_before_any_call(tmp_path, monkeypatch):
    with MeteredOpenAIServer(responder=billing_max(knows_fact_if_told),
                             api_key="k") as metered:
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        monkeypatch.setenv("OPENAI_BASE_URL", metered.url)
        skill = make_skill(tmp_path, 20)
        monkeypatch.setenv("HUBSKILLS_HOME", str(tmp_path / "home"))
        settings = Settings.from_env()
        with pytest.raises(HubskillsError, match="below the .* its next round is estimated "
                                                 r"to cost \(40 answers\)") as err:
            run_evaluation(skill, config(models=[PRICED], max_cost=0.01), settings)
        assert "--max-cost 0." in err.value.hint and "--design fixed" in err.value.hint
        assert metered.calls == 0
        # one round fits: the run goes ahead (and decides at round 1, under the cap)
        run = run_evaluation(skill, config(models=[PRICED], max_cost=1.0, max_tokens=64),
                             settings)
        assert len(run.rows) == 40 and metered.billed(PRICED) <= 1.0


def test_eval_is_adaptive_by_default_and_says_what_the_design_does(server, tmp_path):
    skill = make_skill(tmp_path, 20)
    env = {"NO_COLOR": "1", "COLUMNS": "200", "HUBSKILLS_HOME": str(tmp_path / "home")}
    result = CliRunner().invoke(cli, ["eval", str(skill), "-m", "local/fake", "--base-url",
                                      server.url, "--no-cache"], env=env)
    assert result.exit_code == 0, result.output
    # two rounds a run: half the cases, then the other half (splits 2)
    assert "round 1 of 6 · 0 cases settled · verdict not yet decided" in result.output
    intro = ("at most 120 answers to get (about 2 min at a typical pace; free; adaptive: it "
             "stops once the verdict is decided)")
    assert intro in result.output
    # the run says what it is before its first round (a walk: the round line came first)
    assert result.output.index(intro) < result.output.index("round 1 of 6")
    assert "stopped at 33% of the planned answers (40 of 120): helps, decided at round 2" in \
        result.output
    assert len(server.bodies) == 40
    adaptive_id = re.search(r"run (\d{8}-\d{6}-[0-9a-f]{6})", result.output)[1]
    fixed = CliRunner().invoke(cli, ["eval", str(skill), "-m", "local/fake", "--base-url",
                                     server.url, "--no-cache", "--design", "fixed", "--json"],
                               env=env)
    assert fixed.exit_code == 0 and len(server.bodies) == 40 + 120
    run_id = json.loads(fixed.stdout)["manifest"]["run_id"]
    # runs show and runs compare say what eval said (a walk: "complete", and "runs: 2 → 4")
    shown = CliRunner().invoke(cli, ["runs", "show", adaptive_id], env=env)
    assert "stopped at 33% of the planned answers (40 of 120): helps" in shown.output
    # its runs are a cap, and it ended as its design decided (a walk: "× 3 runs (complete)"
    # in the CLI, "20×1" on the board, "rests on 3 answers" beside rates of one)
    assert f"20 cases × up to 3 runs · inline (user) · run {adaptive_id} (complete: its " \
           "design stopped early)" in " ".join(shown.output.split()), shown.output
    compared = CliRunner().invoke(cli, ["runs", "compare", run_id, adaptive_id], env=env)
    assert "runs: 3 → up to 3 (adaptive)" in compared.output, compared.output
    assert "rests on 1 to 3 answers per run" in " ".join(compared.output.split())
    listed = CliRunner().invoke(cli, ["runs"], env=env)
    assert "20 × ≤3" in listed.output and "20 × 3" in listed.output
    # a chat run's answers, read from the CLI (a walk: only the review page showed them)
    answer = CliRunner().invoke(cli, ["runs", "show", run_id, "--case", "q0", "--arm",
                                      "baseline"], env=env)
    assert answer.exit_code == 0, answer.output
    assert "case q0 · baseline arm · repeat 0: failed" in answer.output
    assert "Probably port 8080" in answer.output and "✗" in answer.output
    refused = CliRunner().invoke(cli, ["eval", str(skill), "--resume", run_id, "--design",
                                       "adaptive"], env=env)
    assert "started with the fixed design" in str(refused.exception)
    bad = CliRunner().invoke(cli, ["eval", str(skill), "--design-option", "alpha"], env=env)
    assert "is not KEY=VALUE" in str(bad.exception)
    assert len(server.bodies) == 40 + 120  # neither asked anything
    # a suite too small to reach a verdict (under 10 cases), or one run per case (rounds
    # would be batches of cases, leaving some unasked): the fixed plan by default
    small = CliRunner().invoke(cli, ["eval", str(make_skill(tmp_path / "small", 6)), "-m",
                                     "local/fake", "--base-url", server.url, "--json"], env=env)
    assert json.loads(small.stdout)["manifest"]["design"] == {"kind": "fixed", "runs": 3}
    once = CliRunner().invoke(cli, ["eval", str(skill), "-m", "local/fake", "--base-url",
                                    server.url, "--runs", "1", "--json"], env=env)
    assert json.loads(once.stdout)["manifest"]["design"] == {"kind": "fixed", "runs": 1}


def test_verify_recomputes_every_stop_and_catches_rows_cut_where_the_design_did_not_stop(
        tmp_path):
    from registry.verify.replay import verify_run

    with FakeOpenAIServer(responder=coin) as server:
        skill, settings = make_skill(tmp_path, 12), settings_for(server, tmp_path)
        run = run_evaluation(skill, config(design_options={"futility": 0}), settings)
    run_id = run.manifest.run_id
    assert verify_run(run_id, settings).status == "verified"
    folder = settings.runs_dir / run_id
    lines = (folder / "rows.jsonl").read_text().splitlines()
    # cut at the end of round 2, the manifest still saying the run finished: not allowed
    (folder / "rows.jsonl").write_text("\n".join(
        line for line in lines if json.loads(line)["round"] < 3) + "\n")
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["samples_done"] = sum(json.loads(line)["round"] < 3 for line in lines)
    (folder / "manifest.json").write_text(json.dumps(manifest))
    found = verify_run(run_id, settings)
    assert found.status == "mismatch"
    assert any("the rows end in round 3 of 3, where the design had not stopped" in p
               for p in found.problems), found.problems
    # the whole rows back, but a stop the design did not make recorded
    (folder / "rows.jsonl").write_text("\n".join(lines) + "\n")
    manifest["samples_done"] = len(lines)
    manifest["design_stops"]["local/fake"] |= {"reason": "helps, decided at round 1",
                                               "round": 1, "verdict": "helps"}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    found = verify_run(run_id, settings)
    assert found.status == "mismatch"
    assert any("records round 1" in p for p in found.problems), found.problems


def test_a_pushed_adaptive_run_replays_from_its_rows_alone(server, tmp_path, monkeypatch):
    from registry.format.version_ref import SkillVersionRef
    from registry.publishing.push import push_saved_run
    from registry.registries import get_store
    from registry.verify.pushed import verify_published

    monkeypatch.setenv("HUBSKILLS_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HUBSKILLS_BASE_URL", server.url)
    skill, settings = make_skill(tmp_path, 20), Settings.from_env()
    published = CliRunner().invoke(cli, ["publish", str(skill), "--version", "1.0.0"])
    assert published.exit_code == 0, published.output
    store, repo = get_store(settings), "local/zorblax-ports"
    run = run_evaluation(skill, config(), settings,
                         published=SkillVersionRef(repo, store.resolve(repo).sha))
    push_saved_run(store, settings.runs_dir, run.manifest.run_id)
    [path] = store.dataset_dir.glob(f"data/evals/*/{run.manifest.run_id}.jsonl")
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    carried = json.loads(rows[0]["design"])
    assert carried["stops"]["local/fake"]["verdict"] == "helps" and len(carried["cases"]) == 20
    report = verify_published(store, repo, run.manifest.run_id, settings)
    assert report.status == "verified", report.to_dict()
    # a case's round-1 samples dropped: the design had not stopped where the rows end
    path.write_text("".join(json.dumps(r) + "\n" for r in rows if r["case_id"] != "q3"))
    report = verify_published(store, repo, run.manifest.run_id, settings)
    assert report.status == "mismatch"
    assert any("had not stopped" in p for p in report.problems), report.problems


def test_agent_mode_asks_in_the_same_rounds(tmp_path):
    from fakes.tool_script import SKILL_PORT, AgentScript
    from sandbox_required import bwrap_sandbox

    bwrap_sandbox()
    folder = tmp_path / "zorblax-ports"
    (folder / "evals").mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: zorblax-ports\ndescription: \"Ports of the zorblax daemon. Use when "
        f"configuring zorblax.\"\n---\n\nZorblax listens on port {SKILL_PORT}.\n")
    (folder / "evals" / "agent.json").write_text(json.dumps({"cases": [
        {"id": f"c{i:02}", "prompt": f"Task {i}: write config.toml for the zorblax daemon.",
         "checks": [{"type": "contains", "value": [SKILL_PORT]}]} for i in range(20)]}))
    with FakeOpenAIServer(responder=AgentScript(skill="zorblax-ports",
                                                trigger="zorblax")) as server:
        run = run_evaluation(folder, config(models=["local/fake-agent"], mode="agent"),
                             settings_for(server, tmp_path))
    # the skill arm reads SKILL.md and writes its port, the baseline guesses: decided at once
    assert len(run.rows) == 40 and {r.round for r in run.rows} == {1}
    assert run.manifest.mode == "agent" and not run.manifest.is_partial
    assert run.manifest.design_stops["local/fake-agent"]["verdict"] == "helps"


def test_a_spot_check_of_an_adaptive_run_re_asks_samples_it_asked(server, tmp_path):
    from registry.results.runs import read_manifest, read_rows
    from registry.verify.spot import spot_check

    skill, settings = make_skill(tmp_path, 20), settings_for(server, tmp_path)
    run = run_evaluation(skill, config(), settings)
    run_id = run.manifest.run_id
    check = spot_check(read_manifest(settings.runs_dir, run_id),
                       read_rows(settings.runs_dir, run_id), skill, settings, k=10, seed=1)
    assert check.consistent, check.to_dict()


def test_max_cost_still_caps_an_adaptive_run_and_a_resume_finishes_its_design(tmp_path,
                                                                              monkeypatch):
    with MeteredOpenAIServer(responder=billing_max(coin), api_key="k") as metered:
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        monkeypatch.setenv("OPENAI_BASE_URL", metered.url)
        monkeypatch.setenv("HUBSKILLS_HOME", str(tmp_path / "home"))
        skill, settings = make_skill(tmp_path, 12), Settings.from_env()
        options = {"futility": 0, "settle_after": 2}
        base = config(models=[PRICED], max_tokens=64, design_options=options)
        whole = run_evaluation(skill, base, settings)  # uncapped: what the design asks
        spent = metered.billed(PRICED)
        assert whole.manifest.design_stops[PRICED]["reason"] == "plan complete"
        cap = spent / 2  # above round 1's estimate, below the whole run's cost
        capped = run_evaluation(skill, config(models=[PRICED], max_tokens=64, max_cost=cap,
                                              design_options=options), settings)
        assert capped.manifest.status == "stopped" and capped.manifest.is_partial
        assert metered.billed(PRICED) - spent <= cap and len(capped.rows) < len(whole.rows)
        resumed = run_evaluation(skill, base, settings, resume=capped.manifest.run_id)
    assert resumed.manifest.status == "complete" and not resumed.manifest.is_partial
    assert sorted((r.case_id, r.arm, r.repeat, r.round, r.passed) for r in resumed.rows) == \
        sorted((r.case_id, r.arm, r.repeat, r.round, r.passed) for r in whole.rows)


def test_the_space_summarises_an_adaptive_run_at_its_own_level_as_the_cli_does(server, tmp_path):
    from registry.results.report import summarize
    from space.evaluate_run import results

    run = run_evaluation(make_skill(tmp_path, 20), config(), settings_for(server, tmp_path))
    [space], *_ = results(run)
    [cli_summary] = summarize(run.rows, run.manifest)
    [at_95] = summarize(run.rows)  # without its design: the fixed run's 95% figures
    assert (space.stats.lo, space.stats.hi) == (cli_summary.stats.lo, cli_summary.stats.hi)
    assert space.stats.lo < at_95.stats.lo  # stopped at round 1: the interval at 1 - 0.00333
