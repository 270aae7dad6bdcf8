"""Verification records in the results dataset: who replayed or spot-checked which rows, when.

Beside the runs (`data/evals/...`), a results dataset keeps one immutable JSON file per
verification, `verifications/YYYY-MM/<run_id>--<when>--<kind>.json` (month of the
verification; `records.py`). Nothing is rewritten, so who checked what, with which hubskills,
stays on record. A record names the rows it checked by their hash (the git blob id of the run's
results file, which the Hub lists for free): it applies to exactly those bytes, so it still
holds once a pending submission is merged unchanged, and never to rows that changed. `badges`
reads the records for the leaderboard; `verify_and_record` replays only rows that have none.
Every store's `results` keeps records, read and written the same way on the Hub and locally.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from registry._version import __version__
from registry.results.leaderboard_badges import REPLAY, Badge, badge_from
from registry.results.runs import utc_now
from registry.stores.base import SkillStore
from registry.stores.records import RECORDS_DIR, Record, RunFile, record_path, rows_hash

if TYPE_CHECKING:
    from registry.evaluation.verify import Verification

__all__ = ["CONCLUSIVE", "RECORDS_DIR", "Record", "RunFile", "append_record", "badges",
           "for_rows", "make_record", "pending_badges", "read_records", "record_path",
           "rows_hash", "run_files", "verify_and_record"]
CONCLUSIVE = ("verified", "mismatch")  # replay statuses that are never replayed again


def make_record(verification: Verification, run: RunFile, *, skill_repo: str | None,
                skill_revision: str | None, verified_by: str) -> Record:
    """The record of one replay of ``run`` (see the module docstring)."""
    found = verification.to_dict()
    first = (found["problems"][:1] or [_difference(d) for d in found["differences"][:1]]
             or [n["why"] for n in found["not_replayable"][:1]] or [None])[0]
    return {"kind": REPLAY, "run_id": run.run_id, "rows_hash": run.rows_hash,
            "skill_repo": skill_repo, "skill_revision": skill_revision,
            "status": verification.status, "first_problem": first,
            "samples": verification.samples, "checks_regraded": verification.checks_regraded,
            "verified_by": verified_by, "verified_at": utc_now(),
            "hubskills_version": __version__}


def _difference(d: dict[str, Any]) -> str:
    return f"{d['sample']}: {d['field']} stored {d['stored']!r}, regraded {d['regraded']!r}"


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


def verify_and_record(store: SkillStore, run: RunFile, replay: Callable[[], Verification], *,
                      skill_repo: str | None, skill_revision: str | None = None,
                      records: list[Record] | None = None) -> tuple[Record, bool]:
    """The replay record of ``run``'s rows: an existing conclusive one (True), else
    ``replay()`` run now and its record appended to the dataset (False; a run found not
    replayable is tried again: a later hubskills may replay it). ``records``: the dataset's,
    when read already.

    Raises:
        HubskillsError: the record could not be written.
    """
    dataset = store.results
    mine = [r for r in for_rows(records if records is not None else dataset.records(), run)
            if r.get("kind", REPLAY) == REPLAY and r.get("status") in CONCLUSIVE]
    if mine:
        return max(mine, key=lambda r: str(r.get("verified_at"))), True
    record = make_record(replay(), run, skill_repo=skill_repo, skill_revision=skill_revision,
                         verified_by=dataset.producer())
    dataset.append_record(record)
    return record, False


def append_record(store: SkillStore, record: Record) -> str:
    """Add ``record`` as a new file of ``store``'s results dataset; returns its path.

    Raises:
        HubskillsError: the record could not be written.
    """
    return store.results.append_record(record)


def read_records(store: SkillStore) -> list[Record]:
    """Every verification record of ``store``'s results dataset (oldest file first)."""
    return store.results.records()


def run_files(store: SkillStore) -> dict[str, RunFile]:
    """Run id -> its results file, for every merged run of ``store``."""
    return {run.run_id: run for run in store.results.run_files()}
