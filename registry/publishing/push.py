"""Push a run: the one function the CLI (`eval --push`), the Space's push button and
`publish --with-run` use to put a finished, placed run into a registry's results dataset.

Every pushed row says whose numbers they are: `produced_by` is the Hub user the token belongs
to (asked with `whoami`, never the configured namespace) or "local", and `produced_via` how
the run was made (cli, space, job). A token that may not write the results dataset proposes
the run as a pull request (`PushedRun.pr_url`) for the dataset's owner to review.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from registry.config import Settings
from registry.errors import HubskillsError
from registry.results.runs import (
    ResultRow,
    RunManifest,
    latest_rows,
    read_manifest,
    read_rows,
)
from registry.stores.base import SkillStore


@dataclass(frozen=True)
class PushedRun:
    """Where a run's rows went, how many, why the card was not refreshed (if it was not), and
    the pull request that proposes them when they await the dataset owner's review."""

    run_id: str
    rows: int
    path: str
    card_note: str | None = None
    pr_url: str | None = None
    produced_by: str = "local"
    verification: str | None = None  # the replay's status when the push replayed the run
    feedback: tuple[str, ...] = ()  # people's review answers pushed beside the run (files)

    @property
    def pending(self) -> bool:
        """Whether the rows wait in a pull request (unreviewed) rather than in the dataset."""
        return self.pr_url is not None


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
    """Who produces results pushed to ``store``: "local", or the Hub user its token belongs to
    (`whoami`; a namespace setting names where things go, not who made them).

    Raises:
        MissingCredentials: no valid token.
    """
    return store.results.producer()


def push_run(store: SkillStore, manifest: RunManifest, rows: list[ResultRow], *,
             skill_dir: Path | str = "SKILL", via: str | None = None,
             settings: Settings | None = None) -> PushedRun:
    """Append a finished run of a placed skill to `store`'s results and refresh its card.

    Only the latest row per sample is pushed (a resumed run's retry replaces its error row);
    rows are scrubbed of secrets on the way out, like everything written. The card note says
    why the card could not be refreshed (someone else's skill on the Hub). With `settings`,
    rows that went straight into the dataset are replayed from it at once (`record_replay`),
    so the run ranks as `replayed` when the replay holds; rows proposed as a pull request are
    replayed by the dataset's owner instead.

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
    producer = run_producer(store)
    update = {"produced_by": producer} | ({"produced_via": via} if via else {})
    appended = store.append_results(manifest.model_copy(update=update), kept)
    if appended.pr_url is not None:  # the card shows merged results only: nothing to refresh
        return PushedRun(manifest.run_id, len(kept), appended.path, None, appended.pr_url,
                         producer)
    verification = None if settings is None else record_replay(store, manifest, settings)
    try:
        store.refresh_card(manifest.skill_repo)
    except HubskillsError as err:
        return PushedRun(manifest.run_id, len(kept), appended.path, err.message,
                         produced_by=producer, verification=verification)
    return PushedRun(manifest.run_id, len(kept), appended.path, produced_by=producer,
                     verification=verification)


def record_replay(store: SkillStore, manifest: RunManifest, settings: Settings) -> str | None:
    """Replay the pushed run `manifest` from the rows as `store`'s dataset now holds them (no
    model is called; code checks in the sandbox) and record the verification; returns its
    status, or None when the dataset does not list the run."""
    from functools import partial

    from registry.stores.verifications import run_files
    from registry.verify.pushed import verify_published
    from registry.verify.records import verify_and_record

    run = run_files(store).get(manifest.run_id)
    if run is None or not manifest.skill_repo:
        return None
    record, _ = verify_and_record(
        store, run, partial(verify_published, store, manifest.skill_repo, manifest.run_id,
                            settings),
        skill_repo=manifest.skill_repo, skill_revision=manifest.skill_revision)
    return str(record["status"])


def push_saved_run(store: SkillStore, runs_dir: Path, run_id: str, *,
                   via: str | None = None, settings: Settings | None = None) -> PushedRun:
    """`push_run` for a run saved under `runs_dir`, then its review's answers (if any) beside
    it as their own files (`review.push_feedback`; not rows: no badge reads them).

    Raises:
        RunNotFound: no such run.
        HubskillsError: the review's answers fail their checks (the rows are pushed).
    """
    from dataclasses import replace

    from registry.review import push_feedback

    pushed = push_run(store, read_manifest(runs_dir, run_id), read_rows(runs_dir, run_id),
                      via=via, settings=settings)
    if pushed.pending:  # the rows wait in a pull request: the answers follow once merged
        return pushed
    return replace(pushed, feedback=tuple(push_feedback(store, runs_dir, run_id)))
