"""Verification badges: records in the results dataset, and a board that ranks replayed runs."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from fakes.openai_server import FakeOpenAIServer
from test_verify import FAST, knows_fact_if_told, make_skill

from registry.cli import cli
from registry.config import Settings
from registry.evaluation.config import EvalConfig
from registry.evaluation.engine import run_evaluation
from registry.format.version_ref import SkillVersionRef
from registry.publishing.push import push_saved_run
from registry.registries import get_store
from registry.results.board import Board, to_entries
from registry.results.leaderboard import entries
from registry.results.leaderboard_badges import Badge, badge_from
from registry.stores.verifications import badges, read_records, run_files
from registry.verify.records import append_record, verify_and_record
from registry.verify.replay import verify_run

REPO = "local/zorblax-ports"


@pytest.fixture
def pushed(tmp_path, monkeypatch):
    """A genuine run of a published skill (text checks), pushed to the local registry:
    (settings, store, run id)."""
    skill = make_skill(tmp_path, with_python=False)
    settings = Settings.from_env()
    store = get_store(settings)
    published = store.publish(skill, repo=REPO, version="1.0.0")
    with FakeOpenAIServer(responder=knows_fact_if_told) as server:
        monkeypatch.setenv("HUBSKILLS_BASE_URL", server.url)
        made = run_evaluation(skill, EvalConfig(models=["local/fake-student"], runs=1,
                                                retry=FAST), Settings.from_env(),
                              published=SkillVersionRef(REPO, published.sha))
    push_saved_run(store, settings.runs_dir, made.manifest.run_id)
    return settings, store, made.manifest.run_id


def board(*args: str) -> list[dict]:
    result = CliRunner().invoke(cli, ["leaderboard", "--skill", "zorblax", "--json", *args],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def replay(settings, store, run_id):
    return lambda: verify_run(run_id, settings, open_store=lambda: store)


def test_an_unverified_run_is_left_out_until_replayed_then_ranked(pushed):
    settings, store, run_id = pushed
    assert board() == []
    [unverified] = board("--include-unverified")
    assert (unverified["verification"], unverified["rank"]) == ("unverified", None)
    assert unverified["status"] == "unverified: not replayed yet"
    text = CliRunner().invoke(cli, ["leaderboard", "--skill", "zorblax"]).output
    assert "1 entry not replayed or better left out: --include-unverified" in text

    run = run_files(store)[run_id]
    record, reused = verify_and_record(store, run, replay(settings, store, run_id),
                                       skill_repo=REPO)
    assert (record["status"], reused, record["verified_by"]) == ("verified", False, "local")
    assert record["rows_hash"] == run.rows_hash and record["hubskills_version"]
    [ranked] = board()
    assert (ranked["verification"], ranked["rank"], ranked["status"]) == ("replayed", 1, "")
    assert "replayed" in CliRunner().invoke(cli, ["leaderboard", "--skill", "zorblax"]).output

    def never() -> None:
        raise AssertionError("a run with a record is not replayed again")

    again, reused = verify_and_record(store, run, never, skill_repo=REPO)  # type: ignore[arg-type]
    assert (again, reused) == (record, True)
    mine = [r for r in read_records(store) if r["run_id"] == run_id]
    assert mine == [record]  # append-only: one file per verification, none added on reuse


def test_a_mismatch_record_unranks_the_entry_with_its_first_problem(pushed):
    settings, store, run_id = pushed
    run = run_files(store)[run_id]
    append_record(store, {"kind": "replay", "run_id": run_id, "rows_hash": run.rows_hash,
                          "status": "mismatch", "first_problem": "q3 #0 skill: passed stored "
                          "True, regraded False", "verified_by": "local",
                          "verified_at": "2026-11-20T10:00:00+00:00"})
    assert board() == []
    [entry] = board("--include-unverified")
    assert entry["verification"] == "mismatch" and entry["rank"] is None
    assert entry["status"].startswith("mismatch: q3 #0 skill: passed stored True")


def test_a_record_of_other_rows_does_not_apply(pushed):
    settings, store, run_id = pushed
    append_record(store, {"kind": "replay", "run_id": run_id, "rows_hash": "0" * 40,
                          "status": "verified", "verified_by": "someone",
                          "verified_at": "2026-11-20T10:00:00+00:00"})
    assert badges(store)[run_id] == Badge("unverified", "not replayed yet")


def test_the_board_and_the_cli_share_one_ranking(pushed):
    settings, store, run_id = pushed
    verify_and_record(store, run_files(store)[run_id], replay(settings, store, run_id),
                      skill_repo=REPO)
    found, frame = badges(store), store.results_frame()
    built = Board.build(frame, badges=found)
    assert to_entries(built.select(include_unverified=True)) == entries(frame, badges=found)
    shown = to_entries(built.select(skill="zorblax", include_unverified=False))
    assert [(e.verification, e.rank) for e in shown] == [("replayed", 1)]


def test_badges_from_records():
    replayed = {"kind": "replay", "status": "verified", "verified_by": "ann",
                "verified_at": "2026-11-01T00:00:00+00:00"}
    assert badge_from([]).verification == "unverified"
    assert badge_from([replayed]) == Badge("replayed", "by ann on 2026-11-01")
    spot = {"kind": "spot-check", "status": "consistent", "k": 9, "verified_by": "bo",
            "verified_at": "2026-11-02T00:00:00+00:00"}
    assert badge_from([spot, replayed]) == Badge("spot-checked", "K=9, by bo on 2026-11-02")
    assert badge_from([spot]).verification == "unverified"  # a spot check needs a replay
    caught = {**spot, "status": "inconsistent", "first_problem": "skill arm 0/5, claimed 90%"}
    assert badge_from([replayed, caught]).verification == "mismatch"
    stale = {**replayed, "status": "not replayable", "first_problem": "no summary",
             "verified_at": "2026-11-03T00:00:00+00:00"}
    assert badge_from([replayed, stale]) == Badge("unverified", "not replayable: no summary")
