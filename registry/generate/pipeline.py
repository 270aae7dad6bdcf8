"""Teacher writes, student learns: generate a skill and a discriminating suite, then refine.

`generate_skill` drafts a skill with the teacher (from a task, agent traces, or an existing
skill to improve), writes and verifies a test suite, evaluates baseline vs skill on each
student with the evaluation engine, lets the teacher revise against the failures for up to
`rounds` rounds (keeping the round with the best lower bound of the lift), and saves the best
version atomically. Work in progress and every raw teacher reply live under
`HUBSKILLS_HOME/generate/<timestamp>/`. `add_tests` grows an existing suite the same way.
The run's state is a `session.Session`; the steps live in `draft` and `rounds`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from registry._io import atomic_write_text, why_unwritable
from registry.config import Settings
from registry.errors import GenerationError, HubskillsError
from registry.evaluation.preflight import check_mode
from registry.format.skill import NAME_RE, load_skill
from registry.format.suite import Suite, load_suite, suite_path
from registry.format.suite_writer import save_suite
from registry.generate.draft import draft_skill
from registry.generate.files import bump_patch, check_target, install_folder
from registry.generate.report import GenerateReport, skill_diff
from registry.generate.rounds import improve
from registry.generate.session import TARGET_PASS_RATE, GenerateOptions, Progress, Session
from registry.generate.suite import SuiteOutcome, SuiteRequest, placeholder_suite, write_suite
from registry.generate.verify import Verifier
from registry.providers import RetryPolicy, resolve
from registry.providers.base import add_cost
from registry.results.display import count as counted

__all__ = ["GenerateOptions", "GenerateReport", "bump_patch", "generate_skill"]
log = logging.getLogger(__name__)


def generate_skill(
    task: str, *, sources: Sequence[Path] = (), examples: Sequence[str] = (),
    teacher: str | None = None, students: Sequence[str] = (), n_tests: int = 12,
    rounds: int = 3, runs: int = 2, mode: Literal["inline", "tool"] = "inline",
    out_dir: Path = Path("."), force: bool = False, no_eval: bool = False,
    settings: Settings | None = None, progress: Progress | None = None,
    base_url: str | None = None, max_tokens: int | None = None,
    target: float = TARGET_PASS_RATE, retry: RetryPolicy | None = None,
    name: str | None = None, feedback: str | None = None,
) -> GenerateReport:
    """Generate (or improve) a skill with its suite, evaluate and refine it, and save it.

    `sources` are trace files and at most one skill folder to improve; `teacher` defaults to
    `default_teacher`, `students` to the teacher plus the embedded model when installed (the
    first student is the one new cases must defeat); `runs` is the eval's repeats; the loop
    stops early once every student shows a significant lift and `target` with the skill;
    `max_tokens` bounds each teacher reply; `base_url` serves `local/` references; `name`
    fixes the skill's name (else the teacher picks it); `feedback` names a reviewed run of the
    skill to improve whose marked cases and comments the teacher is given (`review.teacher`),
    recorded in the new version's `metadata.feedback`. Everything that can be checked for free
    (the output folder, `out_dir/name` when the name is known, the students' keys and
    capabilities) is checked before the teacher is called. Progress lines go to `progress`.
    Call it outside an event loop (it runs its own).

    Raises:
        GenerationError: the teacher's output stayed unusable (its raw reply is saved and
            named in the hint), or no test case survived verification.
        HubskillsError: the output folder exists without `force` or cannot be written, a bad
            `name` or source, an unknown model, a missing key, or `--mode tool` with no
            student that can call tools.
    """
    settings = settings or Settings.from_env()
    if base_url:
        settings = settings.with_(base_url=base_url, base_url_given=True)
    opts = GenerateOptions(
        sources=[Path(p) for p in sources], examples=list(examples), teacher=teacher,
        students=list(students), n_tests=n_tests, rounds=rounds, runs=runs, mode=mode,
        out_dir=Path(out_dir), force=force, no_eval=no_eval, target=target,
        max_tokens=max_tokens, retry=retry, name=name, feedback=feedback)
    return _run(Session(task, opts, settings, progress))


def _run(session: Session) -> GenerateReport:
    """Draft, suite, evaluate and refine, save; returns the report."""
    _check_before_cost(session)
    session.say(f"draft: asking {session.teacher.ref} to write the skill")
    folder = draft_skill(session)
    session.report.name = folder.name
    check_target(session.opts.out_dir / folder.name, session.opts.force, draft=folder)
    placeholder = _suite(session, folder)
    best = folder
    if session.opts.no_eval:
        session.warn("--no-eval: the skill was not evaluated and its suite not verified")
    elif placeholder:
        session.warn("not evaluated: a placeholder suite cannot measure anything")
    else:
        best = improve(session, folder)
    if session.base is not None:
        session.report.diff = skill_diff(session.base.path, best)
    _triggers(session, best)
    session.report.path = _save(session, best)
    _account(session)
    session.say(f"saved {session.report.path}")
    return session.report


def _check_before_cost(session: Session) -> None:
    """What can fail for free fails before the teacher is paid: the output folder, the target
    folder when the name is known, the students' keys and capabilities."""
    opts = session.opts
    if why := why_unwritable(opts.out_dir, create=False):
        raise HubskillsError(f"cannot save the skill in {opts.out_dir}: {why}",
                             hint="choose --out DIR, a folder you can write to")
    if opts.name is not None and (not NAME_RE.match(opts.name) or len(opts.name) > 64):
        raise HubskillsError(f"--name '{opts.name}' is not a valid skill name (lowercase "
                             "letters, digits, single hyphens)",
                             hint='hubskills generate "TASK" --name my-skill')
    name = session.base.name if session.base is not None else opts.name
    if name is not None:
        check_target(opts.out_dir / name, opts.force)
    if not opts.no_eval:
        models = [resolve(s, session.settings, retry=opts.retry) for s in session.students]
        if warning := check_mode(models, opts.mode, 'hubskills generate "TASK"'):
            session.warn(warning)


