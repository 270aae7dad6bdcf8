"""The adaptive design's stops and reporting levels for many runs at once: the leaderboard's
path (`results.grouping`), replaying the rounds over every run of one design and suite size
together with `sequential.look`, so each run's level agrees with `sequential.reporting`'s to
the last digit (tests/test_sequential.py)."""

from __future__ import annotations

import numpy as np

from registry.results.chained_levels import Spent
from registry.results.sequential import (
    Design,
    asked_runs,
    look_codes,
    n_rounds,
    settled_cases,
)


def reportings(design: Design, present: np.ndarray, graded: np.ndarray,
               passed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`reporting` of many runs of one design on suites of one size at once, from arrays
    (run, case, arm, run index) as `_arrays` builds them (``present``: each arm's outcomes up to
    its first missing run; ``graded``/``passed`` False where absent): per run the level and
    whether the design stopped. The rounds are replayed over all runs together, as
    `plan_round` replays them one run at a time, with the same `look`, so the levels agree to
    the last digit (tests/test_sequential.py); the leaderboard's path over many runs."""
    count, n = present.shape[:2]
    alpha, stopped = np.full(count, design.alpha), np.zeros(count, dtype=bool)
    if design.kind == "fixed" or not count:
        return alpha, stopped
    settled = settled_cases(design, present, graded, passed)
    both = present.all(axis=-2)  # (run, case, run index): asked in both arms
    gap = np.where(both.all(axis=-1), design.runs, np.argmin(both, axis=-1))
    active, spent = np.arange(count), Spent.start(count, n)
    for j in range(1, n_rounds(design, n) + 1):
        m = asked_runs(design, n, j, settled[active])
        missing = (m > gap[active]).any(axis=1)  # the round is not all there: partial
        alpha[active[missing]] = spent.level[missing] if j > 1 else design.alpha
        go, m, spent = active[~missing], m[~missing], spent.take(np.flatnonzero(~missing))
        if len(go):
            codes, spent = look_codes(design, n, j, m, graded[go], passed[go], spent)
            alpha[go[codes > 0]], stopped[go[codes > 0]] = spent.level[codes > 0], True
            go, spent = go[codes == 0], spent.take(np.flatnonzero(codes == 0))
        active = go
        if not len(active):
            break
    return alpha, stopped
