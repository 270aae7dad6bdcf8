"""The adaptive design in the engine: a run proceeds in rounds that `results.sequential` plans.

Each model is its own comparison (its own verdict), so each model has its own plan. A round:
the design is asked, from the outcomes so far (`history`), which (case, run) samples come
next, in both arms, or whether the model's comparison is decided; every model's next samples
are then asked concurrently, exactly as a fixed run asks all of its samples at once; their
outcomes join the history, and the design is asked again, until every model's plan stops.
The cap is the fixed design's plan (`runs` per case), so an adaptive run never asks more.

A row records the round it was asked in (`ResultRow.round`); the manifest records the design
(`RunManifest.design`) and, per model, where the plan stopped (`RunManifest.design_stops`:
round, reason, verdict, cases settled), so `hubskills verify` can recompute every decision.
An errored sample is an outcome of the design (None: out of both arms' denominators): a
resumed adaptive run replays the plan from its rows and asks only the samples with no row,
so its rows stay those its design asked. A fixed design is today's run: one round, every
sample, and its rows record no round.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any, Protocol, cast

from registry.errors import HubskillsError
from registry.evaluation.arms import build_arm
from registry.evaluation.cache import completion_key, message_dict
from registry.evaluation.config import EvalConfig
from registry.providers import Usage, cost
from registry.results.runs import Arm, ResultRow, RunManifest

if TYPE_CHECKING:  # `results.sequential` (numpy, the statistics) loads when a design is made
    from registry.evaluation.arms import ArmPlan, Mode
    from registry.evaluation.cache import ResponseCache
    from registry.format.skill import Skill
    from registry.format.suite import Suite
    from registry.providers import Model
    from registry.results.sequential import Design, RoundPlan

History = dict[str, dict[str, dict[str, list[bool | None]]]]  # model -> case -> arm -> outcomes
RoundLine = Callable[[str], None]
Sample = tuple[Any, Arm, int, int]  # (model, arm, case index, run index), as `Evaluator.work`
UNDECIDED = "verdict not yet decided"
ARMS: tuple[Arm, ...] = ("baseline", "skill")  # `results.sequential.ARMS`: the history's order


class Evaluator(Protocol):
    """What the rounds use of the running `engine.Evaluator` (which imports this module)."""

    config: EvalConfig
    skill: Skill
    dependencies: tuple[Skill, ...]
    suite: Suite
    models: list[Model]
    cache: ResponseCache
    design: Design | None
    history: History
    design_stops: dict[str, dict[str, Any]]

    @property
    def adaptive(self) -> bool:
        """Whether the design is adaptive."""
        ...


def make_design(config: EvalConfig, n_cases: int, recorded: dict[str, Any] | None = None,
                *, command: str = "hubskills eval") -> Design | None:
    """The design `config` asks for (a resumed run's: `recorded`, its manifest's), checked;
    None for a fixed design with no parameters (today's run: the statistics are not loaded).
    "auto" (what `hubskills eval` asks for) is adaptive for a suite that can reach a verdict
    (`MIN_CASES` cases or more) asked more than one run per case, else fixed: a smaller suite
    never gets a verdict, so rounds could only stop it for "no effect" after its first run
    while its repeats (per-case pass fractions) are what it is run for; and with one run per
    case the rounds are batches of cases, so a stop would leave cases never asked (no figure
    for them) to save at most a few batches.

    Raises:
        HubskillsError: a parameter out of range or unknown, or a `config.design` that is not
            the resumed run's, before any call.
    """
    if recorded is not None:
        kept = resumed_design(config, recorded, command)
    else:
        kept = {"kind": _kind(config.design, n_cases, config.runs), **config.design_options}
    kept["runs"] = config.runs
    if kept == {"kind": "fixed", "runs": config.runs}:
        return None
    from registry.results.sequential import Design, validate_design

    try:
        design = Design.from_dict(kept) if recorded is None else Design.from_record(kept)
        validate_design(design, n_cases)
    except (TypeError, ValueError) as err:  # a parameter of the wrong type
        raise HubskillsError(f"invalid evaluation design: {err}", hint="hubskills eval --help"
                             ) from None
    return design


def _kind(asked: str | None, n_cases: int, runs: int) -> str:
    if asked != "auto":
        return asked or "fixed"
    from registry.results.verdicts import MIN_CASES

    return "adaptive" if n_cases >= MIN_CASES and runs > 1 else "fixed"


def resumed_design(config: EvalConfig, recorded: dict[str, Any], command: str) -> dict[str, Any]:
    """A resumed run's recorded design, when `config` asks for no other (a kind or a parameter
    that differs is refused before any call: a resumed run continues the same design, chat,
    agent and trigger runs alike)."""
    kind = recorded.get("kind") if config.design in (None, "auto") else config.design
    asked = {"kind": kind, **config.design_options}
    if any(recorded.get(k) != v for k, v in asked.items()):
        raise HubskillsError(
            f"this run was started with the {recorded.get('kind')} design "
            f"({_params(recorded)}), and a resumed run continues the same design",
            hint=f"{command} --design {recorded.get('kind')}  # or start a new run")
    return dict(recorded)


def _params(design: dict[str, Any]) -> str:
    return ", ".join(f"{k} {v}" for k, v in design.items() if k != "kind")


def history_of(models: Iterable[str], case_ids: Iterable[str],
               rows: Iterable[ResultRow]) -> History:
    """Each model's outcomes so far per case and arm, in run order (every case present, empty
    before it is asked; a run's outcomes up to its first missing sample)."""
    found: dict[tuple[str, str, str], dict[int, bool | None]] = {}
    for row in rows:
        found.setdefault((row.model, row.case_id, row.arm), {})[row.repeat] = \
            None if row.is_error else row.passed
    history: History = {}
    for model in models:
        history[model] = {}
        for case in case_ids:
            history[model][case] = {}
            for arm in ARMS:
                runs = found.get((model, case, arm), {})
                cut = next(r for r in range(len(runs) + 1) if r not in runs)  # the first gap
                history[model][case][arm] = [runs[r] for r in range(cut)]
    return history


