"""A run that ended in an error before its first answer says why in its listing."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from fakes.openai_server import FakeOpenAIServer

from registry.cli import cli
from registry.config import Settings
from registry.providers import embedded
from registry.results.runs import RunManifest, RunWriter, list_runs, new_run_id


def tiny_skill(tmp_path):
    skill = tmp_path / "tiny"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text('---\nname: tiny\ndescription: "A tiny skill. Use when '
                                    'testing."\n---\n\nSay x.\n')
    (skill / "evals" / "evals.json").write_text(json.dumps({"cases": [
        {"id": "c1", "prompt": "q", "checks": [{"type": "contains", "value": ["x"]}]}]}))
    return skill


def test_an_embedded_model_that_cannot_run_here_is_refused_before_the_run_is_saved(
        tmp_path, monkeypatch):
    """Found out without loading anything, before the run exists: it is not listed as a run
    that failed to start (a walk without the GGUF saw one per try)."""
    monkeypatch.setattr(embedded, "GGUF_PACKAGE", "no_such_gguf_package")  # the extra missing
    monkeypatch.setattr(embedded, "_llama", None, raising=False)  # not loaded by an earlier test
    done = CliRunner().invoke(cli, ["eval", str(tiny_skill(tmp_path)), "-m",
                                    "embedded/smollm2-135m", "--runs", "1"])
    assert done.exit_code == 1 and "needs the local extra" in str(done.exception)
    assert done.exception.hint == embedded.install_hint()
    assert list_runs(Settings.from_env().runs_dir) == []


def test_an_eval_that_fails_before_any_answer_lists_the_reason(tmp_path, monkeypatch):
    with FakeOpenAIServer(responder=lambda body: {
            "status": 400, "error": {"message": "this model is switched off"}}) as server:
        done = CliRunner().invoke(cli, ["eval", str(tiny_skill(tmp_path)), "-m", "local/x",
                                        "--base-url", server.url, "--runs", "1"])
    assert done.exit_code == 1, done.output
    [run] = list_runs(Settings.from_env().runs_dir)
    assert run.label.startswith("failed to start: no model answered ("), run.label
    assert "switched off" in run.label  # not "no answer was written"


def test_runs_show_of_a_failed_start_names_the_command_that_runs_it(tmp_path):
    """It said 'This run is failed to start: ...: it cannot be pushed or ranked until it
    finishes (hubskills eval SKILL --resume ID)': a placeholder where the folder is known, in
    a sentence that does not parse (issue 38, second walk)."""
    runs_dir = Settings.from_env().runs_dir  # as the engine leaves a run that raised at once
    writer = RunWriter(runs_dir, RunManifest(
        run_id=new_run_id(), skill_name="tiny", content_hash="c", suite_hash="h",
        models=["local/x"], runs=1, case_ids=["c1"], samples_planned=2,
        skill_path=str(tiny_skill(tmp_path))))
    writer.close("interrupted", note="the sandbox could not start: bwrap is gone")
    [run] = list_runs(runs_dir)
    shown = CliRunner().invoke(cli, ["runs", "show", run.run_id], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    assert "This run failed to start (the sandbox could not start: bwrap is gone)" in shown.output
    assert f"    hubskills eval {tmp_path / 'tiny'} --resume {run.run_id}\n" in shown.output
    assert "is failed to start" not in shown.output and "SKILL" not in shown.output
    assert "verdict" not in shown.output and "left out" not in shown.output  # no empty table


def test_a_rerun_the_cache_answers_needs_no_embedded_model(tmp_path, monkeypatch):
    """The check asks only for what the run would ask the model: a rerun whose answers the
    response cache holds runs without the GGUF (and says so: all of them cached)."""
    skill = tiny_skill(tmp_path)
    args = ["eval", str(skill), "-m", "embedded/smollm2-135m", "--runs", "1", "--max-tokens", "8"]
    first = CliRunner().invoke(cli, args)
    assert first.exit_code == 0, first.output
    monkeypatch.setattr(embedded, "GGUF_PACKAGE", "no_such_gguf_package")  # the extra missing
    monkeypatch.setattr(embedded, "_llama", None, raising=False)  # as a fresh process
    again = CliRunner().invoke(cli, args)
    assert again.exit_code == 0, (again.output, again.exception)
    assert "all of them cached" in again.output
    assert embedded._llama is None  # never loaded
    assert len(list_runs(Settings.from_env().runs_dir)) == 2


def test_runs_that_started_in_one_second_list_the_later_written_first(tmp_path):
    """Run ids are a second's timestamp and a random part: two runs in one second listed in
    the random part's order, and a fast machine's rerun came out as the older run."""
    import os

    runs_dir = tmp_path / "runs"
    made = []
    for run_id in ("20261207-101010-ffffff", "20261207-101010-000000"):  # older sorts last
        writer = RunWriter(runs_dir, RunManifest(
            run_id=run_id, skill_name="tiny", content_hash="c", suite_hash="h",
            models=["local/x"], runs=1, case_ids=["c1"], samples_planned=2,
            started_at="2026-12-07T10:10:10+00:00"))
        writer.close("complete")
        made.append(run_id)
    os.utime(runs_dir / made[0] / "manifest.json", ns=(1, 1))  # the first closed earlier
    assert [m.run_id for m in list_runs(runs_dir)] == [made[1], made[0]]


def test_a_resume_refuses_rows_its_plan_never_asked(tmp_path, monkeypatch):
    """A resume kept every row on disk: a red-team walk appended 22 rows of another model for
    cases the suite does not have, and `runs show` read 'helps, p<0.001' for a one-case
    suite. A row outside the plan, or made otherwise, now refuses the resume."""
    from registry.errors import HubskillsError
    from registry.evaluation.config import EvalConfig
    from registry.evaluation.engine import run_evaluation
    from registry.results.runs import read_rows, rows_to_jsonl

    skill = tiny_skill(tmp_path)
    with FakeOpenAIServer(responder=lambda body: "x") as server:
        monkeypatch.setenv("HUBSKILLS_BASE_URL", server.url)
        settings = Settings.from_env()
        config = EvalConfig(models=["local/x"], runs=2, design="fixed", max_calls=2)
        made = run_evaluation(skill, config, settings)
        assert made.manifest.is_partial
        run_id = made.manifest.run_id
        rows_file = settings.runs_dir / run_id / "rows.jsonl"
        honest = rows_file.read_text()
        [row, *_] = read_rows(settings.runs_dir, run_id)
        ghost = row.model_copy(update={"model": "local/ghost", "case_id": "c9"})
        rows_file.write_text(honest + rows_to_jsonl([ghost]))
        again = EvalConfig(models=["local/x"], runs=2, design="fixed")
        with pytest.raises(HubskillsError, match="holds a row its plan never asked"):
            run_evaluation(skill, again, settings, resume=run_id)
        rows_file.write_text(honest)  # as it was: the resume finishes it
        done = run_evaluation(skill, again, settings, resume=run_id)
    assert not done.manifest.is_partial and {r.model for r in done.rows} == {"local/x"}
