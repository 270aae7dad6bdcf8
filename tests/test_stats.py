"""Tests for registry.evaluation.stats against the hand-checked values in facts/statistics.md."""

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from registry.evaluation.stats import (
    INTERVAL_METHOD,
    Z95,
    ArmStats,
    arm_stats,
    case_status,
    cases_needed,
    compare_arms,
    detectable_lift,
    discordant_share,
    majority,
    mcnemar_exact,
    non_discriminating,
    normalized_gain,
    paired_bootstrap_lift,
    verdict,
    wilson_interval,
)

# --- Wilson -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("k", "n", "lo", "hi"),
    [
        (7, 10, 0.3968, 0.8922),
        (0, 10, 0.0000, 0.2775),
        (10, 10, 0.7225, 1.0000),
        (19, 20, 0.7639, 0.9911),
        (45, 50, 0.7864, 0.9565),
    ],
)
def test_wilson_reference_values(k, n, lo, hi):
    got = wilson_interval(k, n)
    assert round(got[0], 4) == lo
    assert round(got[1], 4) == hi


def test_wilson_edges_are_exact_and_empty_is_uninformative():
    assert wilson_interval(0, 10)[0] == 0.0
    assert wilson_interval(10, 10)[1] == 1.0
    assert wilson_interval(0, 0) == (0.0, 1.0)
    assert Z95 == pytest.approx(1.959964, abs=1e-6)


@pytest.mark.parametrize(("k", "n"), [(-1, 5), (6, 5), (0, -1)])
def test_wilson_rejects_impossible_counts(k, n):
    with pytest.raises(ValueError):
        wilson_interval(k, n)


@given(
    st.integers(min_value=1, max_value=10_000).flatmap(
        lambda n: st.tuples(st.integers(min_value=0, max_value=n), st.just(n))
    )
)
def test_wilson_inside_unit_interval_and_contains_rate(kn):
    k, n = kn
    lo, hi = wilson_interval(k, n)
    assert 0.0 <= lo <= k / n <= hi <= 1.0


# --- McNemar, normalized gain, verdict ------------------------------------------------------


@pytest.mark.parametrize(
    ("b", "c", "p"), [(5, 0, 0.0625), (2, 0, 0.5000), (8, 2, 0.1094), (10, 3, 0.0923)]
)
def test_mcnemar_reference_values(b, c, p):
    assert round(mcnemar_exact(b, c), 4) == p
    assert mcnemar_exact(c, b) == mcnemar_exact(b, c)


def test_mcnemar_no_discordance_and_cap():
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(3, 3) == 1.0
    assert 0.0 < mcnemar_exact(1500, 1000) < 1e-20  # big n: exact integers, no overflow


def test_normalized_gain():
    assert normalized_gain(0.40, 0.85) == pytest.approx(0.75)
    assert normalized_gain(1.0, 1.0) is None
    assert normalized_gain(0.5, 0.25) == pytest.approx(-0.5)


@pytest.mark.parametrize(
    ("lo", "hi", "expected"),
    [
        (0.01, 0.3, "helps"),
        (0.0, 0.3, "no detectable effect"),  # lo == 0 is never "helps"
        (-0.1, 0.3, "no detectable effect"),
        (0.0, 0.0, "no detectable effect"),
        (-0.3, -0.01, "hurts"),
        (-0.3, 0.0, "no detectable effect"),
    ],
)
def test_verdict_rule(lo, hi, expected):
    assert verdict(lo, hi) == expected


@given(st.floats(-1, 1), st.floats(-1, 1))
def test_verdict_never_helps_without_positive_lower_bound(a, b):
    lo, hi = min(a, b), max(a, b)
    assert (verdict(lo, hi) == "helps") == (lo > 0)


# --- power ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("d", "pd", "n"), [(0.10, 0.20, 155), (0.10, 0.30, 234), (0.25, 0.30, 36), (0.25, 0.40, 48)]
)
def test_cases_needed_reference_values(d, pd, n):
    assert cases_needed(d, pd) == n
    assert cases_needed(-d, pd) == n


@pytest.mark.parametrize(("d", "pd"), [(0.0, 0.3), (0.1, 0.0), (0.1, -0.2), (0.4, 0.3)])
def test_cases_needed_impossible(d, pd):
    assert cases_needed(d, pd) is None


@pytest.mark.parametrize(("d", "pd"), [(0.10, 0.20), (0.10, 0.30), (0.25, 0.30), (0.25, 0.40)])
def test_detectable_lift_inverts_cases_needed(d, pd):
    n = cases_needed(d, pd)
    got = detectable_lift(n, pd)
    assert got <= d
    assert cases_needed(got, pd) <= n
    assert cases_needed(got * 0.99, pd) > n
    assert got == pytest.approx(d, abs=0.005)


