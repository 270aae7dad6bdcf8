"""The statistics engine against the hand-checked values below (checked against scipy 1.17).

Formulas (`registry.results.formulas`) first, then the engine (`registry.results.stats`):
the paired interval (its reference values and coverage: tests/test_stats_interval.py), the exact
test, the verdict rule, errors, and bit-identical tables.
"""

import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from stats_reference import cases_needed, wilson

from registry.results.formulas import (
    Z95,
    detectable_lift,
    mcnemar_exact,
    normalized_gain,
    t_critical,
    wilson_arrays,
)
from registry.results.stats import (
    INTERVAL_METHOD,
    MIN_CASES,
    case_status,
    compare_arms,
    disagreement,
    outcomes,
    table,
    verdict,
)

# --- Wilson -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("k", "n", "lo", "hi"),
    [(7, 10, 0.3968, 0.8922), (0, 10, 0.0000, 0.2775), (10, 10, 0.7225, 1.0000),
     (19, 20, 0.7639, 0.9911), (45, 50, 0.7864, 0.9565)],
)
def test_wilson_reference_values(k, n, lo, hi):
    got = wilson(k, n)
    assert (round(got[0], 4), round(got[1], 4)) == (lo, hi)


def test_wilson_edges_are_exact_and_empty_is_uninformative():
    assert wilson(0, 10)[0] == 0.0
    assert wilson(10, 10)[1] == 1.0
    assert wilson(0, 0) == (0.0, 1.0)
    assert Z95 == pytest.approx(1.959964, abs=1e-6)


@given(st.floats(0, 1), st.integers(1, 10_000))
def test_wilson_at_any_rate_contains_it(p, n):
    """The arm interval is evaluated at a mean of fractions: it must always hold the rate."""
    lo, hi = wilson_arrays(np.array([p]), np.array([n]))
    assert 0.0 <= lo[0] <= p <= hi[0] <= 1.0


# --- exact test, t, gain, power -------------------------------------------------------------


@pytest.mark.parametrize(("b", "c", "p"), [(5, 0, 0.0625), (2, 0, 0.5000), (8, 2, 0.1094),
                                           (10, 3, 0.0923), (6, 3, 0.5078), (4, 0, 0.125)])
def test_exact_test_reference_values(b, c, p):
    assert round(mcnemar_exact(b, c), 4) == p
    assert mcnemar_exact(c, b) == mcnemar_exact(b, c)


def test_exact_test_no_discordance_and_big_counts():
    assert mcnemar_exact(0, 0) == 1.0 and mcnemar_exact(3, 3) == 1.0
    assert 0.0 < mcnemar_exact(1500, 1000) < 1e-20  # exact integers, no overflow


@pytest.mark.parametrize(("df", "t"), [(1, 12.7062047), (2, 4.3026527), (3, 3.1824463),
                                       (11, 2.2009852), (17, 2.1098156), (30, 2.0422725),
                                       (100, 1.9839715), (1000, 1.9623391)])
def test_t_critical_reference_values(df, t):
    assert t_critical(df) == pytest.approx(t, abs=1e-6)


def test_t_critical_is_continuous_past_the_series_and_infinite_without_df():
    assert t_critical(2000) == pytest.approx(t_critical(2001), abs=1e-6)
    assert t_critical(2001) > t_critical(100_000) > Z95
    assert t_critical(0) == math.inf


def test_normalized_gain():
    assert normalized_gain(0.40, 0.85) == pytest.approx(0.75)
    assert normalized_gain(1.0, 1.0) is None
    assert normalized_gain(0.5, 0.25) == pytest.approx(-0.5)


@pytest.mark.parametrize(("d", "pd", "n"), [(0.10, 0.20, 155), (0.10, 0.30, 234),
                                            (0.25, 0.30, 36), (0.25, 0.40, 48)])
def test_cases_needed_reference_values(d, pd, n):
    assert cases_needed(d, pd) == n and cases_needed(-d, pd) == n


@pytest.mark.parametrize(("d", "pd"), [(0.0, 0.3), (0.1, 0.0), (0.1, -0.2), (0.4, 0.3)])
def test_cases_needed_impossible(d, pd):
    assert cases_needed(d, pd) is None


@pytest.mark.parametrize(("d", "pd"), [(0.10, 0.20), (0.10, 0.30), (0.25, 0.30), (0.25, 0.40)])
def test_detectable_lift_inverts_cases_needed(d, pd):
    n = cases_needed(d, pd)
    got = detectable_lift(n, pd)
    assert got <= d and cases_needed(got, pd) <= n < cases_needed(got * 0.99, pd)
    assert got == pytest.approx(d, abs=0.005)


@pytest.mark.parametrize("n", [12, 30, 50, 200])
def test_detectable_lift_default_holds_whatever_the_discordance(n):
    worst = detectable_lift(n)
    assert worst == detectable_lift(n, 1.0)
    for d in (worst, (worst + 1) / 2, 1.0):
        for pd in (d, (d + 1) / 2, 1.0):  # any discordance a lift d allows
            assert cases_needed(d, pd) <= n


