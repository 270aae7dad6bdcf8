"""Trigger entries in the leaderboard, `info` and their JSON: recall and false triggers with
their intervals (the run's own figures, from the one stats engine), never a lift, never ranked."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from fakes.openai_server import FakeOpenAIServer
from fakes.trigger_model import TriggerModel
from test_trigger import make_distractors, make_skill

from registry.cli import cli
from registry.config import Settings
from registry.evaluation.trigger_report import summarize_triggers
from registry.registries import get_store
from registry.results.leaderboard import entries
from registry.results.runs import read_rows
from registry.results.trigger_board import trigger_entries


@pytest.fixture
def server():
    with FakeOpenAIServer(responder=TriggerModel(threshold=2)) as srv:
        yield srv


def publish(tmp_path):
    skill = make_skill(tmp_path)
    (skill / "SKILL.md").write_text((skill / "SKILL.md").read_text().replace(
        "\n---\n", "\nmetadata:\n  version: \"1.0.0\"\n---\n", 1))
    done = CliRunner().invoke(cli, ["publish", str(skill), "--force"],  # a 3-case suite
                              catch_exceptions=False)
    assert done.exit_code == 0, done.output
    return skill


def push_trigger_run(skill, server, tmp_path, *extra: str) -> str:
    args = ["eval", str(skill), "--mode", "trigger", "-m", "local/fake-trigger", "--base-url",
            server.url, "--distractors", str(make_distractors(tmp_path)), "--runs", "1",
            "--push", "--json", *extra]
    pushed = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert pushed.exit_code == 0, pushed.output
    return json.loads(pushed.stdout)["manifest"]["run_id"]


def test_a_trigger_entry_has_the_runs_own_recall_and_false_triggers_and_no_lift(server,
                                                                                  tmp_path):
    run_id = push_trigger_run(publish(tmp_path), server, tmp_path)
    frame = get_store(Settings.from_env(), None).results_frame()
    assert entries(frame, skill="zorblax") == []  # no A/B entry: no baseline 0%, no lift +0
    (entry,) = trigger_entries(frame)
    (summary,) = summarize_triggers(read_rows(Settings.from_env().runs_dir, run_id))
    assert (entry.recall, entry.recall_lo, entry.recall_hi) == (
        summary.recall.rate, summary.recall.lo, summary.recall.hi)  # bit for bit
    assert (entry.false_triggers, entry.false_lo, entry.false_hi) == (
        summary.false_triggers.rate, summary.false_triggers.lo, summary.false_triggers.hi)
    assert (entry.should, entry.should_not, entry.errors) == (5, 3, 1)
    assert entry.status == "" and entry.repo == "local/zorblax-ports" and entry.run_id == run_id

    # a resumed run's retried sample (its error row, then its answer) counts once, as the
    # replay reads it (a review: the board's new one-row-a-sample rule broke the trigger
    # board's arrays on such a run, IndexError on every screen)
    import pandas as pd

    answered = frame.index[(frame["error"].isna() & (frame["mode"] == "trigger")).to_numpy()][0]
    retried = frame.loc[[answered]].assign(passed=None, error="timeout",
                                           error_kind="transport")
    assert trigger_entries(pd.concat([retried, frame], ignore_index=True)) == [entry]

    board = CliRunner().invoke(cli, ["leaderboard", "-s", "zorblax"], catch_exceptions=False)
    assert "60% [23–88%]" in board.output and "33% [6–79%]" in board.output
    assert "No results match" not in board.output and "+0" not in board.output
    (record,) = json.loads(CliRunner().invoke(cli, ["leaderboard", "-s", "zorblax",
                                                    "--json"]).stdout)
    assert record["mode"] == "trigger" and record["rank"] is None and "lift" not in record
    assert record["recall"] == 0.6 and record["false_triggers"] == pytest.approx(1 / 3)
    helps = CliRunner().invoke(cli, ["leaderboard", "--verdict", "helps", "--json"])
    assert all(r["mode"] != "trigger" for r in json.loads(helps.stdout))  # a lift's verdict


def test_info_shows_the_trigger_figures_and_a_partial_run_says_so(server, tmp_path):
    skill = publish(tmp_path)
    push_trigger_run(skill, server, tmp_path, "--cases", "s1,s3,n1,n2")
    info = CliRunner().invoke(cli, ["info", "local/zorblax-ports"], catch_exceptions=False)
    assert "Trigger evals" in info.output and "50% [9–91%]" in info.output  # s1 of s1, s3
    assert "subset: 4 of 9" in info.output and "No evaluation results" not in info.output
    data = json.loads(CliRunner().invoke(cli, ["info", "local/zorblax-ports", "--json"]).stdout)
    assert data["results"] == []
    (record,) = data["triggers"]
    assert (record["recall"], record["false_triggers"]) == (0.5, 0.5)
    assert record["status"] == "subset: 4 of 9 queries"


def test_the_spaces_skill_page_shows_recall_and_false_triggers_per_model(server, tmp_path):
    from space import skill_page
    from space.state import SpaceState

    push_trigger_run(publish(tmp_path), server, tmp_path)
    settings = Settings.from_env()
    state = SpaceState(settings, get_store(settings, None), on_space=False)
    triggers = 9  # the page's outputs: picker, header, body, raw, files, versions, results,
    #               history, findings, triggers, pull command, the publisher's claims
    shown = skill_page.render(state, "local/zorblax-ports")[triggers]
    assert shown.visible is True
    (row,) = shown.value["data"]
    assert row[:5] == ["1.0.0", "local/fake-trigger", "60% [23–88%]", "33% [6–79%]", "1"]
    assert skill_page.render(state, "local/zorblax-ports")[6]["data"] == []  # no A/B entry
    assert skill_page.render(state, "hubskills/agent-skill-md")[triggers].visible is False


def test_the_registry_card_shows_the_trigger_evals_after_a_push(server, tmp_path):
    """The card (the repo's README) gets a trigger table of its own, recall and false triggers
    with the run's intervals; the lift table stays absent (a trigger eval has no lift)."""
    from registry.stores.card import EVALS_END, EVALS_START

    push_trigger_run(publish(tmp_path), server, tmp_path)
    store = get_store(Settings.from_env(), None)
    card = (store.root / "skills" / "local" / "zorblax-ports" / "README.md").read_text()
    section = card.split(EVALS_START, 1)[1].split(EVALS_END, 1)[0]
    assert "Trigger evals" in section and "No evaluation results yet" not in section
    (row,) = [line for line in section.splitlines() if "local/fake-trigger" in line]
    assert "60% [23–88%]" in row and "33% [6–79%]" in row
    assert "lift [95% CI]" not in section
