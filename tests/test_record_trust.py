"""Which verification records a badge counts (issue 37, hole 2), on the fake Hub over HTTP.

A record counts only when a trusted verifier wrote it (the results dataset's owner, a
configured verifier, or the reading token's own user), it is not dated in the future, and it
names exactly the rows it is read for. Records a submitter forged, even ones that reached
`main` (a pull request merged by hand on the Hub), count for nothing.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from review_setup import ALICE, DATASET, forged_record, main_files, make_runs, open_pr
from test_verify_hub import hub  # noqa: F401 - the fixture

from registry.config import Settings
from registry.publishing.push import push_saved_run
from registry.stores.hub import HubStore
from registry.stores.verifications import badges, pending_badges


def pushed_run(hub, tmp_path) -> tuple[str, bytes]:  # noqa: F811
    """A run boss pushed and replayed: its id and the bytes of its file on `main`."""
    [run_id] = make_runs(tmp_path, 1)
    settings = Settings.from_env()
    push_saved_run(HubStore(settings), settings.runs_dir, run_id, settings=settings)
    [data] = [d for p, d in main_files(hub).items() if p.endswith(f"/{run_id}.jsonl")]
    return run_id, data


def merged_by_hand(hub, *records: tuple[str, bytes]) -> None:  # noqa: F811
    """Records a submitter proposed, merged by the owner on the Hub's own page."""
    hub.merge_pr(DATASET, open_pr(hub, ALICE, dict(records)), "dataset")


def test_records_by_anyone_but_a_trusted_verifier_count_for_nothing(hub, tmp_path):  # noqa: F811
    run_id, data = pushed_run(hub, tmp_path)
    assert badges(HubStore(Settings.from_env()))[run_id].verification == "replayed"
    soon = (datetime.now(UTC) + timedelta(days=1)).isoformat(timespec="seconds")
    merged_by_hand(
        hub,
        forged_record(run_id, data, kind="spot-check", status="consistent", k=50),
        forged_record(run_id, data, status="mismatch", first_problem="forged", verified_by="boss",
                      verified_at="9999-12-31T23:59:59+00:00"),
        forged_record(run_id, data, kind="spot-check", status="inconsistent", k=3,
                      verified_by="boss", verified_at=soon),
        forged_record(run_id, b"other rows", status="mismatch", verified_by="boss",
                      verified_at="2026-01-02T00:00:00+00:00"),
    )
    badge = badges(HubStore(Settings.from_env()))[run_id]
    assert (badge.verification, badge.reason.startswith("by boss on ")) == ("replayed", True)


def test_a_configured_verifiers_records_count(hub, tmp_path, monkeypatch):  # noqa: F811
    run_id, data = pushed_run(hub, tmp_path)
    now = datetime.now(UTC).isoformat(timespec="seconds")
    merged_by_hand(hub, forged_record(run_id, data, kind="spot-check", status="consistent",
                                      k=9, verified_by="carol", verified_at=now))
    assert badges(HubStore(Settings.from_env()))[run_id].verification == "replayed"
    monkeypatch.setenv("HUBSKILLS_VERIFIERS", "carol, dave")
    badge = badges(HubStore(Settings.from_env()))[run_id]
    assert badge.verification == "spot-checked" and "by carol" in badge.reason


def test_a_pending_runs_badge_ignores_records_its_submitter_forged(hub, tmp_path):  # noqa: F811
    [run_id] = make_runs(tmp_path, 1)
    settings = Settings.from_env()
    store = HubStore(settings)
    store.results._ensure_dataset(DATASET)
    data = b'{"run_id": "x"}\n'
    merged_by_hand(hub, forged_record(run_id, data, verified_at="2026-01-01T00:00:00+00:00"))
    open_pr(hub, ALICE, {f"data/evals/2026-11/{run_id}.jsonl": data})
    assert pending_badges(HubStore(settings))[run_id].verification == "unverified"
