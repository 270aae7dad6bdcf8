"""`registry.results.display`: the one way shares, lift points and dollars are written."""

import math

import pytest

from registry.results.display import (
    count,
    detectable,
    lift_interval,
    middle_ellipsis,
    mode,
    p_equals,
    p_value,
    pct,
    points,
    usd,
    wrap_id,
)


@pytest.mark.parametrize(("share", "text"), [(0.0, "0%"), (1 / 3, "33%"), (1.0, "100%"),
                                             (None, "-"), (0.125, "12%")])
def test_pct(share, text):
    assert pct(share) == text


@pytest.mark.parametrize(("share", "text"), [(0.26, "+26"), (-0.04, "-4"), (-1e-17, "+0"),
                                             (0.0, "+0"), (-0.004, "+0"), (1.0, "+100")])
def test_points_never_print_minus_zero(share, text):
    assert points(share) == text


def test_lift_interval_and_p_value():
    assert lift_interval(0.26, 0.11, 0.41) == "+26 [+11, +41]"
    assert lift_interval(-0.5, -0.83, -0.17) == "-50 [-83, -17]"
    assert (p_value(0.015625), p_value(1.0), p_value(0.0001234)) == ("0.0156", "1", "<0.001")
    assert (p_value(0.001), p_value(0.000999)) == ("0.001", "<0.001")


@pytest.mark.parametrize(("value", "model", "text"), [
    (None, "sonnet", "unknown"), (float("nan"), "sonnet", "unknown"),
    (0.0, "embedded/smollm2-135m", "$0 (local)"), (0.0, "local/qwen", "$0 (local)"),
    (0.0, "anthropic/claude-sonnet-4-5", "$0"), (0.0, None, "$0"),
    (0.000034, "openai/gpt-4.1", "$0.000034"), (0.0123, "openai/gpt-4.1", "$0.0123"),
    (1234.5, "openai/gpt-4.1", "$1,234.50")])
def test_usd_is_unknown_rather_than_zero_and_free_only_for_local_models(value, model, text):
    assert usd(value, model) == text


def test_mode_and_detectable():
    assert (mode("inline", "user"), mode("inline", None), mode("tool", "user")) == (
        "inline (user)", "inline", "tool")
    assert detectable(math.inf) == "this suite is too small to detect any lift"
    assert detectable(0.43) == "this suite can detect lifts of about 43 points or more"


def test_p_in_a_sentence_and_counts_of_one():
    assert p_equals(0.00049) == "p < 0.001" and p_equals(0.0078125) == "p = 0.00781"
    assert count(1, "case") == "1 case" and count(0, "case") == "0 cases"
    assert count(2, "entry", "entries") == "2 entries"


@pytest.mark.parametrize(("ident", "width", "lines"), [
    ("hubskills-community/kernel-builder@1.0.0", 22,
     ["hubskills-community/", "kernel-builder@1.0.0"]),
    ("hubskills/kernel-builder-cuda-kernels@1.1.0", 20,
     ["hubskills/kernel-", "builder-cuda-kernels", "@1.1.0"]),  # never inside the version
    ("local/qwen2.5-coder-32b", 8, ["local/", "qwen2.5-", "coder-", "32b"]),
    ("local/qwen2.5-coder-32b", 7, ["local/", "qwen2.", "5-", "coder-", "32b"]),  # `.`: must
    ("local/qwen2.5-coder-32b", 40, ["local/qwen2.5-coder-32b"]),
    ("a-very-long-name-without/x", 4, None),  # a piece wider than the room: not broken
])
def test_wrap_id_breaks_only_at_separators(ident, width, lines):
    assert wrap_id(ident, width) == lines
    if lines:
        assert "".join(lines) == ident and all(len(line) <= width for line in lines)


def test_middle_ellipsis_keeps_both_ends():
    shortened = middle_ellipsis("hubskills-community/kernel-builder-cuda-kernels@1.0.0", 21)
    assert shortened == "hubskills-…nels@1.0.0" and len(shortened) == 21
    assert middle_ellipsis("short", 20) == "short" and middle_ellipsis("abc", 1) == "…"
