"""A newcomer's smaller frictions (issue 30): what the program prints is what it does."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from registry.cli import cli
from registry.evaluation.results import RunManifest
from registry.evaluation.stats import compare_arms
from registry.stores.gate import failures


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), env={"NO_COLOR": "1", "COLUMNS": "200"})


@pytest.mark.parametrize(("typed", "meant"), [("evl", "eval"), ("leaderbord", "leaderboard"),
                                              ("serch", "search")])
def test_a_mistyped_command_gets_did_you_mean(typed, meant):
    result = invoke(typed)
    assert result.exit_code == 2
    assert f"No such command '{typed}'. Did you mean '{meant}'?" in result.output


def test_a_mistyped_option_gets_clicks_own_suggestion():
    result = invoke("leaderboard", "--jsn")
    assert result.exit_code == 2 and "Did you mean '--json'?" in result.output


def test_an_unknown_command_far_from_any_gets_no_guess():
    result = invoke("zzzzqqq")
    assert result.exit_code == 2 and "Did you mean" not in result.output


def test_min_lift_means_the_lower_bound_must_exceed_it():
    same = {f"c{i}": [True, False] for i in range(12)}
    flat = compare_arms(same, same)  # +0 [+0, +0]
    assert (flat.lo, flat.hi) == (0, 0)
    assert failures(flat, None, None, 0.0) == [
        "the lift's lower bound +0 is not above --min-lift +0 (lift +0 [+0, +0])"]
    assert failures(flat, None, None, -0.01) == []
    assert failures(flat, None, None, None) == []


def test_doctor_counts_every_skill_in_the_registry():
    result = invoke("doctor", "--json")
    report = json.loads(result.stdout)
    registry = report["registry"]
    assert registry["skills"] == 3 and "(3 skills)" in registry["why"]
    assert invoke("search", "--json").stdout.count('"repo"') == 3


def test_an_interrupted_run_says_so_where_it_is_listed():
    manifest = RunManifest(run_id="r", skill_name="s", suite_hash="h", content_hash="c",
                           models=["local/m"], runs=1, case_ids=["a"], partial=True,
                           samples_planned=72, samples_done=12, status="interrupted")
    assert manifest.label == "partial: 12 of 72 samples, interrupted"
    manifest.status = "running"  # killed: nothing said it stopped
    assert manifest.label == "partial: 12 of 72 samples"
