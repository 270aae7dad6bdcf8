"""How big an evaluation is before it starts, how long and how much it will take, and the cap
on what an anonymous visitor may start (no Gradio here).

The Evaluate tab shows the estimate under the form before a visitor starts a run, and again
as the run's first progress line; while it runs, the progress line gives the time left at the
run's own pace. Time per answer is what this Space measured for the model in its earlier runs
(`state.AnswerTimes`), or before any, a typical figure: the embedded model decodes about
`EMBEDDED_TOKENS_PER_S` tokens per second on a Space's two free cores (75-105 measured on an
idle machine, less on a busy one), one answer at a time; an API model answers several at
once. The cost counts, for each priced model, every answer's prompt (the case, and the skill
in the skill arm) and its whole `max_tokens` of output: a figure to stay under, not a bill.

On a Space an anonymous visitor may start at most `evaluate_jobs.ANONYMOUS_MAX_ANSWERS` answers
(about three minutes of the embedded model at 512 tokens); a signed-in visitor up to
`MAX_HERE_ANSWERS` here and more as their own Jobs. Off a Space the owner runs what they like.
"""

from __future__ import annotations

from dataclasses import dataclass

from registry import EMBEDDED_REF, Case, EvalConfig, Skill, price_for, samples_planned

from .evaluate_jobs import ANONYMOUS_MAX_ANSWERS, MAX_HERE_ANSWERS
from .messages import counted
from .state import SignInRequired, SpaceState, oauth_available

DEFAULT_CASES = 3  # the form's defaults: 3 cases x 1 run x 2 arms on the embedded model
DEFAULT_RUNS = 1
EMBEDDED_TOKENS_PER_S = 60.0
EMBEDDED_OVERHEAD_S = 0.5  # the prompt's prefill, per answer
API_SECONDS_PER_ANSWER = 1.0  # a few seconds each, several calls at once
CHARS_PER_TOKEN = 4


@dataclass(frozen=True)
class Plan:
    """An evaluation's size and estimate: `seconds` of wall time (`measured`: from this
    Space's runs of every model), `cost` in USD of the priced models (`unpriced`: models
    whose price is unknown)."""

    answers: int
    cases: int
    runs: int
    models: tuple[str, ...]
    seconds: float
    measured: bool
    cost: float
    unpriced: tuple[str, ...]


def seconds_per_answer(state: SpaceState, model: str, max_tokens: int) -> tuple[float, bool]:
    """Wall seconds per answer of `model` and whether this Space measured it."""
    measured = state.answer_times.get(model)
    if measured is not None:
        return measured, True
    if model == EMBEDDED_REF:
        return EMBEDDED_OVERHEAD_S + max_tokens / EMBEDDED_TOKENS_PER_S, False
    return API_SECONDS_PER_ANSWER, False


def plan(state: SpaceState, skill: Skill, cases: list[Case], config: EvalConfig) -> Plan:
    """The size, time and cost of evaluating `skill` on `cases` as `config` asks."""
    models = tuple(config.models)
    per_model = samples_planned(1, len(cases), config.runs)
    timed = [seconds_per_answer(state, m, config.max_tokens) for m in models]
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


def check_cap(answers: int, *, on_space: bool, signed_in: bool) -> None:
    """Refuse an anonymous visitor's evaluation of more than `ANONYMOUS_MAX_ANSWERS` answers
    on a Space, before anything runs.

    Raises:
        SignInRequired: such an evaluation.
    """
    if not on_space or signed_in or answers <= ANONYMOUS_MAX_ANSWERS:
        return
    sign_in = ("sign in with Hugging Face (the *Sign in* button) to run up to "
               f"{MAX_HERE_ANSWERS} here" if oauth_available() else
               "run it on your machine with `hubskills eval`")
    raise SignInRequired(f"this evaluation asks for {answers} answers, and an anonymous "
                         f"visitor may start at most {ANONYMOUS_MAX_ANSWERS} on this Space",
                         hint=f"lower *Cases* or *Runs*, or {sign_in}")


def duration(seconds: float) -> str:
    """`about 40 s`, `about 3 min`, `about 1 h 5 min`."""
    if seconds < 60:
        return f"about {max(1, round(seconds))} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"about {minutes} min"
    return f"about {minutes // 60} h {minutes % 60} min"


def time_left(done: int, total: int, elapsed: float) -> str:
    """The time left at the run's pace so far (`done` of `total` answers in `elapsed` s)."""
    if done <= 0:
        return ""
    return f"{duration(elapsed / done * max(0, total - done))} left"


def plan_text(p: Plan) -> str:
    """One line: answers planned, how they multiply, the time and the cost."""
    models = f"{len(p.models)} models" if len(p.models) > 1 else p.models[0]
    how = "measured here" if p.measured else "typical"
    if p.unpriced:
        cost = f"cost unknown for {', '.join(p.unpriced)}"
    elif p.cost > 0:
        cost = f"up to about ${p.cost:.4f}" if p.cost < 0.01 else f"up to about ${p.cost:.2f}"
    else:
        cost = "free"
    return (f"**{p.answers} answers** ({counted(p.cases, 'case')} × {counted(p.runs, 'run')} "
            f"× 2 arms on {models}) · "
            f"**{duration(p.seconds)}** ({how}) · {cost}")
