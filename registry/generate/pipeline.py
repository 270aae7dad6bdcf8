"""Teacher writes, student learns: generate a skill and a discriminating suite, then refine.

`generate_skill` drafts a skill with the teacher (from a task, agent traces, or an existing
skill to improve), writes and verifies a test suite, evaluates baseline vs skill on each
student with the evaluation engine, lets the teacher revise against the failures for up to
`rounds` rounds (keeping the round with the best lower bound of the lift), and saves the best
version atomically. Work in progress and every raw teacher reply live under
`HUBSKILLS_HOME/generate/<timestamp>/`. `add_tests` grows an existing suite the same way.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from registry._io import atomic_write_text, why_unwritable
from registry.config import Settings
from registry.errors import GenerationError, HubskillsError
from registry.evaluation.preflight import check_mode
from registry.format.skill import NAME_RE, Skill, load_skill
from registry.format.suite import Suite, load_suite, save_suite, suite_path
from registry.generate.draft import draft_skill, finish_draft
from registry.generate.files import bump_patch, check_target, install_folder, split_sources
from registry.generate.parse import SkillDraft
from registry.generate.report import GenerateReport, skill_diff
from registry.generate.rounds import improve
from registry.generate.suite import SuiteOutcome, SuiteRequest, placeholder_suite, write_suite
from registry.generate.teacher import Teacher, default_students, default_teacher, new_workdir
from registry.generate.traces import DEFAULT_BUDGET, read_trace
from registry.generate.verify import Verifier
from registry.providers import RetryPolicy, normalize_ref, resolve

__all__ = ["GenerateOptions", "GenerateReport", "bump_patch", "generate_skill"]
log = logging.getLogger(__name__)
Progress = Callable[[str], None]
TARGET_PASS_RATE = 0.8


@dataclass
class GenerateOptions:
    """Everything `generate_skill` takes besides the task (see its docstring)."""

    sources: list[Path] = field(default_factory=list)
    examples: list[str] = field(default_factory=list)
    teacher: str | None = None
    students: list[str] = field(default_factory=list)
    n_tests: int = 12
    rounds: int = 3
    runs: int = 2
    mode: Literal["inline", "tool"] = "inline"
    out_dir: Path = Path(".")
    force: bool = False
    no_eval: bool = False
    name: str | None = None
    target: float = TARGET_PASS_RATE
    max_tokens: int | None = None
    retry: RetryPolicy | None = None


def generate_skill(
    task: str, *, sources: Sequence[Path] = (), examples: Sequence[str] = (),
    teacher: str | None = None, students: Sequence[str] = (), n_tests: int = 12,
    rounds: int = 3, runs: int = 2, mode: Literal["inline", "tool"] = "inline",
    out_dir: Path = Path("."), force: bool = False, no_eval: bool = False,
    settings: Settings | None = None, progress: Progress | None = None,
    base_url: str | None = None, max_tokens: int | None = None,
    target: float = TARGET_PASS_RATE, retry: RetryPolicy | None = None,
    name: str | None = None,
) -> GenerateReport:
    """Generate (or improve) a skill with its suite, evaluate and refine it, and save it.

    `sources` are trace files and at most one skill folder to improve; `teacher` defaults to
    `default_teacher`, `students` to the teacher plus the embedded model when installed (the
    first student is the one new cases must defeat); `runs` is the eval's repeats; the loop
    stops early once every student shows a significant lift and `target` with the skill;
    `max_tokens` bounds each teacher reply; `base_url` serves `local/` references; `name`
    fixes the skill's name (else the teacher picks it). Everything that can be checked for free
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
        settings = settings.with_(base_url=base_url)
    opts = GenerateOptions(
        sources=[Path(p) for p in sources], examples=list(examples), teacher=teacher,
        students=list(students), n_tests=n_tests, rounds=rounds, runs=runs, mode=mode,
        out_dir=Path(out_dir), force=force, no_eval=no_eval, target=target,
        max_tokens=max_tokens, retry=retry, name=name)
    return _Session(task, opts, settings, progress).run()