@pytest.mark.parametrize("n", [12, 30, 50, 200])
def test_detectable_lift_default_holds_whatever_the_discordance(n):
    worst = detectable_lift(n)
    assert worst == detectable_lift(n, 1.0)
    for d in (worst, (worst + 1) / 2, 1.0):
        for pd in (d, (d + 1) / 2, 1.0):  # any discordance a lift d allows
            assert cases_needed(d, pd) <= n


def test_detectable_lift_shrinks_with_suite_size():
    small, large = detectable_lift(12), detectable_lift(200)
    assert 0.6 < small < 0.8  # a 12-case suite only sees large effects
    assert detectable_lift(12, 0.5) == math.inf  # a lift <= 0.5 needs 13+ cases here
    assert large < small
    assert detectable_lift(0) == math.inf
    assert detectable_lift(3) == math.inf  # even d = 1 needs ceil(z^2) = 4 cases


def test_discordant_share():
    assert discordant_share(3, 2, 10) == 0.5
    assert discordant_share(0, 0, 0) == 0.0


# --- per-case status ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("passes", "status"),
    [
        ([True, True, True], "stable pass"),
        ([False, False], "stable fail"),
        ([True, False, True], "flaky"),
        ([None, None], "error"),
        ([], "error"),
        ([True, None, True], "stable pass"),
        ([False, None], "stable fail"),
        ([True, None, False], "flaky"),
    ],
)
def test_case_status(passes, status):
    assert case_status(passes) == status


@pytest.mark.parametrize(
    ("passes", "expected"),
    [
        ([True, True, False], True),
        ([True, False], False),  # tie
        ([True, None, None], True),  # errors ignored
        ([True, False, None], False),
        ([], False),
        ([None], False),
    ],
)
def test_majority(passes, expected):
    assert majority(passes) is expected


def test_non_discriminating():
    base = {"a": [True, True], "b": [True, False], "c": [True]}
    skill = {"a": [True, True], "b": [True, True], "c": [True, None]}
    assert non_discriminating(base, skill) == ["a", "c"]


# --- bootstrap ------------------------------------------------------------------------------


def _arms(n=30):
    rng = random.Random(n)
    base = {f"c{i}": [rng.random(), rng.random()] for i in range(n)}
    skill = {f"c{i}": [rng.random(), 1.0] for i in range(n)}
    return base, skill


def test_bootstrap_point_is_mean_of_per_case_differences():
    base = {"a": [0.0, 1.0], "b": [1.0], "only_base": [1.0]}
    skill = {"a": [1.0, 1.0, 1.0], "b": [1.0], "only_skill": [0.0]}
    point, lo, hi = paired_bootstrap_lift(base, skill)
    assert point == pytest.approx(((1.0 - 0.5) + 0.0) / 2)
    assert lo <= point <= hi


def test_bootstrap_is_deterministic_and_seed_sensitive():
    base, skill = _arms()
    first = paired_bootstrap_lift(base, skill, seed=7)
    assert paired_bootstrap_lift(base, skill, seed=7) == first
    # insertion order of the dicts does not matter, only the data and the seed
    reordered = dict(reversed(list(base.items()))), dict(reversed(list(skill.items())))
    assert paired_bootstrap_lift(*reordered, seed=7) == first
    assert paired_bootstrap_lift(base, skill, seed=8)[1:] != first[1:]


def test_identical_arms_give_zero_lift_with_zero_width_interval():
    base, _ = _arms()
    assert paired_bootstrap_lift(base, base) == (0.0, 0.0, 0.0)


def test_constant_differences_give_zero_width_interval_at_that_value():
    base = {f"c{i}": [0.0, 0.5] for i in range(20)}
    skill = {f"c{i}": [0.5, 1.0] for i in range(20)}
    assert paired_bootstrap_lift(base, skill) == (0.5, 0.5, 0.5)


def test_pairing_makes_the_interval_narrower_than_unpaired():
    # The skill adds a constant 0.1 on top of widely varying case difficulty: paired, the
    # interval is [0.1, 0.1]; an unpaired normal interval would be far wider.
    base = {f"c{i}": [i / 50] for i in range(40)}
    skill = {f"c{i}": [i / 50 + 0.1] for i in range(40)}
    point, lo, hi = paired_bootstrap_lift(base, skill)
    assert (point, lo, hi) == pytest.approx((0.1, 0.1, 0.1))


def test_bootstrap_wider_level_gives_wider_interval():
    base, skill = _arms()
    _, lo95, hi95 = paired_bootstrap_lift(base, skill)
    _, lo50, hi50 = paired_bootstrap_lift(base, skill, level=0.5)
    assert lo95 <= lo50 <= hi50 <= hi95
    assert hi95 - lo95 > hi50 - lo50


