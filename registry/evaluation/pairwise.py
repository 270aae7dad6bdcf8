"""Pairwise judge checks: the `--judge` model compares the two arms' answers to one sample.

A `{"type": "pairwise", "rubric": ...}` check cannot be graded with one answer, so `run_checks`
leaves it pending (skipped) when each arm is graded, and the engine hands every graded row to
`Pairs.settle`, which holds it until the other arm's row of the same (model, case, repeat)
arrives. Then the judge is asked twice, concurrently: the skill's answer as A and the
baseline's as B, and the reverse. The arm both orders prefer wins; anything else is a tie
(`results/pairwise.py` reads the replies and gives each arm its verdict). Both replies are
stored on both rows' verdict, so `hubskills verify` re-derives every verdict, and the run's
position-bias rate, from them without calling the judge (`stored_pair`).

The calls are the judge check's: the same model, seed 0 and temperature 0, through the engine's
response cache and cost cap (a rerun asks nothing; `--max-cost` counts them).

- An arm with no graded answer (an error row) leaves the other arm's pairwise checks skipped,
  as does an other arm answered in an earlier try (a resumed run never rewrites a stored row).
- A judge call that fails after retries is a check error for both rows (out of both arms'
  denominators, retried by `--resume`), as a judge check's failure is. A reply without a
  verdict, or a prompt over the judge's context, is a tie: either answer could have caused it.
- A row whose pair a stop or the cost cap left unjudged (the other arm unanswered, or the
  comparison cut short) is written when the run ends (`Pairs.left`), its answer and other checks
  kept, its pairwise checks skipped saying so: an answer costs more than the comparison (in
  agent mode it is not cached). `--resume` answers the other arm; the pair stays unjudged, as
  any pair answered across two tries does.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any

from registry.errors import HubskillsError
from registry.evaluation.checks import grade_row
from registry.evaluation.judge import MAX_ANSWER, judge_failure
from registry.format import checks_schema as cs
from registry.format.suite import Case, Suite
from registry.providers import Message
from registry.results.pairwise import BadAnswer, answer_text, outcome_of
from registry.results.runs import CheckVerdict, ResultRow

if TYPE_CHECKING:
    from registry.evaluation.judge import Judge

PAIRWISE_SYSTEM = (
    "You compare two answers to the same task against one requirement. Judge only what the "
    "answers say: which one is shown first, and how long each is, says nothing about its "
    "quality. Reply with exactly two lines:\n"
    "VERDICT: A, VERDICT: B or VERDICT: TIE\nREASON: one short sentence."
)
PairFn = Callable[[cs.PairwiseCheck], Awaitable[tuple[bool | None, str, str] | None]]
"""What `run_checks` asks for a pairwise check's verdict: (passed, reason, stored answer), or
None when there is none to give (the check is then skipped)."""


def pairwise_messages(rubric: str, prompt: str, first: str, second: str) -> list[Message]:
    """The comparison request: the requirement, the task and the two answers, delimited."""
    user = (
        f"Requirement:\n{rubric}\n\n<task>\n{prompt}\n</task>\n\n<answer_a>\n{first}\n"
        f"</answer_a>\n\n<answer_b>\n{second}\n</answer_b>\n\n"
        "Which answer meets the requirement better?"
    )
    return [Message("system", PAIRWISE_SYSTEM), Message("user", user)]


def has_pairwise(cases: Iterable[Case]) -> bool:
    """Whether any case carries a pairwise check."""
    return any(check.type == "pairwise" for case in cases for check in case.checks)


def check_pairwise(suite: Suite, *, arms: Iterable[str], command: str) -> None:
    """Refuse, before any call, a suite with pairwise checks in a run without both arms.

    Raises:
        HubskillsError: a pairwise check with only one arm to compare.
    """
    cases = [case.id for case in suite.cases if has_pairwise([case])]
    if cases and set(arms) != {"baseline", "skill"}:
        raise HubskillsError(
            f"{len(cases)} case(s) have a pairwise check ({', '.join(cases[:3])}), which "
            "compares the skill's answer with the baseline's: this run has one arm only",
            hint=command)  # an A/B run: both arms


class Pairs:
    """The engine's pairing of rows: see the module docstring. `done` holds the samples
    answered before this run's calls, as (model, arm, case id, repeat)."""

    def __init__(self, suite: Suite, judge: Judge | None,
                 done: Iterable[tuple[str, str, str, int]]) -> None:
        self.cases = {case.id: case for case in suite.cases if has_pairwise([case])}
        self.judge, self.done = judge, set(done)
        self.held: dict[tuple[str | None, str, int], ResultRow] = {}
        self._cut: list[ResultRow] = []  # both rows of a comparison a stop or the cap cut short

    async def settle(self, row: ResultRow) -> list[ResultRow]:
        """The rows to write now that `row` is graded: itself alone (no pairwise check), none
        (held until its other arm arrives), or both arms' rows with their pairwise verdicts."""
        case = self.cases.get(row.case_id)
        if case is None or self.judge is None:
            return [row]
        other = "skill" if row.arm == "baseline" else "baseline"
        if (row.model, other, row.case_id, row.repeat) in self.done:
            return [_unpaired(row, case, "the other arm was answered in an earlier try")]
        key = (row.model, row.case_id, row.repeat)
        partner = self.held.pop(key, None)
        if partner is None:
            self.held[key] = row
            return []
        skill, baseline = (row, partner) if row.arm == "skill" else (partner, row)
        if skill.error is not None or baseline.error is not None:  # no answer to compare
            return [_unpaired(r, case, "the other arm has no graded answer")
                    for r in (baseline, skill)]
        try:
            verdicts = await asyncio.gather(*(self._compare(check, case, skill, baseline)
                                              for check in case.checks
                                              if isinstance(check, cs.PairwiseCheck)))
        except BaseException:  # the cap, a stop: the answers are still whole (see `left`)
            self._cut += [baseline, skill]
            raise
        return [_with_verdicts(r, case, [(v, r.arm) for v in verdicts])
                for r in (baseline, skill)]

    def left(self) -> list[ResultRow]:
        """The rows a stop or the cost cap left without their pair's verdict (none after a run
        that finished), each with its pairwise checks skipped saying so; taken once."""
        rows, self._cut = [*self._cut, *self.held.values()], []
        self.held = {}
        return [_unpaired(r, self.cases[r.case_id], "the run stopped before they were compared")
                for r in rows]

    async def _compare(self, check: cs.PairwiseCheck, case: Case, skill: ResultRow,
                       baseline: ResultRow) -> tuple[cs.PairwiseCheck, str | None, str]:
        """(check, the stored answer or None on a judge failure, why it failed)."""
        assert self.judge is not None
        orders = ((skill.output, baseline.output), (baseline.output, skill.output))
        replies = await asyncio.gather(*(self._ask(check.rubric, case.prompt, *order)
                                         for order in orders), return_exceptions=True)
        for reply in replies:
            if isinstance(reply, BaseException) and not isinstance(reply, HubskillsError):
                raise reply  # the cost cap reached, a cancellation: the pair is not written
            if isinstance(reply, HubskillsError):
                return check, None, f"judge error: {reply}"
        first, second = (r for r in replies if isinstance(r, str))  # no error left (above)
        return check, answer_text(first, second), ""

    async def _ask(self, rubric: str, prompt: str, first: str | None,
                   second: str | None) -> str:
        assert self.judge is not None
        try:
            completion = await self.judge.ask(pairwise_messages(rubric, prompt, first or "",
                                                                second or ""))
        except HubskillsError as exc:
            if judge_failure(exc):
                raise
            # a prompt over the judge's context: the answers' doing, so no verdict (a tie)
            return f"(no reply: {exc})"[:MAX_ANSWER]
        return completion.text[:MAX_ANSWER]


