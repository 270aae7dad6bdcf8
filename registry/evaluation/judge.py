"""A judge: the pinned `--judge` model grades a rubric as PASS or FAIL with a short reason.

A judge call that fails (the judge unreachable, refusing its key, erroring after retries) is a
check error: the sample is left out of both arms, as no answer could have caused it. A reply
without a verdict and an answer too long for the judge's context are the answer's doing (a
model could write them on purpose to drop its own failure), so they grade it as failed.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable

from registry.errors import ContextOverflow, HubskillsError, ProviderError
from registry.providers import Completion, Message, Model

JUDGE_SYSTEM = (
    "You grade an answer against one requirement. Be strict and literal: the requirement must "
    "be fully met by the answer itself. Reply with exactly two lines:\n"
    "VERDICT: PASS or VERDICT: FAIL\nREASON: one short sentence."
)
_VERDICT = re.compile(r"VERDICT\s*[:=]\s*\**\s*(PASS|FAIL)", re.I)
MAX_ANSWER = 4000  # characters of a judge's reply kept with its verdict
_REASON = re.compile(r"REASON\s*[:=]\s*(.+)", re.I)
Complete = Callable[..., Awaitable[tuple[Completion, bool]]]


class NoVerdict(ProviderError):
    """The judge answered without a VERDICT line (`answer`: its reply)."""

    answer: str | None = None


def judge_failure(exc: HubskillsError) -> bool:
    """Whether a judge call's error is the judge's own (a check error) rather than something
    the graded answer can cause (no verdict in the reply, a prompt over the judge's context)."""
    return not isinstance(exc, NoVerdict | ContextOverflow)


def judge_messages(rubric: str, prompt: str, output: str) -> list[Message]:
    """The grading request: the requirement, the task and the answer, clearly delimited."""
    user = (
        f"Requirement:\n{rubric}\n\n<task>\n{prompt}\n</task>\n\n"
        f"<answer>\n{output}\n</answer>\n\nDoes the answer meet the requirement?"
    )
    return [Message("system", JUDGE_SYSTEM), Message("user", user)]


def parse_verdict(text: str) -> tuple[bool, str]:
    """(passed, reason) from the judge's reply.

    Raises:
        NoVerdict: the reply holds no verdict.
    """
    match = _VERDICT.search(text)
    if not match:
        error = NoVerdict(f"the judge gave no VERDICT line: {text[:120]!r}")
        error.answer = text[:MAX_ANSWER]
        raise error
    reason = _REASON.search(text)
    return match.group(1).upper() == "PASS", (reason.group(1).strip() if reason else "")[:300]


class Judge:
    """A `JudgeFn` over `model`, through `complete` (the engine's cached, capped call); `ask`
    sends it other requests (a pairwise check's comparisons) the same way."""

    def __init__(self, model: Model, complete: Complete) -> None:
        self.model, self._complete = model, complete

    async def ask(self, messages: list[Message], max_tokens: int = 200) -> Completion:
        """The judge's reply to `messages`: seed 0, temperature 0, cached like every call."""
        completion, _ = await self._complete(self.model, messages, seed=0, repeat=0,
                                             temperature=0.0, max_tokens=max_tokens)
        return completion

    async def __call__(self, rubric: str, prompt: str, output: str) -> tuple[bool, str, str]:
        completion = await self.ask(judge_messages(rubric, prompt, output))
        # The reply is kept with the verdict, so `hubskills verify` re-parses it.
        return (*parse_verdict(completion.text), completion.text[:MAX_ANSWER])


def make_judge(model: Model, complete: Complete) -> Judge:
    """A `JudgeFn` over `model`, through `complete` (the engine's cached call)."""
    return Judge(model, complete)
