"""What an evaluation runs (`EvalConfig`): models, repeats, mode and limits.

Its own module so that what the engine calls back into (agent mode, a run's manifest) and what
plans a run elsewhere (Jobs, the CI gate, the Space) name the options without importing the
engine.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from registry.agent import Budget

if TYPE_CHECKING:  # names for the annotations only: importing the options loads nothing else
    from registry.evaluation.arms import Mode, Placement
    from registry.providers import RetryPolicy
    from registry.sandbox import CodeChecks


@dataclass
class EvalConfig:
    """What to run: models, repeats, mode and limits."""

    models: list[str]
    runs: int = 3
    mode: Mode = "inline"
    placement: Placement = "user"
    judge: str | None = None
    concurrency: int | None = None
    max_cost: float | None = None  # USD: every call reserves its worst case first
    max_calls: int | None = None  # model calls (judge's too): what bounds unpriced models
    case_ids: list[str] = field(default_factory=list)
    temperature: float = 0.7
    max_tokens: int = 512
    use_cache: bool = True
    base_url: str | None = None
    retry: RetryPolicy | None = None
    sandbox: str = "auto"  # which backend runs code checks: auto, bwrap, none
    code_checks: CodeChecks = "require"  # refuse without a sandbox; "skip" leaves them out
    via: str = "cli"
    budget: Budget = field(default_factory=Budget)  # agent mode: what one sample may spend
    harness: str | None = None  # agent mode: an external agent CLI instead of hubskills' loop
