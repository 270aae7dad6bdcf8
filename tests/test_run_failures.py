"""A run that ended in an error before its first answer says why in its listing."""

from __future__ import annotations

import json

from click.testing import CliRunner

from registry.cli import cli
from registry.config import Settings
from registry.providers import embedded
from registry.results.runs import list_runs


def test_an_eval_that_fails_before_any_answer_lists_the_reason(tmp_path, monkeypatch):
    monkeypatch.setattr(embedded, "GGUF_PACKAGE", "no_such_gguf_package")  # the extra missing
    monkeypatch.setattr(embedded, "_llama", None, raising=False)  # not loaded by an earlier test
    skill = tmp_path / "tiny"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text('---\nname: tiny\ndescription: "A tiny skill. Use when '
                                    'testing."\n---\n\nSay x.\n')
    (skill / "evals" / "evals.json").write_text(json.dumps({"cases": [
        {"id": "c1", "prompt": "q", "checks": [{"type": "contains", "value": ["x"]}]}]}))
    done = CliRunner().invoke(cli, ["eval", str(skill), "-m", "embedded/smollm2-135m",
                                    "--runs", "1"])
    assert done.exit_code == 1 and "needs the local extra" in str(done.exception)
    [run] = list_runs(Settings.from_env().runs_dir)
    assert run.label.startswith("failed to start: the embedded model needs the local extra"), \
        run.label  # not "no answer was written"


def test_runs_show_of_a_failed_start_names_the_command_that_runs_it(tmp_path, monkeypatch):
    """It said 'This run is failed to start: ...: it cannot be pushed or ranked until it
    finishes (hubskills eval SKILL --resume ID)': a placeholder where the folder is known, in
    a sentence that does not parse (issue 38, second walk)."""
    test_an_eval_that_fails_before_any_answer_lists_the_reason(tmp_path, monkeypatch)
    [run] = list_runs(Settings.from_env().runs_dir)
    shown = CliRunner().invoke(cli, ["runs", "show", run.run_id], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    assert "This run failed to start (the embedded model needs the local extra" in shown.output
    assert f"    hubskills eval {tmp_path / 'tiny'} --resume {run.run_id}\n" in shown.output
    assert "is failed to start" not in shown.output and "SKILL" not in shown.output
    assert "verdict" not in shown.output and "left out" not in shown.output  # no empty table
