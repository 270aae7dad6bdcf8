"""Spot checks on Hugging Face Jobs: `hubskills verify NS/NAME --run RUN_ID --resample K --on jobs`.

The client reads the run from the registry's results (no model called), asks the Hub whether
the token may write the results dataset (the Job ends by recording its verdict there: a token
that may only read it would pay for a Job whose verdict is lost), plans the check and estimates
its cost, and refuses over --max-cost before anything is uploaded or started. Then it
uploads its own wheel to the results dataset repo (beside the sharded runs' wheels, `plan.py`;
the same code is never uploaded twice) and starts one Job under the caller's token: the command
and the environment name the run and where the Hub and the models are, the model keys and the
token go as Job secrets only (`remote.job_secrets`). The Job runs `spot.main`, which re-asks the
model, records the verification in the results dataset as the token's user, and ends its log
with the check as JSON; `follow_spot_job` waits for it and reads that line back, and
`cancel_spot_job` stops it (Ctrl-C while following: a Job left running goes on billing).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from registry._install import hf_command
from registry.credentials import bare_url
from registry.errors import HubskillsError
from registry.hub import JobsClient, JobState
from registry.jobs.bootstrap import module_command
from registry.jobs.executor import DEFAULT_FLAVOR, DEFAULT_IMAGE
from registry.jobs.launches import Launch
from registry.jobs.package import build_wheel
from registry.jobs.plan import RunFiles
from registry.jobs.remote import JOB_TIMEOUT, job_env, job_secrets, with_token
from registry.verify.spot_job import FAILED, RESULT

if TYPE_CHECKING:
    from registry.config import Settings
    from registry.results.runs import RunManifest
    from registry.verify.resample import SpotCheck

SPOT_LABEL = "hubskills-spot-check"  # the Job's label: the run it spot-checks


@dataclass(frozen=True)
class SpotJob:
    """A spot check started as a Job: the Job, the results repo, and the plan (K, the cases,
    the estimated cost; no verdict yet)."""

    job: JobState
    repo: str
    plan: SpotCheck
    url: str


def start_spot_job(store: Any, target: str, run_id: str, settings: Settings, *, k: int,
                   seed: int = 0, max_cost: float | None = None, revision: str | None = None,
                   flavor: str = DEFAULT_FLAVOR, image: str = DEFAULT_IMAGE,
                   announce: Callable[[SpotCheck], None] | None = None,
                   started: Callable[[SpotJob], None] | None = None) -> SpotJob:
    """Start the spot check of run ``run_id`` of skill ``target`` in ``store``'s results (a hub
    registry) as a Job under ``settings``' token (see the module docstring). ``announce`` is
    shown the plan and its estimated cost before it is refused over ``max_cost`` or anything
    is uploaded; ``started`` gets the Job as soon as its create answered, still inside the
    launch's guard, so a caller that cancels it on Ctrl-C knows it from that instant on (a
    Ctrl-C before that is the guard's: it cancels the Job by its label).

    Raises:
        HubskillsError: not a hub registry, no such run, rows that do not replay, a trigger
            run, a token that may not write the results dataset, or an estimate over
            ``max_cost``: before anything is uploaded or started.
        MissingCredentials: no Hugging Face token.
        LaunchFailed: the Job's create failed; LaunchInterrupted: Ctrl-C while it was sent
            (either way, the Job it may have started is looked up and cancelled first).
    """
    from registry.verify.resample import check_cost, plan_check
    from registry.verify.spot import load_run

    if store.kind != "hub":
        raise HubskillsError("a spot check on Jobs checks a run in the hub registry's results",
                             hint=f"hubskills verify {target} --run {run_id} --registry hub "
                                  f"--resample {k} --on jobs")
    settings = with_token(settings)
    manifest, rows, _ = load_run(target, run_id, revision, settings, lambda: store)
    repo = store.results_repo()
    jobs = JobsClient(settings.hf_endpoint, settings.hf_token, settings.namespace)
    if not jobs.may_write(repo):
        raise _cannot_record(repo, target, run_id, k)
    _, plan = plan_check(manifest, rows, k, seed)
    if announce is not None:
        announce(plan)
    check_cost(plan.estimated_cost, max_cost)
    name, wheel = build_wheel()
    wheel_path = RunFiles(store.client, repo, run_id).upload_wheel(
        name, wheel, hashlib.sha256(wheel).hexdigest())
    args = [target, run_id, str(k), str(seed), "-" if max_cost is None else repr(max_cost),
            *([revision] if revision else [])]
    with Launch(jobs).guard() as via:  # Ctrl-C or a failed create: no Job left unseen
        job = via.run(image=image, command=module_command(
            settings.hf_endpoint, repo, wheel_path, "registry.verify.spot_job", args,
            sandbox=_runs_code(manifest)), env={**job_env(settings), "HUBSKILLS_REGISTRY": "hub"},
            secrets=job_secrets(settings), flavor=flavor, labels={SPOT_LABEL: run_id},
            timeout=JOB_TIMEOUT)
        # Shown to the user (and on a Space, to its visitor): an endpoint's credential is not.
        page = f"{settings.hf_endpoint.rstrip('/')}/jobs/{jobs.namespace}/{job.id}"
        url = bare_url(job.url or page)
        spot = SpotJob(job, repo, plan, url)
        if started is not None:
            started(spot)
    return spot


def _cannot_record(repo: str, target: str, run_id: str, k: int) -> HubskillsError:
    """The refusal of a token that may read the results dataset ``repo`` but not write it: a
    spot check's record is written by the Job itself, never proposed as a pull request."""
    return HubskillsError(
        f"this token may not write the results dataset {repo}, where the Job would record its "
        "verdict: no Job was started (it would run, and cost, and then fail to record)",
        hint=f"{hf_command()} auth login  # a token with write access to {repo} (its owner's, or a "
             f"member's); or ask its owner to run: hubskills verify {target} --run {run_id} "
             f"--resample {k} --on jobs")


