"""The state of one `generate` run, shared by its steps (draft, suite, rounds).

`Session` holds what every step reads and appends to: the task and options, the teacher, the
students, the work folder, the traces and the skill being improved, the report and the progress
callback. The steps are functions in `draft`, `rounds` and `pipeline` that take a session; this
module imports none of them, so the package has no import cycle.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from registry.config import Settings
from registry.errors import HubskillsError
from registry.format.skill import Skill, load_skill
from registry.generate.files import copy_without_links, split_sources
from registry.generate.report import GenerateReport
from registry.generate.teacher import Teacher, default_students, default_teacher, new_workdir
from registry.generate.traces import DEFAULT_BUDGET, read_trace
from registry.generate.verify import Verifier
from registry.providers import RetryPolicy, normalize_ref

if TYPE_CHECKING:
    from registry.review.teacher import TeacherFeedback

Progress = Callable[[str], None]
TARGET_PASS_RATE = 0.8
WEAK_TRACE_BUDGET = 4000


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
    feedback: str | None = None  # a reviewed run of the skill to improve (`review-outputs`)


class Session:
    """One generate run: its teacher, work folder, report and progress."""

    def __init__(self, task: str, opts: GenerateOptions, settings: Settings,
                 progress: Progress | None) -> None:
        """Check the options, pick the teacher and students, read the sources.

        Raises:
            HubskillsError: an empty task, bad counts, a bad source, an unknown model or a
                missing key.
        """
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
        budget = WEAK_TRACE_BUDGET if self.teacher.is_weak else DEFAULT_BUDGET
        self.traces = [read_trace(p, budget=budget // max(1, len(traces)),
                                  secrets=settings.secrets(), progress=self.say)
                       for p in traces]
        self.report = GenerateReport(name="", path=None, teacher=self.teacher.ref,
                                     students=self.students, workdir=self.work)
        if self.base is not None:
            self.base = self._snapshot(self.base)
        self.feedback = self._feedback()
        self.verifier: Verifier | None = None
        if warning or self.teacher.is_weak:
            self.warn(warning or f"{self.teacher.ref} is a 135M model: it writes weak skills "
                      "(use --teacher opus or a strong hf/ model for real work)")

    def _snapshot(self, base: Skill) -> Skill:
        """The skill to improve, copied into the work folder without its links (each one
        warned about): every later step reads and writes the copy, never through a link."""
        copy = self.work / "base" / base.path.name
        left = copy_without_links(base.path, copy, skip=(".git", ".hubskills.json"))
        if left:
            self.warn(f"{base.path} holds links, left out of the improved skill (a link's "
                      f"target is not the skill's): {', '.join(left[:5])}")
        return load_skill(copy)

    def _feedback(self) -> TeacherFeedback | None:
        """People's review of `opts.feedback` for the teacher (None: none asked for).

        Raises:
            HubskillsError: no skill to improve, or the run's feedback cannot be used.
        """
        if self.opts.feedback is None:
            return None
        if self.base is None:
            raise HubskillsError("--feedback improves a skill: name it with --improve",
                                 hint=f"hubskills generate --improve SKILL_DIR --feedback "
                                      f"{self.opts.feedback}")
        from registry.review.teacher import teacher_feedback

        found = teacher_feedback(self.settings.runs_dir, self.opts.feedback, self.base.name)
        self.report.feedback_run = found.run_id
        self.say(f"feedback: {found.marked} case(s) marked by reviewers in run {found.run_id} "
                 f"({found.answers} answer(s))")
        return found

    def warn(self, message: str) -> None:
        """Record a warning in the report and stream it."""
        self.report.warnings.append(message)
        self.say(f"warning: {message}")
