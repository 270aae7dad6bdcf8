"""Push a run: the one function the CLI (`eval --push`), the Space's push button and
`publish --with-run` use to put a finished, placed run into a registry's results dataset."""

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
    """Where a run's rows went, how many, and why the card was not refreshed (if it was not)."""

    run_id: str
    rows: int
    path: str
    card_note: str | None = None


def check_finished(manifest: RunManifest, skill_dir: Path | str) -> None:
    """Refuse a run that did not answer every planned sample: its numbers are not the suite's.

    Raises:
        HubskillsError: the run is partial (hint: resume it).
    """
    if manifest.is_partial:
        raise HubskillsError(
            f"run {manifest.run_id} is partial ({manifest.label}); only finished runs are "
            "pushed", hint=f"hubskills eval {skill_dir} --resume {manifest.run_id}")


def run_producer(store: SkillStore) -> str:
    """Who produces results pushed to ``store``: "local", or the Hub user (namespace)."""
    return "local" if store.kind == "local" else store.default_namespace()


def push_run(store: SkillStore, manifest: RunManifest, rows: list[ResultRow], *,
             skill_dir: Path | str = "SKILL", via: str | None = None) -> PushedRun:
    """Append a finished run of a placed skill to `store`'s results and refresh its card.

    Only the latest row per sample is pushed (a resumed run's retry replaces its error row);
    rows are scrubbed of secrets on the way out, like everything written. The card note says
    why the card could not be refreshed (someone else's skill on the Hub).

    Raises:
        HubskillsError: the run is partial or still running, has no rows, or belongs to no
            registry repo.
        RegistryError / MissingCredentials: the store refused the write.
    """
    check_finished(manifest, skill_dir)
    if not manifest.skill_repo:
        raise HubskillsError(f"run {manifest.run_id} of {manifest.skill_name} belongs to no "
                             "registry repo, so its results would be orphans",
                             hint=f"hubskills publish {skill_dir} --with-run {manifest.run_id}")
    kept = latest_rows(rows)
    if not kept:
        raise HubskillsError(f"run {manifest.run_id} has no rows to push",
                             hint="hubskills runs show " + manifest.run_id)
    update = {"produced_by": run_producer(store)} | ({"produced_via": via} if via else {})
    path = store.append_results(manifest.model_copy(update=update), kept)
    try:
        store.refresh_card(manifest.skill_repo)
    except HubskillsError as err:
        return PushedRun(manifest.run_id, len(kept), path, err.message)
    return PushedRun(manifest.run_id, len(kept), path)


def push_saved_run(store: SkillStore, runs_dir: Path, run_id: str, *,
                   via: str | None = None) -> PushedRun:
    """`push_run` for a run saved under `runs_dir`.

    Raises:
        RunNotFound: no such run.
    """
    return push_run(store, read_manifest(runs_dir, run_id), read_rows(runs_dir, run_id),
                    via=via)
