"""Verification records in the results dataset: who replayed or spot-checked which rows, when.

Beside the runs (`data/evals/...`), a results dataset keeps one immutable JSON file per
verification, `verifications/YYYY-MM/<run_id>--<when>--<kind>.json` (month of the
verification). Nothing is rewritten, so who checked what, with which hubskills, stays on
record. A record names the rows it checked by their hash (the git blob id of the run's results
file, which the Hub lists for free): it applies to exactly those bytes, so it still holds once a
pending submission is merged unchanged, and never to rows that changed. `badges` reads the
records for the leaderboard; `verify_and_record` replays only rows that have none.
"""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from registry._io import atomic_write_text
from registry._version import __version__
from registry.errors import HubskillsError
from registry.results.leaderboard_badges import REPLAY, Badge, badge_from
from registry.results.runs import utc_now
from registry.stores.base import SkillStore
from registry.stores.dataset import RESULTS_DIR

if TYPE_CHECKING:
    from registry.evaluation.verify import Verification
    from registry.hub import HubClient, PullRequest
    from registry.stores.hub_results import HubResults

log = logging.getLogger(__name__)
RECORDS_DIR = "verifications"
CONCLUSIVE = ("verified", "mismatch")  # replay statuses that are never replayed again
Record = dict[str, Any]


@dataclass(frozen=True)
class RunFile:
    """A run's results file in the dataset: its run id, path and rows hash."""

    run_id: str
    path: str
    rows_hash: str


def rows_hash(data: bytes) -> str:
    """The git blob id of a results file's bytes (what the Hub reports as its `oid`)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


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


def record_path(record: Record) -> str:
    """Where a record goes: month of the verification, run id, time, kind, a random tail (two
    verifiers of one run in the same second never collide)."""
    when = str(record["verified_at"])
    stamp = when[:19].replace(":", "").replace("-", "")
    return (f"{RECORDS_DIR}/{when[:7]}/{record['run_id']}--{stamp}--{record['kind']}"
            f"--{secrets.token_hex(3)}.json")


def for_rows(records: Iterable[Record], run: RunFile) -> list[Record]:
    """The records that checked exactly ``run``'s rows."""
    return [r for r in records if r.get("run_id") == run.run_id
            and r.get("rows_hash") == run.rows_hash]


def badges(store: SkillStore) -> dict[str, Badge]:
    """Run id -> `Badge` for every run in ``store``'s results dataset, from its records.

    Raises:
        HubskillsError: the Hub could not be asked.
    """
    shelf = shelf_of(store)
    if shelf is None:
        return {}
    by_run: dict[str, list[Record]] = defaultdict(list)
    for record in shelf.records():
        by_run[str(record.get("run_id"))].append(record)
    return {run.run_id: badge_from(for_rows(by_run.get(run.run_id, []), run))
            for run in shelf.run_files()}


def pending_badges(store: SkillStore) -> dict[str, Badge]:
    """Run id -> `Badge` for every run waiting in an open pull request on ``store``'s results
    dataset (a replay recorded while it waited still holds once it is merged unchanged).

    Raises:
        HubskillsError: the Hub could not be asked.
    """
    shelf = shelf_of(store)
    if not isinstance(shelf, _HubShelf):
        return {}
    waiting = shelf.pending_files()
    if not waiting:
        return {}
    records = shelf.records()
    return {run.run_id: badge_from(for_rows(records, run)) for _, run in waiting}


def verify_and_record(store: SkillStore, run: RunFile, replay: Callable[[], Verification], *,
                      skill_repo: str | None, skill_revision: str | None = None,
                      records: list[Record] | None = None) -> tuple[Record, bool]:
    """The replay record of ``run``'s rows: an existing conclusive one (True), else
    ``replay()`` run now and its record appended to the dataset (False; a run found not
    replayable is tried again: a later hubskills may replay it). ``records``: the dataset's,
    when read already.

    Raises:
        HubskillsError: the store keeps no records, or the record could not be written.
    """
    shelf = _shelf(store)
    mine = [r for r in for_rows(records if records is not None else shelf.records(), run)
            if r.get("kind", REPLAY) == REPLAY and r.get("status") in CONCLUSIVE]
    if mine:
        return max(mine, key=lambda r: str(r.get("verified_at"))), True
    record = make_record(replay(), run, skill_repo=skill_repo, skill_revision=skill_revision,
                         verified_by=shelf.who())
    shelf.append(record)
    return record, False


def append_record(store: SkillStore, record: Record) -> str:
    """Add ``record`` as a new file of ``store``'s results dataset; returns its path.

    Raises:
        HubskillsError: the store keeps no records, or the record could not be written.
    """
    return _shelf(store).append(record)


