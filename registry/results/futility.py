"""The exact sum behind the adaptive design's futility rule (`sequential.conditional_power`):
the chance that the last look's exact sign test rejects when each of ``n`` cases ends up,
independently, better with the skill with share ``up``, worse with share ``down``, else
unchanged. Summed exactly over every (up, down) count, so a replay recomputes it to the last
digit. Pure numpy; grids cached per suite size.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from registry.results.formulas import mcnemar_exact


def trend_power(n: int, up: float, down: float, level: float) -> float:
    """P(the final counts of ``n`` cases fall where the exact test's p-value is below
    ``level``), the cases' outcomes multinomial with shares ``up`` and ``down``."""
    return _power(n, up, down, _p_values(n) < level)


def _power(n: int, up: float, down: float, rejects: np.ndarray) -> float:
    """P(the final counts fall where the test rejects) under the multinomial of `conditional_
    power` with shares ``up`` and ``down`` of the ``n`` cases."""
    share = np.array([up, down, max(1 - up - down, 0.0)])
    ups, downs, rest, coefficient = _grid(n)
    ok = (rest >= 0) & rejects
    if not ok.any():
        return 0.0
    logs = np.log(np.maximum(share, 1e-300))  # a zero share only meets a zero count
    terms = (coefficient
             + np.where(ups > 0, ups * logs[0], 0) + np.where(downs > 0, downs * logs[1], 0)
             + np.where(rest > 0, rest * logs[2], 0))
    return float(np.exp(terms[ok]).sum())


@functools.lru_cache(maxsize=64)
def _grid(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every (up, down) count of ``n`` cases, the rest, and the log multinomial coefficient
    (``lgamma`` of each count, summed in the order `_power` always used: the same floats)."""
    ups, downs = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    rest = n - ups - downs
    lg = np.vectorize(math.lgamma)
    coefficient = lg(n + 1) - lg(ups + 1) - lg(downs + 1) - lg(np.maximum(rest, 0) + 1)
    return ups, downs, rest, coefficient


@functools.lru_cache(maxsize=64)
def _p_values(n: int) -> np.ndarray:
    """The exact sign test's p-value for every (up, down) with up + down <= n (1 beyond)."""
    return np.array([[mcnemar_exact(u, d) if u + d <= n else 1.0 for d in range(n + 1)]
                     for u in range(n + 1)])
