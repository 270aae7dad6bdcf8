"""What `generate` reports: per round and student, baseline → with skill, with intervals,
tokens and cost; the failures shown to the teacher; and the diff of an improved skill."""

from __future__ import annotations

import difflib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from registry.evaluation.engine import EvalRun
from registry.format.skill import SKILL_FILE, load_skill
from registry.format.suite import Case
from registry.providers.base import add_cost
from registry.results.display import lift_interval, pct
from registry.results.report import summarize
from registry.results.runs import ResultRow

MAX_FAILURES = 8
MAX_ANSWER_CHARS = 1500


@dataclass
class StudentResult:
    """One student in one round: both arms' pass rates with their Wilson intervals, the paired
    lift with its interval and verdict, and the round's tokens and dollars on that student."""

    model: str
    baseline: float
    baseline_ci: tuple[float, float]
    skill: float
    skill_ci: tuple[float, float]
    lift: float
    lo: float
    hi: float
    verdict: str
    input_tokens: int
    output_tokens: int
    cost_usd: float | None


@dataclass
class RoundResult:
    """One evaluated version of the skill (round 0 is the draft)."""

    round: int
    run_id: str
    students: list[StudentResult]
    note: str = ""

    def score(self) -> tuple[float, float]:
        """Mean lower bound of the lift, then mean with-skill pass rate: higher is better."""
        n = max(1, len(self.students))
        return (sum(s.lo for s in self.students) / n, sum(s.skill for s in self.students) / n)

    def reached(self, target: float) -> bool:
        """The one engine's verdict "helps" (interval above 0 AND the exact test, on enough
        cases) and the target pass rate on every student."""
        return bool(self.students) and all(s.verdict == "helps" and s.skill >= target
                                           for s in self.students)


@dataclass
class GenerateReport:
    """The outcome of `generate_skill`."""

    name: str
    path: Path | None
    teacher: str
    students: list[str]
    rounds: list[RoundResult] = field(default_factory=list)
    best_round: int | None = None
    cases: int = 0
    dropped: list[tuple[str, str]] = field(default_factory=list)
    suite_verified: bool = False
    trigger_queries: int = 0  # written to evals/triggers.json (0: kept one, or none written)
    warnings: list[str] = field(default_factory=list)
    diff: str | None = None
    teacher_input_tokens: int = 0
    teacher_output_tokens: int = 0
    teacher_cost_usd: float | None = 0.0
    """Dollars of the teacher's replies plus the suite verification's calls (None: unknown)."""
    eval_cost_usd: float | None = 0.0
    """Dollars of every round's evaluation (None: a price is unknown)."""
    fallback: bool = False
    workdir: Path | None = None
    feedback_run: str | None = None  # the reviewed run whose feedback the teacher was given

    @property
    def run_ids(self) -> list[str]:
        """Every evaluation run made, in round order."""
        return [r.run_id for r in self.rounds]

    def best(self) -> RoundResult | None:
        """The kept round's results."""
        return next((r for r in self.rounds if r.round == self.best_round), None)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form for `--json`."""
        data = asdict(self)
        data["path"] = str(self.path) if self.path else None
        data["workdir"] = str(self.workdir) if self.workdir else None
        data["run_ids"] = self.run_ids
        return data


def summarize_round(run: EvalRun, round_no: int) -> RoundResult:
    """Per-student results of one evaluation run."""
    students = []
    for s in summarize(run.rows, run.manifest):
        st = s.stats
        cost = add_cost(s.baseline.cost_usd, s.skill.cost_usd)
        students.append(StudentResult(
            model=s.model, baseline=st.baseline.pass_rate,
            baseline_ci=(st.baseline.lo, st.baseline.hi), skill=st.skill.pass_rate,
            skill_ci=(st.skill.lo, st.skill.hi), lift=st.lift, lo=st.lo, hi=st.hi,
            verdict=st.verdict,
            input_tokens=s.baseline.input_tokens + s.skill.input_tokens,
            output_tokens=s.baseline.output_tokens + s.skill.output_tokens, cost_usd=cost))
    return RoundResult(round_no, run.manifest.run_id, students)


def round_cost(result: RoundResult) -> float | None:
    """Dollars of one round's evaluation (None when a price is unknown)."""
    costs = [s.cost_usd for s in result.students]
    return None if any(c is None for c in costs) else sum(c for c in costs if c is not None)


def describe_round(result: RoundResult) -> str:
    """One progress line: each student's baseline → with skill and lift interval."""
    parts = [f"{s.model} {pct(s.baseline)} → {pct(s.skill)} (lift "
             f"{lift_interval(s.lift, s.lo, s.hi)}, {s.verdict})" for s in result.students]
    return "; ".join(parts) or "no results"


def failures_text(rows: list[ResultRow], cases: list[Case], limit: int = MAX_FAILURES) -> str:
    """The cases failed WITH the skill: prompt, checks, the answer, and why each check failed."""
    by_id = {c.id: c for c in cases}
    seen: set[str] = set()
    parts = []
    for row in sorted(rows, key=lambda r: (r.case_id, r.model, r.repeat)):
        if row.arm != "skill" or row.passed is not False or row.case_id in seen:
            continue
        case = by_id.get(row.case_id)
        if case is None:
            continue
        seen.add(row.case_id)
        reasons = [f"- {c.label}: {c.reason}" for c in row.checks if c.passed is False]
        checks = json.dumps([c.model_dump(exclude_defaults=True) for c in case.checks])
        answer = row.output if len(row.output) <= MAX_ANSWER_CHARS \
            else row.output[:MAX_ANSWER_CHARS] + "\n[... trimmed]"
        parts.append(
            f"### Case `{case.id}` (student {row.model})\nPrompt:\n{case.prompt}\n\n"
            f"Checks: {checks}\n"
            + (f"Assertions: {json.dumps(case.assertions)}\n" if case.assertions else "")
            + f"\nThe student's answer with the skill:\n<answer>\n{answer}\n</answer>\n\n"
            f"Why it failed:\n" + "\n".join(reasons or ["- (no check reason recorded)"]))
        if len(parts) >= limit:
            break
    return "\n\n".join(parts)


def skill_diff(old: Path, new: Path) -> str:
    """A unified diff of SKILL.md plus the files added, changed or removed."""
    before = (old / SKILL_FILE).read_text(encoding="utf-8").splitlines(keepends=True)
    after = (new / SKILL_FILE).read_text(encoding="utf-8").splitlines(keepends=True)
    text = "".join(difflib.unified_diff(before, after, f"a/{SKILL_FILE}", f"b/{SKILL_FILE}"))
    old_files, new_files = set(load_skill(old).files()), set(load_skill(new).files())
    notes = [f"+ {f}" for f in sorted(new_files - old_files)]
    notes += [f"- {f}" for f in sorted(old_files - new_files)]
    notes += [f"~ {f}" for f in sorted(old_files & new_files) if f != SKILL_FILE
              and (old / f).read_bytes() != (new / f).read_bytes()]
    return text + ("\nfiles:\n" + "\n".join(notes) + "\n" if notes else "")