def read_records(store: SkillStore) -> list[Record]:
    """Every verification record of ``store``'s results dataset (oldest file first)."""
    shelf = shelf_of(store)
    return shelf.records() if shelf is not None else []


def run_files(store: SkillStore) -> dict[str, RunFile]:
    """Run id -> its results file, for every merged run of ``store``."""
    shelf = shelf_of(store)
    return {run.run_id: run for run in shelf.run_files()} if shelf is not None else {}


def _shelf(store: SkillStore) -> _LocalShelf | _HubShelf:
    shelf = shelf_of(store)
    if shelf is None:
        raise HubskillsError(f"a {store.kind} registry keeps no verification records",
                             hint="hubskills verify RUN_ID (a local run)")
    return shelf


def shelf_of(store: SkillStore) -> _LocalShelf | _HubShelf | None:
    """Where ``store`` keeps its records (None: a store that keeps none). A local store is
    known by its kind and dataset folder (importing `LocalStore` here would close a cycle:
    its cards show these badges)."""
    if store.kind == "local" and hasattr(store, "dataset_dir"):
        return _LocalShelf(store)
    results = getattr(store, "results", None)
    if store.kind == "hub" and results is not None and hasattr(results, "client"):
        return _HubShelf(results)
    return None


def _parse(data: bytes, where: str) -> Record | None:
    try:
        record = json.loads(data)
    except ValueError:
        record = None
    if not isinstance(record, dict):
        log.warning("skipping %s: not a verification record", where)
        return None
    return record


class _LocalShelf:
    """The records of a `LocalStore`'s results dataset folder."""

    def __init__(self, store: Any) -> None:  # a `LocalStore`
        self.store = store

    def who(self) -> str:
        return "local"

    def run_files(self) -> list[RunFile]:
        base = self.store.dataset_dir
        return [RunFile(p.stem, p.relative_to(base).as_posix(), rows_hash(p.read_bytes()))
                for p in sorted((base / RESULTS_DIR).glob("*/*.jsonl"))]

    def records(self) -> list[Record]:
        found = [_parse(p.read_bytes(), str(p))
                 for p in sorted((self.store.dataset_dir / RECORDS_DIR).glob("*/*.json"))]
        return [r for r in found if r is not None]

    def append(self, record: Record) -> str:
        path = record_path(record)
        atomic_write_text(self.store.dataset_dir / path, json.dumps(record, indent=2) + "\n")
        return path


class _HubShelf:
    """The records of a `HubStore`'s results dataset, read and written through its client."""

    def __init__(self, results: HubResults) -> None:
        self.results = results
        self.client: HubClient = results.client

    def who(self) -> str:
        from registry.hub import user_errors

        with user_errors():
            return self.client.whoami()

    def run_files(self) -> list[RunFile]:
        from registry.hub import user_errors

        with user_errors():
            files, head = self.results.files()
            return [self._run_file(e.path, e.blob_id, head) for e in files]

    def pending_files(self) -> list[tuple[PullRequest, RunFile]]:
        """Each open pull request's added results files."""
        from registry.hub import user_errors

        with user_errors():
            return [(pr, self._run_file(e.path, e.blob_id, pr.revision))
                    for pr, added in self.results.pending() for e in added]

    def _run_file(self, path: str, blob_id: str | None, revision: str | None) -> RunFile:
        if not blob_id:  # not reported: hash the bytes
            blob_id = rows_hash(Path(self.results._download(path, revision)).read_bytes())
        return RunFile(Path(path).stem, path, blob_id)

    def records(self) -> list[Record]:
        from registry.hub import EntryNotFound, RepoNotFound, user_errors

        repo = self.results.repo()
        with user_errors():
            try:
                head = self.client.repo_info(repo, repo_type="dataset").sha
                listed = self.client.tree(repo, RECORDS_DIR, head, repo_type="dataset")
            except (RepoNotFound, EntryNotFound):
                return []
            found = [_parse(Path(self.results._download(e.path, head)).read_bytes(), e.path)
                     for e in sorted(listed, key=lambda e: e.path) if e.path.endswith(".json")]
        return [r for r in found if r is not None]

    def append(self, record: Record) -> str:
        from registry.hub import user_errors, with_retry

        path, repo = record_path(record), self.results.repo()
        data = (json.dumps(record, indent=2) + "\n").encode("utf-8")
        with user_errors():
            with_retry(lambda: self.client.commit(
                repo, {path: data}, repo_type="dataset",
                message=f"Verify run {record['run_id']}: {record['status']}"))
        return path
