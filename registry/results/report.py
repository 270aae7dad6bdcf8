"""Summaries of a run per model: pass rates, lift and its verdict, tokens, dollars, cases.

Every figure comes from `stats.table` over the run's rows, grouped by model: the leaderboard,
`info`, the cards and the Space show the same numbers for the same rows.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field, fields, is_dataclass
from itertools import chain, compress, repeat
from operator import attrgetter, eq, is_, is_not, itemgetter
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
    shown_status,
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
    if isinstance(value, dict):  # a leaf is kept as it is without a call (case statuses)
        return {key: item if isinstance(item, _LEAVES) else _as_dict(item)
                for key, item in value.items()}
    if is_dataclass(value):
        return {f.name: _as_dict(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, list | tuple):
        return type(value)([item if isinstance(item, _LEAVES) else _as_dict(item)
                            for item in value])
    return value


def summarize(rows: list[ResultRow], manifest: RunManifest | None = None) -> list[ModelSummary]:
    """One summary per model, in the order models first appear in the rows; an adaptive run's
    (``manifest.design``) at the level its design stopped at (`sequential.reporting_alpha`)."""
    if not rows:
        return []
    columns = _Columns(rows)
    models = columns.models
    table = stats.table(columns.outcomes(), len(models), levels(manifest, rows, models))
    return [_summarize_model(str(model), columns, table, i) for i, model in enumerate(models)]


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


#: What a summary reads of a row, from its `__dict__` (an attribute passes pydantic's hook).
_ROW_FIELDS = itemgetter("model", "case_id", "arm", "error_kind", "passed", "error",
                         "input_tokens", "output_tokens", "cost_usd", "cached", "skill_loaded",
                         "mode", "activated", "checks")
_STATUSES = ("error", "stable fail", "flaky", "stable pass")  # `case_status` by code


def _flags(test: Any, values: Any, against: Any, n: int) -> np.ndarray:  # no Python loop
    return np.fromiter(map(test, values, repeat(against)), dtype=bool, count=n)


class _Columns:
    """The rows' fields every figure of a summary reads, fetched once a row, as columns: an
    arm-caused error is graded (a failure); any other error, or no verdict, is not."""

    def __init__(self, rows: list[ResultRow]) -> None:
        columns = list(zip(*map(_ROW_FIELDS, map(vars, rows)), strict=True))
        if None in columns[0] or None in columns[1] or set(columns[2]) - {"baseline", "skill"}:
            keep = [m is not None and c is not None and a in ("baseline", "skill")
                    for m, c, a in zip(*columns[:3], strict=True)]  # rows no figure counts
            rows, columns = list(compress(rows, keep)), [(*compress(c, keep),) for c in columns]
        (model, case, arm, kind, passed, error, inputs, outputs, cost, cached, loaded, mode,
         activated, checks) = columns
        n = len(rows)
        self.rows, self.n = rows, n
        self.models = list(dict.fromkeys(model))
        self.case_ids = sorted(set(case))
        group = {m: i for i, m in enumerate(self.models)}
        rank = {c: i for i, c in enumerate(self.case_ids)}
        self.group = np.fromiter(map(group.__getitem__, model), dtype=np.int64, count=n)
        self.case = np.fromiter(map(rank.__getitem__, case), dtype=np.int64, count=n)
        self.skill = _flags(eq, arm, "skill", n)
        by_arm = _flags(eq, kind, "arm", n)
        # not `is_error`: a verdict and no error, or an error the arm caused
        self.graded = (_flags(is_not, passed, None, n) & _flags(is_, error, None, n)) | by_arm
        self.passed, self.by_arm = np.fromiter(map(bool, passed), dtype=bool, count=n), by_arm
        self.inputs, self.outputs = (np.array(
            column if None not in column else [x or 0 for x in column], dtype=float)
            for column in (inputs, outputs))
        self.cost = np.array(cost, dtype=float)  # an unknown price (None) is NaN
        self.cached = np.fromiter(map(bool, cached), dtype=bool, count=n)
        self.loaded, self.mode, self.activated = loaded, mode, activated
        self.case_id, self.arm, self.checks = case, arm, checks

    def outcomes(self) -> stats.Outcomes:
        """The engine's input, as `grouping.Rows.outcomes` builds it, with no pandas."""
        passed = self.passed & self.graded & ~self.by_arm
        return stats.Outcomes(self.group, self.case, self.skill.astype(np.int64), self.graded,
                              passed, ~self.graded, self.inputs, self.outputs, self.cost)


def _totals(table: stats.Table, i: int, k: int, cached: int) -> ArmTotals:
    cost = float(table.cost[i, k])
    return ArmTotals(samples=int(table.samples[i, k]), errors=int(table.errors[i, k]),
                     passes=int(table.passes[i, k]), input_tokens=int(table.input_tokens[i, k]),
                     output_tokens=int(table.output_tokens[i, k]),
                     cost_usd=None if np.isnan(cost) else cost, cached=cached)


def _case_statuses(columns: _Columns, mine: np.ndarray) -> dict[str, dict[str, str]]:
    """`case_status` of each case of one model's rows (``mine``) in each arm, by case id in
    sorted order: from counts of rows, graded rows and graded passes a (case, arm)."""
    index, graded, names = (2 * columns.case + columns.skill)[mine], columns.graded[mine], \
        columns.case_ids
    rows, marks, passes = (np.bincount(index, weights, minlength=2 * len(names)).reshape(-1, 2)
                           for weights in (None, graded, graded & columns.passed[mine]))
    codes = np.where(marks == 0, 0, np.where(passes == marks, 3, np.where(passes > 0, 2, 1)))
    present = np.flatnonzero(rows.sum(1) > 0)
    return {names[c]: {"baseline": _STATUSES[a], "skill": _STATUSES[b]}
            for c, a, b in zip(present.tolist(), codes[present, 0].tolist(),
                               codes[present, 1].tolist(), strict=True)}