def test_detectable_lift_shrinks_with_suite_size():
    assert 0.6 < detectable_lift(12) < 0.8 and detectable_lift(200) < detectable_lift(12)
    assert detectable_lift(0) == math.inf and detectable_lift(3) == math.inf


# --- the paired interval and the verdict rule -------------------------------------------------


def arms(diffs: list[float], runs: int = 1) -> tuple[dict, dict]:
    """Cases whose skill score minus baseline score is each of ``diffs`` (in steps of 1/runs)."""
    base, skill = {}, {}
    for i, d in enumerate(diffs):
        up = round(abs(d) * runs)
        low, high = [False] * runs, [j < up for j in range(runs)]
        base[f"c{i:03d}"], skill[f"c{i:03d}"] = (low, high) if d >= 0 else (high, low)
    return base, skill


def test_paired_interval_reference_values_through_the_engine():
    # six cases +1, three -1, three 0: mean 0.25, the studentized Tango interval [-0.3070,
    # 0.6711] (scipy; the paired t interval was [-0.3002, 0.8002])
    s = compare_arms(*arms([1] * 6 + [-1] * 3 + [0] * 3))
    assert s.lift == 0.25 and (round(s.lo, 4), round(s.hi, 4)) == (-0.3070, 0.6711)
    assert (s.b, s.c, round(s.p_value, 4)) == (6, 3, 0.5078)
    assert s.verdict == "no detectable effect" and s.note is None
    # 18 cases x 3 runs, four go 0 -> 1/3: [-0.1488, +0.2662]; the t interval [+0.0032, +0.1450]
    # excluded 0 where the sign test (p = 0.125) did not
    s = compare_arms(*arms([1 / 3] * 4 + [0] * 14, runs=3))
    assert (round(s.lo, 4), round(s.hi, 4)) == (-0.1488, 0.2662)
    assert (s.b, s.c, s.p_value) == (4, 0, 0.125)
    assert s.verdict == "no detectable effect" and s.note is None


@pytest.mark.parametrize(("lo", "hi", "p", "b", "c", "n", "uneven", "expected"), [
    (0.1, 0.5, 0.01, 8, 0, 12, 0, "helps"),
    (0.1, 0.5, 0.2, 4, 0, 12, 0, "no detectable effect"),  # the test disagrees
    (-0.1, 0.5, 0.01, 8, 0, 12, 0, "no detectable effect"),  # the interval disagrees
    (0.1, 0.5, 0.01, 0, 8, 12, 0, "no detectable effect"),  # opposite directions
    (-0.5, -0.1, 0.01, 0, 8, 12, 0, "hurts"),
    (0.0, 0.3, 0.01, 8, 0, 12, 0, "no detectable effect"),  # lo == 0 is never "helps"
    (0.5, 1.0, 0.0001, 9, 0, 9, 0, "too few cases (9)"),
    (0.5, 1.0, 0.0001, 20, 0, 20, 2, "inconclusive: errors in 2 cases"),
])
def test_verdict_rule(lo, hi, p, b, c, n, uneven, expected):
    assert verdict(lo, hi, p, b, c, cases=n, uneven=uneven) == expected


@given(st.floats(-1, 1), st.floats(-1, 1), st.floats(0, 1), st.integers(0, 50),
       st.integers(0, 50), st.integers(0, 80))
def test_verdict_never_helps_without_bound_test_and_cases(a, z, p, b, c, n):
    lo, hi = min(a, z), max(a, z)
    helps = verdict(lo, hi, p, b, c, cases=n) == "helps"
    assert helps == (lo > 0 and p < 0.05 and b > c and n >= MIN_CASES)


def test_disagreement_sentences():
    assert disagreement(0.1, 0.4, 0.01, 9, 0) is None and disagreement(-0.1, 0.4, 0.5, 2, 1) is None
    assert "exact test finds more cases" in disagreement(-0.02, 0.3, 0.02, 9, 1)
    assert "opposite directions" in disagreement(0.01, 0.3, 0.02, 1, 9)


def test_two_cases_are_too_few_whatever_their_lift():
    s = compare_arms(*arms([1, 1]))
    assert (s.lift, s.verdict, s.detectable) == (1.0, "too few cases (2)", math.inf)
    assert s.lo <= s.lift <= s.hi


