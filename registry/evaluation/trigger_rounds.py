"""The adaptive design in a trigger run (and `tune`'s): rounds that `results.sequential_rates`
plans, as `adaptive` does for A/B runs.

Each model is its own figures, so each has its own plan. A round: the design is asked, from the
outcomes so far (`TriggerEvaluator.history`: per model and query, whether it should trigger and
which sessions opened the skill), which (query, run) sessions come next or whether the model's
figures are settled; every model's next sessions are asked concurrently; their outcomes join
the history, until every plan stops. Rows record their round, the manifest the design
(`RunManifest.design`) and each model's stop (`design_stops`), so `hubskills verify`
recomputes every decision (`verify.trigger_design`). An errored session is an outcome of the
design (out of the denominators), so a resumed run keeps it and asks only what has no row.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any, Protocol

from registry.errors import HubskillsError
from registry.evaluation.config import EvalConfig

if TYPE_CHECKING:
    from registry.format.triggers import TriggerQuery
    from registry.providers import Model
    from registry.results.runs import ResultRow
    from registry.results.sequential_rates import RateDesign, RoundPlan

UNDECIDED = "figures not yet settled"
RoundLine = Callable[[str], None]
Item = tuple["Model", "TriggerQuery", int, "int | None"]  # (model, query, repeat, round)


class Rounds(Protocol):
    """What the rounds use of the running `trigger.TriggerEvaluator` (which imports this)."""

    models: list[Model]
    design: RateDesign | None
    history: dict[str, dict[str, tuple[bool, list[bool | None]]]]
    design_stops: dict[str, dict[str, Any]]


def make_design(config: EvalConfig, n_queries: int, recorded: dict[str, Any] | None = None,
                *, command: str = "hubskills eval SKILL --mode trigger") -> RateDesign | None:
    """The design `config` asks for (a resumed run's: `recorded`), checked; None for the fixed
    plan with no parameters (today's run). "auto" is adaptive when the suite can settle
    (`sequential_rates.default_kind`).

    Raises:
        HubskillsError: a parameter out of range or unknown, or a `config.design` that is not
            the resumed run's, before any call.
    """
    if recorded is not None:
        from registry.evaluation.adaptive import resumed_design

        kept = resumed_design(config, recorded, command)
    else:
        kind = config.design or "fixed"
        if kind == "auto":
            from registry.results.sequential_rates import default_kind

            settle = config.design_options.get("settle_after")
            kind = default_kind(n_queries, config.runs,
                                settle if isinstance(settle, int) else None)
        kept = {"kind": kind, **config.design_options}
    kept["runs"] = config.runs
    if kept == {"kind": "fixed", "runs": config.runs}:
        return None
    from registry.results.sequential_rates import RateDesign, validate

    try:
        design = RateDesign.from_dict(kept)
        validate(design, n_queries)
    except (TypeError, ValueError) as err:  # a parameter of the wrong type
        raise HubskillsError(f"invalid trigger design: {err}", hint=f"{command} --help"
                             ) from None
    return design


def history_of(models: Iterable[str], queries: list[TriggerQuery],
               rows: Iterable[ResultRow]) -> dict[str, dict[str, tuple[bool, list]]]:
    """Each model's history for `sequential_rates.plan_round` from a run's rows."""
    from registry.results.sequential_rates import history_of as one

    kinds = {q.id: q.should_trigger for q in queries}
    rows = list(rows)
    return {model: one(kinds, [(r.case_id, r.repeat, None if r.is_error else bool(r.activated))
                               for r in rows if r.model == model]) for model in models}


def round_line(plans: dict[str, RoundPlan]) -> str:
    """`round 2 of 3 · 14 queries settled · figures not yet settled`, per model."""
    parts = []
    for model, plan in plans.items():
        said = f"round {plan.round} of {plan.rounds} · {plan.settled} quer" \
               f"{'y' if plan.settled == 1 else 'ies'} settled · " \
               + (f"stopped: {plan.reason}" if plan.stop else UNDECIDED)
        parts.append(f"{model}: {said}" if len(plans) > 1 else said)
    return "; ".join(parts)


async def run_rounds(ev: Rounds, queries: list[TriggerQuery],
                     asked: Callable[[list[Item]], Awaitable[bool]],
                     on_round: RoundLine | None = None) -> bool:
    """Ask round after round until every model's plan stops (True), or a round was cut short
    (False: a stop or the cost cap)."""
    from registry.results.sequential_rates import plan_round

    design = ev.design
    assert design is not None  # rounds are an adaptive design's
    by_id = {q.id: q for q in queries}
    for model in ev.models:
        ev.history.setdefault(model.ref, {q.id: (q.should_trigger, []) for q in queries})
    while True:
        plans: dict[str, RoundPlan] = {}
        for model in ev.models:
            if model.ref not in ev.design_stops:
                plan = plan_round(design, ev.history[model.ref])
                plans[model.ref] = plan
                if plan.stop:
                    ev.design_stops[model.ref] = {"round": plan.round, "reason": plan.reason,
                                                  "settled": plan.settled}
        if on_round and plans:
            on_round(round_line(plans))
        live = [(model, p) for model in ev.models
                if (p := plans.get(model.ref)) is not None and not p.stop]
        items: list[Item] = [
            (model, by_id[qid], run, p.round) for model, p in live
            for qid, run in p.samples if len(ev.history[model.ref][qid][1]) <= run]
        if not items:
            return True
        if not await asked(items):
            return False


def reporting_alphas(manifest: Any, rows: list[ResultRow]) -> dict[str, float]:
    """Per model, the level its figures are reported at: an adaptive run's stopping look's
    (`sequential_rates.reporting`, recomputed from the rows), else none (95%)."""
    return alphas_of(getattr(manifest, "design", None) or {}, list(manifest.case_ids),
                     list(manifest.models), rows)


def alphas_of(design: dict[str, Any], case_ids: list[str], models: list[str],
              rows: list[ResultRow]) -> dict[str, float]:
    """`reporting_alphas` from a design record, the run's query ids and models, and its rows
    (each query's class read from its rows: a query never asked adds nothing)."""
    if design.get("kind") != "adaptive":
        return {}
    from registry.results.sequential_rates import RateDesign, reporting
    from registry.results.sequential_rates import history_of as one

    kinds = {row.case_id: bool(row.expect_skill) for row in rows}
    known = {q: kinds.get(q, True) for q in (case_ids or list(kinds))}
    found = {}
    for model in dict.fromkeys([*models, *(r.model for r in rows)]):
        mine = [(r.case_id, r.repeat, None if r.is_error else bool(r.activated))
                for r in rows if r.model == model]
        try:
            found[model] = reporting(RateDesign.from_dict(design), one(known, mine))[0]
        except (HubskillsError, TypeError, ValueError):
            continue
    return found
