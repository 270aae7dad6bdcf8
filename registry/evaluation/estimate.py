"""How long and how much an evaluation will take, said before it starts (no UI here).

`hubskills eval` prints it beside the run id, and the Space's Evaluate tab under its form
(`space.evaluate_plan` adds what this Space measured and its cap on visitors). Time per answer
is a measured figure where the caller has one (the Space times its earlier runs), else a
typical one: the embedded model decodes about `EMBEDDED_TOKENS_PER_S` tokens per second on two
free cores (75-105 measured on an idle machine, less on a busy one), one answer at a time, and
an answer is typically `EMBEDDED_TYPICAL_TOKENS` long (the mean of 123 answers a new user's walk
got on three example skills: 155 tokens, 2.15 s each, where the estimate had assumed every
answer ran to its 512-token cap and said 10 minutes for a run of 2); an API model answers
several at once. The cost counts, for each priced model, every answer's
prompt (the case, and the skill in the skill arm) and its whole `max_tokens` of output: a
figure to stay under, not a bill.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from registry.evaluation.config import EvalConfig
from registry.format.skill import Skill
from registry.format.suite import Case
from registry.providers.pricing import price_for
from registry.providers.refs import EMBEDDED_REF
from registry.results.runs import samples_planned

EMBEDDED_TOKENS_PER_S = 60.0
EMBEDDED_OVERHEAD_S = 0.5  # the prompt's prefill, per answer
EMBEDDED_TYPICAL_TOKENS = 160  # an answer's length, unless `max_tokens` cuts it shorter
API_SECONDS_PER_ANSWER = 1.0  # a few seconds each, several calls at once
CHARS_PER_TOKEN = 4


class Timings(Protocol):
    """Measured wall seconds per answer, by model (the Space's `AnswerTimes`)."""

    def get(self, model: str) -> float | None: ...


@dataclass(frozen=True)
class Plan:
    """An evaluation's size and estimate: `seconds` of wall time (`measured`: from earlier
    runs of every model), `cost` in USD of the priced models (`unpriced`: models whose price
    is unknown)."""

    answers: int
    cases: int
    runs: int
    models: tuple[str, ...]
    seconds: float
    measured: bool
    cost: float
    unpriced: tuple[str, ...]

    def share(self, answers: int) -> Plan:
        """The same run's estimate for `answers` of its answers (what a resumed run has left,
        or an adaptive run's most)."""
        part = answers / self.answers if self.answers else 0.0
        return Plan(answers, self.cases, self.runs, self.models, self.seconds * part,
                    self.measured, self.cost * part, self.unpriced)


def seconds_per_answer(model: str, max_tokens: int,
                       measured: Timings | None = None) -> tuple[float, bool]:
    """Wall seconds per answer of `model` and whether it was `measured`."""
    if measured and (seconds := measured.get(model)) is not None:
        return seconds, True
    if model == EMBEDDED_REF:
        typical = min(max_tokens, EMBEDDED_TYPICAL_TOKENS)
        return EMBEDDED_OVERHEAD_S + typical / EMBEDDED_TOKENS_PER_S, False
    return API_SECONDS_PER_ANSWER, False


def plan(skill: Skill, cases: list[Case], config: EvalConfig,
         measured: Timings | None = None) -> Plan:
    """The size, time and cost of evaluating `skill` on `cases` as `config` asks."""
    models = tuple(config.models)
    per_model = samples_planned(1, len(cases), config.runs)
    timed = [seconds_per_answer(m, config.max_tokens, measured) for m in models]
    skill_tokens = skill.token_estimate()["body"]
    prompts = sum(2 * len(c.prompt) // CHARS_PER_TOKEN + skill_tokens + 32 for c in cases)
    cost, unpriced = 0.0, []
    for model in models:
        price = price_for(model)
        if price is None:
            unpriced.append(model)
            continue
        cost += (config.runs * prompts * price.input
                 + per_model * config.max_tokens * price.output) / 1_000_000
    return Plan(samples_planned(len(models), len(cases), config.runs), len(cases), config.runs,
                models, sum(per_model * s for s, _ in timed), all(m for _, m in timed), cost,
                tuple(unpriced))


def duration(seconds: float) -> str:
    """`about 40 s`, `about 3 min`, `about 1 h 5 min`."""
    if seconds < 60:
        return f"about {max(1, round(seconds))} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"about {minutes} min"
    return f"about {minutes // 60} h {minutes % 60} min"


def cost_text(p: Plan) -> str:
    """`up to about $0.0042`, `up to about $1.20`, `free`, or the models without a price."""
    if p.unpriced:
        return f"cost unknown for {', '.join(p.unpriced)}"
    if p.cost > 0:
        return f"up to about ${p.cost:.4f}" if p.cost < 0.01 else f"up to about ${p.cost:.2f}"
    return "free"
