"""Closed-form statistics of skill lift: Wilson, the paired score interval, the exact sign test,
Student t, suite power.

Reference values are in tests/test_stats.py and tests/test_stats_interval.py (checked against
scipy); `stats` builds every figure from these. No scipy: each formula is exact in a few lines.
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


def paired_score_interval(group: np.ndarray, diff: np.ndarray, n_groups: int,
                          alpha: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The lift's 95% interval per group from its per-case differences ``diff`` in [-1, 1]
    (``1 - alpha[group]`` with ``alpha``: an adaptive run's repeated interval at its look).

    A studentized score interval: the lifts ``D`` with ``(n - 1) (m - D)^2 / V(D) <= t^2``
    (``m``: the mean difference, ``t``: Student's for ``n - 1`` degrees of freedom), ``V(D)``
    being the variance of a case's difference under the likeliest distribution with mean ``D``
    on the differences seen plus the extremes -1 and +1 (a case can at most go from never to
    always passing). With one run per case that is Tango's score interval for paired proportions
    (Tango 1998), with ``t`` for ``z``: its variance ``2 q21 + D (1 - D)`` keeps discordance
    possible, so twelve cases that all flip give ``[(n - q^2) / (n + q^2), 1]`` (``q^2 = t^2 n /
    (n - 1)``), not ``[1, 1]``. With several runs the likeliest distribution reweights the
    differences seen (empirical likelihood), so averaging runs narrows the interval as it narrows
    the cases' spread, and where ``V`` does not move with ``D`` this is the paired t interval.
    Each bound is ``S1 / S0`` at the root of ``n th (m S0 - S1) = q^2`` along the tilt ``th``
    (``S0``, ``S1``: means of ``1 / (1 + th d)`` and ``d / (1 + th d)``), or ``(n m + q^2) /
    (n + q^2)`` once the tilt puts mass on the extreme. ``(-1, 1)`` under two cases.
    """
    n = np.bincount(group, minlength=n_groups)
    code = (diff >= 1) + 2 * (diff <= -1)  # 1: a case at +1, 2: at -1, 0: neither
    counts = np.bincount(group * 3 + code, minlength=3 * n_groups).reshape(-1, 3)
    frac = (code == 0) & (diff != 0)
    cell, x = group[frac], diff[frac]
    levels = np.full(n_groups, ALPHA) if alpha is None else \
        np.clip(np.broadcast_to(alpha, n_groups), 1e-12, 1.0)  # a look that spends none
    # the lower bound is minus the upper bound of -diff: both sides solved as one batch
    upper = _score_upper(np.concatenate([n, n]), np.concatenate([counts[:, 1], counts[:, 2]]),
                         np.concatenate([counts[:, 2], counts[:, 1]]),
                         np.concatenate([cell, cell + n_groups]), np.concatenate([x, -x]),
                         np.concatenate([levels, levels]))
    return -upper[n_groups:], upper[:n_groups]


def _score_upper(n: np.ndarray, ones: np.ndarray, minus: np.ndarray, cell: np.ndarray,
                 x: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """The upper score bound per group of ``n`` cases, ``ones`` at +1, ``minus`` at -1 and the
    fractional differences ``x`` of group ``cell`` (the rest at 0), at level ``1 - alpha``.
    Groups without fractions (one run per case) are solved once per (level, cases, up, down)."""
    size = len(n)
    fractional = np.bincount(cell, minlength=size) > 0
    width = n.max(initial=0) + 1
    _, level = np.unique(alpha, return_inverse=True)
    key = np.where(fractional, -1 - np.arange(size),
                   ((level.reshape(-1) * width + n) * width + ones) * width + minus)
    _, first, problem = np.unique(key, return_index=True, return_inverse=True)
    problem = problem.reshape(-1)
    return _solve_upper(n[first], ones[first], minus[first], problem[cell], x,
                        alpha[first])[problem]


def _solve_upper(n: np.ndarray, ones: np.ndarray, minus: np.ndarray, of: np.ndarray,
                 x: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """`_score_upper` for problems of ``n`` cases, ``ones`` at +1, ``minus`` at -1 and the
    fractional differences ``x`` of problem ``of``: Newton's method on the tilt ``th``, kept
    inside a shrinking bracket (bisection where a step would leave it). With ``w = 1 / (1 + th
    d)``, ``S0 = mean(w)`` and ``g = mean((m - d) w)``: the statistic is ``n th g`` and the
    bound ``m - g / S0`` (``g`` is summed as such: ``m S0 - S1`` would cancel)."""
    size, safe_n = len(n), np.maximum(n, 1)
    pairs, at = np.unique(np.stack([np.maximum(n, 2), alpha], 1), axis=0, return_inverse=True)
    q2 = np.array([t_critical(int(k) - 1, LEVEL if a == ALPHA else 1 - a) ** 2 * k / (k - 1)
                   for k, a in pairs.tolist()])[at.reshape(-1)]
    m = (ones - minus + np.bincount(of, x, minlength=size)) / safe_n
    zeros = n - ones - minus - np.bincount(of, minlength=size) + (n == 0)  # 1: none is moot
    gap = m[of] - x

    def sums(th: np.ndarray, slope: bool = False) -> list[np.ndarray]:
        """S0, g and, with slope, g's derivative: the means over a problem's cases."""
        up = ones / np.maximum(1 + th, 1e-300)  # the tilt reaches -1 only where +1 is moot
        down, w = minus / (1 - th), 1 / (1 + th[of] * x)
        found = [zeros + up + down + np.bincount(of, w, minlength=size),
                 m * zeros + (m - 1) * up + (m + 1) * down
                 + np.bincount(of, gap * w, minlength=size)]
        if slope:  # d/dth of (m - d) / (1 + th d) is -d (m - d) / (1 + th d)^2
            up2, down2 = up * up / np.maximum(ones, 1), down * down / np.maximum(minus, 1)
            found.append((m - 1) * -up2 + (m + 1) * down2
                         - np.bincount(of, x * gap * w * w, minlength=size))
        return [f / safe_n for f in found]

    s0, g = sums(np.full(size, -1.0))
    boundary = (ones == 0) & (-n * g <= q2)  # the statistic at the tilt's end, -1
    live = ~boundary & (n >= 2) & (m < 1)
    lo, hi = np.full(size, -1.0), np.zeros(size)  # the statistic grows as the tilt goes to -1
    spread = (ones + minus + np.bincount(of, x * x, minlength=size)) / safe_n - m * m
    th = np.where(live, -np.sqrt(q2 / (safe_n * np.maximum(spread, 1e-12))).clip(0, 0.5), -0.5)
    for _ in range(200):
        s0, g, dg = sums(th, slope=True)
        f, slope = n * th * g - q2, n * (g + th * dg)
        lo, hi = np.where(f > 0, th, lo), np.where(f > 0, hi, th)
        step = th - f / np.where(slope < 0, slope, -1.0)
        done = (slope < 0) & (np.abs(step - th) <= 1e-14)  # the root, to rounding
        inside = (slope < 0) & (step > lo) & (step < hi)
        th = np.where(live & ~done, np.where(inside, step, (lo + hi) / 2), th)
        if (~live | done | (hi - lo <= 1e-14)).all():
            break
    s0, g = sums(th)
    bound = np.where(boundary, (n * m + q2) / (n + q2), m - g / s0)
    return np.where((n < 2) | (m >= 1), 1.0, np.clip(bound, m, 1.0))


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
