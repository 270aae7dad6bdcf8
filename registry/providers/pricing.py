"""Prices and context windows, from the dated data file `data/models.json` (package data).

The file is read once, on first use. Prices are USD per million tokens, standard tier, as
published by Anthropic and OpenAI on the file's `as_of` date (`prices_as_of()`). A model missing
from the file has an *unknown* price (None), never $0; models that run on your machine
(`local/`, `embedded/`) cost exactly 0. `is_free` is the one test for "this model costs nothing".
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from functools import cache
from importlib.resources import files
from typing import Any, Protocol

from registry.providers.refs import split_ref

DATA_FILE = "data/models.json"
FREE_PROVIDERS = frozenset({"local", "embedded"})
_SNAPSHOT = re.compile(r"-(?:\d{8}|\d{4}-\d{2}-\d{2}|latest)$")


class TokenCounts(Protocol):
    """What a price is applied to (`providers.Usage` has these; kept structural so this module
    stays below `base`, which imports it)."""

    @property
    def input_tokens(self) -> int: ...
    @property
    def output_tokens(self) -> int: ...
    @property
    def cache_read_tokens(self) -> int: ...
    @property
    def cache_write_tokens(self) -> int: ...


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


@dataclass(frozen=True)
class ModelInfo:
    """What the data file knows of one model: its price and context window (None: unknown)."""

    price: Price | None
    context_window: int | None


@dataclass(frozen=True)
class _Table:
    as_of: str
    models: dict[str, ModelInfo]


def _price(data: dict[str, Any] | None, long_prompt: dict[str, Any] | None = None) -> Price | None:
    if data is None:
        return None
    base = Price(float(data["input"]), float(data["output"]), float(data["cache_read"]),
                 float(data["cache_write"]))
    if long_prompt is None:
        return base
    return replace(base, long_prompt=_price(long_prompt["price"]),
                   long_prompt_threshold=int(long_prompt["above_input_tokens"]))


@cache
def _table() -> _Table:
    """The data file, parsed once per process."""
    data = json.loads(files(__package__).joinpath(DATA_FILE).read_text(encoding="utf-8"))
    models = {ref: ModelInfo(_price(entry.get("price"), entry.get("long_prompt")),
                             entry.get("context_window"))
              for ref, entry in data["models"].items()}
    return _Table(str(data["as_of"]), models)


def prices_as_of() -> str:
    """The date (YYYY-MM-DD) the prices in the data file were checked."""
    return _table().as_of


def known_refs() -> list[str]:
    """Every model reference the data file lists (`openai/gpt-4.1-mini`, ...)."""
    return list(_table().models)


def model_info(ref: str) -> ModelInfo | None:
    """The data file's entry for a model reference, or None when it has none.

    Aliases are expanded; dated snapshots (`claude-sonnet-4-5-20250929`, `gpt-4.1-2025-04-14`)
    and `-latest` names read as their base model.
    """
    provider, model_id = split_ref(ref)
    models = _table().models
    exact = models.get(f"{provider}/{model_id}")
    return exact or models.get(f"{provider}/{_SNAPSHOT.sub('', model_id)}")


def is_free(ref: str) -> bool:
    """True for models that run on your machine (`local/`, `embedded/`): they cost exactly 0."""
    return split_ref(ref)[0] in FREE_PROVIDERS


def price_for(ref: str) -> Price | None:
    """The price of a model reference, or None when it is unknown (never a $0 stand-in)."""
    if is_free(ref):
        return FREE
    info = model_info(ref)
    return info.price if info else None


def context_window(ref: str) -> int | None:
    """Prompt plus output tokens the model accepts, or None when the data file does not say."""
    info = model_info(ref)
    return info.context_window if info else None


def cost(ref: str, usage: TokenCounts) -> float | None:
    """Dollars spent on one call with this usage; None when the price is unknown."""
    price = price_for(ref)
    if price is None:
        return None
    price = price.for_prompt(usage.input_tokens)
    fresh = max(usage.input_tokens - usage.cache_read_tokens - usage.cache_write_tokens, 0)
    total = (fresh * price.input + usage.cache_read_tokens * price.cache_read
             + usage.cache_write_tokens * price.cache_write + usage.output_tokens * price.output)
    return total / 1_000_000


def format_price(price: Price | None) -> str:
    """Human form of a price per million tokens, e.g. "$3 / $15 per Mtok"."""
    if price is None:
        return "unknown"
    if price == FREE:
        return "free (runs locally)"
    return f"${price.input:g} in / ${price.output:g} out per Mtok"
