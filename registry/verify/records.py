"""Writing verification records: the verifier's side of `stores.verifications`.

A record is written only here, by the verifier, on the results dataset's main branch, with the
verifier's identity (`ResultsDataset.producer()`: the token's user, or "local") and clock. It
names the rows it checked by their hash, so it counts for exactly those bytes; a reader counts
it only when that identity is a trusted verifier (`stores.verifications.trusted`). Nothing a
submitter sends is ever written as a record: the one gate (`admission.py`) refuses any pull
request that carries one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from registry._version import __version__
from registry.results.leaderboard_badges import REPLAY
from registry.results.runs import utc_now
from registry.stores.base import SkillStore
from registry.stores.records import Record, RunFile
from registry.stores.verifications import for_rows, read_records

if TYPE_CHECKING:
    from registry.verify.replay import Verification

__all__ = ["CONCLUSIVE", "append_record", "append_records", "make_record", "recorded_line",
           "verify_and_record"]
CONCLUSIVE = ("verified", "mismatch")  # replay statuses that are never replayed again


class Found(Protocol):
    """What a replay found, as a record reads it: a `Verification`, or one replayed in a
    child process (`bounded.py`)."""

    @property
    def status(self) -> str: ...  # noqa: D102

    @property
    def samples(self) -> int: ...  # noqa: D102
    @property
    def checks_regraded(self) -> int: ...  # noqa: D102

    def to_dict(self) -> dict[str, Any]: ...  # noqa: D102


def make_record(verification: Found, run: RunFile, *, skill_repo: str | None,
                skill_revision: str | None, verified_by: str) -> Record:
    """The record of one replay of ``run`` by ``verified_by``, dated now."""
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


def verify_and_record(store: SkillStore, run: RunFile, replay: Callable[[], Verification], *,
                      skill_repo: str | None, skill_revision: str | None = None,
                      records: list[Record] | None = None) -> tuple[Record, bool]:
    """The replay record of ``run``'s rows: an existing conclusive one that counts (True), else
    ``replay()`` run now and its record appended to the dataset (False; a run found not
    replayable is tried again: a later hubskills may replay it). ``records``: the dataset's
    records that count (`read_records`), when read already.

    Raises:
        HubskillsError: the record could not be written.
    """
    dataset = store.results
    mine = [r for r in for_rows(records if records is not None else read_records(store), run)
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


def append_records(store: SkillStore, records: list[Record], message: str) -> list[str]:
    """Add ``records`` to ``store``'s results dataset in one commit saying ``message``; their
    paths ([] and no commit when there are none).

    Raises:
        HubskillsError: the records could not be written.
    """
    return store.results.append_records(records, message) if records else []


def recorded_line(record: Record, kept: bool) -> str:
    """What a replay's record says to the user: kept from before, or just written."""
    if kept:
        return (f"already recorded: {record.get('status')} by {record.get('verified_by')} at "
                f"{record.get('verified_at')}")
    return f"recorded as {record['status']} in the results dataset's verifications"
