"""The price table: dated, snapshot-aware, free for local models, unknown (never $0) otherwise."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

from registry.providers import (
    ALIASES,
    EMBEDDED_REF,
    Usage,
    context_window,
    cost,
    format_price,
    is_free,
    price_for,
    prices_as_of,
)
from registry.results.display import usd

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "registry" / "providers" / "data" / "models.json"


def test_prices_are_dated():
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", prices_as_of())
    assert prices_as_of() == json.loads(DATA.read_text())["as_of"]


def test_the_data_file_ships_as_package_data():
    """Every package-data glob in pyproject.toml matches a file, and one matches models.json
    (a glob naming nothing, as `registry/data/*.json` once did, would ship nothing)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    shipped = []
    for package, globs in config["tool"]["setuptools"]["package-data"].items():
        folder = ROOT.joinpath(*package.split("."))
        for pattern in globs:
            matches = list(folder.glob(pattern))
            assert matches, f"{package}: {pattern} matches nothing"
            shipped += matches
    assert DATA in shipped


def test_every_paid_price_is_positive():
    """A price in the file is a real one: $0 is reserved for models that run locally."""
    for ref in json.loads(DATA.read_text())["models"]:
        if is_free(ref):
            continue
        price = price_for(ref)
        assert price is not None and price.input > 0 and price.output > 0, ref
        assert price.cache_read <= price.input <= price.output, ref


@pytest.mark.parametrize("ref", list(ALIASES.values()))
def test_every_alias_has_a_price(ref):
    assert price_for(ref) is not None


def test_aliases_price_as_the_model_they_name():
    assert price_for("sonnet") == price_for(ALIASES["sonnet"])
    assert not is_free("sonnet")


@pytest.mark.parametrize(("ref", "base"), [
    ("anthropic/claude-sonnet-4-5-20250929", "anthropic/claude-sonnet-4-5"),
    ("anthropic/claude-3-5-haiku-20241022", "anthropic/claude-3-5-haiku"),
    ("anthropic/claude-3-5-haiku-latest", "anthropic/claude-3-5-haiku"),
    ("openai/gpt-4.1-2025-04-14", "openai/gpt-4.1"),
    ("openai/gpt-5-mini-2025-08-07", "openai/gpt-5-mini"),
])
def test_dated_snapshots_price_as_their_base_model(ref, base):
    assert price_for(ref) is not None
    assert price_for(ref) == price_for(base)
    assert context_window(ref) == context_window(base)


def test_context_windows():
    assert context_window("openai/gpt-4.1") == 1_047_576
    assert context_window("anthropic/claude-haiku-4-5") == 200_000
    assert context_window("openai/gpt-99") is None
    assert context_window("hf/Qwen/Qwen3-8B") is None


def test_the_embedded_model_loads_with_the_recorded_context():
    from registry.providers import embedded

    assert embedded.n_ctx() == context_window(EMBEDDED_REF) == 4096


def test_mini_is_not_priced_as_its_big_sibling():
    mini, big = price_for("openai/gpt-4.1-mini"), price_for("openai/gpt-4.1")
    assert mini is not None and big is not None
    assert (mini.input, mini.output) == (0.40, 1.60) != (big.input, big.output) == (2, 8)


def test_cost_splits_cached_and_fresh_input():
    usage = Usage(input_tokens=1_000_000, output_tokens=1_000_000,
                  cache_read_tokens=400_000, cache_write_tokens=100_000)
    price = price_for("anthropic/claude-opus-5-5")
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
    assert usd(cost(ref, Usage(input_tokens=10)), ref) == "unknown"


@pytest.mark.parametrize("ref", ["local/qwen3", "embedded/smollm2-135m"])
def test_local_models_are_free(ref):
    assert is_free(ref)
    assert cost(ref, Usage(input_tokens=10_000, output_tokens=10_000)) == 0.0
    assert usd(0.0, ref) == "$0 (local)"
    assert format_price(price_for(ref)) == "free (runs locally)"


def test_one_money_formatter_for_costs():
    assert usd(None) == "unknown"
    assert usd(0.0123) == "$0.0123"
    assert usd(1.5) == "$1.50"
    assert usd(0.000034) == "$0.000034"
    assert usd(1e-9) == "<$0.000001"
    assert format_price(price_for("openai/gpt-4.1")) == "$2 in / $8 out per Mtok"
