"""`hubskills tests generate`: add verified, discriminating cases to an existing suite."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from registry.config import Settings
from registry.errors import HubskillsError, InvalidSkill
from registry.format.skill import load_skill
from registry.format.suite import Suite, load_suite, suite_path
from registry.format.suite_writer import save_suite
from registry.format.validate import has_errors, validate_skill
from registry.generate.suite import SuiteRequest, write_suite
from registry.generate.teacher import Teacher, default_teacher, new_workdir
from registry.generate.verify import Verifier
from registry.providers import RetryPolicy, resolve
from registry.providers.base import add_cost


@dataclass
class AddTestsReport:
    """Cases added to a suite, and those the verification dropped (with reasons)."""

    skill: str
    suite: Path
    teacher: str
    student: str
    added: list[str] = field(default_factory=list)
    dropped: list[tuple[str, str]] = field(default_factory=list)
    total: int = 0
    calls: int = 0
    cost_usd: float | None = 0.0
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form for `--json`."""
        return {**asdict(self), "suite": str(self.suite)}


def add_tests(skill_dir: str | Path, n: int = 5, teacher: str | None = None,
              student: str | None = None, settings: Settings | None = None, *,
              base_url: str | None = None, runs: int = 2, max_tokens: int | None = None,
              retry: RetryPolicy | None = None,
              progress: Callable[[str], None] | None = None) -> AddTestsReport:
    """Ask the teacher for `n` new cases, keep those that pass verification (no leak,
    passable by the teacher with the skill, not passed by `student` without it every time),
    and append them to the skill's `evals/evals.json` with unique ids.

    Raises:
        InvalidSkill: the folder is not a valid skill.
        GenerationError: the teacher's reply stayed unusable (raw reply saved and named).
    """
    settings = settings or Settings.from_env()
    if base_url:
        settings = settings.with_(base_url=base_url, base_url_given=True)
    if n < 1:
        raise HubskillsError("--count must be at least 1",
                             hint=f"hubskills suite generate {skill_dir} --count 5")
    skill = load_skill(skill_dir)
    problems = validate_skill(skill.path)
    if has_errors(problems):
        raise InvalidSkill(f"{skill.path} does not validate",
                           hint=f"hubskills validate {skill.path}")
    ref, warning = (teacher, None) if teacher else default_teacher(settings)
    coach = Teacher.create(ref, settings, new_workdir(settings), max_tokens=max_tokens,
                           retry=retry)
    learner = resolve(student or ref, settings, retry=retry)
    path = suite_path(skill.path)
    suite = load_suite(path, skill_dir=skill.path) if path.is_file() \
        else Suite(skill_name=skill.name, cases=[])
    verifier = Verifier(coach.model, learner, runs=runs, settings=settings)
    outcome = write_suite(SuiteRequest(skill.path, n, existing=suite.cases), coach, verifier,
                          progress=progress)
    if outcome.cases:
        save_suite(suite.model_copy(update={"cases": suite.cases + outcome.cases}), path)
    cost = add_cost(coach.cost_usd, verifier.cost_usd)
    return AddTestsReport(
        skill=skill.name, suite=path, teacher=coach.ref, student=learner.ref,
        added=[c.id for c in outcome.cases], dropped=outcome.dropped,
        total=len(suite.cases) + len(outcome.cases), calls=coach.calls + verifier.calls,
        cost_usd=cost, warnings=[w for w in (warning,) if w])
