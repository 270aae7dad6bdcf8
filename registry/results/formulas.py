"""Closed-form statistics of skill lift: Wilson, the exact sign test, Student t, suite power.

Reference values are in tests/test_stats.py (checked against scipy); `stats` builds every
figure from these. No scipy: each formula is exact in a few lines.
"""

from __future__ import annotations

import functools
import math
from statistics import NormalDist

import numpy as np

LEVEL = 0.95
ALPHA = 0.05
Z95 = 1.959963984540054
WORST_CASE_PD = 1.0


def wilson_arrays(p: np.ndarray, n: np.ndarray, z: float = Z95) -> tuple[np.ndarray, np.ndarray]:
    """Vectorized Wilson interval at rates ``p`` over ``n`` cases ((0, 1) where n == 0)."""
    n_safe = np.maximum(n, 1).astype(float)
    z2 = z * z
    denom = 1 + z2 / n_safe
    center = (p + z2 / (2 * n_safe)) / denom
    half = z * np.sqrt(np.maximum(p * (1 - p), 0.0) / n_safe + z2 / (4 * n_safe**2)) / denom
    lo = np.where(p <= 0, 0.0, np.clip(center - half, 0.0, p))
    hi = np.where(p >= 1, 1.0, np.clip(center + half, p, 1.0))
    return np.where(n > 0, lo, 0.0), np.where(n > 0, hi, 1.0)


def mcnemar_exact(b: int, c: int) -> float:
    """Return the two-sided exact McNemar (sign test) p-value for ``b`` up and ``c`` down.

    ``p = min(1, 2 * BinomCDF(min(b, c); b + c, 0.5))`` with exact integers (1.0 when b = c = 0).
    """
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be >= 0, got b={b}, c={c}")
    n = b + c
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1))
    return min(1.0, 2 * tail / 2**n)  # int / int is correctly rounded, even for huge n


@functools.lru_cache(maxsize=4096)
def t_critical(df: int, level: float = LEVEL) -> float:
    """Return the two-sided Student t critical value for ``df`` degrees of freedom.

    Bisection on the closed-form t distribution for integer ``df`` (Abramowitz & Stegun
    26.7.3-4); beyond 2,000 degrees of freedom the Cornish-Fisher expansion is exact to 1e-12.
    """
    if df < 1:
        return math.inf
    z = NormalDist().inv_cdf((1 + level) / 2)
    if df > 2000:
        return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
    lo, hi = 0.0, 1e4
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _t_within(mid, df) < level else (lo, mid)
    return hi


def _t_within(t: float, df: int) -> float:
    """P(|T| <= t) for Student's t with integer ``df``."""
    theta = math.atan(t / math.sqrt(df))
    c2, total, term = math.cos(theta) ** 2, 1.0, 1.0
    if df % 2:
        for k in range(1, (df - 1) // 2):
            term *= 2 * k / (2 * k + 1) * c2
            total += term
        tail = math.sin(theta) * math.cos(theta) * total if df > 1 else 0.0
        return 2 / math.pi * (theta + tail)
    for k in range(1, df // 2):
        term *= (2 * k - 1) / (2 * k) * c2
        total += term
    return math.sin(theta) * total


def normalized_gain(baseline: float, skill: float) -> float | None:
    """Return ``(skill - baseline) / (1 - baseline)``, or None when the baseline is already 1."""
    return None if baseline >= 1 else (skill - baseline) / (1 - baseline)


def _z(alpha: float, power: float) -> tuple[float, float]:
    return NormalDist().inv_cdf(1 - alpha / 2), NormalDist().inv_cdf(power)


def _connor_n(d: float, pd: float, z_a: float, z_b: float) -> float:
    return (z_a * math.sqrt(pd) + z_b * math.sqrt(max(pd - d * d, 0.0))) ** 2 / (d * d)


@functools.lru_cache(maxsize=4096)
def detectable_lift(n_cases: int, pd: float | None = None, alpha: float = ALPHA,
                    power: float = 0.8) -> float:
    """Return the smallest lift ``|d|`` a suite of ``n_cases`` cases detects at ``power``.

    Inverts Connor's formula by bisection over ``0 < d <= pd``. When ``pd`` is None it uses
    ``WORST_CASE_PD = 1.0``: the cases needed grow with ``pd``, so any true lift at least this
    large is detected whatever the real discordance. Returns ``math.inf`` when no lift up to
    ``pd`` is detectable (e.g. fewer than 4 cases at the worst case).
    """
    share = WORST_CASE_PD if pd is None else pd
    if share > 1:
        raise ValueError(f"discordant share must be <= 1, got {share}")
    if n_cases <= 0 or share <= 0:
        return math.inf
    z_a, z_b = _z(alpha, power)
    if _connor_n(share, share, z_a, z_b) > n_cases:
        return math.inf
    lo, hi = 0.0, share  # invariant: needed(hi) <= n_cases < needed(lo)
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if _connor_n(mid, share, z_a, z_b) <= n_cases else (mid, hi)
    return hi
