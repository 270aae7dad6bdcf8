"""Trigger eval figures per model: recall, false triggers, accuracy, errors, what was opened.

Every rate comes from the one statistics engine (`stats.table`): the unit is the query, a
query's value its share of graded repeats, each rate the mean over queries with the Wilson
interval over queries (`stats.INTERVAL_METHOD`). Recall is over the should-trigger queries
(triggered = this skill's SKILL.md was read), the false-trigger rate over the should-nots,
accuracy over all (the decision was right). Error rows (a session that failed) are counted
apart and are in no denominator.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from registry.results import stats
from registry.results.formulas import ALPHA
from registry.results.runs import ResultRow

INTERVAL = stats.INTERVAL_METHOD


@dataclass(frozen=True)
class Rate:
    """A share over ``queries`` queries (``samples`` graded sessions) inside [lo, hi]; None
    fields when no query of that kind was graded."""

    rate: float | None
    lo: float | None
    hi: float | None
    queries: int
    samples: int


@dataclass(frozen=True)
class TriggerSummary:
    """One model's trigger figures; ``opened_instead`` counts, over should-trigger sessions
    that missed, which distractor was read instead (``"(none)"``: no skill was read)."""

    model: str
    recall: Rate
    false_triggers: Rate
    accuracy: Rate
    errors: int
    opened_instead: dict[str, int]
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    method: str = INTERVAL
    level: float | None = None  # an adaptive run's intervals' level (its stopping look's)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (``level`` only when it is not 95%: a fixed run's figures as before)."""
        data = asdict(self)
        if data["level"] is None:
            del data["level"]
        return data


def _value(row: ResultRow, kind: str) -> bool | None:
    if row.is_error:
        return None
    return bool(row.passed) if kind == "accuracy" else bool(row.activated)


def rates(rows: list[ResultRow], groups: list[tuple[str, str]],
          alphas: Mapping[str, float] | None = None) -> list[Rate]:
    """One `Rate` per (model, kind) in `groups`, kind being "recall", "false_triggers" or
    "accuracy", all from one `stats.table` call; a model in `alphas` (an adaptive run's, at
    its stopping look) has its intervals at that level (`sequential_rates.interval`)."""
    wanted = {"recall": (True,), "false_triggers": (False,), "accuracy": (True, False)}
    mappings: list[dict[str, tuple[list[bool | None], list[bool | None]]]] = []
    for model, kind in groups:
        cases: dict[str, tuple[list[bool | None], list[bool | None]]] = {}
        for row in rows:
            if row.model == model and bool(row.expect_skill) in wanted[kind]:
                cases.setdefault(row.case_id, ([], []))[1].append(_value(row, kind))
        mappings.append(cases)
    table = stats.table(stats.outcomes(mappings), len(groups))
    found = []
    for i in range(len(groups)):
        n = int(table.cases[i, 1])
        rate, lo, hi = (float(a[i, 1]) if n else None
                        for a in (table.rate, table.rate_lo, table.rate_hi))
        alpha = (alphas or {}).get(groups[i][0])
        if n and alpha is not None and alpha != ALPHA:
            from registry.results.sequential_rates import interval

            los, his = interval(table.rate[i:i + 1, 1], table.cases[i:i + 1, 1], alpha)
            lo, hi = float(los[0]), float(his[0])
        found.append(Rate(rate, lo, hi, queries=n, samples=int(table.samples[i, 1])))
    return found


def summarize_triggers(rows: list[ResultRow],
                       alphas: Mapping[str, float] | None = None) -> list[TriggerSummary]:
    """One summary per model, in the order models first appear in the rows; a model in
    `alphas` has its intervals at that level (an adaptive run's: `trigger_rounds.
    reporting_alphas`), and says so in `level`."""
    models = list(dict.fromkeys(r.model for r in rows))
    kinds = ("recall", "false_triggers", "accuracy")
    found = rates(rows, [(m, k) for m in models for k in kinds], alphas)
    summaries = []
    for index, model in enumerate(models):
        mine = [r for r in rows if r.model == model]
        graded = [r for r in mine if not r.is_error]
        missed = Counter(r.opened_skill or "(none)" for r in graded
                         if r.expect_skill and not r.activated)
        costs = [r.cost_usd for r in graded]
        recall, false_triggers, accuracy = found[3 * index: 3 * index + 3]
        summaries.append(TriggerSummary(
            model, recall, false_triggers, accuracy, errors=len(mine) - len(graded),
            opened_instead=dict(missed.most_common()),
            input_tokens=sum(r.input_tokens for r in graded),
            output_tokens=sum(r.output_tokens for r in graded),
            cost_usd=None if any(c is None for c in costs) else sum(c or 0.0 for c in costs),
            level=1 - alphas[model] if alphas and model in alphas else None))
    return summaries
