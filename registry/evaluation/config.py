"""What an evaluation runs (`EvalConfig`): models, repeats, mode and limits.

One config for every mode: the fields all runs share, then the few a mode adds, declared and
typed (agent mode's `budget` and `harness`, trigger mode's `distractors`; a trigger run's
`case_ids` are its query ids).

Its own module so that what the engine calls back into (agent mode, a run's manifest) and what
plans a run elsewhere (Jobs, the CI gate, the Space) name the options without importing the
engine.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from registry.agent import Budget

if TYPE_CHECKING:  # names for the annotations only: importing the options loads nothing else
    from registry.evaluation.arms import Mode, Placement
    from registry.evaluation.dependencies import DependencyLoader
    from registry.providers import RetryPolicy
    from registry.results.runs import Via
    from registry.sandbox import CodeChecks

    RunMode = Mode | Literal["trigger"]  # trigger: does an agent open the skill?


@dataclass
class EvalConfig:
    """What to run: models, repeats, mode and limits."""

    models: list[str]
    runs: int = 3
    mode: RunMode = "inline"
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
    via: Via = "cli"
    budget: Budget = field(default_factory=Budget)  # agent mode: what one sample may spend
    harness: str | None = None  # agent and trigger modes: an agent CLI instead of our loop
    distractors: Path | None = None  # trigger mode: a folder of installed skills (None: bundled)
    # "adaptive" (rounds that stop when the verdict is decided: `evaluation.adaptive`),
    # "fixed" (every sample), "auto" (adaptive for 10+ cases and 2+ runs, as `eval`
    # defaults to); None: a resumed run's own, else fixed. Its parameters
    # (`results.sequential.Design`: alpha, spending, settle_after, futility, batches).
    design: str | None = None
    design_options: dict[str, Any] = field(default_factory=dict)
    # loads the skills the skill requires for its skill arm (`evaluation.dependencies`); None:
    # such a skill is refused before any call
    dependencies: DependencyLoader | None = None
