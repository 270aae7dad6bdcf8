"""One run, pushed to the local registry, shows identical numbers in every place.

The places: the eval report (text and `--json`), `runs show`, `runs compare`, `leaderboard`,
`info` (text and JSON), the skill's card, `search --sort lift`, and the Space's leaderboard and
skill page. Exact equality, not approximate: they all read `registry.results.stats.table`.
Also: a push that cannot say which skill version it measured is refused before any model call,
and a pulled folder's results join the repo its marker names.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner
from fakes.openai_server import FakeOpenAIServer
from test_evaluate import knows_fact_if_told, make_skill

from registry.cli import cli
from registry.config import Settings
from registry.errors import HubskillsError
from registry.registries import get_store
from registry.results import display
from registry.results.board import Board
from registry.stores.summary import lift_key
from space.leaderboard_view import leaderboard_view
from space.skill_data import results_table

N, REPO = 14, "local/zorblax-ports"
FIGURES = ("baseline", "baseline_lo", "baseline_hi", "with_skill", "skill_lo", "skill_hi",
           "lift", "lift_lo", "lift_hi", "p_value", "b", "c", "cases", "verdict", "note",
           "normalized_gain", "detectable")


def knows_some(body: dict) -> str:
    """Without the skill the model knows the fact for q0..q3 and, on odd repeats, q4..q5."""
    text = json.dumps(body)
    if any(f"Question {i}:" in text for i in range(4)):
        return "Port 4417."
    if any(f"Question {i}:" in text for i in (4, 5)) and body.get("seed", 0) % 2:
        return "Port 4417."
    return knows_fact_if_told(body)


def invoke(*args: str):
    result = CliRunner().invoke(cli, list(args), env={"NO_COLOR": "1", "COLUMNS": "250"},
                                catch_exceptions=False)
    return result


def from_summary(summary: dict) -> dict:
    st = summary["stats"]
    return {"baseline": st["baseline"]["pass_rate"], "baseline_lo": st["baseline"]["lo"],
            "baseline_hi": st["baseline"]["hi"], "with_skill": st["skill"]["pass_rate"],
            "skill_lo": st["skill"]["lo"], "skill_hi": st["skill"]["hi"], "lift": st["lift"],
            "lift_lo": st["lo"], "lift_hi": st["hi"], "p_value": st["p_value"], "b": st["b"],
            "c": st["c"], "cases": st["n_cases"], "verdict": st["verdict"], "note": st["note"],
            "normalized_gain": st["normalized_gain"], "detectable": st["detectable"]}


def from_record(record: dict) -> dict:
    return {name: record[name] for name in FIGURES}


@pytest.fixture
def server():
    with FakeOpenAIServer(responder=knows_some) as srv:
        yield srv


def completions(server) -> int:
    return sum(r["path"].endswith("/chat/completions") for r in server.requests)


def evaluate(skill: Path, server, *extra: str):
    return invoke("eval", str(skill), "-m", "local/fake", "--base-url", server.url, "--runs",
                  "2", *extra)


def test_an_unplaced_push_is_refused_before_any_model_call(server, tmp_path):
    skill = make_skill(tmp_path, N)
    result = CliRunner().invoke(cli, ["eval", str(skill), "-m", "local/fake", "--base-url",
                                      server.url, "--push"])
    assert result.exit_code == 1 and "no published version" in str(result.exception)
    assert "hubskills publish" in result.exception.hint
    assert completions(server) == 0
    wrong = CliRunner().invoke(cli, ["eval", str(skill), "-m", "local/fake", "--base-url",
                                     server.url, "--push", "--repo", "local/other"])
    assert wrong.exit_code == 1 and completions(server) == 0


@pytest.fixture
def pushed(server, tmp_path):
    """A published skill, evaluated with --push: the run's id, its report and its numbers."""
    skill = make_skill(tmp_path, N)
    assert invoke("publish", str(skill)).exit_code == 0
    text = evaluate(skill, server, "--push")
    asked = completions(server)  # adaptive: the rows its design asked, the plan's 56 at most
    assert text.exit_code == 0 and f"Pushed {asked} rows of {REPO} v1.0.0" in text.output
    assert 0 < asked <= N * 2 * 2
    run_id = re.search(r"run (\d{8}-\d{6}-[0-9a-f]{6})", text.output).group(1)
    shown = json.loads(invoke("runs", "show", run_id, "--json").output)
    [summary] = shown["summaries"]
    return SimpleNamespace(run_id=run_id, text=text.output, json=shown,
                           figures=from_summary(summary), skill=skill)


