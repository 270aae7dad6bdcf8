"""Scalar reference forms of the statistics formulas, for tests to check the engine against.

The engine works on arrays (`formulas.wilson_arrays`) and inverts Connor's sample-size formula
(`formulas.detectable_lift`); these are the textbook scalar forms, written out on their own.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

from registry.results.formulas import wilson_arrays


def wilson(k: float, n: int) -> tuple[float, float]:
    """The engine's Wilson 95% interval for `k` passes in `n` trials."""
    lo, hi = wilson_arrays(np.array([k / n if n else 0.0]), np.array([n]))
    return float(lo[0]), float(hi[0])


def cases_needed(d: float, pd: float, alpha: float = 0.05, power: float = 0.8) -> int | None:
    """Cases a paired suite needs to detect lift `d` with discordant share `pd` (Connor 1987),
    or None when none can (`d == 0`, `pd <= 0`, or `pd < |d|`)."""
    if d == 0 or pd <= 0 or pd < abs(d):
        return None
    z_a, z_b = NormalDist().inv_cdf(1 - alpha / 2), NormalDist().inv_cdf(power)
    n = (z_a * math.sqrt(pd) + z_b * math.sqrt(max(pd - d * d, 0.0))) ** 2 / (d * d)
    return math.ceil(n - 1e-9)
