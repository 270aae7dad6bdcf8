"""One definition of the samples a run plans, for a manifest, a shard, a trigger run and the
leaderboard's columns."""

from __future__ import annotations

import numpy as np

from registry.results.runs import samples_planned


def test_each_case_in_both_arms_on_each_model_each_repeat():
    assert samples_planned(3, 4, 5) == 3 * 4 * 5 * 2
    assert samples_planned(3, 4, 5, arms=1) == 60  # a trigger run: one session per query


def test_the_leaderboards_columns_get_the_same_count_per_run():
    cases, repeats = np.array([4, 10, 1]), np.array([5, 3, 1])
    counts = samples_planned(1, cases, repeats)
    assert counts.tolist() == [samples_planned(1, c, r) for c, r in zip([4, 10, 1], [5, 3, 1],
                                                                        strict=True)]
