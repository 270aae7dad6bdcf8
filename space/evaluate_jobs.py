"""Where a Space visitor's evaluation runs, and the path that sends it to Hugging Face Jobs.

On a Space (off a Space the owner runs everything on this machine, as the CLI does):

- a small evaluation without code (at most `MAX_HERE_ANSWERS` answers, no `python`/`exec`
  check) runs on this machine: up to `ANONYMOUS_MAX_ANSWERS` answers for anyone, more for a
  signed-in visitor;
- one with code checks, in agent mode, or with more answers, runs as Hugging Face Jobs
  (`run_on_jobs`) under the **signed-in visitor's own token**: their account, their quota,
  their results repo. An
  anonymous visitor is told to sign in and nothing runs. The visitor's token reaches the Jobs
  only as the client's token and as a Job secret; model keys go only as secrets, and only the
  visitor's typed ones (the server's keys are never lent to a Job, whatever
  `HUBSKILLS_SPACE_LEND_KEYS` says: the Job is the visitor's). In the Job, code checks and the
  agent's commands run in bubblewrap (installed there when the image lacks it), or the shard
  stops before any model call with the probe's reason: never unsandboxed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from registry import (
    EMBEDDED_REF,
    Case,
    EvalConfig,
    EvalRun,
    HubskillsError,
    Settings,
    SkillVersionRef,
    has_code_checks,
    holding,
    run_logs,
    run_on_jobs,
    samples_planned,
)

from .state import SignInRequired, oauth_available

MAX_HERE_ANSWERS = 60  # models × cases × runs × 2 arms: one model, 10 cases × 3 runs
ANONYMOUS_MAX_ANSWERS = 24  # what an anonymous visitor may start (`evaluate_plan.check_cap`)
JOB_SHARDS = 4
POLL_S = 5.0  # seconds between looks at the Jobs' stages and logs
Stages = Callable[[int, int, str], None]  # answers so far, answers planned, shard stages
_KEY_FIELDS = ("anthropic_api_key", "openai_api_key")
_EMBEDDED = EMBEDDED_REF.split("/")[0] + "/"  # embedded/...: needs the local extra


def planned_answers(cases: list[Case], config: EvalConfig) -> int:
    """Answers the evaluation asks for: models × cases × runs × both arms."""
    return samples_planned(len(config.models), len(cases), config.runs)


def jobs_reason(cases: list[Case], config: EvalConfig) -> str | None:
    """Why this evaluation runs as Jobs on a Space; None when it runs on this machine."""
    if config.mode == "agent":
        return "agent mode runs the commands a model chooses"
    if has_code_checks(cases):
        return "its suite has code-running checks (python, exec)"
    answers = planned_answers(cases, config)
    if answers > MAX_HERE_ANSWERS:
        return (f"it asks for {answers} answers, and this Space runs at most "
                f"{MAX_HERE_ANSWERS} itself")
    return None


def require_sign_in(token: str | None, what: str, hint: str) -> str:
    """The visitor's token, or a sign-in message (nothing has run yet).

    Raises:
        SignInRequired: an anonymous visitor.
    """
    if not token:
        how = ("sign in with Hugging Face (the *Sign in* button)" if oauth_available() else
               "sign in with Hugging Face, which this Space does not offer (it needs "
               "`hf_oauth: true` and `gradio[oauth]`)")
        raise SignInRequired(f"{what}: {how}. Anonymous visitors may run evaluations of at "
                             f"most {ANONYMOUS_MAX_ANSWERS} answers without code checks",
                             hint=hint)
    return token


def jobs_settings(settings: Settings, server: Settings, token: str) -> Settings:
    """The settings the visitor's Jobs run with: their token, their namespace and results repo,
    and only the model keys they typed (a key equal to the server's own is dropped)."""
    typed = {name: value if value and value != getattr(server, name) else None
             for name in _KEY_FIELDS for value in [getattr(settings, name)]}
    return settings.with_(hf_token=token, namespace=None, results_repo=None, **typed)


def evaluate_on_jobs(folder: Path, config: EvalConfig, settings: Settings, server: Settings,
                     token: str | None, *, why: str, command: str, stages: Stages | None = None,
                     published: SkillVersionRef | None = None) -> EvalRun:
    """Run the evaluation as Jobs on the signed-in visitor's account; the finished run
    (`command`: the `hubskills` command line that runs it locally, for the hints).

    Raises:
        SignInRequired: an anonymous visitor.
        HubskillsError: an embedded model (a Job has no local model), a bad suite, a model
            without its key, before anything is uploaded or started; Jobs that ended without
            a single answer (their stages and a log's last line say why).
    """
    token = require_sign_in(token, f"this evaluation runs as Hugging Face Jobs on your own "
                            f"account because {why}",
                            f"sign in with Hugging Face, or run it on your machine: {command}")
    if embedded := [m for m in config.models if m.startswith(_EMBEDDED)]:
        raise HubskillsError(f"{', '.join(embedded)} runs only on this machine, and this "
                             f"evaluation runs as Jobs because {why}",
                             hint="pick an API model and type its key, or run it here: "
                                  f"at most {MAX_HERE_ANSWERS} answers, no code checks")
    config = replace(config, sandbox="bwrap", code_checks="require")
    settings = jobs_settings(settings, server, token)
    with holding(token):  # whatever this writes or says is scrubbed of the visitor's token
        run = run_on_jobs(folder, config, settings, shards=JOB_SHARDS, progress=stages,
                          poll_s=POLL_S, published=published)
        if not run.rows:
            raise HubskillsError(_no_answer(settings, run),
                                 hint=f"run it on your machine: {command}")
    return run


def _no_answer(settings: Settings, run: EvalRun) -> str:
    """Why the Jobs ended without a single answer: the shards' stages and a log's last line."""
    run_id = run.manifest.run_id
    logs = run_logs(settings, run_id)
    last = next((said[-1] for lines in logs.values()
                 if (said := [line for line in lines if line.strip()])), "")
    note = (run.manifest.note or "").split(": finish it")[0]
    return (f"the Jobs of run `{run_id}` ended without an answer ({note})"
            + (f"; the log ends with: {last}" if last else ""))
