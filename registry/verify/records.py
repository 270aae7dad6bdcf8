"""Writing verification records: the verifier's side of `stores.verifications`.

A record is written only here, by the verifier, on the results dataset's main branch, with the
verifier's identity (`ResultsDataset.producer()`) and clock. It names the rows it checked by
their hash, so it counts for exactly those bytes (see `stores/verifications.py` for how records
are read into badges).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from registry._version import __version__
from registry.results.leaderboard_badges import REPLAY
from registry.results.runs import utc_now
from registry.stores.base import SkillStore
from registry.stores.records import Record, RunFile
from registry.stores.verifications import for_rows

if TYPE_CHECKING:
    from registry.verify.replay import Verification

__all__ = ["CONCLUSIVE", "append_record", "make_record", "verify_and_record"]
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
