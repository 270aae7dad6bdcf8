"""Push a run: the one function the CLI (`eval --push`) and the Space's push button both call."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from registry.errors import HubskillsError
from registry.evaluation.results import (
    ResultRow,
    RunManifest,
    latest_rows,
    read_manifest,
    read_rows,
)
from registry.stores.base import SkillStore


@dataclass(frozen=True)
class PushedRun:
    """Where a run's rows went: the file in the results dataset, and how many rows."""

    run_id: str
    rows: int
    path: str


def push_run(store: SkillStore, manifest: RunManifest, rows: list[ResultRow]) -> PushedRun:
    """Append one run to `store`'s results dataset; pushing it again is a no-op.

    Only the latest row per sample is pushed (a resumed run's retry replaces its error row);
    the rows are scrubbed of secrets on the way out, like everything written.

    Raises:
        HubskillsError: the run is still being written, or has no rows.
        RegistryError / MissingCredentials: the store refused the write.
    """
    if manifest.status == "running":
        raise HubskillsError(f"run {manifest.run_id} is still running (or was killed)",
                             hint=f"hubskills eval SKILL --resume {manifest.run_id}")
    kept = latest_rows(rows)
    if not kept:
        raise HubskillsError(f"run {manifest.run_id} has no rows to push",
                             hint="hubskills runs show " + manifest.run_id)
    path = store.append_results(manifest, kept)
    return PushedRun(manifest.run_id, len(kept), path)


def push_saved_run(store: SkillStore, runs_dir: Path, run_id: str) -> PushedRun:
    """`push_run` for a run saved under `runs_dir`.

    Raises:
        RunNotFound: no such run.
    """
    return push_run(store, read_manifest(runs_dir, run_id), read_rows(runs_dir, run_id))