def _summarize_model(model: str, columns: _Columns, table: stats.Table,
                     i: int) -> ModelSummary:
    single = len(columns.models) == 1
    mine = np.ones(columns.n, dtype=bool) if single else columns.group == i
    graded_mask, chosen = columns.graded & mine, mine.tolist()
    rows = columns.rows if single else list(compress(columns.rows, chosen))
    graded = list(compress(columns.rows, graded_mask.tolist()))
    errors = list(compress(columns.rows, (mine & ~columns.graded).tolist()))
    # graded samples answered from the cache, per arm
    cached = np.bincount(columns.skill[graded_mask & columns.cached].astype(np.int64),
                         minlength=2)
    base, skill = (_totals(table, i, k, int(cached[k])) for k in (0, 1))
    cost_per_pass = skill.cost_usd / skill.passes if skill.cost_usd is not None \
        and skill.passes else None
    # the skill arm's graded rows that say whether the skill was loaded
    asked = [loaded for loaded in compress(columns.loaded, (graded_mask & columns.skill).tolist())
             if loaded is not None]
    modes, activated = (column if single else (*compress(column, chosen),)
                        for column in (columns.mode, columns.activated))
    kept = graded_mask.tolist()
    verdicts = _distinct(compress(columns.case_id, kept), compress(columns.arm, kept),
                         compress(columns.checks, kept))
    return ModelSummary(
        model=model, stats=stats.lift_stats(table, i), baseline=base, skill=skill,
        skill_overhead_tokens=skill.mean_input() - base.mean_input(), cost_per_pass=cost_per_pass,
        case_status=_case_statuses(columns, mine), non_discriminating=_found(verdicts),
        invocation_rate=sum(asked) / len(asked) if asked else None,
        agent=agent_arms(rows) if "agent" in modes else None,
        activation=activation(graded) if any(a is not None for a in activated) else None,
        errors=count_errors(errors),  # `activation` asked only where a row measured it
        failed=bool(rows) and len(errors) == len(rows) and all(r.error is not None
                                                               for r in errors),
        pairwise=summarize_pairwise(graded) if "pairwise" in set(map(
            itemgetter(2), chain.from_iterable(map(itemgetter(2), verdicts)))) else None,
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
    graded = [row for row in rows if not row.is_error]
    return _found(_distinct(map(attrgetter("case_id"), graded), map(attrgetter("arm"), graded),
                            map(attrgetter("checks"), graded)))


_Verdicts = tuple[tuple[str, Any, str], ...]  # a row's checks: (label, passed, type) each
_VERDICT = itemgetter("label", "passed", "type")  # of a check's `__dict__` (`_ROW_FIELDS`)


def _distinct(cases: Iterable[str], arms: Iterable[str],
              checks: Iterable[list[Any]]) -> dict[tuple[str, str, _Verdicts], None]:
    """Rows' distinct (case, arm, check verdicts), in first-seen order (no Python loop)."""
    verdicts = map(tuple, map(map, repeat(_VERDICT), map(map, repeat(vars), checks)))
    return dict.fromkeys(zip(cases, arms, verdicts, strict=True))


def _found(distinct: dict[tuple[str, str, _Verdicts], None]) -> list[str]:
    """The checks (a case's index and label) that passed in both arms every time, from rows'
    distinct (case, arm, verdicts), by case (natural order) and index, ties as first seen."""
    by_case: dict[str, list[tuple[int, str, _Verdicts]]] = {}
    for position, (case_id, arm, verdicts) in enumerate(distinct):
        by_case.setdefault(case_id, []).append((position, arm, verdicts))
    found: list[tuple[str, int, str, int]] = []  # case, index, label, first seen
    for case_id, keys in by_case.items():
        if len(keys) == 2 and keys[0][1] != keys[1][1]:  # one set of verdicts in each arm
            (first, _, one), (_, _, other) = keys
            found += [(case_id, index, a[0], first)
                      for index, (a, b) in enumerate(zip(one, other, strict=False))
                      if a[1] and b[1] and a[0] == b[0]]
            continue
        seen: dict[tuple[int, str], tuple[int, dict[str, bool]]] = {}  # -> first seen, arms
        for position, arm, verdicts in keys:
            for index, (label, passed, _) in enumerate(verdicts):
                entry = seen.get((index, label))
                if entry is None:
                    seen[index, label] = position, {arm: bool(passed)}
                elif entry[1].get(arm, True):  # once failed in an arm, failed in it
                    entry[1][arm] = bool(passed)
        found += [(case_id, index, label, position)
                  for (index, label), (position, arms) in seen.items()
                  if arms.get("baseline") and arms.get("skill")]
    order = {case_id: case_order(case_id) for case_id in {key[0] for key in found}}
    found.sort(key=lambda key: (order[key[0]], key[1], key[3]))
    return [f"{case_id}: {label}" for case_id, _, label, _ in found]


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
            entry[f"{arm}_status"] = shown_status(entry[arm])
    return list(table.values())
