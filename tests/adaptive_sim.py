"""Simulated suites run through an evaluation design and the statistics engine itself.

`simulate` draws every sample a suite could be asked, then plays the design's rounds over all
suites at once with the module's own rules (`sequential.settled_cases`, `asked_runs`,
`decide`) and the engine's `stats.table` at each look's level, so what it measures is what
`plan_round` and the CLI do. Shared by tests/test_sequential.py and bench/adaptive.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from registry.results import sequential as seq

Lost = Callable[[np.ndarray, np.random.Generator], np.ndarray]


class Simulated(NamedTuple):
    """Per suite: the verdict at the stop, the reported interval, the true lift (the mean
    over cases of the pass-probability difference), the answers asked (both arms), the round
    of the stop and the planned answers (the fixed design's)."""

    verdict: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    truth: np.ndarray
    calls: np.ndarray
    round: np.ndarray
    planned: int


def simulate(design: seq.Design, p_base: np.ndarray, p_skill: np.ndarray, seed: int,
             lost: Lost | None = None) -> Simulated:
    """Suites whose case i passes with probability ``p_base[:, i]`` without the skill and
    ``p_skill[:, i]`` with it (one row per suite); ``lost(passed, rng)`` marks samples lost
    to transport errors (passed: suite x case x arm x run)."""
    rng = np.random.default_rng(seed)
    n_suites, n = p_base.shape
    runs = design.runs
    shape = (n_suites, n, 2, runs)
    passed = rng.random(shape) < np.stack([p_base, p_skill], axis=2)[..., None]
    errors = lost(passed, rng) if lost else np.zeros(shape, bool)
    settled = seq.settled_cases(design, np.ones(shape, bool), ~errors, passed)
    verdict = np.empty(n_suites, dtype=object)
    lo, hi = np.zeros(n_suites), np.zeros(n_suites)
    calls, stop_round = np.zeros(n_suites, np.int64), np.zeros(n_suites, np.int64)
    active, spent = np.arange(n_suites), None
    for j in range(1, seq.n_rounds(design, n) + 1):
        m = seq.asked_runs(design, n, j, settled[active])
        codes, tab, spent = seq.look(design, n, j, m, ~errors[active], passed[active], spent)
        stop = codes > 0
        spent = spent.take(np.flatnonzero(~stop))
        done = active[stop]
        verdict[done] = tab.verdict[stop]
        lo[done], hi[done] = tab.lift_lo[stop], tab.lift_hi[stop]
        calls[done] = 2 * m[stop].sum(axis=1)
        stop_round[done] = j
        active = active[~stop]
        if not len(active):
            break
    truth = (p_skill - p_base).mean(axis=1)
    return Simulated(verdict, lo, hi, truth, calls, stop_round, 2 * n * runs)
