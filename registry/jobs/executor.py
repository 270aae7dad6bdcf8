"""`run_on_jobs`: an evaluation split into shards that run as Hugging Face Jobs.

The client checks everything that costs nothing first (skill, suite, models and keys, token),
then uploads its own wheel, the skill and the plan to the results dataset repo (`plan.py`),
starts one Job per shard under the user's token, follows them (stage and progress lines in the
logs), retries a shard that failed, reads every shard's rows back and saves them as a local
run, so the summary comes from the one statistics engine like any local run's. Keys go to the
Jobs as secrets only; the command and the environment hold none.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from registry.config import Settings
from registry.credentials import carries_secret
from registry.errors import HubskillsError
from registry.evaluation.checks import has_code_checks
from registry.evaluation.config import EvalConfig
from registry.evaluation.engine import EvalRun
from registry.evaluation.run_manifest import (
    check_in_plan,
    count_samples,
    file_under,
    stored_summaries,
)
from registry.format.skill import load_skill
from registry.format.suite import load_suite, suite_path
from registry.format.version_ref import SkillVersionRef
from registry.hub import JobState
from registry.jobs.launches import Launch
from registry.jobs.package import build_wheel
from registry.jobs.plan import PROGRESS, JobPlan, Unit, split_units
from registry.jobs.remote import (
    RECORD,
    Remote,
    launch,
    record,
    remote,
    shard_jobs,
    with_token,
)
from registry.jobs.sandbox_check import NO_SANDBOX, code_status, reported
from registry.results.display import count as counted
from registry.results.runs import (
    TRANSCRIPTS,
    RunManifest,
    RunStatus,
    RunWriter,
    latest_rows,
    read_manifest,
    run_dir,
    samples_planned,
)
from registry.secrets import holding, scrub

DEFAULT_IMAGE = "python:3.12"
DEFAULT_FLAVOR = "cpu-basic"
RETRIES = 1  # a shard that fails is started once more (it asks only for what is missing)
SKILL_COPY = "skill"  # in the run's folder: the skill the Jobs evaluated, for `verify`
Progress = Callable[[int, int, str], None]  # answers so far, answers planned, shard stages
Started = Callable[[RunManifest, int], None]


def _plan_run(skill_dir: Path, config: EvalConfig, tests: Path | None,
              settings: Settings) -> tuple[RunManifest, list[Unit], bool]:
    """The manifest, the (model, case) units and whether the run executes code (code checks
    or an agent's commands), checked as a local run checks them.

    Raises:
        HubskillsError: what cannot run on a Job (`--harness`, `--sandbox none`), a bad skill
            or suite, a judge missing, an unknown model or a missing key.
    """
    from registry.evaluation.agent_mode import agent_suite_path
    from registry.evaluation.run_manifest import new_manifest
    from registry.providers import resolve

    if config.mode == "agent" and config.harness:  # the job image has no agent CLI
        raise HubskillsError(f"--harness {config.harness} does not run on Hugging Face Jobs: "
                             "the agent CLIs are not in the job image",
                             hint=f"hubskills eval {skill_dir} --mode agent --on jobs (hubskills' "
                                  f"own agent), or --harness {config.harness} here")
    if config.sandbox == "none":  # a Job runs code only in bubblewrap
        raise HubskillsError("--sandbox none is refused on Hugging Face Jobs: code runs there "
                             "only in bubblewrap", hint=f"hubskills eval {skill_dir} --on jobs "
                             "(or add --skip-code-checks)")
    skill = load_skill(skill_dir)
    default = agent_suite_path(skill.path) if config.mode == "agent" else suite_path(skill.path)
    full = load_suite(tests or default, skill_dir=skill.path)
    suite = full.select(config.case_ids, source=tests or default) if config.case_ids else full
    if not config.judge and (judged := suite.judge_only_cases()):
        raise HubskillsError(f"{counted(len(judged), 'case')} can only be graded by a judge "
                             "model, and no --judge model was given",
                             hint=f"hubskills eval {skill_dir} --judge MODEL --on jobs")
    if config.base_url:  # as the shards' engine reads it: the server of local/ references
        settings = settings.with_(base_url=config.base_url, base_url_given=True)
    for ref in [*config.models, *([config.judge] if config.judge else [])]:
        resolve(ref, settings)  # an unknown model or a missing key fails here, for free
    manifest = new_manifest(skill, full, suite, config, None)
    manifest.produced_via = "job"
    has_code = config.mode == "agent" or has_code_checks(suite.cases)
    manifest.code_checks = code_status(has_code, config.code_checks)
    return manifest, [(m, c.id) for c in suite.cases for m in config.models], has_code


def _skill_files(skill_dir: Path, settings: Settings) -> dict[str, bytes]:
    """The skill folder's files, refused when one holds a key or token of this process.

    Raises:
        HubskillsError: a file would carry a secret into the results repo.
    """
    root = load_skill(skill_dir).path
    files = {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
             if p.is_file() and ".git" not in p.relative_to(root).parts}
    with holding(*settings.secrets()):
        for rel, data in files.items():
            text = data.decode("utf-8", errors="ignore")
            if scrub(text) != text:
                raise HubskillsError(f"{rel} in {skill_dir} holds one of your keys or tokens; "
                                     "it would be uploaded to your results repo for the Jobs",
                                     hint=f"remove it from {rel}, then run this again")
    return files


def run_on_jobs(skill_dir: str | Path, config: EvalConfig, settings: Settings, *,
                shards: int = 3, flavor: str = DEFAULT_FLAVOR, detach: bool = False,
                progress: Progress | None = None, tests: str | Path | None = None,
                image: str = DEFAULT_IMAGE, flush_every: int = 20, poll_s: float = 5.0,
                started: Started | None = None,
                published: SkillVersionRef | None = None) -> EvalRun:
    """Evaluate `skill_dir` as `shards` Jobs; the same `EvalRun` a local run returns.

    With `detach` it returns once the Jobs are started (the manifest says `running`, no rows):
    `collect` (or `hubskills runs show RUN_ID`) finishes it later. `started` gets the manifest
    and the number of answers once the Jobs are started (a Ctrl-C before it returns cancels
    them, after it they go on: so the caller always knows which to say); `published` files the
    run under that published version (as for a local run), so it can be pushed.

    Raises:
        HubskillsError: a bad skill or suite, an unknown model, a missing key or token,
            before anything is uploaded or started.
        LaunchFailed: a shard's Job could not be started (the ones started were cancelled).
        LaunchInterrupted: Ctrl-C while the Jobs were started (the same; `launches.py`).
    """
    skill_dir, tests = Path(skill_dir), Path(tests) if tests else None
    manifest, units, has_code = _plan_run(skill_dir, config, tests, settings)
    settings = with_token(settings)
    if config.base_url:  # to the Jobs as an endpoint: with the secrets if it holds a credential
        settings = settings.with_(base_url=config.base_url)
    skill_files = _skill_files(skill_dir, settings)  # checked before anything is uploaded
    file_under(manifest, published)
    there = remote(settings, manifest.run_id)
    manifest.produced_by = there.files.client.whoami()  # whose numbers the shards' rows are
    there.files.client.create_repo(there.files.repo, repo_type="dataset")
    name, wheel = build_wheel()
    wheel_path = there.files.upload_wheel(name, wheel, hashlib.sha256(wheel).hexdigest())
    plan = JobPlan(manifest=manifest, config=JobPlan.config_of(config),
                   shards=split_units(units, shards), wheel=wheel_path,
                   tests=tests.name if tests else None, flush_every=flush_every,
                   has_code=has_code)
    there.files.upload_inputs(plan, skill_files,
                              (tests.name, tests.read_bytes()) if tests else None)
    writer = RunWriter(settings.runs_dir, manifest)
    writer.close("running")
    (writer.folder / RECORD).write_text(json.dumps({
        "repo": there.files.repo, "flavor": flavor, "image": image,
        "endpoint_withheld": carries_secret(config.base_url)}))  # here only, not in the plan
    with Launch(there.jobs, plan.run_id).guard() as via:  # Ctrl-C or a failure: none left
        for shard in range(len(plan.shards)):
            launch(there, plan, shard, settings, flavor=flavor, image=image, via=via)
        there.files.save_plan(plan)
        if started:  # inside the guard: a Ctrl-C before the caller knows the run cancels it
            started(manifest, manifest.samples_planned)
    if detach:
        return EvalRun(read_manifest(settings.runs_dir, manifest.run_id), [])
    return collect(settings, manifest.run_id, progress=progress, poll_s=poll_s)


def resume_on_jobs(settings: Settings, run_id: str, *, progress: Progress | None = None,
                   detach: bool = False, poll_s: float = 5.0, image: str | None = None) -> EvalRun:
    """Start again every shard of `run_id` that has samples without a row, then collect.

    A resumed shard asks only for the samples missing from the repo, whichever shard or Job
    wrote the others; `image` replaces the run's image (say, one with bubblewrap).
    """
    there = remote(settings, run_id)
    plan = there.files.plan()
    _ensure_local(settings, plan, there)
    saved = record(settings, run_id)
    if image:
        saved["image"] = image
        (run_dir(settings.runs_dir, run_id) / RECORD).write_text(json.dumps(saved))
    jobs = shard_jobs(settings, run_id, there)
    settings = with_token(settings)
    _check_endpoint(settings, saved, run_id)
    with Launch(there.jobs, run_id).guard() as via:
        for shard in _unfinished(plan, there):
            if not any(not job.is_done for job in jobs.get(shard, [])):
                launch(there, plan, shard, settings, via=via,
                       flavor=saved.get("flavor", DEFAULT_FLAVOR),
                       image=saved.get("image", DEFAULT_IMAGE))
        there.files.save_plan(plan)
    if detach:
        return EvalRun(read_manifest(settings.runs_dir, run_id), [])
    return collect(settings, run_id, progress=progress, poll_s=poll_s)


def _check_endpoint(settings: Settings, saved: dict, run_id: str) -> None:
    """Refuse, before a Job starts, to start one that cannot reach the run's models: its
    `--base-url` held a credential, so the plan does not keep it (the dataset is public by
    default), and nothing here gives it again (a review note: each retry was a paid Job that
    failed at once).

    Raises:
        HubskillsError: the command that gives it.
    """
    if saved.get("endpoint_withheld") and not settings.base_url:
        raise HubskillsError(f"run {run_id}'s --base-url held a credential, so its plan does not "
                             "keep it, and this command was not given it: no Job would reach "
                             "the model", hint=f"hubskills eval SKILL --on jobs --resume {run_id} "
                                               "--base-url URL  (or set HUBSKILLS_BASE_URL)")


def _ensure_local(settings: Settings, plan: JobPlan, there: Remote) -> None:
    """The run's local folder and record (a run started on another machine gets them now)."""
    folder = run_dir(settings.runs_dir, plan.run_id)
    if not (folder / "manifest.json").is_file():
        RunWriter(settings.runs_dir, plan.manifest.model_copy()).close("running")
    if not (folder / RECORD).is_file():
        (folder / RECORD).write_text(json.dumps({"repo": there.files.repo}))


def _unfinished(plan: JobPlan, there: Remote) -> list[int]:
    """Shards with a planned sample that has no answered row in the repo."""
    rows = latest_rows([row for rows in there.files.rows().values() for row in rows])
    answered = {(r.model, r.case_id) for r in rows if not r.is_error}
    counts: dict[tuple[str, str], int] = {}
    for row in rows:
        if not row.is_error:
            counts[(row.model, row.case_id)] = counts.get((row.model, row.case_id), 0) + 1
    full = samples_planned(1, 1, plan.manifest.runs)  # one (model, case) unit
    return [shard for shard, units in enumerate(plan.shards)
            if any(unit not in answered or counts[unit] < full for unit in units)]


def collect(settings: Settings, run_id: str, *, progress: Progress | None = None,
            poll_s: float = 5.0, retries: int = RETRIES) -> EvalRun:
    """Follow the run's Jobs to their end (a failed shard is retried `retries` times), then
    save every shard's rows as the local run and return it."""
    settings = with_token(settings)
    there = remote(settings, run_id)
    plan = there.files.plan()
    _ensure_local(settings, plan, there)
    saved = record(settings, run_id)
    tries = {shard: 0 for shard in range(len(plan.shards))}
    total = plan.manifest.samples_planned
    # A retry's Job carries the run's label: Ctrl-C while following leaves it going, as the
    # others, and `hubskills jobs cancel RUN_ID` finds it.
    retries_via = Launch(there.jobs)
    while True:
        jobs = shard_jobs(settings, run_id, there)
        latest = {shard: jobs[shard][-1] for shard in jobs}
        for shard, job in latest.items():
            if job.stage == "ERROR" and tries[shard] < retries and shard in _unfinished(
                    plan, there) and not reported(there.jobs.logs(job.id))[1] \
                    and not (saved.get("endpoint_withheld") and not settings.base_url):
                tries[shard] += 1
                latest[shard] = launch(there, plan, shard, settings, via=retries_via,
                                       flavor=saved.get("flavor", DEFAULT_FLAVOR),
                                       image=saved.get("image", DEFAULT_IMAGE))
                there.files.save_plan(plan)
        if progress:
            progress(_answered(there, latest), total, _stages(latest))
        # No Job and none recorded: its start was cut short before any create (launches.py).
        if all(job.is_done for job in latest.values()) and (latest or not plan.jobs):
            break
        time.sleep(poll_s)
    return _save(settings, plan, there, latest)


def _answered(there: Remote, latest: dict[int, JobState]) -> int:
    """Answers so far, from each running shard's last progress line."""
    done = 0
    for job in latest.values():
        lines = [line for line in there.jobs.logs(job.id) if line.startswith(PROGRESS)]
        done += int(lines[-1].split()[2]) if lines else 0
    return done


def _stages(latest: dict[int, JobState]) -> str:
    counts: dict[str, int] = {}
    for job in latest.values():
        counts[job.stage.lower()] = counts.get(job.stage.lower(), 0) + 1
    return ", ".join(f"{n} {stage}" for stage, n in sorted(counts.items()))


def _save(settings: Settings, plan: JobPlan, there: Remote,
          latest: dict[int, JobState]) -> EvalRun:
    """Every shard's rows written into the local run; complete only if all are answered."""
    rows = latest_rows([row for rows in there.files.rows().values() for row in rows])
    # Only Jobs with the token write there; a row of another run or plan is still not taken in.
    check_in_plan(plan.manifest, rows, where=f"a file under {there.files.root} in "
                  f"{there.files.repo} is not this run's, so its rows are not collected")
    folder = run_dir(settings.runs_dir, plan.run_id)
    (folder / "rows.jsonl").unlink(missing_ok=True)  # rewritten whole from the repo's rows
    manifest = plan.manifest.model_copy()
    manifest.skill_path = _skill_copy(folder, there)  # as a local run names its folder
    writer = RunWriter(settings.runs_dir, manifest, resume=True)
    for row in rows:
        writer.add(row)
    if manifest.mode == "agent":  # the shards' transcripts, for `runs show --case`
        (folder / TRANSCRIPTS).unlink(missing_ok=True)
        for record in there.files.transcripts():
            if record.get("model") in plan.manifest.models \
                    and record.get("case_id") in plan.manifest.case_ids:
                writer.add_transcript(record)
    status, note = _outcome(writer.manifest, plan, there, latest)
    count_samples(writer.manifest, rows, status)
    # as a local run closes: verify's
    writer.manifest.summaries = stored_summaries(rows, writer.manifest)
    writer.close(status, note)
    return EvalRun(read_manifest(settings.runs_dir, plan.run_id), rows)


def _skill_copy(folder: Path, there: Remote) -> str:
    """The skill folder the Jobs evaluated (their input in the repo), copied once into the
    run's folder: `hubskills verify RUN_ID` checks its content hash and regrades against its
    suite, as for the folder a local run names, wherever the run was collected."""
    copy = folder / SKILL_COPY
    if not (copy / "SKILL.md").is_file():
        with tempfile.TemporaryDirectory(dir=folder) as tmp:
            skill, _ = there.files.download_inputs(Path(tmp))
            shutil.rmtree(copy, ignore_errors=True)
            skill.rename(copy)
    return str(copy.resolve())


def _outcome(manifest: RunManifest, plan: JobPlan, there: Remote,
             latest: dict[int, JobState]) -> tuple[RunStatus, str | None]:
    """The run's status and note from its shards' Jobs; `manifest` gets the sandbox the
    shards' probes found (as a local run records its own)."""
    said = {shard: reported(there.jobs.logs(job.id)) for shard, job in latest.items()}
    found = sorted({status for status, _ in said.values() if status})
    if manifest.code_checks is None and found:
        manifest.code_checks = manifest.sandbox = ", ".join(found)
    reasons = sorted({why for _, why in said.values() if why})
    if reasons:  # a resume in the same image would stop again: the fix is another image
        return "interrupted", f"{NO_SANDBOX}: {'; '.join(reasons)}"
    failed = [f"shard {s}: {job.stage.lower()}" + (f" ({job.message})" if job.message else "")
              for s, job in sorted(latest.items()) if job.stage != "COMPLETED"]
    failed += [f"shard {s}: not started" for s in range(len(plan.shards)) if s not in latest]
    if not failed:
        return "complete", None
    return "interrupted", "; ".join(failed) + f": finish it with --resume {plan.run_id} --on jobs"
