"""`hubskills jobs`: the Hugging Face Jobs of sharded runs (`eval --on jobs`); and the glue
`eval --on jobs` uses to start or resume one."""

from __future__ import annotations

from pathlib import Path

import click
from rich.markup import escape

from registry.cli import _output as out
from registry.config import Settings
from registry.evaluation.engine import EvalConfig, EvalRun


class _JobsProgress:
    """One line per change: answers over all shards, and the shards' stages."""

    def __init__(self) -> None:
        self.run_id, self.last = "", ""

    def start(self, manifest, total: int) -> None:
        self.run_id = manifest.run_id
        out.info(f"run {manifest.run_id} ({escape(manifest.skill_name)}): {total} answers to "
                 "get on Hugging Face Jobs")

    def update(self, done: int, total: int, stages: str) -> None:
        line = f"run {self.run_id}: {done}/{total} answers · shards: {stages}"
        if line != self.last:
            self.last = line
            out.info(line)


def eval_on_jobs(skill: Path, config: EvalConfig, settings: Settings, *, tests: Path | None,
                 shards: int, flavor: str, detach: bool, resume: str | None, poll: float,
                 placed) -> EvalRun | None:
    """Start (or resume) the run on Jobs; its `EvalRun`, or None when detached."""
    from registry.jobs import resume_on_jobs, run_on_jobs

    progress = _JobsProgress()
    if resume:
        progress.run_id = resume
        run = resume_on_jobs(settings, resume, progress=progress.update, detach=detach,
                             poll_s=poll)
    else:
        run = run_on_jobs(skill, config, settings, shards=shards, flavor=flavor, detach=detach,
                          progress=progress.update, tests=tests, poll_s=poll,
                          started=progress.start, skill_repo=placed and placed.repo,
                          skill_revision=placed and placed.revision,
                          skill_version=placed and placed.version)
    if not detach:
        return run
    out.result(f"run {run.manifest.run_id}: shards started on Hugging Face Jobs")
    out.hint(f"hubskills runs show {run.manifest.run_id}  # waits for the shards, then the "
             "summary")
    return None


def collect_if_remote(settings: Settings, run_id: str, poll: float) -> None:
    """Finish a run sent to Jobs that was not collected yet (`runs show`)."""
    from registry.evaluation.results import read_manifest
    from registry.jobs import collect, is_remote_run

    if is_remote_run(settings, run_id) and read_manifest(settings.runs_dir,
                                                         run_id).status == "running":
        progress = _JobsProgress()
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
@click.argument("run_id")
@click.option("--json", "as_json", is_flag=True)
def jobs_list_command(run_id: str, as_json: bool) -> None:
    """The Jobs of run RUN_ID, by shard (retries included)."""
    from registry.jobs import shard_jobs

    jobs = shard_jobs(Settings.from_env(), run_id)
    rows = [(shard, job.id, job.stage.lower(), job.message or "", job.flavor or "",
             job.created_at or "") for shard, shard_list in sorted(jobs.items())
            for job in shard_list]
    if as_json:
        out.as_json([dict(zip(("shard", "job", "stage", "message", "flavor", "created"), row,
                              strict=True)) for row in rows])
        return
    out.table(["shard", "job", "stage", "message", "flavor", "created"],
              [(str(r[0]), *map(escape, r[1:])) for r in rows], title=f"Jobs of run {run_id}")


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
    out.result(f"cancelled {len(cancelled)} job(s) of run {run_id}" if cancelled
               else f"no job of run {run_id} is still going")
    out.hint(f"hubskills eval SKILL --on jobs --resume {run_id}  # finish the missing samples")
