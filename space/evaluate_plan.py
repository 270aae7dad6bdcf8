"""How big an evaluation is before it starts, how long and how much it will take, and the cap
on what an anonymous visitor may start (no Gradio here).

The Evaluate tab shows the estimate under the form before a visitor starts a run, and again
as the run's first progress line; while it runs, the progress line gives the time left at the
run's own pace. Time per answer is what this Space measured for the model in its earlier runs
(`state.AnswerTimes`), or before any, the typical figure `registry.evaluation.estimate` gives
(which also counts the cost, and which `hubskills eval` prints too).

On a Space an anonymous visitor may start at most `evaluate_jobs.ANONYMOUS_MAX_ANSWERS` answers
(about three minutes of the embedded model at 512 tokens); a signed-in visitor up to
`MAX_HERE_ANSWERS` here and more as their own Jobs. Off a Space the owner runs what they like.
"""

from __future__ import annotations

from registry import Case, EvalConfig, Skill, estimate

from .evaluate_jobs import ANONYMOUS_MAX_ANSWERS, MAX_HERE_ANSWERS
from .messages import counted
from .state import SignInRequired, SpaceState, oauth_available

DEFAULT_CASES = 3  # the form's defaults: 3 cases x 1 run x 2 arms on the embedded model
DEFAULT_RUNS = 1


def seconds_per_answer(state: SpaceState, model: str, max_tokens: int) -> tuple[float, bool]:
    """Wall seconds per answer of `model` and whether this Space measured it."""
    return estimate.seconds_per_answer(model, max_tokens, state.answer_times)


def plan(state: SpaceState, skill: Skill, cases: list[Case], config: EvalConfig) -> estimate.Plan:
    """The size, time and cost of evaluating `skill` on `cases` as `config` asks, timed by
    what this Space measured."""
    return estimate.plan(skill, cases, config, state.answer_times)


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


duration = estimate.duration


def plan_text(p: estimate.Plan) -> str:
    """One line: answers planned, how they multiply, the time and the cost."""
    models = f"{len(p.models)} models" if len(p.models) > 1 else p.models[0]
    how = "measured here" if p.measured else "typical"
    return (f"**{p.answers} answers** ({counted(p.cases, 'case')} × {counted(p.runs, 'run')} "
            f"× 2 arms on {models}) · "
            f"**{estimate.duration(p.seconds)}** ({how}) · {estimate.cost_text(p)}")