def _suite(session: Session, folder: Path) -> bool:
    """Write `evals/evals.json`: the existing cases plus verified new ones. Returns True
    when it is only a placeholder."""
    path = suite_path(folder)
    suite = load_suite(path, skill_dir=folder) if path.is_file() \
        else Suite(skill_name=folder.name, cases=[])
    existing = suite.cases
    if existing:
        session.say(f"suite: keeping the {len(existing)} existing case(s)")
    wanted = max(0, session.opts.n_tests - len(existing))
    outcome = SuiteOutcome([], verified=False)
    if wanted:
        outcome = _write_cases(session, folder, wanted, existing)
    cases = existing + outcome.cases
    if not cases:
        raise GenerationError(
            "no test case survived verification: "
            + "; ".join(f"{i}: {r}" for i, r in outcome.dropped[:4]),
            hint=f"the teacher's replies are in {session.work}; try a more specific task")
    if outcome.cases or not path.is_file():
        save_suite(suite.model_copy(update={"cases": cases}), path)
    session.report.cases, session.report.dropped = len(cases), outcome.dropped
    session.report.suite_verified = outcome.verified and not outcome.placeholder
    for warning in outcome.warnings:
        session.warn(warning)
    return outcome.placeholder


def _write_cases(session: Session, folder: Path, wanted: int, existing: list) -> SuiteOutcome:
    verifier = None
    if not session.opts.no_eval:
        student = resolve(session.students[0], session.settings, retry=session.opts.retry)
        verifier = Verifier(session.teacher.model, student, runs=session.opts.runs,
                            settings=session.settings)
    session.verifier = verifier
    if session.teacher.is_weak:  # a 135M model cannot write a JSON suite: don't pretend
        if existing:
            return SuiteOutcome([], verified=False, warnings=[
                f"{session.teacher.ref} cannot write test cases: no case was added"])
        return placeholder_suite(load_skill(folder), session.task)
    request = SuiteRequest(folder, wanted, session.opts.examples, existing, session.task)
    session.say(f"suite: asking for {counted(wanted, 'case')}")
    outcome = write_suite(request, session.teacher, verifier, progress=session.say)
    if not outcome.cases and outcome.easy:
        outcome.cases = outcome.easy
        outcome.warnings.append(f"no case discriminates on {session.students[0]} (it passes "
                                "them all without the skill): this suite cannot show lift")
    return outcome


def _triggers(session: Session, folder: Path) -> None:
    """Write the trigger suite for the kept skill; a teacher that cannot is a warning only:
    the skill and its test suite are kept."""
    from registry.generate.trigger_suite import write_trigger_suite

    try:
        written, warnings = write_trigger_suite(folder, session.teacher)
    except GenerationError as err:
        written, warnings = 0, [f"no trigger suite: {err.message} ({err.hint})"]
    session.report.trigger_queries = written
    if written:
        session.say(f"triggers: {written} queries in evals/triggers.json")
    for warning in warnings:
        session.warn(warning)


def _save(session: Session, folder: Path) -> Path:
    """Record the run ids in `evals/runs.json` and move the folder into place."""
    runs = {"generated_by": "hubskills generate", "task": session.task,
            "teacher": session.teacher.ref, "students": session.students,
            "best_round": session.report.best_round,
            "runs": [{"round": r.round, "run_id": r.run_id,
                      "models": [s.model for s in r.students]}
                     for r in session.report.rounds]}
    atomic_write_text(folder / "evals" / "runs.json", json.dumps(runs, indent=2) + "\n")
    return install_folder(folder, session.opts.out_dir, force=session.opts.force)


def _account(session: Session) -> None:
    r, t = session.report, session.teacher
    r.teacher_input_tokens, r.teacher_output_tokens = t.usage.input_tokens, \
        t.usage.output_tokens
    r.teacher_cost_usd = t.cost_usd
    verifier = session.verifier
    if verifier is not None:
        r.teacher_cost_usd = add_cost(r.teacher_cost_usd, verifier.cost_usd)
