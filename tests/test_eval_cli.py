"""`hubskills eval` and `hubskills runs` as a user runs them, and one real embedded-model eval."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from fakes.openai_server import FakeOpenAIServer
from test_evaluate import knows_fact_if_told, make_skill

from registry.cli import cli


@pytest.fixture
def server():
    with FakeOpenAIServer(responder=knows_fact_if_told) as srv:
        yield srv


def invoke(*args: str, **env: str):
    return CliRunner().invoke(cli, list(args), env={"NO_COLOR": "1", "COLUMNS": "200", **env},
                              catch_exceptions=False)


def test_eval_prints_the_summary_with_intervals(server, tmp_path):
    skill = make_skill(tmp_path)
    result = invoke("eval", str(skill), "-m", "local/fake", "--base-url", server.url,
                    "--runs", "2", "-v")
    assert result.exit_code == 0, result.output
    assert "zorblax-ports · 6 cases × 2 runs · inline (user)" in result.output
    assert "+100 [-14, +100]" in result.output and "too few cases (6)" in result.output
    assert "exact test p = 0.0312" in result.output
    assert "$0 (local)" in result.output
    assert "non-discriminating checks" in result.output
    assert "q0" in result.output  # the per-case table


def test_eval_json_and_runs_commands(server, tmp_path):
    skill = make_skill(tmp_path, 3)
    first = invoke("eval", str(skill), "-m", "local/fake", "--base-url", server.url,
                   "--runs", "1", "--json")
    data = json.loads(first.stdout)
    run_id = data["manifest"]["run_id"]
    [summary] = data["summaries"]
    assert summary["stats"]["lift"] == 1.0 and summary["stats"]["verdict"] == "too few cases (3)"
    assert summary["methods"]["arm_interval"].startswith("Wilson")

    listing = invoke("runs", "--json")
    assert [m["run_id"] for m in json.loads(listing.output)] == [run_id]
    shown = invoke("runs", "show", run_id)
    assert "zorblax-ports" in shown.output and "too few cases (3)" in shown.output

    (skill / "SKILL.md").write_text((skill / "SKILL.md").read_text().replace("4417", "4418"))
    second = json.loads(invoke("eval", str(skill), "-m", "local/fake", "--base-url", server.url,
                               "--runs", "1", "--json").stdout)
    compared = json.loads(invoke("runs", "compare", run_id, second["manifest"]["run_id"],
                                 "--json").output)
    assert compared["counts"] == {"improved": 0, "regressed": 3, "same": 0}


def test_eval_errors_are_readable(tmp_path):
    result = CliRunner().invoke(cli, ["eval", str(tmp_path / "nope")])
    assert result.exit_code != 0
    skill = make_skill(tmp_path)
    from registry.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["eval", str(skill), "-m", "openai/gpt-4o-mini"])
    assert exit_info.value.code == 1


def test_missing_key_message_names_the_variable(tmp_path, capsys):
    from registry.cli import main

    with pytest.raises(SystemExit):
        main(["eval", str(make_skill(tmp_path)), "-m", "sonnet"])
    err = capsys.readouterr().err
    assert "Error:" in err and "ANTHROPIC_API_KEY" in err and "Traceback" not in err


def test_end_to_end_on_the_embedded_model(tmp_path):
    skill = make_skill(tmp_path, 2)
    result = invoke("eval", str(skill), "--runs", "1", "--max-tokens", "24", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["manifest"]["models"] == ["embedded/smollm2-135m"]
    [summary] = data["summaries"]
    assert summary["baseline"]["samples"] + summary["baseline"]["errors"] == 2
    assert summary["skill"]["input_tokens"] > summary["baseline"]["input_tokens"] > 0
    assert summary["skill"]["cost_usd"] == 0.0
