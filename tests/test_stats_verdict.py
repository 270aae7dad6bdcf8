"""The verdict's error rates, by simulation through the engine itself (fixed seeds).

Under no effect (both arms share each case's pass probability) "helps" must come up at most
2.5% of the time, the promise of a one-sided 95% bound, at the suite sizes people have, at low,
middling and mixed pass rates, with 1, 3 or 5 runs. A true +30-point lift on 40 cases x 3 runs
must be called "helps" at least 80% of the time.
"""

from __future__ import annotations

import numpy as np
import pytest

from registry.results.stats import Outcomes, table

SUITES = 2000  # simulated suites per setting: a 2.5% rate is measured within about +-0.7%


def simulate(p_base: np.ndarray, p_skill: np.ndarray, runs: int, seed: int) -> np.ndarray:
    """The verdicts of `SUITES` simulated suites whose case i passes with probability
    ``p_base[:, i]`` without the skill and ``p_skill[:, i]`` with it (one row per suite)."""
    rng = np.random.default_rng(seed)
    n_suites, n_cases = p_base.shape
    shape = (n_suites, n_cases, 2, runs)
    probs = np.stack([p_base, p_skill], axis=2)[..., None]
    passed = rng.random(shape) < probs
    group, case, arm, _ = np.indices(shape).reshape(4, -1)
    ones, zeros = np.ones(passed.size, bool), np.zeros(passed.size)
    o = Outcomes(group, case, arm, ones, passed.reshape(-1), ~ones, zeros, zeros, zeros)
    return table(o, n_suites).verdict


def pass_rates(kind: str, n_cases: int, rng: np.random.Generator) -> np.ndarray:
    """Per suite and case, a pass probability: constant low or middling, or mixed (U-shaped)."""
    if kind == "mixed":  # most cases nearly always pass or fail, some flaky
        return rng.beta(0.5, 0.5, size=(SUITES, n_cases))
    return np.full((SUITES, n_cases), float(kind))


@pytest.mark.parametrize("n_cases", [10, 18, 30, 60])
@pytest.mark.parametrize("runs", [1, 3, 5])
@pytest.mark.parametrize("kind", ["0.1", "0.5", "mixed"])
def test_no_effect_rarely_says_helps(n_cases: int, runs: int, kind: str):
    seed = n_cases * 100 + runs * 10 + len(kind)
    p = pass_rates(kind, n_cases, np.random.default_rng(seed))
    verdicts = simulate(p, p, runs, seed)
    helps, hurts = np.mean(verdicts == "helps"), np.mean(verdicts == "hurts")
    assert helps <= 0.025, f"false 'helps' in {helps:.2%} of suites"
    assert hurts <= 0.025, f"false 'hurts' in {hurts:.2%} of suites"


@pytest.mark.parametrize("kind", ["0.1", "0.35", "mixed"])
def test_a_thirty_point_lift_on_40_cases_and_3_runs_is_found(kind: str):
    rng = np.random.default_rng(40)
    base = pass_rates(kind, 40, rng) * (0.7 if kind == "mixed" else 1.0)
    verdicts = simulate(base, base + 0.3, 3, seed=len(kind))
    power = np.mean(verdicts == "helps")
    assert power >= 0.8, f"power {power:.2%}"
    assert not np.any(verdicts == "hurts")


def test_a_lift_concentrated_on_a_few_cases_is_found_too():
    """Twelve of 40 cases go from always failing to always passing: +30 points."""
    base = np.zeros((SUITES, 40))
    skill = base.copy()
    skill[:, :12] = 1.0
    assert np.mean(simulate(base, skill, 3, seed=7) == "helps") == 1.0


def test_nine_cases_never_get_a_verdict():
    p = np.zeros((SUITES, 9))
    verdicts = simulate(p, p + 1.0, 1, seed=9)  # every case goes 0 -> 1: still too few
    assert set(verdicts) == {"too few cases (9)"}
