"""How long and how much an evaluation will take, said before it starts (no UI here).

`hubskills eval` prints it beside the run id, and the Space's Evaluate tab under its form
(`space.evaluate_plan` adds what this Space measured and its cap on visitors). Time per answer
is a measured figure where the caller has one (the Space times its earlier runs), else a
typical one: the embedded model decodes about `EMBEDDED_TOKENS_PER_S` tokens per second on two
free cores (75-105 measured on an idle machine, less on a busy one), one answer at a time, and
an answer is typically `EMBEDDED_TYPICAL_TOKENS` long (the mean of 123 answers a new user's walk
got on three example skills: 155 tokens, 2.15 s each, where the estimate had assumed every
answer ran to its 512-token cap and said 10 minutes for a run of 2). It also reads the skill
once, at `EMBEDDED_PREFILL_TOKENS_PER_S`, and loads once a process (`EMBEDDED_LOAD_S`): a
walk's "about 6 s" for one case took 22 s, 7 s of it reading an 800-token skill, the rest two
answers that ran to 448 and 512 tokens, which `Plan.longest` bounds. Only once: llama.cpp's
server engine (xllamacpp, what the `[local]` extra installs) keeps the prompts it read, so a
later skill-arm answer reads only its case though a baseline answer came between (a 930-token
skill arm: 3.4 s the first time, 0.3-0.6 s after; counting it in every answer said "about 7
min" for a 40-case run that took 2.8 min on a busy machine). An API model answers several at
once. The cost counts, for each priced model, every answer's prompt (the case, and the skill in
the skill arm) and its whole `max_tokens` of output: a figure to stay under, not a bill.
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
EMBEDDED_PREFILL_TOKENS_PER_S = 150.0  # 1006 prompt tokens in 6.5 s, one thread, busy machine
EMBEDDED_LOAD_S = 1.0  # 0.3 s measured with the file in the page cache, more from a cold disk
API_SECONDS_PER_ANSWER = 1.0  # a few seconds each, several calls at once
CHARS_PER_TOKEN = 4


class Timings(Protocol):
    """Measured wall seconds per answer, by model (the Space's `AnswerTimes`)."""

    def get(self, model: str) -> float | None: ...


@dataclass(frozen=True)
class Plan:
    """An evaluation's size and estimate: `seconds` of wall time (`measured`: from earlier
    runs of every model), `load_s` of it loading a model before the first answer, `longest`
    should every answer run to its `max_tokens`, `cost` in USD of the priced models
    (`unpriced`: models whose price is unknown)."""

    answers: int
    cases: int
    runs: int
    models: tuple[str, ...]
    seconds: float
    measured: bool
    cost: float
    unpriced: tuple[str, ...]
    load_s: float = 0.0
    longest: float | None = None  # None: as `seconds` (an API model's pace has no cap in it)

    def share(self, answers: int) -> Plan:
        """The same run's estimate for `answers` of its answers (what a resumed run has left,
        or an adaptive run's most); the load is still paid once."""
        part = answers / self.answers if self.answers else 0.0
        longest = None if self.longest is None else \
            self.load_s + (self.longest - self.load_s) * part
        return Plan(answers, self.cases, self.runs, self.models,
                    self.load_s + (self.seconds - self.load_s) * part, self.measured,
                    self.cost * part, self.unpriced, self.load_s, longest)


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
         measured: Timings | None = None, loaded: bool | None = None) -> Plan:
    """The size, time and cost of evaluating `skill` on `cases` as `config` asks; `loaded`:
    whether the embedded model is loaded already (None: whether this process has it)."""
    models = tuple(config.models)
    per_model = samples_planned(1, len(cases), config.runs)
    timed = [seconds_per_answer(m, config.max_tokens, measured) for m in models]
    skill_tokens = skill.token_estimate()["body"]
    prompts = sum(2 * len(c.prompt) // CHARS_PER_TOKEN + skill_tokens + 32 for c in cases)
    seconds = sum(per_model * s for s, _ in timed)
    load_s, longest = 0.0, None
    if EMBEDDED_REF in models and not timed[models.index(EMBEDDED_REF)][1]:
        read = (skill_tokens + 32) / EMBEDDED_PREFILL_TOKENS_PER_S  # once: the engine keeps it
        if loaded is None:  # imported only here: a run on API models never loads it
            from registry.providers.embedded import is_loaded

            loaded = is_loaded()
        load_s = 0.0 if loaded else EMBEDDED_LOAD_S
        capped = EMBEDDED_OVERHEAD_S + config.max_tokens / EMBEDDED_TOKENS_PER_S
        typical = timed[models.index(EMBEDDED_REF)][0]
        seconds += load_s + read
        longest = seconds + per_model * (capped - typical)
    cost, unpriced = 0.0, []
    for model in models:
        price = price_for(model)
        if price is None:
            unpriced.append(model)
            continue
        cost += (config.runs * prompts * price.input
                 + per_model * config.max_tokens * price.output) / 1_000_000
    return Plan(samples_planned(len(models), len(cases), config.runs), len(cases), config.runs,
                models, seconds, all(m for _, m in timed), cost, tuple(unpriced), load_s,
                longest)


def duration(seconds: float) -> str:
    """`about 40 s`, `about 3 min`, `about 1 h 5 min`."""
    if seconds < 60:
        return f"about {max(1, round(seconds))} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"about {minutes} min"
    return f"about {minutes // 60} h {minutes % 60} min"


def time_text(p: Plan, max_tokens: int) -> str:
    """`about 13 s at a typical pace, up to about 25 s if answers run to 512 tokens` (the bound
    said only where it differs)."""
    typical = f"{duration(p.seconds)} at a typical pace"
    if p.longest is None or duration(p.longest) == duration(p.seconds):
        return typical
    return f"{typical}, {duration(p.longest).replace('about', 'up to about')} if answers " \
           f"run to {max_tokens} tokens"


def cost_text(p: Plan) -> str:
    """`up to about $0.0042`, `up to about $1.20`, `free`, or the models without a price."""
    if p.unpriced:
        return f"cost unknown for {', '.join(p.unpriced)}"
    if p.cost > 0:
        return f"up to about ${p.cost:.4f}" if p.cost < 0.01 else f"up to about ${p.cost:.2f}"
    return "free"
