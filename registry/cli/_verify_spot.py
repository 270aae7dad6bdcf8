"""`hubskills verify ... --resample K`: after a verified replay, a spot check against the model.

Here (`jobs.spot.spot_check_and_record`): the run is read again as the replay read it (a local
run's folder; a pushed run's file, its manifest rebuilt from its rows), the skill taken at the
revision the run names (or the folder it recorded, or --skill), and K samples per arm re-asked.
With `--on jobs` (a registry run only) the same check runs as one Hugging Face Job under the
caller's token (`jobs.spot_remote`), followed here until its verdict; Ctrl-C while following
cancels the Job (else it would go on billing unseen), or names the command that does; Ctrl-C
while the Job is created cancels it too (`jobs.launches`). Either way the estimated
cost (catalogue prices of the suite's prompts, never the rows' costs) is shown before any call
and refused over --max-cost, and the re-asked run never spends past --max-cost nor calls past
--max-calls (a model without a known price needs --max-calls). A spot check of a registry run is
recorded in its results dataset beside the replays
(`stores.verifications`), so the leaderboard can badge it `spot-checked` (or `mismatch`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.markup import escape

from registry.cli import _output as out
from registry.results.display import count

if TYPE_CHECKING:
    from registry.config import Settings
    from registry.hub import JobState
    from registry.jobs.spot_remote import SpotJob
    from registry.stores import SkillStore
    from registry.verify.resample import SpotCheck


def spot_check(target: str, run_id: str | None, revision: str | None, skill_dir: Path | None,
               settings: Settings, open_store: Callable[[], SkillStore], *, k: int, seed: int,
               max_cost: float | None, max_calls: int | None = None, on: str = "local",
               flavor: str | None = None) -> dict[str, Any]:
    """Spot-check the run here or on Jobs (module docstring); the check as JSON with
    ``record``, the path of the record written (None for a local run).

    Raises:
        HubskillsError: over --max-cost or --max-calls, the skill cannot be read, the
            evaluation refuses, or the Job ended without a verdict.
    """
    if on == "jobs":
        if run_id is None or skill_dir is not None:
            raise click.UsageError("--on jobs spot-checks a run of the registry's results: "
                                   f"hubskills verify NS/NAME --run RUN_ID --resample {k} "
                                   "--on jobs (without --skill)")
        if max_calls is not None:
            from registry.errors import HubskillsError

            raise HubskillsError("--max-calls does not reach a spot check on Jobs yet",
                                 hint=f"hubskills verify {target} --run {run_id} --resample "
                                      f"{k} --max-calls {max_calls}  # here")
        return _on_jobs(target, run_id, revision, settings, open_store(), k=k, seed=seed,
                        max_cost=max_cost, flavor=flavor)
    from registry.cli._dependencies import EvalDependencyLoader
    from registry.verify.spot_job import spot_check_and_record

    check, record = spot_check_and_record(target, run_id, revision, skill_dir, settings,
                                          open_store, k=k, seed=seed, max_cost=max_cost,
                                          max_calls=max_calls, announce=_announce,
                                          dependencies=EvalDependencyLoader(settings, open_store))
    return {**check.to_dict(), "record": record}


def _on_jobs(target: str, run_id: str, revision: str | None, settings: Settings, store: SkillStore,
             *, k: int, seed: int, max_cost: float | None,
             flavor: str | None) -> dict[str, Any]:
    from registry.cli._jobs_progress import say_undone
    from registry.jobs.launches import LaunchInterrupted
    from registry.jobs.spot_remote import follow_spot_job, start_spot_job

    chosen = {"flavor": flavor} if flavor else {}
    seen: list[str] = []

    def stage(job: JobState) -> None:
        if not seen or seen[-1] != job.stage:
            seen.append(job.stage)
            out.info(f"  job {job.id}: {job.stage.lower()}")

    # One handler from the create to the follow's end, so no Ctrl-C leaves the Job unseen:
    # while it is created the launch's guard cancels it by its label; from its create's answer
    # on (`started`, still inside the guard) it is cancelled by its id.
    created: list[SpotJob] = []
    try:
        spot = start_spot_job(store, target, run_id, settings, k=k, seed=seed,
                              max_cost=max_cost, revision=revision, announce=_announce,
                              started=created.append, **chosen)
        out.info(f"Spot check running as Hugging Face Job {spot.job.id} on your account: "
                 f"{spot.url} (Ctrl-C cancels it)")
        return follow_spot_job(settings, spot, stage=stage)
    except LaunchInterrupted as stopped:
        say_undone(stopped.undone)
        raise SystemExit(130) from None
    except KeyboardInterrupt:
        if not created:  # before the Job's create was sent: nothing was started
            raise
        _cancel(settings, created[0])
        raise SystemExit(130) from None


def _cancel(settings: Settings, spot: SpotJob) -> None:
    """Ctrl-C while following: cancel the Job; when that fails (or a second Ctrl-C cuts it
    short), say that it may still be running and the command that cancels it."""
    from registry.errors import HubskillsError
    from registry.jobs.spot_remote import cancel_spot_job

    job_id = spot.job.id
    out.notice_now(f"Ctrl-C: cancelling Hugging Face Job {job_id}…")
    try:
        cancel_spot_job(settings, spot)
    except (HubskillsError, KeyboardInterrupt) as err:
        why = "interrupted again" if isinstance(err, KeyboardInterrupt) else str(err)
        out.error(f"Hugging Face Job {job_id} was not cancelled ({why}): it may still be "
                  "running, and billing, on your account")
        where = f" --namespace {settings.namespace}" if settings.namespace else ""
        out.hint(f"hf jobs cancel {job_id}{where}")
        return
    out.info(f"Cancelled Hugging Face Job {job_id}: the spot check stopped without a verdict")


def _announce(check: SpotCheck) -> None:
    cost = f"at most ${check.estimated_cost:.4f} (catalogue prices, one call a sample)" \
        if check.estimated_cost is not None else "unknown (a model has no known price)" \
        if check.priced else "to be priced by the Job (catalogue prices)"
    out.info(f"Spot check: re-asking {count(check.k, 'sample')} per arm over "
             f"{count(len(check.cases), 'case')} (seed {check.seed}); estimated cost {cost}")


def render(found: dict[str, Any]) -> None:
    """The spot check's finding (`SpotCheck.to_dict()` with ``record``), one line per arm."""
    verdict = found.get("status") or ("consistent" if found["consistent"] else "inconsistent")
    out.result(f"spot check: {verdict} (K={found['k']} per arm, fresh run "
               f"{escape(str(found['fresh_run_id']))}, false alarms at most {found['alpha']:g})")
    for arm in found["arms"]:
        errors = arm.get("stored_errors_answered")
        out.result(f"  {arm['arm']}: {count(arm['pairs'], 'pair')}, "
                   f"{arm['stored_only_passed']} passed "
                   f"only as stored, {arm['fresh_only_passed']} only when re-asked, "
                   f"p={arm['p_value']:.3g}"
                   + (f" ({errors} stored as errors, answered when re-asked)" if errors else ""))
    if found.get("spent_usd") is not None:
        out.result(f"  spent ${found['spent_usd']:.4f}")
    if found.get("note"):
        out.result(f"  the re-asked run stopped early: {escape(found['note'])}")
    if verdict == "inconclusive":
        out.result(f"  {escape(str(found.get('first_problem') or ''))}")
    if found.get("record"):
        out.result(f"  recorded as {escape(found['record'])}")
