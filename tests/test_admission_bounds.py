"""What bounds a review (issue 37, hole 9), on the fake Hub over real HTTP.

The verifier's settings, never the submitter's suite, bound the work: run files per pull
request, bytes per run file, samples per replay, seconds per replay, pull requests per
refresh; each pull request gets one comment and at most one record commit per refresh; the
Space replays in a background worker and a page load never waits on it.
"""

from __future__ import annotations

import threading
import time

import pytest
from review_setup import (
    ALICE,
    alice_files,
    boss_says,
    main_files,
    make_runs,
    open_pr,
    record_commits,
)
from test_verify_hub import hub  # noqa: F401 - the fixture

from registry.config import Settings
from registry.errors import HubskillsError
from registry.stores.hub import HubStore
from registry.stores.verifications import read_records
from registry.verify.admission import merge_submission, replay_pending


def junk(n: int, month: str = "2026-11", rows: int = 1) -> dict[str, bytes]:
    """`n` run files with run-like names whose rows are not rows at all."""
    return {f"data/evals/{month}/junk-{i}.jsonl": b"{}\n" * rows for i in range(n)}


def test_too_many_run_files_refuse_a_pull_request_whole_before_any_replay(
        hub, tmp_path, monkeypatch):  # noqa: F811
    monkeypatch.setenv("HUBSKILLS_REVIEW_MAX_RUNS", "2")
    settings = Settings.from_env()
    store = HubStore(settings)
    store.results._ensure_dataset(store.results.repo())
    num = open_pr(hub, ALICE, junk(3))

    [check] = replay_pending(store, settings)
    assert (check.num, check.status) == (num, "refused")
    assert "adds 3 run files, more than the 2" in str(check.first_problem)
    assert read_records(store) == [] and record_commits(hub) == []
    replay_pending(store, settings)
    [said] = boss_says(hub, num)
    assert "adds 3 run files, more than the 2" in said


def test_oversized_runs_are_refused_by_their_rows_and_bytes(hub, tmp_path, monkeypatch):  # noqa: F811
    monkeypatch.setenv("HUBSKILLS_REPLAY_MAX_SAMPLES", "5")
    monkeypatch.setenv("HUBSKILLS_REVIEW_MAX_RUN_MB", "0.001")
    settings = Settings.from_env()
    store = HubStore(settings)
    store.results._ensure_dataset(store.results.repo())
    many = open_pr(hub, ALICE, junk(1, rows=6))
    big = open_pr(hub, ALICE, {"data/evals/2026-11/big.jsonl": b" " * 2000 + b"\n"})

    checks = {c.num: c for c in replay_pending(store, settings)}
    assert checks[many].status == "refused"
    assert "holds 6 rows, more than the 5 samples" in str(checks[many].first_problem)
    assert checks[big].status == "refused"
    assert "is 2,001 bytes, more than the 1,000" in str(checks[big].first_problem)
    assert read_records(store) == []


def test_a_replay_past_the_verifiers_time_cap_is_not_replayable(hub, tmp_path, monkeypatch):  # noqa: F811
    [run_id] = make_runs(tmp_path, 1)
    files = alice_files(hub, tmp_path, [run_id])
    monkeypatch.setenv("HUBSKILLS_REPLAY_TIMEOUT", "0.05")
    settings = Settings.from_env()
    num = open_pr(hub, ALICE, files)

    [check] = replay_pending(HubStore(settings), settings)
    assert (check.num, check.status) == (num, "not replayable")
    assert "the verifier's cap of 0.05 s a replay" in str(check.first_problem)
    with pytest.raises(HubskillsError, match="not replayable"):
        merge_submission(HubStore(settings), settings, num)
    assert not set(files) & set(main_files(hub))


def test_one_comment_and_one_record_commit_per_pull_request(hub, tmp_path):  # noqa: F811
    run_ids = make_runs(tmp_path, 3)
    files = alice_files(hub, tmp_path, run_ids)
    settings = Settings.from_env()
    before = len(record_commits(hub))
    num = open_pr(hub, ALICE, files)

    checks = replay_pending(HubStore(settings), settings)
    assert sorted(c.run_id for c in checks) == sorted(run_ids)
    assert {c.status for c in checks} == {"verified"}
    assert len(record_commits(hub)) == before + 1
    [said] = boss_says(hub, num)
    assert all(f"run `{run_id}`" in said for run_id in run_ids)
    replay_pending(HubStore(settings), settings)
    assert len(record_commits(hub)) == before + 1 and len(boss_says(hub, num)) == 1


def test_pull_requests_past_the_bound_wait_for_a_later_refresh(hub, tmp_path, monkeypatch):  # noqa: F811
    monkeypatch.setenv("HUBSKILLS_REVIEW_MAX_PRS", "1")
    settings = Settings.from_env()
    store = HubStore(settings)
    store.results._ensure_dataset(store.results.repo())
    first = open_pr(hub, ALICE, junk(1))
    second = open_pr(hub, ALICE, junk(1, month="2026-12"))

    checks = {c.num: c for c in replay_pending(store, settings)}
    assert checks[first].status == "mismatch" and len(boss_says(hub, first)) == 1
    assert checks[second].status == "not checked"
    assert "at most 1 pull request(s) a refresh" in str(checks[second].first_problem)
    assert boss_says(hub, second) == []

    checks = {c.num: c for c in replay_pending(store, settings)}  # the next refresh
    assert checks[second].status == "mismatch" and len(boss_says(hub, second)) == 1
    assert len(boss_says(hub, first)) == 1


def test_the_spaces_pending_view_never_waits_on_a_replay(hub, tmp_path):  # noqa: F811
    from space.leaderboard_tab import pending
    from space.pending_replay import PendingReplays
    from space.state import SpaceState

    [run_id] = make_runs(tmp_path, 1)
    num = open_pr(hub, ALICE, alice_files(hub, tmp_path, [run_id]))
    settings = Settings.from_env()
    state = SpaceState(settings, HubStore(settings), on_space=False)
    replays = PendingReplays(state)
    held, replay = threading.Event(), replays.run

    def slow() -> list:  # held until the page has answered: a page that waited would hang
        held.wait(900)  # (a deadlock guard longer than the test's own timeout)
        return replay()

    replays.run = slow  # type: ignore[method-assign] - a replay that takes its time
    try:
        _, note = pending(state, replays)
        assert not held.is_set() and "being replayed" in note
    finally:
        held.set()
    deadline = time.monotonic() + 120
    while not replays.found and time.monotonic() < deadline:
        time.sleep(0.05)
    state.data.stop()
    _, note = pending(state, replays)
    assert f"PR #{num}" in note and "verified" in note and run_id in note
    assert len(boss_says(hub, num)) == 1
