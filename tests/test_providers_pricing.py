"""The price table: dated, snapshot-aware, free for local models, unknown (never $0) otherwise."""

from __future__ import annotations

import re

import pytest

from registry.providers import ALIASES
from registry.providers.base import Usage
from registry.providers.pricing import (
    ANTHROPIC,
    OPENAI,
    PRICES_AS_OF,
    cost,
    format_cost,
    format_price,
    is_free,
    price_for,
)


def test_prices_are_dated():
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", PRICES_AS_OF)


@pytest.mark.parametrize("ref", list(ALIASES.values()))
def test_every_alias_has_a_price(ref):
    assert price_for(ref) is not None


@pytest.mark.parametrize(("ref", "base"), [
    ("anthropic/claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
    ("anthropic/claude-3-5-haiku-20241022", "claude-3-5-haiku"),
    ("openai/gpt-4.1-2025-04-14", "gpt-4.1"),
    ("openai/gpt-5-mini-2025-08-07", "gpt-5-mini"),
])
def test_dated_snapshots_price_as_their_base_model(ref, base):
    table = ANTHROPIC if ref.startswith("anthropic/") else OPENAI
    assert price_for(ref) == table[base]


def test_mini_is_not_priced_as_its_big_sibling():
    assert price_for("openai/gpt-4.1-mini") == OPENAI["gpt-4.1-mini"] != OPENAI["gpt-4.1"]
    assert price_for("openai/gpt-5") == OPENAI["gpt-5"]


def test_cost_splits_cached_and_fresh_input():
    usage = Usage(input_tokens=1_000_000, output_tokens=1_000_000,
                  cache_read_tokens=400_000, cache_write_tokens=100_000)
    price = ANTHROPIC["claude-opus-5-5"]
    expected = 500_000 / 1e6 * price.input + 0.4 * price.cache_read \
        + 0.1 * price.cache_write + 1.0 * price.output
    assert cost("anthropic/claude-opus-5-5", usage) == pytest.approx(expected)


def test_long_prompts_use_the_long_prompt_rate():
    short = cost("anthropic/claude-haiku-5-5", Usage(input_tokens=100_000, output_tokens=1000))
    long = cost("anthropic/claude-haiku-5-5", Usage(input_tokens=100_001, output_tokens=1000))
    assert short == pytest.approx((100_000 * 0.10 + 1000 * 0.50) / 1e6)
    assert long == pytest.approx((100_001 * 0.50 + 1000 * 2.50) / 1e6)


@pytest.mark.parametrize("ref", ["hf/Qwen/Qwen3-8B", "openai/gpt-99", "anthropic/claude-new",
                                 "mystery/x"])
def test_unknown_prices_are_none_never_zero(ref):
    assert price_for(ref) is None
    assert cost(ref, Usage(input_tokens=10, output_tokens=10)) is None
    assert format_cost(cost(ref, Usage(input_tokens=10))) == "unknown"


@pytest.mark.parametrize("ref", ["local/qwen3", "embedded/smollm2-135m"])
def test_local_models_are_free(ref):
    assert is_free(ref)
    assert cost(ref, Usage(input_tokens=10_000, output_tokens=10_000)) == 0.0
    assert format_cost(0.0) == "$0 (local)"
    assert format_price(price_for(ref)) == "free (runs locally)"


def test_format_cost():
    assert format_cost(None) == "unknown"
    assert format_cost(0.0123) == "$0.0123"
    assert format_cost(1.5) == "$1.5"
    assert format_cost(0.000034) == "$0.000034"
    assert format_cost(1e-9) == "<$0.000001"
    assert format_price(OPENAI["gpt-4.1"]) == "$2 in / $8 out per Mtok"
