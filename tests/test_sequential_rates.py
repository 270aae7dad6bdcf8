"""The one-arm adaptive design of trigger evals (`results.sequential_rates`), proven by
simulation through its own functions: at a fixed seed, over suites of 10-40 queries with 3 or 5
runs and should/should-not rates that are near-perfect, U-shaped or flaky (with failed
sessions), the interval reported at the stop covers the rate in at least 95% of suites, for
recall and false triggers alike, and no suite asks more than the fixed plan; the replay of one
run from its history (`plan_round`) stops where the simulation stopped."""

from __future__ import annotations

import numpy as np
import pytest

from registry.errors import HubskillsError
from registry.results.sequential_rates import (
    RateDesign,
    check_rounds,
    default_kind,
    look_alpha,
    plan_round,
    simulate,
    validate,
)

SUITES = 1500
RATES = {  # (should-trigger rates, should-not rates) per query, and their means
    "near-perfect": (lambda r, s: r.beta(9, 1, s), lambda r, s: r.beta(1, 9, s), 0.9, 0.1),
    "U-shaped": (lambda r, s: r.beta(0.5, 0.5, s), lambda r, s: r.beta(0.5, 0.5, s), 0.5, 0.5),
    "flaky": (lambda r, s: r.uniform(0.3, 0.7, s), lambda r, s: r.uniform(0.1, 0.4, s), 0.5,
              0.25),
}


@pytest.mark.parametrize("queries,runs", [(10, 3), (20, 5), (40, 3)])
@pytest.mark.parametrize("kind", list(RATES))
def test_the_reported_intervals_cover_and_the_stop_never_exceeds_the_plan(queries, runs, kind):
    rng = np.random.default_rng(41)
    draw_should, draw_not, mean_should, mean_not = RATES[kind]
    half = queries // 2
    should = np.arange(queries) < half
    p = np.concatenate([draw_should(rng, (SUITES, half)),
                        draw_not(rng, (SUITES, queries - half))], 1)
    found = simulate(RateDesign(runs=runs), should, p, rng, errors=0.05)
    for k, mean in enumerate((mean_should, mean_not)):
        covered = (found["lo"][:, k] <= mean) & (mean <= found["hi"][:, k])
        assert covered.mean() >= 0.95, (kind, k, covered.mean())
    assert (found["calls"] <= queries * runs).all()
    assert found["calls"].mean() < queries * runs  # agreeing queries skip their later runs


def test_a_run_replayed_from_its_history_stops_where_the_simulation_did():
    rng = np.random.default_rng(7)
    design = RateDesign(runs=4, width=0.5)  # wide enough that the figures settle early
    should = np.arange(30) < 15
    p = np.where(should, 0.97, 0.03)[None].repeat(20, 0)
    state = rng.bit_generator.state
    found = simulate(design, should, p, rng)
    rng.bit_generator.state = state  # the same draws again
    opened = rng.random((20, 30, 4)) < p[..., None]
    assert (found["round"] < 4).any()  # some stopped for settled figures
    for s in range(20):
        ids = [f"q{i:02d}" for i in range(30)]
        history = {q: (bool(should[i]), []) for i, q in enumerate(ids)}
        rounds = []
        while not (plan := plan_round(design, history)).stop:
            rows = [(q, r, bool(opened[s, ids.index(q), r])) for q, r in plan.samples]
            for q, _r, v in rows:
                history[q][1].append(v)
            rounds.append(rows)
        assert plan.round == found["round"][s]
        assert sum(len(v) for _, v in history.values()) == found["calls"][s]
        assert check_rounds(design, {q: h[0] for q, h in history.items()}, rounds) == []
        if len(rounds) > 1:  # cut after its first round, yet said to be complete
            assert check_rounds(design, {q: h[0] for q, h in history.items()}, rounds[:1])


def test_levels_defaults_and_bad_parameters():
    design = RateDesign(runs=3)
    levels = [look_alpha(design, j) for j in (1, 2, 3)]
    assert sum(levels) == pytest.approx(0.05) and levels[0] == pytest.approx(0.05 / 50 * 10 / 3)
    assert default_kind(12, 3) == "adaptive"
    assert default_kind(9, 3) == default_kind(12, 2) == "fixed"
    with pytest.raises(HubskillsError, match="settle_after must be at least 1"):
        validate(RateDesign(settle_after=0), 10)
    with pytest.raises(HubskillsError, match="spending must be one of"):
        validate(RateDesign(spending="bayes"), 10)