def test_one_run_shows_identical_numbers_everywhere(pushed):
    figures, run = pushed.figures, pushed.json["manifest"]
    assert run["skill_repo"] == REPO and run["skill_revision"] and not run["partial"]
    assert figures["verdict"] == "helps" and figures["cases"] == N
    [record] = json.loads(invoke("leaderboard", "--skill", REPO, "--json").output)
    assert from_record(record) == figures and record["rank"] == 1
    assert record["run_id"] == pushed.run_id and record["produced_by"] == "local"
    assert record["produced_via"] == "cli"
    info = json.loads(invoke("info", REPO, "--json").output)
    assert [from_record(r) for r in info["results"]] == [figures]
    compared = json.loads(invoke("runs", "compare", pushed.run_id, pushed.run_id,
                                 "--json").output)
    assert from_summary(compared["runs"][pushed.run_id]["summaries"][0]) == figures
    frame = get_store(Settings.from_env()).results_frame()
    assert lift_key(frame)[(REPO, "1.0.0")] == figures["lift_lo"]  # search --sort lift's

    shown = {"lift": display.lift_interval(figures["lift"], figures["lift_lo"],
                                           figures["lift_hi"]),
             "p": display.p_value(figures["p_value"]), "base": display.pct(figures["baseline"]),
             "skill": display.pct(figures["with_skill"])}
    card = info["card"]
    info_text = invoke("info", REPO).output
    board_text = invoke("leaderboard", "--skill", REPO).output
    view = leaderboard_view(Board.build(frame), query=REPO)
    space_row = view.table.iloc[0].tolist()
    # a ranked row with no clear lift is still ranked: the line says so (a walk read "1 ranked
    # with a lift surely above zero" above rows 4 and 5, numbered but without one)
    assert "**1** skill × model results, **1** ranked by the lift's lower bound, **1** of " \
           "them with a lift surely above zero." in view.summary
    page_row = results_table(Board.build(frame), REPO).iloc[0].tolist()
    for place in (pushed.text, card, info_text, board_text, " ".join(space_row),
                  " ".join(page_row)):
        for value in shown.values():
            assert value in place, (value, place[:400])
    assert space_row == page_row


def test_a_pulled_folder_pushes_to_its_repo(server, pushed, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    assert invoke("pull", REPO, "--project", str(project)).exit_code == 0
    pulled = project / ".agents" / "skills" / "zorblax-ports"
    result = evaluate(pulled, server, "--push", "--json")
    assert result.exit_code == 0
    manifest = json.loads(result.stdout)["manifest"]
    assert (manifest["skill_repo"], manifest["skill_version"]) == (REPO, "1.0.0")
    assert manifest["skill_revision"] == pushed.json["manifest"]["skill_revision"]


def test_publish_with_run_attaches_a_pushed_run_to_the_new_version(pushed):
    """The run evaluated these exact files, so the new version holds v1.0.0's: `--bump`
    refuses a copy (it fetched v1.0.0 to tell), an explicit `--version` tags it."""
    with pytest.raises(HubskillsError, match="holds exactly the files of .* v1.0.0"):
        invoke("publish", str(pushed.skill), "--bump", "patch", "--with-run", pushed.run_id)
    result = invoke("publish", str(pushed.skill), "--version", "1.0.1", "--with-run",
                    pushed.run_id)
    assert result.exit_code == 0, result.output
    records = json.loads(invoke("leaderboard", "--skill", REPO, "--json").output)
    assert sorted((r["version"], r["run_id"]) for r in records) == [
        ("1.0.0", pushed.run_id), ("1.0.1", f"{pushed.run_id}.v1.0.1")]
    assert [from_record(r) for r in records] == [pushed.figures] * 2


def test_publish_refuses_a_partial_run_before_publishing(tmp_path):
    from registry.format.skill import content_hash
    from registry.results.runs import ResultRow, RunManifest, RunWriter

    skill = make_skill(tmp_path, N)
    manifest = RunManifest(run_id="cut-short", skill_name=skill.name, suite_hash="s",
                           content_hash=content_hash(skill), models=["local/m"], runs=1,
                           case_ids=[f"q{i}" for i in range(N)], partial=True,
                           samples_planned=2 * N, samples_done=2)
    writer = RunWriter(Settings.from_env().runs_dir, manifest)
    for arm in ("baseline", "skill"):
        writer.add(ResultRow(run_id="cut-short", skill_name=skill.name, model="local/m",
                             arm=arm, case_id="q0", passed=arm == "skill"))
    writer.close("interrupted")
    result = CliRunner().invoke(cli, ["publish", str(skill), "--with-run", "cut-short"])
    assert result.exit_code == 1 and "partial: 2 of 28 samples" in str(result.exception)
    assert result.exception.hint == f"hubskills eval {skill} --resume cut-short"
    assert "local/zorblax-ports" not in invoke("search", "zorblax").output  # nothing published