class _Session:
    """One generate run: its teacher, work folder, report and progress."""

    def __init__(self, task: str, opts: GenerateOptions, settings: Settings,
                 progress: Progress | None) -> None:
        if not task.strip():
            raise HubskillsError("the task is empty", hint='hubskills generate "what to teach"')
        if opts.n_tests < 1 or opts.runs < 1 or opts.rounds < 0:
            raise HubskillsError("--tests and --runs must be at least 1, --rounds at least 0",
                                 hint='hubskills generate "TASK" --tests 12 --runs 2 --rounds 3')
        self.task, self.opts, self.settings = task.strip(), opts, settings
        self.say: Progress = progress or (lambda _line: None)
        ref, warning = (opts.teacher, None) if opts.teacher else default_teacher(settings)
        self.work = new_workdir(settings)
        self.teacher = Teacher.create(ref, settings, self.work, max_tokens=opts.max_tokens,
                                      retry=opts.retry)
        self.students = [normalize_ref(s) for s in opts.students] or default_students(ref)
        self.base, traces = split_sources(opts.sources)
        budget = 4000 if self.teacher.is_weak else DEFAULT_BUDGET
        self.traces = [read_trace(p, budget=budget // max(1, len(traces)),
                                  secrets=settings.secrets(), progress=self.say) for p in traces]
        self.report = GenerateReport(name="", path=None, teacher=self.teacher.ref,
                                     students=self.students, workdir=self.work)
        self.verifier: Verifier | None = None
        if warning or self.teacher.is_weak:
            self.warn(warning or f"{self.teacher.ref} is a 135M model: it writes weak skills "
                      "(use --teacher opus or a strong hf/ model for real work)")

    def warn(self, message: str) -> None:
        """Record a warning in the report and stream it."""
        self.report.warnings.append(message)
        self.say(f"warning: {message}")

    def run(self) -> GenerateReport:
        """Draft, suite, evaluate and refine, save; returns the report."""
        self._check_before_cost()
        self.say(f"draft: asking {self.teacher.ref} to write the skill")
        folder = draft_skill(self)
        self.report.name = folder.name
        check_target(self.opts.out_dir / folder.name, self.opts.force, draft=folder)
        placeholder = self.suite(folder)
        best = folder
        if self.opts.no_eval:
            self.warn("--no-eval: the skill was not evaluated and its suite not verified")
        elif placeholder:
            self.warn("not evaluated: a placeholder suite cannot measure anything")
        else:
            best = improve(self, folder)
        if self.base is not None:
            self.report.diff = skill_diff(self.base.path, best)
        self.report.path = self.save(best)
        self._account()
        self.say(f"saved {self.report.path}")
        return self.report

    def _check_before_cost(self) -> None:
        """What can fail for free fails before the teacher is paid: the output folder, the
        target folder when the name is known, the students' keys and capabilities."""
        opts = self.opts
        if why := why_unwritable(opts.out_dir, create=False):
            raise HubskillsError(f"cannot save the skill in {opts.out_dir}: {why}",
                                 hint="choose --out DIR, a folder you can write to")
        if opts.name is not None and (not NAME_RE.match(opts.name) or len(opts.name) > 64):
            raise HubskillsError(f"--name '{opts.name}' is not a valid skill name (lowercase "
                                 "letters, digits, single hyphens)",
                                 hint='hubskills generate "TASK" --name my-skill')
        name = self.base.name if self.base is not None else opts.name
        if name is not None:
            check_target(opts.out_dir / name, opts.force)
        if not opts.no_eval:
            models = [resolve(s, self.settings, retry=opts.retry) for s in self.students]
            if warning := check_mode(models, opts.mode, 'hubskills generate "TASK"'):
                self.warn(warning)

    def finish_draft(self, draft: SkillDraft, parent: Path, *, base: Skill | None,
                     version: str | None) -> Path:
        """See `generate_draft.finish_draft`."""
        return finish_draft(self, draft, parent, base=base, version=version)

    def suite(self, folder: Path) -> bool:
        """Write `evals/evals.json`: the existing cases plus verified new ones. Returns True
        when it is only a placeholder."""
        path = suite_path(folder)
        suite = load_suite(path, skill_dir=folder) if path.is_file() \
            else Suite(skill_name=folder.name, cases=[])
        existing = suite.cases
        if existing:
            self.say(f"suite: keeping the {len(existing)} existing case(s)")
        wanted = max(0, self.opts.n_tests - len(existing))
        outcome = SuiteOutcome([], verified=False)
        if wanted:
            outcome = self._write_cases(folder, wanted, existing)
        cases = existing + outcome.cases
        if not cases:
            raise GenerationError(
                "no test case survived verification: "
                + "; ".join(f"{i}: {r}" for i, r in outcome.dropped[:4]),
                hint=f"the teacher's replies are in {self.work}; try a more specific task")
        if outcome.cases or not path.is_file():
            save_suite(suite.model_copy(update={"cases": cases}), path)
        self.report.cases, self.report.dropped = len(cases), outcome.dropped
        self.report.suite_verified = outcome.verified and not outcome.placeholder
        for warning in outcome.warnings:
            self.warn(warning)
        return outcome.placeholder

    def _write_cases(self, folder: Path, wanted: int, existing: list) -> SuiteOutcome:
        verifier = None
        if not self.opts.no_eval:
            student = resolve(self.students[0], self.settings, retry=self.opts.retry)
            verifier = Verifier(self.teacher.model, student, runs=self.opts.runs,
                                settings=self.settings)
        self.verifier = verifier
        if self.teacher.is_weak:  # a 135M model cannot write a JSON suite: don't pretend
            if existing:
                return SuiteOutcome([], verified=False, warnings=[
                    f"{self.teacher.ref} cannot write test cases: no case was added"])
            return placeholder_suite(load_skill(folder), self.task)
        request = SuiteRequest(folder, wanted, self.opts.examples, existing, self.task)
        self.say(f"suite: asking for {wanted} cases")
        outcome = write_suite(request, self.teacher, verifier, progress=self.say)
        if not outcome.cases and outcome.easy:
            outcome.cases = outcome.easy
            outcome.warnings.append(f"no case discriminates on {self.students[0]} (it passes "
                                    "them all without the skill): this suite cannot show lift")
        return outcome

    def save(self, folder: Path) -> Path:
        """Record the run ids in `evals/runs.json` and move the folder into place."""
        runs = {"generated_by": "hubskills generate", "task": self.task,
                "teacher": self.teacher.ref, "students": self.students,
                "best_round": self.report.best_round,
                "runs": [{"round": r.round, "run_id": r.run_id,
                          "models": [s.model for s in r.students]}
                         for r in self.report.rounds]}
        atomic_write_text(folder / "evals" / "runs.json", json.dumps(runs, indent=2) + "\n")
        return install_folder(folder, self.opts.out_dir, force=self.opts.force)

    def _account(self) -> None:
        r, t = self.report, self.teacher
        r.teacher_input_tokens, r.teacher_output_tokens = t.usage.input_tokens, \
            t.usage.output_tokens
        r.teacher_cost_usd = t.cost_usd
        verifier = self.verifier
        if verifier is not None and r.teacher_cost_usd is not None:
            r.teacher_cost_usd = None if verifier.cost_usd is None \
                else r.teacher_cost_usd + verifier.cost_usd
