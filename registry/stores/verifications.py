"""Verification records in the results dataset: who replayed or spot-checked which rows, when.

Beside the runs (`data/evals/...`), a results dataset keeps one immutable JSON file per
verification, `verifications/YYYY-MM/<run_id>--<when>--<kind>.json` (month of the
verification; `records.py`). Nothing is rewritten, so who checked what, with which hubskills,
stays on record. A record names the rows it checked by their hash (the git blob id of the run's
results file, which the Hub lists for free): it applies to exactly those bytes, so it still
holds once a pending submission is merged unchanged, and never to rows that changed. Records
are written only by the verifier (`registry.verify.records`); storage reads them and never
decides what to replay. Every store's `results` keeps records, read and written the same way on
the Hub and locally.

Which records count (`trusted`): a record is a file anyone could have written, so one counts
only when it names a trusted verifier (`ResultsDataset.verifiers()`: the dataset's owner, the
configured `HUBSKILLS_VERIFIERS`, the reading token's own user; "local" in a folder), is of a
known kind, and is dated at a readable time not in the future (a forged "newest forever" date
never decides). The one gate for submissions (`registry.verify.admission`) refuses any pull
request carrying a record, so a record reaches `main` only as the verifier's own commit; one
that arrived by a merge made by hand on the Hub's page, naming a verifier it is not, is the
case this rule cannot tell apart (docs/security.md).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from registry.results.leaderboard_badges import REPLAY, SPOT_CHECK, Badge, badge_from
from registry.stores.base import SkillStore
from registry.stores.records import RECORDS_DIR, Record, RunFile, record_path, rows_hash

if TYPE_CHECKING:
    from registry.hub import PullRequest, RemoteFile

__all__ = ["RECORDS_DIR", "Record", "RunFile", "badges", "for_rows", "pending_badges",
           "pending_keys", "read_records", "record_path", "rows_hash", "run_files", "trusted"]
SKEW = timedelta(minutes=10)  # a verifier's clock may run this far ahead of the reader's


def for_rows(records: Iterable[Record], run: RunFile) -> list[Record]:
    """The records that checked exactly ``run``'s rows."""
    return [r for r in records if r.get("run_id") == run.run_id
            and r.get("rows_hash") == run.rows_hash]


def trusted(records: Iterable[Record], verifiers: Iterable[str], *,
            now: datetime | None = None) -> list[Record]:
    """The ``records`` that count (module docstring): by one of ``verifiers``, of a known kind,
    dated no later than ``now`` (default: this clock) allows."""
    names = frozenset(verifiers)
    latest = (now or datetime.now(UTC)) + SKEW
    return [r for r in records if r.get("verified_by") in names and _dated(r, latest)
            and r.get("kind", REPLAY) in (REPLAY, SPOT_CHECK)
            and isinstance(r.get("run_id"), str) and isinstance(r.get("rows_hash"), str)]


def _dated(record: Record, latest: datetime) -> bool:
    """Whether ``record`` names a readable time no later than ``latest``."""
    when = _when(record.get("verified_at"))
    return when is not None and when <= latest


def _when(value: object) -> datetime | None:
    """A record's `verified_at` as an aware time (naive: UTC); None when unreadable."""
    try:
        found = datetime.fromisoformat(str(value))
    except ValueError:
        return None
    return found if found.tzinfo else found.replace(tzinfo=UTC)


def read_records(store: SkillStore) -> list[Record]:
    """The verification records of ``store``'s results dataset that count (`trusted`), oldest
    file first."""
    results = store.results
    return trusted(results.records(), results.verifiers())


def badges(store: SkillStore) -> dict[str, Badge]:
    """Run id -> `Badge` for every run in ``store``'s results dataset, from the records that
    count.

    Raises:
        HubskillsError: the Hub could not be asked.
    """
    by_run: dict[str, list[Record]] = defaultdict(list)
    for record in read_records(store):
        by_run[str(record.get("run_id"))].append(record)
    return {run.run_id: badge_from(for_rows(by_run.get(run.run_id, []), run))
            for run in store.results.run_files()}


def pending_badges(store: SkillStore, listed: list[tuple[PullRequest, list[RemoteFile]]]
                   | None = None) -> dict[str, Badge]:
    """Run id -> `Badge` for every run waiting in an open pull request on ``store``'s results
    dataset (a replay recorded while it waited still holds once it is merged unchanged);
    ``listed``: the pull requests' files as `store.results.pending()` listed them already.

    Raises:
        HubskillsError: the Hub could not be asked.
    """
    waiting = store.results.pending_run_files(listed)
    if not waiting:
        return {}
    records = read_records(store)
    keys = pending_keys((pr.num, run.run_id) for pr, run in waiting)
    return {keys[(pr.num, run.run_id)]: badge_from(for_rows(records, run))
            for pr, run in waiting}


def pending_keys(added: Iterable[tuple[int, str]]) -> dict[tuple[int, str], str]:
    """(pull request, run id) -> what its rows and badge go under while they wait: the run id,
    or `RUN_ID (#N)` in a pull request after the first that adds that id (oldest first). Two
    pull requests may add one run id with different rows: neither may borrow the other's
    badge, nor may their rows be summed as one run."""
    first: dict[str, int] = {}
    keys = {}
    for num, run_id in added:
        first.setdefault(run_id, num)
        keys[(num, run_id)] = run_id if first[run_id] == num else f"{run_id} (#{num})"
    return keys


def run_files(store: SkillStore) -> dict[str, RunFile]:
    """Run id -> its results file, for every merged run of ``store``."""
    return {run.run_id: run for run in store.results.run_files()}
