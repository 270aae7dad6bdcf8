"""Dollar cost of a completion, from a dated price table.

Prices are USD per million tokens, standard tier (no batch discount, no priority surcharge),
as published by Anthropic (platform.claude.com/docs/en/about-claude/pricing) and OpenAI
(developers.openai.com/api/docs/pricing), checked on `PRICES_AS_OF`. Anthropic's cache-write
price is the 5-minute one. A model missing from the table has an *unknown* cost (None), never
$0; models that run on your machine (`local/`, `embedded/`) cost exactly 0.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from registry.providers.base import Usage

PRICES_AS_OF = "2026-11-01"
FREE_PROVIDERS = frozenset({"local", "embedded"})


@dataclass(frozen=True)
class Price:
    """USD per million tokens. `long_prompt` applies to a whole request (output included)
    whose prompt exceeds `long_prompt_threshold` tokens, as Anthropic and OpenAI bill it."""

    input: float
    output: float
    cache_read: float
    cache_write: float
    long_prompt: Price | None = None
    long_prompt_threshold: int = 0

    def for_prompt(self, prompt_tokens: int) -> Price:
        """The price that applies to a request with this many prompt tokens."""
        if self.long_prompt is not None and prompt_tokens > self.long_prompt_threshold:
            return self.long_prompt
        return self


FREE = Price(0.0, 0.0, 0.0, 0.0)


def _p(i: float, o: float, cr: float, cw: float | None = None) -> Price:
    return Price(i, o, cr, i if cw is None else cw)


ANTHROPIC: dict[str, Price] = {
    "claude-fable-5-1": _p(10, 50, 0.25, 12.50),
    "claude-mythos-5-1": _p(10, 50, 0.25, 12.50),
    "claude-fable-5": _p(10, 50, 1.00, 12.50),
    "claude-mythos-5": _p(10, 50, 1.00, 12.50),
    "claude-opus-5-5": _p(4, 20, 0.20, 5.00),
    "claude-opus-5": _p(5, 25, 0.50, 6.25),
    "claude-opus-4-8": _p(5, 25, 0.50, 6.25),
    "claude-opus-4-7": _p(5, 25, 0.50, 6.25),
    "claude-opus-4-6": _p(5, 25, 0.50, 6.25),
    "claude-opus-4-5": _p(5, 25, 0.50, 6.25),
    "claude-opus-4-1": _p(15, 75, 1.50, 18.75),
    "claude-opus-4": _p(15, 75, 1.50, 18.75),
    "claude-sonnet-5-5": _p(2, 10, 0.10, 2.50),  # cache reads cut to $0.10 on 2026-10-07
    "claude-sonnet-5": _p(2, 10, 0.20, 2.50),
    "claude-sonnet-4-6": _p(3, 15, 0.30, 3.75),
    "claude-sonnet-4-5": _p(3, 15, 0.30, 3.75),
    "claude-sonnet-4": _p(3, 15, 0.30, 3.75),
    "claude-haiku-5-5": Price(0.10, 0.50, 0.01, 0.125, long_prompt_threshold=100_000,
                              long_prompt=_p(0.50, 2.50, 0.05, 0.625)),
    "claude-haiku-4-5": _p(1, 5, 0.10, 1.25),
    "claude-3-5-haiku": _p(0.80, 4, 0.08, 1.00),
}

OPENAI: dict[str, Price] = {
    "gpt-6-astra": _p(10, 50, 1.00, 12.50),
    "gpt-6.1-sol": Price(2, 10, 0.10, 2.50, long_prompt_threshold=272_000,
                         long_prompt=_p(4, 15, 0.20, 5.00)),
    "gpt-6-sol": _p(2, 10, 0.20, 2.50),
    "gpt-6-luna": _p(0.10, 0.50, 0.01, 0.125),
    "gpt-5.6-sol": _p(4, 20, 0.40, 5.00),
    "gpt-5.6-terra": _p(2, 12, 0.20, 2.50),
    "gpt-5.6-luna": _p(0.20, 1.20, 0.02, 0.25),
    "gpt-5.5-pro": _p(30, 180, 30),
    "gpt-5.5": _p(5, 30, 0.50),
    "gpt-5.4-pro": _p(30, 180, 30),
    "gpt-5.4-mini": _p(0.75, 4.50, 0.075),
    "gpt-5.4-nano": _p(0.20, 1.25, 0.02),
    "gpt-5.4": _p(2.50, 15, 0.25),
    "gpt-5.2-pro": _p(21, 168, 21),
    "gpt-5.2": _p(1.75, 14, 0.175),
    "gpt-5.1": _p(1.25, 10, 0.125),
    "gpt-5-mini": _p(0.25, 2, 0.025),
    "gpt-5-nano": _p(0.05, 0.40, 0.005),
    "gpt-5": _p(1.25, 10, 0.125),
    "gpt-4.1-mini": _p(0.40, 1.60, 0.10),
    "gpt-4.1-nano": _p(0.10, 0.40, 0.025),
    "gpt-4.1": _p(2, 8, 0.50),
    "gpt-4o-mini": _p(0.15, 0.60, 0.075),
    "gpt-4o": _p(2.50, 10, 1.25),
    "o4-mini": _p(1.10, 4.40, 0.275),
    "o3-mini": _p(1.10, 4.40, 0.55),
    "o3": _p(2, 8, 0.50),
    "o1": _p(15, 60, 7.50),
}

_SNAPSHOT = re.compile(r"-(?:\d{8}|\d{4}-\d{2}-\d{2})$")
_TABLES = {"anthropic": ANTHROPIC, "openai": OPENAI}


def _split(ref: str) -> tuple[str, str]:
    provider, _, model = ref.partition("/")
    return provider, model


def price_for(ref: str) -> Price | None:
    """The price of a normalized model ref (`anthropic/claude-sonnet-5-5`), or None if unknown.

    Dated snapshots (`claude-sonnet-4-5-20250929`, `gpt-4.1-2025-04-14`) price as their base
    model; `local/` and `embedded/` refs are free.
    """
    provider, model = _split(ref)
    if provider in FREE_PROVIDERS:
        return FREE
    table = _TABLES.get(provider)
    if table is None:
        return None
    model = _SNAPSHOT.sub("", model)
    if provider == "anthropic" and model.startswith("claude-3-5-haiku"):
        model = "claude-3-5-haiku"
    return table.get(model)


def cost(ref: str, usage: Usage) -> float | None:
    """Dollars spent on one call with this usage; None when the price is unknown."""
    price = price_for(ref)
    if price is None:
        return None
    price = price.for_prompt(usage.input_tokens)
    fresh = max(usage.input_tokens - usage.cache_read_tokens - usage.cache_write_tokens, 0)
    total = (fresh * price.input + usage.cache_read_tokens * price.cache_read
             + usage.cache_write_tokens * price.cache_write + usage.output_tokens * price.output)
    return total / 1_000_000


def is_free(ref: str) -> bool:
    """True for models that run on your machine."""
    return _split(ref)[0] in FREE_PROVIDERS


def format_cost(value: float | None) -> str:
    """Human form of a cost: "unknown" for None, "$0 (local)" for 0 (only models that run on
    your machine cost exactly 0), else dollars with sensible precision."""
    if value is None:
        return "unknown"
    if value == 0:
        return "$0 (local)"
    if value < 0.000001:
        return "<$0.000001"
    digits = 6 if value < 0.01 else 4
    return "$" + f"{value:.{digits}f}".rstrip("0").rstrip(".")


def format_price(price: Price | None) -> str:
    """Human form of a price per million tokens, e.g. "$3 / $15 per Mtok"."""
    if price is None:
        return "unknown"
    if price == FREE:
        return "free (runs locally)"
    return f"${price.input:g} in / ${price.output:g} out per Mtok"
