"""`hubskills jobs`: the Hugging Face Jobs of sharded runs (`eval --on jobs`); and the glue
`eval --on jobs` uses to start or resume one."""

from __future__ import annotations

from pathlib import Path

import click
from rich.markup import escape

from registry.cli import _output as out
from registry.cli._jobs_progress import ShardsProgress, say_undone
from registry.config import Settings
from registry.errors import HubskillsError
from registry.evaluation.config import EvalConfig
from registry.evaluation.engine import EvalRun
from registry.format.version_ref import SkillVersionRef
from registry.results.display import count


def eval_on_jobs(skill: Path, config: EvalConfig, settings: Settings, *, tests: Path | None,
                 shards: int, flavor: str, image: str | None, detach: bool, resume: str | None,
                 poll: float, published: SkillVersionRef | None) -> EvalRun | None:
    """Start (or resume) the run on Jobs; its `EvalRun`, or None when detached.

    Ctrl-C while the Jobs are being started cancels them (the one in flight too: it is found by
    its launch label) and exits 130; once they are started, Ctrl-C stops only the waiting: the
    Jobs go on, and the lines printed say how to collect or cancel them.

    Raises:
        HubskillsError: the run executes code and no sandbox worked in its Jobs (the probe's
            reason; nothing was asked of a model).
    """
    from registry.jobs import DEFAULT_IMAGE, resume_on_jobs, run_on_jobs
    from registry.jobs.launches import LaunchInterrupted

    with ShardsProgress() as progress:
        progress.run_id = resume or ""
        try:
            if resume:
                if config.base_url:  # given again: a credential in it is not in the plan
                    settings = settings.with_(base_url=config.base_url)
                run = resume_on_jobs(settings, resume, progress=progress.update, detach=detach,
                                     poll_s=poll, image=image)
            else:
                run = run_on_jobs(skill, config, settings, shards=shards, flavor=flavor,
                                  image=image or DEFAULT_IMAGE, detach=detach,
                                  progress=progress.update, tests=tests,
                                  poll_s=poll, started=progress.start, published=published)
        except LaunchInterrupted as stopped:
            say_undone(stopped.undone)
            if stopped.undone.run_id:  # its uploads are kept: a resume starts only the Jobs
                out.hint(f"hubskills eval {skill} --on jobs --resume {stopped.undone.run_id}  "
                         "# start its shards again")
            raise SystemExit(130) from None
        except KeyboardInterrupt:
            if progress.run_id:
                out.info(f"stopped waiting; the Jobs of run {progress.run_id} go on")
                out.hint(f"hubskills runs show {progress.run_id}  # collect; or: hubskills "
                         f"jobs cancel {progress.run_id}")
            raise
    if not detach:
        _stopped_without_sandbox(skill, run)
        if run.manifest.is_partial:
            why = run.manifest.note or "a shard did not finish"
            out.warn(f"run {run.manifest.run_id} is partial: {why}")
            out.hint(f"hubskills eval {skill} --on jobs --resume {run.manifest.run_id}  # only "
                     "the missing samples")
        return run
    out.result(f"run {run.manifest.run_id}: shards started on Hugging Face Jobs")
    out.hint(f"hubskills runs show {run.manifest.run_id}  # waits for the shards, then the "
             "summary")
    return None


def _stopped_without_sandbox(skill: Path, run: EvalRun) -> None:
    """Refuse a run whose shards stopped because no sandbox worked in their Jobs."""
    from registry.jobs import NO_SANDBOX

    note = run.manifest.note or ""
    if note.startswith(NO_SANDBOX):
        raise HubskillsError(f"run {run.manifest.run_id} stopped before any model call, as "
                             f"its code runs only in a sandbox: {note}",
                             hint=f"hubskills eval {skill} --on jobs --resume "
                                  f"{run.manifest.run_id} --image IMAGE  # an image with "
                                  "bubblewrap where user namespaces work; or a new run with "
                                  "--skip-code-checks")


def collect_if_remote(settings: Settings, run_id: str, poll: float) -> None:
    """Finish a run sent to Jobs that was not collected yet (`runs show`)."""
    from registry.jobs import collect, is_remote_run
    from registry.results.runs import read_manifest

    if is_remote_run(settings, run_id) and read_manifest(settings.runs_dir,
                                                         run_id).status == "running":
        with ShardsProgress() as progress:
            progress.run_id = run_id
            collect(settings, run_id, progress=progress.update, poll_s=poll)


@click.group("jobs")
def jobs_group() -> None:
    """Sharded runs on Hugging Face Jobs: `jobs list`, `jobs logs RUN_ID`, `jobs cancel RUN_ID`.

    \b
    Example:
      hubskills eval ./my-skill -m sonnet --on jobs --shards 4 --detach
      hubskills jobs logs 20261122-103000-a1b2c3
      hubskills jobs cancel 20261122-103000-a1b2c3
      hubskills eval ./my-skill --on jobs --resume 20261122-103000-a1b2c3
    """


@jobs_group.command("list")
@click.argument("run_id", required=False)
@click.option("--json", "as_json", is_flag=True)
def jobs_list_command(run_id: str | None, as_json: bool) -> None:
    """The Jobs of run RUN_ID by shard (retries included); without RUN_ID, every run's."""
    from registry.jobs import runs_on_jobs, shard_jobs

    settings = Settings.from_env()
    if run_id:
        listed = {run_id: [job for jobs in shard_jobs(settings, run_id).values()
                           for job in jobs]}
    else:
        listed = runs_on_jobs(settings)
    rows = [(run, int(job.labels.get("hubskills-shard", 0)), job.id, job.stage.lower(),
             job.message or "", job.flavor or "", job.created_at or "")
            for run, jobs in listed.items() for job in jobs]
    names = ("run", "shard", "job", "stage", "message", "flavor", "created")
    if as_json:
        out.as_json([dict(zip(names, row, strict=True)) for row in rows])
        return
    out.table(list(names), [(escape(r[0]), str(r[1]), *map(escape, r[2:])) for r in rows],
              title="hubskills runs on Hugging Face Jobs")


@jobs_group.command("logs")
@click.argument("run_id")
@click.option("--shard", type=int, default=None, help="Only this shard.")
def jobs_logs_command(run_id: str, shard: int | None) -> None:
    """Each shard's latest Job's log."""
    from registry.jobs import run_logs

    for index, lines in run_logs(Settings.from_env(), run_id).items():
        if shard is None or index == shard:
            out.info(f"── shard {index}")
            for line in lines:
                out.info(escape(line))


@jobs_group.command("cancel")
@click.argument("run_id")
def jobs_cancel_command(run_id: str) -> None:
    """Stop the run's Jobs; their rows so far are kept (`eval --resume RUN_ID --on jobs`)."""
    from registry.jobs import cancel_run

    cancelled = cancel_run(Settings.from_env(), run_id)
    out.result(f"cancelled {count(len(cancelled), 'job')} of run {run_id}" if cancelled
               else f"no job of run {run_id} is still going")
    out.hint(f"hubskills eval SKILL --on jobs --resume {run_id}  # finish the missing samples")
