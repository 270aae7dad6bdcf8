"""Verification records in the results dataset: who replayed or spot-checked which rows, when.

Beside the runs (`data/evals/...`), a results dataset keeps one immutable JSON file per
verification, `verifications/YYYY-MM/<run_id>--<when>--<kind>.json` (month of the
verification; `records.py`). Nothing is rewritten, so who checked what, with which hubskills,
stays on record. A record names the rows it checked by their hash (the git blob id of the run's
results file, which the Hub lists for free): it applies to exactly those bytes, so it still
holds once a pending submission is merged unchanged, and never to rows that changed. `badges`
reads the records for the leaderboard. Records are written only by the verifier
(`registry.verify.records`); storage reads them and never decides what to replay.
Every store's `results` keeps records, read and written the same way on the Hub and locally.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from registry.results.leaderboard_badges import Badge, badge_from
from registry.stores.base import SkillStore
from registry.stores.records import RECORDS_DIR, Record, RunFile, record_path, rows_hash

__all__ = ["RECORDS_DIR", "Record", "RunFile", "badges", "for_rows", "pending_badges",
           "read_records", "record_path", "rows_hash", "run_files"]


def for_rows(records: Iterable[Record], run: RunFile) -> list[Record]:
    """The records that checked exactly ``run``'s rows."""
    return [r for r in records if r.get("run_id") == run.run_id
            and r.get("rows_hash") == run.rows_hash]


def badges(store: SkillStore) -> dict[str, Badge]:
    """Run id -> `Badge` for every run in ``store``'s results dataset, from its records.

    Raises:
        HubskillsError: the Hub could not be asked.
    """
    by_run: dict[str, list[Record]] = defaultdict(list)
    for record in store.results.records():
        by_run[str(record.get("run_id"))].append(record)
    return {run.run_id: badge_from(for_rows(by_run.get(run.run_id, []), run))
            for run in store.results.run_files()}


def pending_badges(store: SkillStore) -> dict[str, Badge]:
    """Run id -> `Badge` for every run waiting in an open pull request on ``store``'s results
    dataset (a replay recorded while it waited still holds once it is merged unchanged).

    Raises:
        HubskillsError: the Hub could not be asked.
    """
    waiting = store.results.pending_run_files()
    if not waiting:
        return {}
    records = store.results.records()
    return {run.run_id: badge_from(for_rows(records, run)) for _, run in waiting}


def read_records(store: SkillStore) -> list[Record]:
    """Every verification record of ``store``'s results dataset (oldest file first)."""
    return store.results.records()


def run_files(store: SkillStore) -> dict[str, RunFile]:
    """Run id -> its results file, for every merged run of ``store``."""
    return {run.run_id: run for run in store.results.run_files()}
