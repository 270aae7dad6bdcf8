"""Evaluations at scale: a run split into shards that run as Hugging Face Jobs.

- `run_on_jobs` (in `executor.py`): plan, upload the client's own wheel and the skill, start one
  Job per shard, follow them, and return the same `EvalRun` a local run returns; `collect`
  finishes a detached run, `resume_on_jobs` re-runs only the samples still missing.
- `cancel_run`, `run_logs`, `shard_jobs`, `runs_on_jobs` (in `remote.py`): the Jobs.
- `shard.py`: what runs inside each Job; `plan.py`: the plan and the run's files in the repo;
  `bootstrap.py`: the Job's command (bubblewrap when needed, the wheel); `sandbox_check.py`:
  the shard's sandbox probe and how it reports to the client.
- `spot_remote.py`: a spot check (`hubskills verify ... --resample K --on jobs`) as one Job;
  `spot.py`: the spot check and its record, here or inside that Job.
"""

from __future__ import annotations

from registry.jobs.executor import (
    DEFAULT_FLAVOR,
    DEFAULT_IMAGE,
    collect,
    resume_on_jobs,
    run_on_jobs,
)
from registry.jobs.remote import (
    cancel_run,
    is_remote_run,
    run_logs,
    runs_on_jobs,
    shard_jobs,
)
from registry.jobs.sandbox_check import NO_SANDBOX

__all__ = ["DEFAULT_FLAVOR", "DEFAULT_IMAGE", "NO_SANDBOX", "cancel_run",
           "collect", "is_remote_run", "resume_on_jobs", "run_logs", "run_on_jobs",
           "runs_on_jobs", "shard_jobs"]