def round_line(plans: dict[str, RoundPlan]) -> str:
    """`round 3 · 14 cases settled · verdict not yet decided`, for every model's plan (the
    models named when there are several)."""
    parts = []
    for model, plan in plans.items():
        said = f"round {plan.round} of {plan.rounds} · {plan.settled} case" \
               f"{'' if plan.settled == 1 else 's'} settled · " \
               + (f"stopped: {plan.reason}" if plan.stop else UNDECIDED)
        parts.append(f"{model}: {said}" if len(plans) > 1 else said)
    return "; ".join(parts)


async def run_rounds(ev: Evaluator,
                     asked: Callable[[list[tuple[Sample, int]]], Awaitable[bool]],
                     on_round: RoundLine | None) -> bool:
    """Ask round after round until every model's plan stops (True), or a round was cut short
    (False: a stop, or the cost cap; `ev` says which). `asked(items)` asks a round's
    (sample, round) items together, each outcome joining `ev.history`, and says whether all
    finished."""
    from registry.results.sequential import plan_round

    design = ev.design
    assert design is not None  # rounds are an adaptive design's
    while True:
        plans: dict[str, RoundPlan] = {}
        for model in ev.models:
            if model.ref not in ev.design_stops:
                plan = plan_round(design, ev.history[model.ref])
                plans[model.ref] = plan
                if plan.stop:
                    ev.design_stops[model.ref] = {"round": plan.round, "reason": plan.reason,
                                                  "verdict": plan.verdict,
                                                  "settled": plan.settled}
        if on_round and plans:
            on_round(round_line(plans))
        items = _round_items(ev, plans)
        if not items:
            return True
        if not await asked(items):
            return False


def _round_items(ev: Evaluator, plans: dict[str, RoundPlan]) -> list[tuple[Sample, int]]:
    """The samples of the models' round plans that have no outcome yet, with their round."""
    index = {case.id: i for i, case in enumerate(ev.suite.cases)}
    items = []
    for model in ev.models:
        plan = plans.get(model.ref)
        if plan is None or plan.stop:
            continue
        for case_id, run in plan.samples:
            for arm in ARMS:
                if len(ev.history[model.ref][case_id][arm]) <= run:
                    items.append(((model, arm, index[case_id], run), plan.round))
    return items


