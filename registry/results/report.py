"""Summaries of a run per model: pass rates, lift and its verdict, tokens, dollars, cases.

Every figure comes from `stats.table` over the run's rows, grouped by model: the leaderboard,
`info`, the cards and the Space show the same numbers for the same rows.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, fields, is_dataclass
from operator import attrgetter
from typing import Any

import numpy as np

from registry.results import stats
from registry.results.display import case_order
from registry.results.pairwise import PairwiseSummary, summarize_pairwise
from registry.results.runs import ResultRow, RunManifest
from registry.results.stats import (
    EXACT_TEST,
    INTERVAL_METHOD,
    LIFT_INTERVAL_METHOD,
    VERDICT_RULE,
    LiftStats,
    case_status,
)


@dataclass
class ArmTotals:
    """Token and dollar totals of one arm over its graded samples (transport errors apart)."""

    samples: int = 0
    errors: int = 0
    passes: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = 0.0
    cached: int = 0

    def mean_input(self) -> float:
        """Mean input tokens per graded sample."""
        return self.input_tokens / self.samples if self.samples else 0.0


@dataclass
class AgentArm:
    """Agent mode, one arm on one model: how the agent worked (graded samples only)."""

    protocols: list[str]  # "tools", "single-turn", "harness:<name>"
    samples: int
    mean_turns: float
    tool_calls: dict[str, int]  # total calls per tool
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    wall_s: float  # total agent wall time
    tokens_per_pass: float | None  # input + output tokens per passing sample
    stop_reasons: dict[str, int]


@dataclass
class Activation:
    """Whether the skill arm's agent read SKILL.md: recall on cases the skill applies to
    (`expect_skill`, the default) and false activations on those it does not."""

    expected: int
    activated: int
    recall: float | None
    unexpected: int
    false_activations: int
    false_rate: float | None


@dataclass
class Errors:
    """Samples lost to errors on one model, apart by cause, each with its first reason:
    `transport` (the model's call failed after retries), `check` (a check could not run) and
    `ungraded` (no error, but every check was skipped)."""

    transport: int = 0
    check: int = 0
    ungraded: int = 0
    first_transport: str | None = None
    first_check: str | None = None


def count_errors(rows: list[ResultRow]) -> Errors:
    """The `Errors` of `rows` (one model's), first reasons in row order."""
    errors = Errors()
    for row in rows:
        if not row.is_error:
            continue
        if row.error_kind == "check":
            errors.check += 1
            errors.first_check = errors.first_check or row.error
        elif row.error is not None:
            errors.transport += 1
            errors.first_transport = errors.first_transport or row.error
        else:
            errors.ungraded += 1
    return errors


@dataclass
class ModelSummary:
    """Everything a reader needs to judge a skill on one model."""

    model: str
    stats: LiftStats
    baseline: ArmTotals
    skill: ArmTotals
    skill_overhead_tokens: float
    cost_per_pass: float | None
    case_status: dict[str, dict[str, str]]
    non_discriminating: list[str]
    invocation_rate: float | None
    agent: dict[str, AgentArm] | None = None  # agent mode: per arm
    activation: Activation | None = None  # agent mode, tool-calling protocols only
    errors: Errors = field(default_factory=Errors)
    failed: bool = False  # every sample was lost to a transport or check error
    pairwise: PairwiseSummary | None = None  # pairwise judge checks: wins, ties, position bias
    methods: dict[str, str] = field(default_factory=lambda: {
        "arm_interval": INTERVAL_METHOD, "lift_interval": LIFT_INTERVAL_METHOD,
        "exact_test": EXACT_TEST, "verdict": VERDICT_RULE})

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form for `--json` and the Space (an infinite detectable lift is null)."""
        data = _as_dict(self)
        if data["stats"]["detectable"] == float("inf"):
            data["stats"]["detectable"] = None
        return data


_LEAVES = (str, int, float, type(None))


def _as_dict(value: Any) -> Any:
    """`dataclasses.asdict` for what a summary holds (dataclasses, dicts, lists, tuples and
    immutable values), without its deep copy of each value: every replay recomputes them."""
    if isinstance(value, _LEAVES):  # most of it: case statuses, check labels
        return value
    if is_dataclass(value):
        return {f.name: _as_dict(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, dict):  # a leaf is kept as it is without a call (case statuses)
        return {key: item if isinstance(item, _LEAVES) else _as_dict(item)
                for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)([item if isinstance(item, _LEAVES) else _as_dict(item)
                            for item in value])
    return value


def summarize(rows: list[ResultRow], manifest: RunManifest | None = None) -> list[ModelSummary]:
    """One summary per model, in the order models first appear in the rows; an adaptive run's
    (``manifest.design``) at the level its design stopped at (`sequential.reporting_alpha`)."""
    if not rows:
        return []
    models = list(dict.fromkeys(r.model for r in rows if r.model is not None))
    table = stats.table(_outcomes(rows, models), len(models), levels(manifest, rows, models))
    by_model: dict[str, list[ResultRow]] = defaultdict(list)
    for row in rows:
        by_model[row.model].append(row)
    return [_summarize_model(str(model), by_model[str(model)], table, i)
            for i, model in enumerate(models)]


def levels(manifest: RunManifest | None, rows: list[ResultRow], models: list[str]) -> np.ndarray:
    """Per model, the level its figures are reported at: `stats.ALPHA`, or an adaptive run's
    stopping look's (the design recomputed from the rows, as `hubskills verify` does)."""
    design = manifest.design if manifest is not None else None
    if manifest is None or not design or design.get("kind") != "adaptive":
        return np.full(len(models), stats.ALPHA)
    from registry.results.sequential import Design, history_of, reporting_alpha

    plan, cases = Design.from_record(design), manifest.case_ids
    return np.array([reporting_alpha(plan, history_of(cases, (
        (r.case_id, r.arm, r.repeat, None if r.is_error else r.passed)
        for r in rows if r.model == model))) for model in models])


def _outcomes(rows: list[ResultRow], models: list[str]) -> stats.Outcomes:
    """The engine's input for ``rows`` grouped by model, as `grouping.Rows.outcomes` builds it
    from a frame, but straight from the rows: summarizing a run needs no pandas (about a
    second of `hubskills eval`'s import time). An arm-caused error is a graded failure; any
    other error (transport or check), or no verdict, is out of denominators."""
    case_rank = {c: i for i, c in enumerate(sorted({r.case_id for r in rows
                                                    if r.case_id is not None}))}
    group = {m: i for i, m in enumerate(models)}
    used = [r for r in rows if r.arm in ("baseline", "skill") and r.case_id is not None
            and r.model is not None]
    by_arm = np.array([r.error_kind == "arm" for r in used], dtype=bool)
    graded = np.array([r.passed is not None and r.error is None for r in used],
                      dtype=bool) | by_arm
    passed = np.array([bool(r.passed) for r in used], dtype=bool) & graded & ~by_arm
    return stats.Outcomes(
        np.array([group[r.model] for r in used], dtype=np.int64),
        np.array([case_rank[r.case_id] for r in used], dtype=np.int64),
        np.array([r.arm == "skill" for r in used], dtype=np.int64), graded, passed, ~graded,
        np.array([r.input_tokens or 0 for r in used], dtype=float),
        np.array([r.output_tokens or 0 for r in used], dtype=float),
        np.array([np.nan if r.cost_usd is None else r.cost_usd for r in used], dtype=float))


def _totals(table: stats.Table, i: int, k: int, cached: int) -> ArmTotals:
    cost = float(table.cost[i, k])
    return ArmTotals(samples=int(table.samples[i, k]), errors=int(table.errors[i, k]),
                     passes=int(table.passes[i, k]), input_tokens=int(table.input_tokens[i, k]),
                     output_tokens=int(table.output_tokens[i, k]),
                     cost_usd=None if np.isnan(cost) else cost, cached=cached)


def _summarize_model(model: str, rows: list[ResultRow], table: stats.Table,
                     i: int) -> ModelSummary:
    # A case's verdicts in any order: its status reads only whether all or any passed.
    verdicts: dict[str, dict[str, list[bool | None]]] = {"baseline": {}, "skill": {}}
    cached = dict.fromkeys(verdicts, 0)  # graded samples answered from the cache, per arm
    loaded: list[bool] = []
    graded, errors = [], []  # each row asked once whether it is an error, here
    for row in rows:
        if row.is_error:
            verdicts[row.arm].setdefault(row.case_id, []).append(None)
            errors.append(row)
            continue
        verdicts[row.arm].setdefault(row.case_id, []).append(bool(row.passed))
        graded.append(row)
        cached[row.arm] += row.cached
        if row.arm == "skill" and row.skill_loaded is not None:
            loaded.append(row.skill_loaded)
    base, skill = (_totals(table, i, k, cached[arm])
                   for k, arm in enumerate(("baseline", "skill")))
    cost_per_pass = None
    if skill.cost_usd is not None and skill.passes:
        cost_per_pass = skill.cost_usd / skill.passes
    cases = sorted(set(verdicts["baseline"]) | set(verdicts["skill"]))
    return ModelSummary(
        model=model, stats=stats.lift_stats(table, i), baseline=base, skill=skill,
        skill_overhead_tokens=skill.mean_input() - base.mean_input(),
        cost_per_pass=cost_per_pass,
        case_status={c: {arm: case_status(verdicts[arm].get(c, [])) for arm in verdicts}
                     for c in cases},
        non_discriminating=_non_discriminating(graded),
        invocation_rate=sum(loaded) / len(loaded) if loaded else None,
        agent=agent_arms(rows) if any(r.mode == "agent" for r in rows) else None,
        activation=activation(graded), errors=count_errors(errors),
        failed=bool(rows) and len(errors) == len(rows) and all(r.error is not None
                                                               for r in errors),
        pairwise=summarize_pairwise(graded),
    )


def agent_arms(rows: list[ResultRow]) -> dict[str, AgentArm]:
    """Per arm: protocols, turns, tool calls by tool, tokens, dollars, wall time, tokens per
    passing sample and stop reasons, over the graded samples (transport errors apart)."""
    arms = {}
    for arm in ("baseline", "skill"):
        graded = [r for r in rows if r.arm == arm and not r.is_error]
        calls: dict[str, int] = defaultdict(int)
        stops: dict[str, int] = defaultdict(int)
        for row in graded:
            for tool, count in row.tool_counts().items():
                calls[tool] += count
            stops[row.stop_reason or "unknown"] += 1
        costs = [r.cost_usd for r in graded]
        passes = sum(bool(r.passed) for r in graded)
        tokens = sum(r.input_tokens + r.output_tokens for r in graded)
        arms[arm] = AgentArm(
            protocols=sorted({r.protocol or "unknown" for r in graded}), samples=len(graded),
            mean_turns=sum(r.turns or 0 for r in graded) / len(graded) if graded else 0.0,
            tool_calls=dict(sorted(calls.items())),
            input_tokens=sum(r.input_tokens for r in graded),
            output_tokens=sum(r.output_tokens for r in graded),
            cost_usd=None if any(c is None for c in costs)
            else float(sum(c for c in costs if c is not None)),
            wall_s=sum(r.wall_s or 0.0 for r in graded),
            tokens_per_pass=tokens / passes if passes else None,
            stop_reasons=dict(sorted(stops.items())))
    return arms


def activation(rows: list[ResultRow]) -> Activation | None:
    """Activation recall and false activations of the skill arm (None when not measured)."""
    measured = [r for r in rows if r.arm == "skill" and r.activated is not None
                and not r.is_error]
    if not measured:
        return None
    expected = [r for r in measured if r.expect_skill is not False]
    unexpected = [r for r in measured if r.expect_skill is False]
    hits, false = sum(bool(r.activated) for r in expected), sum(bool(r.activated)
                                                                 for r in unexpected)
    return Activation(expected=len(expected), activated=hits,
                      recall=hits / len(expected) if expected else None,
                      unexpected=len(unexpected), false_activations=false,
                      false_rate=false / len(unexpected) if unexpected else None)


def non_discriminating_checks(rows: list[ResultRow]) -> list[str]:
    """Checks that passed in both arms on every repeat: they cannot show lift."""
    return _non_discriminating([row for row in rows if not row.is_error])


def _non_discriminating(graded: list[ResultRow]) -> list[str]:
    """`non_discriminating_checks` of rows that are not errors."""
    seen: dict[tuple[str, int, str], dict[str, bool]] = {}  # per check: arm -> passed in all
    counted = set()  # (case, arm, verdicts): a repeat with the same verdicts adds nothing
    for row in graded:
        case_id, arm = row.case_id, row.arm
        key = (case_id, arm, tuple(map(_LABEL_PASSED, row.checks)))
        if key in counted:
            continue
        counted.add(key)
        for index, (label, passed) in enumerate(key[2]):
            arms = seen.get(check := (case_id, index, label))
            if arms is None:
                seen[check] = {arm: bool(passed)}
            elif arms.get(arm, True):  # once failed in an arm, failed in it
                arms[arm] = bool(passed)
    found = [key for key, arms in seen.items() if arms.get("baseline") and arms.get("skill")]
    order = {case_id: case_order(case_id) for case_id in {key[0] for key in found}}
    found.sort(key=lambda key: (order[key[0]], key[1]))  # stable: ties as first seen
    return [f"{case_id}: {label}" for case_id, _, label in found]


_LABEL_PASSED = attrgetter("label", "passed")


def per_case_table(rows: list[ResultRow], model: str) -> list[dict[str, Any]]:
    """Per case: pass counts per arm and the first failing reason with the skill."""
    table: dict[str, dict[str, Any]] = {}
    for row in sorted(rows, key=lambda r: (case_order(r.case_id), r.arm, r.repeat)):
        if row.model != model:
            continue
        entry = table.setdefault(row.case_id, {"case": row.case_id, "baseline": [], "skill": []})
        entry[row.arm].append(None if row.is_error else bool(row.passed))
        if row.arm == "skill" and not row.passed and "why" not in entry:
            failing = [c.reason for c in row.checks if c.passed is False]
            entry["why"] = row.error or (failing[0] if failing else "")
    for entry in table.values():
        entry.setdefault("why", "")
        for arm in ("baseline", "skill"):
            entry[f"{arm}_status"] = case_status(entry[arm])
    return list(table.values())
