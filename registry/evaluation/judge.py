"""A judge: the pinned `--judge` model grades a rubric as PASS or FAIL with a short reason."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any

from registry.errors import ProviderError
from registry.providers import Completion, Message, Model

JUDGE_SYSTEM = (
    "You grade an answer against one requirement. Be strict and literal: the requirement must "
    "be fully met by the answer itself. Reply with exactly two lines:\n"
    "VERDICT: PASS or VERDICT: FAIL\nREASON: one short sentence."
)
_VERDICT = re.compile(r"VERDICT\s*[:=]\s*\**\s*(PASS|FAIL)", re.I)
_REASON = re.compile(r"REASON\s*[:=]\s*(.+)", re.I)
Complete = Callable[..., Awaitable[tuple[Completion, bool]]]


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
        ProviderError: the reply holds no verdict.
    """
    match = _VERDICT.search(text)
    if not match:
        raise ProviderError(f"the judge gave no VERDICT line: {text[:120]!r}")
    reason = _REASON.search(text)
    return match.group(1).upper() == "PASS", (reason.group(1).strip() if reason else "")[:300]


def make_judge(model: Model, complete: Complete) -> Callable[[str, str, str], Any]:
    """A `JudgeFn` over `model`, through `complete` (the engine's cached call)."""

    async def judge(rubric: str, prompt: str, output: str) -> tuple[bool, str]:
        completion, _ = await complete(model, judge_messages(rubric, prompt, output),
                                       seed=0, repeat=0, temperature=0.0, max_tokens=200)
        return parse_verdict(completion.text)

    return judge
