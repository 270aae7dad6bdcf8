"""What the engine's helpers use of the evaluation they serve, typed as protocols.

Agent mode (`agent_mode.agent_sample`, `agent_note`) and a run's closing note
(`run_manifest.run_note`) are called by the engine with its running `engine.Evaluator`; they
import this module, never the engine (which imports them). `Evaluator` satisfies both
protocols; a test may hand them any object that has these attributes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from registry.agent import AgentRunner
    from registry.config import Settings
    from registry.evaluation.checks import JudgeFn
    from registry.evaluation.config import EvalConfig
    from registry.format.skill import Skill
    from registry.format.suite import Case
    from registry.providers import CostCap, Model
    from registry.results.runs import RunWriter
    from registry.sandbox import Sandbox


class Spending(Protocol):
    """What a run's closing note reads: its options and what its model calls cost."""

    config: EvalConfig
    cap: CostCap  # --max-cost and --max-calls: what was spent, and which limit stopped it


class RunningEval(Spending, Protocol):
    """What an agent-mode sample uses of the evaluation running it."""

    skill: Skill
    dependencies: tuple[Skill, ...]  # the skills it requires: the skill arm's only
    settings: Settings
    models: list[Model]
    @property
    def judge(self) -> JudgeFn | None: ...  # noqa: D102
    sandbox: Sandbox | None  # where checks and the agent's commands run; None: nowhere
    skip_reason: str  # why code checks are skipped when there is no sandbox
    writer: RunWriter

    def agent_runner(self, model: Model, case: Case, arm: str) -> AgentRunner:
        """The runner that plays one sample of `case` in `arm` on `model`."""
        ...