def test_bootstrap_rejects_empty_and_bad_arguments():
    with pytest.raises(ValueError):
        paired_bootstrap_lift({"a": [1.0]}, {"b": [1.0]})
    with pytest.raises(ValueError):
        paired_bootstrap_lift({"a": [1.0]}, {"a": [1.0]}, n_boot=0)
    with pytest.raises(ValueError):
        paired_bootstrap_lift({"a": [1.0]}, {"a": [1.0]}, level=1.0)


score_lists = st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=1, max_size=3)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(score_lists, score_lists), min_size=1, max_size=25),
    st.integers(min_value=0, max_value=2**32),
)
def test_bootstrap_interval_contains_point(pairs, seed):
    base = {f"c{i}": b for i, (b, _) in enumerate(pairs)}
    skill = {f"c{i}": s for i, (_, s) in enumerate(pairs)}
    point, lo, hi = paired_bootstrap_lift(base, skill, seed=seed, n_boot=500)
    assert -1.0 <= lo <= point <= hi <= 1.0


# --- arms and comparison ------------------------------------------------------------------


def test_arm_stats_excludes_errors_from_denominators():
    stats = arm_stats({"a": [True, None, True], "b": [False, True, None], "c": [None, None]})
    assert isinstance(stats, ArmStats)
    assert (stats.n_cases, stats.n_samples, stats.n_errors) == (2, 4, 4)
    assert stats.pass_rate == pytest.approx((1.0 + 0.5) / 2)
    assert stats.majority_rate == 0.5  # "b" is a 1-1 tie, so not a majority pass
    assert (stats.lo, stats.hi) == wilson_interval(1, 2)
    assert INTERVAL_METHOD == "Wilson 95% over case majority verdicts"


def test_arm_stats_empty():
    stats = arm_stats({})
    assert (stats.n_cases, stats.pass_rate, stats.lo, stats.hi) == (0, 0.0, 0.0, 1.0)


def test_compare_arms_counts_discordant_cases_and_reports():
    # 10 cases pass only with the skill, 3 only without, 7 pass in both: McNemar 10/3.
    base = {f"b{i}": [False, False, True] for i in range(10)}
    base |= {f"c{i}": [True, True, None] for i in range(3)}
    base |= {f"s{i}": [True] for i in range(7)}
    skill = {f"b{i}": [True, True, None] for i in range(10)}
    skill |= {f"c{i}": [False, False] for i in range(3)}
    skill |= {f"s{i}": [True] for i in range(7)}
    result = compare_arms(base, skill, seed=1)
    assert (result.b, result.c, result.n_cases) == (10, 3, 20)
    assert round(result.p_value, 4) == 0.0923
    expected_lift = (10 * (1 - 1 / 3) + 3 * (0 - 1)) / 20
    assert result.lift == pytest.approx(expected_lift)
    assert result.lo <= result.lift <= result.hi
    assert result.verdict == verdict(result.lo, result.hi)
    base_rate = (10 / 3 + 3 + 7) / 20
    assert result.normalized_gain == pytest.approx(expected_lift / (1 - base_rate))
    assert result.detectable == detectable_lift(20)
    assert result.baseline.n_errors == 3 and result.skill.n_errors == 10
    assert compare_arms(base, skill, seed=1) == result


def test_compare_arms_excludes_cases_with_only_errors_in_either_arm():
    base = {"a": [True], "b": [None, None], "c": [False], "d": [False]}
    skill = {"a": [True], "b": [True], "c": [None], "e": [True]}
    result = compare_arms(base, skill)
    assert result.n_cases == 1  # only "a" is usable in both arms
    assert (result.lift, result.lo, result.hi) == (0.0, 0.0, 0.0)
    assert result.baseline.n_cases == 3 and result.skill.n_cases == 3


def test_compare_arms_aa_run_is_no_effect():
    base = {f"c{i}": [i % 2 == 0, i % 3 == 0, True] for i in range(12)}
    result = compare_arms(base, base)
    assert (result.lift, result.lo, result.hi, result.b, result.c) == (0.0, 0.0, 0.0, 0, 0)
    assert result.p_value == 1.0
    assert result.verdict == "no detectable effect"


def test_compare_arms_clear_help_and_no_usable_cases():
    base = {f"c{i}": [False, False] for i in range(40)}
    skill = {f"c{i}": [True, True] for i in range(40)}
    helps = compare_arms(base, skill)
    assert helps.verdict == "helps" and helps.lift == 1.0
    assert compare_arms(skill, base).verdict == "hurts"
    empty = compare_arms({"a": [None]}, {"a": [True]})
    assert (empty.n_cases, empty.lo, empty.hi, empty.verdict) == (
        0,
        -1.0,
        1.0,
        "no detectable effect",
    )
    assert empty.normalized_gain is None and empty.detectable == math.inf
