"""Reading a pushed run's results file, as the verifier does (by run id, at a revision)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from registry.errors import RunNotFound

if TYPE_CHECKING:
    from registry.stores.base import SkillStore

__all__ = ["read_pushed"]
_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")  # `stores.dataset`'s, likewise


def read_pushed(store: SkillStore, run_id: str, revision: str | None = None) -> bytes:
    """The bytes of run ``run_id``'s results file in ``store``'s dataset (at ``revision``).

    Raises:
        RunNotFound: no such run.
        HubskillsError: no such revision (a local dataset has none), or it could not be read.
    """
    if not _RUN_ID.match(run_id) or ".." in run_id:
        raise RunNotFound(f"'{run_id}' is not a run id", hint="hubskills leaderboard --json")
    data = store.results.read_run(run_id, revision)
    if data is None:
        raise RunNotFound(f"no run {run_id} in the {store.kind} registry's results"
                          + (f" at {revision}" if revision else ""),
                          hint="hubskills leaderboard --include-unverified --json  # run ids")
    return bytes(data)
