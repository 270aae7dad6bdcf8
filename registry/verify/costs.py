"""The dollars a run claims, held against what its tokens must have cost.

A row's `cost_usd` is the run's claim; a forged near-zero cost would otherwise be shown under
`replayed` (red-team hole 8). The replay cannot know the exact bill (cache reads and writes are
not stored per row, and a judge's calls add to it), but it knows the least the row's stored
tokens can cost at the catalogue's price: every prompt token at the cheapest rate the model
bills (a cache read) and every output token at the output rate. A claim under half of that
floor is a difference (half: a price raised since the run never makes a genuine run a
mismatch). Rows of models without a known price, cached answers and errors are left alone.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

from registry.providers.pricing import price_for
from registry.results.runs import ResultRow
from registry.verify.regrade import Difference

#: A claim below this share of the floor is a difference (prices may rise after a run).
SLACK = 0.5


def least_cost(row: ResultRow) -> float | None:
    """The least the row's tokens can cost at the catalogue's price (None: price unknown)."""
    rates = _least_rates(row.model)
    return None if rates is None else _floor(row, rates)


def _least_rates(model: str) -> tuple[float, float] | None:
    """Dollars per million prompt tokens (the cheapest rate billed) and output tokens."""
    price = price_for(model)
    if price is None:
        return None
    return min(price.input, price.cache_read or price.input), price.output


def _floor(row: ResultRow, rates: tuple[float, float]) -> float:
    return (row.input_tokens * rates[0] + row.output_tokens * rates[1]) / 1_000_000


def cost_differences(rows: Iterable[ResultRow],
                     label: Callable[[ResultRow], str]) -> list[Difference]:
    """A `Difference` for each row whose claimed cost is under what its tokens must cost;
    `label(row)` names the sample."""
    found = []
    rates: dict[str, tuple[float, float] | None] = {}  # a run's thousand rows share a model or few
    for row in rows:
        cost = row.cost_usd
        if row.input_tokens < 0 or row.output_tokens < 0 or (
                cost is not None and not math.isfinite(cost)):
            found.append(Difference(label(row), "tokens or cost_usd",  # no genuine row has one
                                    (row.input_tokens, row.output_tokens, cost),
                                    "finite, not negative"))
            continue
        if row.model not in rates:
            rates[row.model] = _least_rates(row.model)
        model_rates = rates[row.model]
        # A free or unpriced model's rows have no floor (asked first: it needs no property).
        if model_rates is None or model_rates == (0, 0) or row.cached or row.is_error:
            continue
        floor = _floor(row, model_rates)
        if floor == 0:
            continue
        if row.cost_usd is None or row.cost_usd < floor * SLACK:
            found.append(Difference(label(row), "cost_usd", row.cost_usd,
                                    f">= {floor * SLACK:.6g} for its tokens"))
    return found
