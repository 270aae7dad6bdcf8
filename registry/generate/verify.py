"""Verification of generated test cases against real models.

For each case: the teacher answers WITH the skill (inline, as the eval's skill arm) and must
pass; then the student answers WITHOUT it `runs` times (the eval's baseline arm, seeded per
repeat) and the case is dropped when every answer passes: it cannot show lift. The arms are
built exactly as the evaluation engine builds them, so a verified case means the same there.

The cases come from a model, so their `python` and `exec` checks run only in the sandbox; where
none works (a Space without user namespaces) they are left out, `notes` says so, and a case
that only code checks could decide is kept unverified.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

from registry.config import Settings
from registry.errors import ProviderError
from registry.evaluation.arms import build_arm
from registry.evaluation.checks import JudgeFn, case_score, has_code_checks, run_checks
from registry.evaluation.judge import make_judge
from registry.format.skill import Skill
from registry.format.suite import Case
from registry.providers import Completion, Message, Model, aclose_all
from registry.providers.base import add_cost
from registry.results.runs import CheckVerdict
from registry.sandbox import Choice, choose

log = logging.getLogger(__name__)

TEACHER_ANSWER_TOKENS = 2048
STUDENT_ANSWER_TOKENS = 512
STUDENT_TEMPERATURE = 0.7


@dataclass
class Verifier:
    """Checks cases on `teacher` (with the skill) and `student` (without it)."""

    teacher: Model
    student: Model
    runs: int = 2
    teacher_tokens: int = TEACHER_ANSWER_TOKENS
    student_tokens: int = STUDENT_ANSWER_TOKENS
    calls: int = 0
    tokens: int = 0
    cost_usd: float | None = 0.0
    settings: Settings | None = None  # where to find the sandbox (default: the environment)
    notes: list[str] = field(default_factory=list)
    _limits: dict[tuple[str, ...], asyncio.Semaphore] = field(default_factory=dict)
    _code: Choice = field(default_factory=lambda: Choice(None, "none in the suite"))

    def verify_all(self, cases: list[Case], skill: Skill) -> list[str | None]:
        """Per case, None to keep it or the reason to drop it (calls run concurrently)."""
        return asyncio.run(self._verify_all(cases, skill))

    async def _verify_all(self, cases: list[Case], skill: Skill) -> list[str | None]:
        self._limits = {}
        self._code = choose("auto", self.settings or Settings.from_env(),
                            has_code=has_code_checks(cases), code_checks="if_sandboxed",
                            folder=None)
        if self._code.sandbox is None and self._code.status.startswith("skipped"):
            note = (f"code checks (python, exec) were not run while verifying the suite: "
                    f"{self._code.status.removeprefix('skipped: ')}")
            if note not in self.notes:
                self.notes.append(note)
        judge = make_judge(self.teacher, self._judge_call)
        try:
            return list(await asyncio.gather(*(self._verify(c, skill, judge) for c in cases)))
        finally:
            await aclose_all([self.teacher, self.student])

    async def _call(self, model: Model, messages: list[Message], *, seed: int,
                    temperature: float, max_tokens: int) -> Completion:
        limit = self._limits.setdefault(
            model.connection_key, asyncio.Semaphore(max(1, model.default_concurrency)))
        async with limit:
            completion = await model.complete(messages, seed=seed, temperature=temperature,
                                              max_tokens=max_tokens)
        self.calls += 1
        self.tokens += completion.usage.total_tokens
        self.cost_usd = add_cost(self.cost_usd, completion.cost_usd)
        return completion

    async def _judge_call(self, model: Model, messages: list[Message], *, seed: int,
                          repeat: int, temperature: float, max_tokens: int
                          ) -> tuple[Completion, bool]:
        completion = await self._call(model, messages, seed=seed, temperature=temperature,
                                      max_tokens=max_tokens)
        return completion, False

    async def _verify(self, case: Case, skill: Skill, judge: JudgeFn) -> str | None:
        plan = build_arm("skill", case, skill, mode="inline", placement="user")
        try:
            answer = await self._call(self.teacher, plan.messages, seed=0, temperature=0.0,
                                      max_tokens=self.teacher_tokens)
        except ProviderError as exc:
            return f"unverifiable: the teacher errored ({exc.message[:120]})"
        verdicts = await self._grade(case, answer.text, judge)
        passed, _ = case_score(verdicts)
        if passed is None and all(v.skipped for v in verdicts) and self._code.sandbox is None:
            return None  # only code checks could decide it: kept, unverified (see notes)
        if passed is not True:
            why = next((v.reason for v in verdicts if v.passed is False), "no verdict")
            return f"not passable: the teacher fails it with the skill ({why[:160]})"
        baseline = build_arm("baseline", case, skill)
        passes = 0
        for repeat in range(self.runs):
            try:
                reply = await self._call(self.student, baseline.messages, seed=repeat,
                                         temperature=STUDENT_TEMPERATURE,
                                         max_tokens=self.student_tokens)
            except ProviderError as exc:
                log.warning("student error while verifying %s: %s", case.id, exc.message)
                return None  # cannot show it is too easy: keep it
            verdict, _ = case_score(await self._grade(case, reply.text, judge))
            if verdict is not True:
                return None
            passes += 1
        return (f"too easy: {self.student.ref} passes it without the skill "
                f"({passes}/{self.runs})")

    async def _grade(self, case: Case, text: str, judge: JudgeFn) -> list[CheckVerdict]:
        return await run_checks(case, text, judge=judge, sandbox=self._code.sandbox,
                                skip_reason=f"code check {self._code.status}")
