"""Where a sharded run lives: its files in the results repo and its Jobs in the user's account.

Jobs run under the user's own token. Keys go to a Job as secrets only (`job_secrets`); the command
and the environment, which the Hub shows in listings and its UI, hold none.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

from registry._install import login_hint
from registry.config import Settings
from registry.credentials import carries_secret
from registry.errors import MissingCredentials
from registry.hub import JobsClient, JobState
from registry.jobs.bootstrap import command_for
from registry.jobs.launches import Launch
from registry.jobs.plan import PROGRESS, JobPlan, RunFiles
from registry.results.runs import run_dir

JOB_TIMEOUT = "6h"
LABEL = "hubskills-run"
SHARD_LABEL = "hubskills-shard"
RECORD = "jobs.json"


@dataclass(frozen=True)
class Remote:
    """Where a run's jobs and files are: the results repo and the Jobs namespace's client."""

    files: RunFiles
    jobs: JobsClient


def with_token(settings: Settings) -> Settings:
    """`settings` with the Hugging Face token the Jobs will run under: `HF_TOKEN`, else the
    token file of `hf auth login`.

    Raises:
        MissingCredentials: no Hugging Face token.
    """
    from registry.hub import stored_token

    token = settings.hf_token or stored_token()
    if not token:
        raise MissingCredentials("running on Hugging Face Jobs needs your Hugging Face token "
                                 "(the Jobs run, and are billed, on your account)",
                                 variable="HF_TOKEN", hint=login_hint())
    return settings if token == settings.hf_token else settings.with_(hf_token=token)


def remote(settings: Settings, run_id: str) -> Remote:
    """The run's repo and Jobs client (the token's own account).

    Raises:
        MissingCredentials: no Hugging Face token.
    """
    from registry.stores.hub import HubStore

    settings = with_token(settings)
    store = HubStore(settings)
    saved = record(settings, run_id)
    repo = saved.get("repo") or store.results_repo()
    return Remote(RunFiles(store.client, repo, run_id),
                  JobsClient(settings.hf_endpoint, settings.hf_token, settings.namespace))


def record(settings: Settings, run_id: str) -> dict:
    path = run_dir(settings.runs_dir, run_id) / RECORD
    return json.loads(path.read_text()) if path.is_file() else {}


def is_remote_run(settings: Settings, run_id: str) -> bool:
    """Whether the saved run `run_id` was sent to Jobs from here."""
    return (run_dir(settings.runs_dir, run_id) / RECORD).is_file()


def job_secrets(settings: Settings) -> dict[str, str]:
    """The keys a shard needs, as Job secrets (the Hub shows them to no one), and any endpoint
    whose URL carries a credential (`user:password@`, a query such as `?api-key=`, a key in
    the path such as `/hf_.../v1`)."""
    named = {"HF_TOKEN": settings.hf_token, "OPENAI_API_KEY": settings.openai_api_key,
             "ANTHROPIC_API_KEY": settings.anthropic_api_key,
             **{k: v for k, v in _endpoints(settings).items() if carries_secret(v)}}
    return {name: value for name, value in named.items() if value}


def job_env(settings: Settings) -> dict[str, str]:
    """Where the shard finds the Hub and the models (no secret here: the Hub shows these; an
    endpoint whose URL carries a credential goes with the secrets instead)."""
    named = {**{k: v for k, v in _endpoints(settings).items() if not carries_secret(v)},
             "HF_HUB_DISABLE_XET": os.environ.get("HF_HUB_DISABLE_XET")}
    return {name: value for name, value in named.items() if value}


def _endpoints(settings: Settings) -> dict[str, str | None]:
    return {"HF_ENDPOINT": settings.hf_endpoint, "HUBSKILLS_BASE_URL": settings.base_url,
            "OPENAI_BASE_URL": settings.openai_base_url,
            "ANTHROPIC_BASE_URL": settings.anthropic_base_url,
            "HUBSKILLS_HF_ROUTER": settings.hf_router_url}


def launch(there: Remote, plan: JobPlan, shard: int, settings: Settings, *, flavor: str,
           image: str, via: Launch) -> JobState:
    """Start the shard's Job as part of ``via`` (its label on the Job too)."""
    job = via.run(
        image=image, command=command_for(settings.hf_endpoint, there.files.repo, plan.wheel,
                                         plan.run_id, shard, sandbox=plan.needs_sandbox),
        env=job_env(settings), secrets=job_secrets(settings), flavor=flavor,
        labels={LABEL: plan.run_id, SHARD_LABEL: str(shard)}, timeout=JOB_TIMEOUT)
    plan.jobs.setdefault(str(shard), []).append(job.id)
    return job


def shard_jobs(settings: Settings, run_id: str, there: Remote | None = None
               ) -> dict[int, list[JobState]]:
    """Every Job of the run, by shard, oldest first."""
    there = there or remote(settings, run_id)
    by_shard: dict[int, list[JobState]] = {}
    for job in sorted(there.jobs.list({LABEL: run_id}), key=lambda j: j.created_at or ""):
        by_shard.setdefault(int(job.labels.get(SHARD_LABEL, 0)), []).append(job)
    return by_shard


def runs_on_jobs(settings: Settings) -> dict[str, list[JobState]]:
    """Every hubskills Job of the token's namespace, by run id, oldest first."""
    settings = with_token(settings)
    client = JobsClient(settings.hf_endpoint, settings.hf_token, settings.namespace)
    by_run: dict[str, list[JobState]] = {}
    for job in sorted(client.list(), key=lambda j: j.created_at or ""):
        if LABEL in job.labels:
            by_run.setdefault(job.labels[LABEL], []).append(job)
    return by_run


def cancel_run(settings: Settings, run_id: str) -> list[str]:
    """Cancel the run's Jobs still going; their ids."""
    there = remote(settings, run_id)
    going = [job for jobs in shard_jobs(settings, run_id, there).values() for job in jobs
             if not job.is_done]
    for job in going:
        there.jobs.cancel(job.id)
    return [job.id for job in going]


def run_logs(settings: Settings, run_id: str) -> dict[int, list[str]]:
    """Each shard's latest Job's log lines (progress lines left out)."""
    there = remote(settings, run_id)
    return {shard: [line for line in there.jobs.logs(jobs[-1].id)
                    if not line.startswith(PROGRESS)]
            for shard, jobs in sorted(shard_jobs(settings, run_id, there).items())}