def round_cost(ev: Evaluator) -> tuple[float | None, int]:
    """What the next round is estimated to cost, and its answers: each sample's first call at
    the catalogue price (the prompt's estimated tokens, `max_tokens` of answer; a call the
    cache answers costs nothing). None when a price is unknown."""
    from registry.format.skill import estimate_tokens
    from registry.results.sequential import plan_round

    design = ev.design
    assert design is not None  # rounds are an adaptive design's
    plans = {m.ref: plan_round(design, ev.history[m.ref]) for m in ev.models}
    items = _round_items(ev, plans)
    total = 0.0
    for (model, arm, index, run), _ in items:
        if in_cache(ev, (model, arm, index, run)):
            continue
        plan = _arm(ev, arm, index)
        prompt = sum(estimate_tokens(m.content) for m in plan.messages)
        price = cost(model.ref, Usage(input_tokens=prompt,
                                      output_tokens=ev.config.max_tokens))
        if price is None:
            return None, len(items)
        total += price
    return total, len(items)


def _arm(ev: Evaluator, arm: Arm, index: int) -> ArmPlan:
    """The arm's messages for case `index`, as a chat sample asks them (an agent's first turn
    is planned inline; trigger runs plan their own, `trigger_rounds`)."""
    mode = "inline" if ev.config.mode == "agent" else ev.config.mode
    return build_arm(arm, ev.suite.cases[index], ev.skill, mode=cast("Mode", mode),
                     placement=ev.config.placement, dependencies=ev.dependencies)


def in_cache(ev: Evaluator, sample: Sample) -> bool:
    """Whether the response cache holds `sample`'s first call, so asking it costs nothing
    (never in agent mode, whose turns are not known before it works, nor with `--no-cache`)."""
    model, arm, index, run = sample
    if not ev.config.use_cache or ev.config.mode == "agent":
        return False
    plan = _arm(ev, arm, index)
    return ev.cache.get(completion_key(
        model=model.ref, endpoint=model.provider.endpoint,
        messages=[message_dict(m) for m in plan.messages], tools=plan.tools,
        temperature=ev.config.temperature, max_tokens=ev.config.max_tokens, seed=run,
        repeat=run)) is not None


def check_round_budget(ev: Evaluator, command: str) -> None:
    """Before any call: refuse a `--max-cost` below the next round's estimated cost (an
    adaptive run that cannot finish one round decides nothing).

    Raises:
        HubskillsError: the cap is below that estimate.
    """
    if not ev.adaptive or ev.config.max_cost is None:
        return
    estimate, answers = round_cost(ev)
    if estimate is not None and estimate > ev.config.max_cost:
        raise HubskillsError(
            f"--max-cost {ev.config.max_cost:g} is below the ${estimate:.4f} its next round "
            f"is estimated to cost ({answers} answers): the design could not decide anything",
            hint=f"{command} --max-cost {_round_up(estimate)}  # or --design fixed, which "
                 "stops cleanly at the cap")


def _round_up(usd: float) -> str:
    for step in (0.01, 0.1, 1, 10, 100):
        if usd < step * 100:
            return f"{(int(usd / step) + 1) * step:.2f}"
    return f"{int(usd) + 1}"


def saved_line(manifest: RunManifest, rows: list[ResultRow]) -> str | None:
    """What an adaptive run saved: `stopped at 38% of the planned answers: helps, decided at
    round 4; $1.20 of ~$3.10` (the fixed plan's cost at this run's cost per answer); None for
    a fixed run."""
    if not manifest.design or manifest.design.get("kind") != "adaptive":
        return None
    planned = manifest.samples_planned or 1
    stops = manifest.design_stops or {}
    why = "; ".join(f"{model}: {s['reason']}" if len(manifest.models) > 1 else str(s["reason"])
                    for model, s in stops.items()) or UNDECIDED
    line = f"stopped at {len(rows) / planned:.0%} of the planned answers " \
           f"({len(rows)} of {planned}): {why}"
    costs = [r.cost_usd for r in rows]
    if rows and all(c is not None for c in costs):
        spent = sum(c for c in costs if c is not None)  # all of them (above)
        if spent > 0:
            line += f"; ${spent:.2f} of ~${spent / len(rows) * planned:.2f} (the fixed plan)"
    return line