def _runs_code(manifest: RunManifest) -> bool:
    """Whether re-asking runs code (agent mode, or code checks that ran), so the Job needs
    bubblewrap (without it the re-asked run refuses: never unsandboxed)."""
    ran = manifest.code_checks or ""
    return manifest.mode == "agent" or bool(ran) and ran != "none in the suite" \
        and not ran.startswith("skipped")


def follow_spot_job(settings: Settings, spot: SpotJob, *, poll_s: float = 5.0,
                    stage: Callable[[JobState], None] | None = None) -> dict[str, Any]:
    """Wait for the spot check's Job to end (``stage`` sees each look); the check it recorded
    (`SpotCheck.to_dict()` and ``record``, the record's path).

    Raises:
        HubskillsError: the Job ended without a verdict (what it said, or its log's last
            line).
    """
    settings = with_token(settings)
    jobs = JobsClient(settings.hf_endpoint, settings.hf_token, settings.namespace)
    while True:
        job = jobs.inspect(spot.job.id)
        if stage is not None:
            stage(job)
        if job.is_done:
            return spot_outcome(jobs.logs(job.id), job, spot.url)
        time.sleep(poll_s)


def cancel_spot_job(settings: Settings, spot: SpotJob) -> None:
    """Cancel the spot check's Job (what Ctrl-C while following it does: a Job nobody follows
    would go on billing until it ends).

    Raises:
        HubskillsError: the Hub could not be asked (the Job may still be running).
    """
    settings = with_token(settings)
    JobsClient(settings.hf_endpoint, settings.hf_token, settings.namespace).cancel(spot.job.id)


def spot_outcome(lines: list[str], job: JobState, url: str) -> dict[str, Any]:
    """The check a spot check's Job reported in its log (see the module docstring).

    Raises:
        HubskillsError: the Job reported an error, or ended without a verdict.
    """
    for line in reversed(lines):
        if line.startswith(RESULT):
            found: dict[str, Any] = json.loads(line[len(RESULT):])
            return found
        if line.startswith(FAILED):
            said = json.loads(line[len(FAILED):])
            raise HubskillsError(f"the spot check's Job {job.id} stopped: {said['error']}",
                                 hint=said.get("hint"))
    last = next((line for line in reversed(lines) if line.strip()), "")
    ending = f"; its log ends with: {last}" if last else ""
    raise HubskillsError(f"the spot check's Job {job.id} ended {job.stage.lower()} without a "
                         f"verdict{ending}", hint=f"its log: {url}")


def owns_results(store: Any, settings: Settings, token: str) -> bool:
    """Whether ``token``'s user is the owner of ``store``'s results dataset (a hub registry
    whose dataset lives in that user's namespace): who may spot-check its runs from a Space.

    Raises:
        HubskillsError: the Hub could not be asked who the token is.
    """
    if store.kind != "hub":
        return False
    user = JobsClient(settings.hf_endpoint, token).namespace  # the token's user name
    return str(store.results_repo()).split("/")[0] == user