def test_clear_help_and_hurt_and_no_usable_case():
    helps = compare_arms(*arms([1] * 40))
    assert helps.verdict == "helps" and (helps.lift, helps.hi) == (1.0, 1.0)
    q2 = t_critical(39) ** 2 * 40 / 39  # the interval's critical value, squared
    assert helps.lo == pytest.approx((40 - q2) / (40 + q2))  # 0.8101, not [+100, +100]
    assert compare_arms(*reversed(arms([1] * 40))).verdict == "hurts"
    empty = compare_arms({"a": [None]}, {"a": [True]})
    assert (empty.n_cases, empty.lo, empty.hi) == (0, -1.0, 1.0)
    assert empty.normalized_gain is None and empty.verdict == "inconclusive: errors in 1 case"
    nothing = compare_arms({}, {})
    assert (nothing.n_cases, nothing.verdict) == (0, "too few cases (0)")


def test_arm_rates_are_case_means_inside_their_interval():
    # every case passes 1 of 3: the rate is 1/3 and its interval holds it (not [0, 17.6%])
    s = compare_arms({f"c{i}": [True, False, False] for i in range(12)},
                     {f"c{i}": [True, True, False] for i in range(12)})
    assert s.baseline.pass_rate == pytest.approx(1 / 3)
    assert s.baseline.lo < 1 / 3 < s.baseline.hi and s.skill.lo < 2 / 3 < s.skill.hi
    assert (s.baseline.lo, s.baseline.hi) == pytest.approx(wilson(4, 12))
    assert INTERVAL_METHOD.startswith("Wilson")


# --- errors ---------------------------------------------------------------------------------


def test_transport_errors_stay_out_of_denominators_and_uneven_ones_are_inconclusive():
    base = {f"c{i}": [False, None, False, False] for i in range(12)}
    skill = {f"c{i}": [True, True, None, True] for i in range(12)}
    s = compare_arms(base, skill)
    assert (s.baseline.n_samples, s.baseline.n_errors, s.skill.n_errors) == (36, 12, 12)
    # filled in against the skill every case still goes 1/4 -> 3/4: the "helps" stands
    assert s.lift == 1.0 and s.verdict == "helps" and s.uneven == 0
    thin = compare_arms({c: v[:3] for c, v in base.items()}, {c: v[:3] for c, v in skill.items()})
    assert thin.verdict == "inconclusive: errors in 12 cases"  # 1/3 -> 2/3 each: not enough
    skill["c0"] = [None, None, None]  # usable in the baseline only
    skill["c1"] = [None]
    uneven = compare_arms(base, skill)
    assert uneven.uneven == 2 and uneven.verdict == "inconclusive: errors in 2 cases"
    assert uneven.n_cases == 10


def test_a_case_answered_in_one_arm_only_without_errors_is_not_uneven():
    base, skill = arms([1] * 12)
    base["extra"] = [True]  # a partial run: the skill arm never got to it
    s = compare_arms(base, skill)
    assert (s.uneven, s.n_cases, s.baseline.n_cases) == (0, 12, 13)


@pytest.mark.parametrize(("passes", "status"), [
    ([True, True, True], "stable pass"), ([False, False], "stable fail"),
    ([True, False, True], "flaky"), ([None, None], "error"), ([], "error"),
    ([True, None, True], "stable pass"), ([True, None, False], "flaky")])
def test_case_status(passes, status):
    assert case_status(passes) == status


# --- the table: vectorized, bit-identical whatever the row order ------------------------------


def _random_groups(seed: int, n_groups: int = 6) -> list[dict]:
    rng = random.Random(seed)
    groups = []
    for _ in range(n_groups):
        cases = {}
        for i in range(rng.randint(1, 40)):
            p_b, p_s = rng.random(), rng.random()
            cases[f"case-{rng.randint(0, 999):03d}-{i}"] = tuple(
                [None if rng.random() < 0.05 else rng.random() < p for _ in range(3)]
                for p in (p_b, p_s))
        groups.append(cases)
    return groups


def test_table_is_identical_whatever_the_row_order():
    o = outcomes(_random_groups(3))
    first = table(o, 6)
    order = np.random.default_rng(11).permutation(len(o.group))
    shuffled = table(type(o)(*(column[order] for column in o)), 6)
    for name, values in first._asdict().items():
        assert np.array_equal(values, getattr(shuffled, name)), name


def test_one_group_equals_the_same_group_among_many():
    groups = _random_groups(5)
    together = table(outcomes(groups), len(groups))
    for i, cases in enumerate(groups):
        alone = table(outcomes([cases]), 1)
        for name, values in alone._asdict().items():
            assert np.array_equal(values[0], getattr(together, name)[i]), name


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.lists(st.sampled_from([True, False, None]), max_size=3),
                          st.lists(st.sampled_from([True, False, None]), max_size=3)),
                min_size=1, max_size=30))
def test_every_point_lies_inside_its_interval(pairs):
    s = compare_arms({f"c{i}": b for i, (b, _) in enumerate(pairs)},
                     {f"c{i}": k for i, (_, k) in enumerate(pairs)})
    assert -1.0 <= s.lo <= s.lift <= s.hi <= 1.0
    for arm in (s.baseline, s.skill):
        assert 0.0 <= arm.lo <= arm.pass_rate <= arm.hi <= 1.0