def _pairwise_positions(case: Case) -> list[int]:
    return [i for i, check in enumerate(case.checks) if isinstance(check, cs.PairwiseCheck)]


def _unpaired(row: ResultRow, case: Case, why: str) -> ResultRow:
    """`row` with its pending pairwise verdicts saying why they stay skipped."""
    if row.error is not None:
        return row
    checks = list(row.checks)
    for i in _pairwise_positions(case):
        checks[i] = checks[i].model_copy(update={"reason": f"no pair to compare: {why}"})
    return row.model_copy(update={"checks": checks})


def _with_verdicts(row: ResultRow, case: Case,
                   graded: list[tuple[tuple[cs.PairwiseCheck, str | None, str], str]]
                   ) -> ResultRow:
    """`row` regraded with its pairwise verdicts in place of the pending ones."""
    checks = list(row.checks)
    for i, ((check, answer, failure), arm) in zip(_pairwise_positions(case), graded, strict=True):
        if answer is None:
            passed, reason = None, failure
        else:
            passed, reason = outcome_of(answer).verdict(arm)
        checks[i] = CheckVerdict(type="pairwise", label=check.label(), passed=passed,
                                 reason=reason, weight=check.weight, answer=answer)
    regraded = row.model_copy(update={"checks": [], "passed": None, "score": None})
    grade_row(regraded, checks)
    return regraded


def stored_pair(row: ResultRow, case: Case, rows: dict[tuple[Any, ...], ResultRow]) -> PairFn:
    """`hubskills verify`'s pairwise grader for `row`: each verdict re-derived from the replies
    stored on it, which must be those stored on the other arm's row (`rows`, by
    `pair_key`); a row with no stored replies leaves the check skipped (not replayable)."""
    stored = _stored_answers(row, case)
    other = rows.get(pair_key(row, other=True))
    mirrored = {} if other is None or other.error is not None else _stored_answers(other, case)

    async def grade(check: cs.PairwiseCheck) -> tuple[bool | None, str, str] | None:
        answer = stored.get(check.rubric)
        if answer is None:
            return None
        if mirrored.get(check.rubric) != answer:
            return None, "the other arm's row does not store the same judge replies", answer
        try:
            return (*outcome_of(answer).verdict(row.arm), answer)
        except BadAnswer as err:
            return None, str(err), answer

    return grade


def _stored_answers(row: ResultRow, case: Case) -> dict[str, str | None]:
    """The replies `row` stores for each of `case`'s pairwise checks, by rubric."""
    return {check.rubric: verdict.answer
            for check, verdict in zip(case.checks, row.checks, strict=False)
            if isinstance(check, cs.PairwiseCheck)}


def pair_key(row: ResultRow, *, other: bool = False) -> tuple[Any, ...]:
    """A row's (model, arm, case, repeat), or its other arm's with `other`."""
    arm = {"skill": "baseline", "baseline": "skill"}.get(row.arm, row.arm) if other else row.arm
    return row.model, arm, row.case_id, row.repeat
