"""`hubskills verify` on trigger runs (`eval --mode trigger`): red-team hole 14.

A trigger run's outcome per session is which listed SKILL.md the model read (`opened_skill`);
a replay recomputes everything derived from it (triggered, the decision right or wrong, the
query's class from the skill's own trigger suite) and the figures the run closed with (recall,
false triggers, accuracy, their intervals), checks the skill, its trigger suite and the plan,
and records the result for a pushed run, so the trigger board shows the badge and leaves out
runs that are not replayed. The fake model is `fakes.trigger_model` over real HTTP.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from fakes.openai_server import FakeOpenAIServer
from fakes.trigger_model import TriggerModel
from test_trigger import make_distractors, make_skill
from test_trigger_board import publish

from registry.cli import cli
from registry.config import Settings
from registry.registries import get_store
from registry.results.runs import ResultRow, read_rows
from registry.stores.verifications import read_records


@pytest.fixture
def server():
    with FakeOpenAIServer(responder=TriggerModel(threshold=2)) as srv:
        yield srv


def trigger_run(skill, server, tmp_path, *extra: str) -> str:
    """A trigger run of ``skill`` saved locally (pushed with ``--push`` in ``extra``): its id."""
    args = ["eval", str(skill), "--mode", "trigger", "-m", "local/fake-trigger", "--base-url",
            server.url, "--distractors", str(make_distractors(tmp_path)), "--runs", "2",
            "--json", *extra]
    done = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout)["manifest"]["run_id"]


def verify(*args: str) -> tuple[int, dict]:
    done = CliRunner().invoke(cli, ["verify", *args, "--json"])
    return done.exit_code, json.loads(done.stdout or "{}")


def edit_rows(run_id: str, edit) -> None:
    """Replace the saved run's rows by ``edit(row)`` (its stored figures stay as they were)."""
    folder = Settings.from_env().runs_dir / run_id
    rows = [edit(row) for row in read_rows(folder.parent, run_id)]
    (folder / "rows.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in rows if r))


def edit_summary(run_id: str, edit) -> None:
    folder = Settings.from_env().runs_dir / run_id
    manifest = json.loads((folder / "manifest.json").read_text())
    for summary in manifest.get("summaries") or []:
        edit(summary)
    (folder / "manifest.json").write_text(json.dumps(manifest))


def missed_as_triggered(row: ResultRow) -> ResultRow:
    """A should-trigger session that missed, claimed as a hit (`passed` only: a careless edit)."""
    if row.case_id == "s3":
        return row.model_copy(update={"passed": True, "score": 1.0})
    return row


def test_a_genuine_trigger_run_verifies(server, tmp_path):
    run_id = trigger_run(make_skill(tmp_path), server, tmp_path)
    code, found = verify(run_id)
    assert code == 0, found
    assert found["status"] == "verified" and found["samples"] == 18
    assert found["checks_regraded"] == 16  # every session but the two that failed
    assert found["not_replayable"] == [] and found["problems"] == []
    shown = CliRunner().invoke(cli, ["verify", run_id])
    assert shown.exit_code == 0 and shown.output.startswith(f"verified: run {run_id}")


def test_edited_outcomes_figures_or_classes_are_a_mismatch(server, tmp_path):
    skill = make_skill(tmp_path)
    run_id = trigger_run(skill, server, tmp_path)
    edit_rows(run_id, missed_as_triggered)
    code, found = verify(run_id)
    assert code == 1 and found["status"] == "mismatch"
    first = found["differences"][0]
    assert (first["field"], first["stored"], first["regraded"]) == ("passed", True, False)
    assert first["sample"].startswith("s3 #")

    run_id = trigger_run(skill, server, tmp_path)
    edit_summary(run_id, lambda s: s["recall"].update(rate=0.9))
    code, found = verify(run_id)
    assert code == 1 and found["status"] == "mismatch"
    [difference] = found["differences"]
    assert difference["field"] == "recall.rate" and difference["stored"] == 0.9

    run_id = trigger_run(skill, server, tmp_path)  # a should-not claimed as a should
    edit_rows(run_id, lambda r: r.model_copy(update={"expect_skill": True})
              if r.case_id == "n2" else r)
    code, found = verify(run_id)
    assert code == 1 and any(d["field"] == "expect_skill" for d in found["differences"])


def test_a_run_of_another_trigger_suite_or_a_dropped_session_is_a_mismatch(server, tmp_path):
    skill = make_skill(tmp_path)
    run_id = trigger_run(skill, server, tmp_path)
    edit_rows(run_id, lambda r: None if (r.case_id, r.repeat) == ("n1", 1) else r)
    code, found = verify(run_id)
    assert code == 1 and "1 planned sample(s) missing, first n1 #1" in found["problems"][0]

    run_id = trigger_run(skill, server, tmp_path)
    suite = skill / "evals" / "triggers.json"
    suite.write_text(suite.read_text().replace("bake bread", "bake a cake"))
    code, found = verify(run_id, "--skill", str(skill))
    assert code == 1 and any("trigger suite" in p for p in found["problems"])


def test_a_pushed_trigger_run_is_replayed_recorded_and_badged(server, tmp_path):
    skill = publish(tmp_path)
    run_id = trigger_run(skill, server, tmp_path, "--push")  # replayed from the dataset at once
    [record] = [r for r in read_records(get_store(Settings.from_env(), None))
                if r["run_id"] == run_id]
    assert (record["kind"], record["status"], record["samples"]) == ("replay", "verified", 18)
    (entry,) = json.loads(CliRunner().invoke(cli, ["leaderboard", "-s", "zorblax",
                                                   "--json"]).stdout)
    assert (entry["mode"], entry["verification"], entry["status"], entry["rank"]) == (
        "trigger", "replayed", "", None)
    table = CliRunner().invoke(cli, ["leaderboard", "-s", "zorblax"], env={"COLUMNS": "200"})
    assert "replayed" in table.output and "60% [" in table.output
    again = CliRunner().invoke(cli, ["verify", "local/zorblax-ports", "--run", run_id])
    assert again.exit_code == 0 and again.stdout.startswith(f"verified: run {run_id}")
    assert "already recorded: verified" in again.stderr
    refused = CliRunner().invoke(cli, ["verify", run_id, "--resample", "9"])
    assert refused.exit_code == 2 and "not re-asked" in refused.output


def test_a_forged_pushed_trigger_run_is_a_mismatch_and_left_out(server, tmp_path):
    run_id = trigger_run(publish(tmp_path), server, tmp_path, "--push")
    store = get_store(Settings.from_env(), None)
    [path] = store.results.dataset_dir.glob(f"data/evals/*/{run_id}.jsonl")
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for row in rows:  # the file as pushed, edited: a missed query claimed as a hit
        if row["case_id"] == "s3":
            row.update(passed=True, score=1.0)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    board = CliRunner().invoke(cli, ["leaderboard", "-s", "zorblax", "--json"])
    assert json.loads(board.stdout) == []  # its rows changed: the replay record no longer holds
    code, found = verify("local/zorblax-ports", "--run", run_id)
    assert code == 1 and found["status"] == "mismatch"
    board = CliRunner().invoke(cli, ["leaderboard", "-s", "zorblax", "--json"])
    assert json.loads(board.stdout) == []
    shown = CliRunner().invoke(cli, ["leaderboard", "-s", "zorblax", "--json",
                                     "--include-unverified"])
    (entry,) = json.loads(shown.stdout)
    assert (entry["verification"], entry["rank"]) == ("mismatch", None)
    assert entry["status"].startswith("mismatch: s3 #")


def test_the_verifiers_pushed_path_replays_a_trigger_run_as_one(server, tmp_path):
    """`verify_published` (what admission, `review merge` and `publish --with-run` call) sends
    a trigger run to the trigger replay: it counted two arms per query and found a genuine one
    a mismatch, a final record."""
    from registry.verify.pushed import verify_published

    run_id = trigger_run(publish(tmp_path), server, tmp_path, "--push")
    settings = Settings.from_env()
    report = verify_published(get_store(settings, None), "local/zorblax-ports", run_id, settings)
    assert report.status == "verified", report.to_dict()


def test_a_trigger_file_the_board_reads_otherwise_is_a_mismatch(server, tmp_path):
    """A review note: trigger files went to their replay before the check that the board reads
    what the replay read, so a string `repeat` on the missed sessions verified while the board
    left those rows out and showed recall 100%."""
    from registry.verify.pushed import verify_published

    run_id = trigger_run(publish(tmp_path), server, tmp_path, "--push")
    settings = Settings.from_env()
    store = get_store(settings, None)
    [path] = store.results.dataset_dir.glob(f"data/evals/*/{run_id}.jsonl")
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for row in rows:
        if not row["passed"]:
            row["repeat"] = str(row["repeat"])
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    report = verify_published(store, "local/zorblax-ports", run_id, settings)
    assert report.status == "mismatch"
    assert "the leaderboard reads" in report.problems[0], report.problems
