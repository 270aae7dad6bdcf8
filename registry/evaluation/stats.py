"""Statistics of skill lift: per-arm intervals, paired lift, exact McNemar and suite power.

The unit of independence is the *case*, not the sample: repeats of one case are correlated, so
every interval here resamples or counts cases. Formulas and reference values are in
``shared/facts/statistics.md``. Pure Python (``math``, ``random``, ``statistics``), no scipy.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist

Z95 = 1.959963984540054
INTERVAL_METHOD = "Wilson 95% over case majority verdicts"
LIFT_INTERVAL_METHOD = "paired percentile bootstrap over cases (B=2000, fixed seed)"
WORST_CASE_PD = 1.0

_BOOT_BATCH = 1 << 16  # draws per ``choices`` call: bounds memory, keeps the random stream


def wilson_interval(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Return the Wilson score interval for ``k`` passes in ``n`` trials.

    Stays inside [0, 1] and is exact at the edges (lower bound 0 when k == 0, upper bound 1
    when k == n). With no trials it returns the uninformative interval (0.0, 1.0).
    """
    if not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return 0.0, 1.0
    p, z2 = k / n, z * z
    denom = 1 + z2 / n
    center = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    lo = 0.0 if k == 0 else max(0.0, center - half)
    hi = 1.0 if k == n else min(1.0, center + half)
    return lo, hi


def mcnemar_exact(b: int, c: int) -> float:
    """Return the two-sided exact McNemar p-value for ``b`` and ``c`` discordant cases.

    ``p = min(1, 2 * BinomCDF(min(b, c); b + c, 0.5))`` with exact integers (1.0 when b = c = 0).
    """
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be >= 0, got b={b}, c={c}")
    n = b + c
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1))
    return min(1.0, 2 * tail / 2**n)  # int / int is correctly rounded, even for huge n


def normalized_gain(baseline: float, skill: float) -> float | None:
    """Return ``(skill - baseline) / (1 - baseline)``, or None when the baseline is already 1."""
    return None if baseline >= 1 else (skill - baseline) / (1 - baseline)


def _quantile(sorted_xs: Sequence[float], q: float) -> float:
    """Linear-interpolated quantile of sorted data (numpy's default method)."""
    pos = q * (len(sorted_xs) - 1)
    i = math.floor(pos)
    if i + 1 >= len(sorted_xs):
        return sorted_xs[-1]
    return sorted_xs[i] + (sorted_xs[i + 1] - sorted_xs[i]) * (pos - i)


def paired_bootstrap_lift(
    baseline: dict[str, list[float]],
    skill: dict[str, list[float]],
    *,
    n_boot: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[float, float, float]:
    """Return ``(point, lo, hi)`` for the paired lift of ``skill`` over ``baseline``.

    A case's score is the mean over its repeats; the point estimate is the mean over the cases
    present (with scores) in both arms of ``skill - baseline``. The interval is a percentile
    bootstrap that resamples case ids with replacement, so repeats stay inside their case.
    Cases are sorted by id first, so the result depends only on the data and ``seed``.

    Raises:
        ValueError: If no case has scores in both arms, or ``n_boot``/``level`` are invalid.
    """
    if n_boot < 1 or not 0 < level < 1:
        raise ValueError(f"need n_boot >= 1 and 0 < level < 1, got {n_boot}, {level}")
    diffs = [
        math.fsum(skill[cid]) / len(skill[cid]) - math.fsum(scores) / len(scores)
        for cid, scores in sorted(baseline.items())
        if scores and skill.get(cid)
    ]
    if not diffs:
        raise ValueError("no case has scores in both arms")
    n = len(diffs)
    point = math.fsum(diffs) / n  # fsum is order-free, so a resample equal as a multiset ties
    rng = random.Random(seed)
    per_call = max(1, _BOOT_BATCH // n)
    means: list[float] = []
    for start in range(0, n_boot, per_call):
        reps = min(per_call, n_boot - start)
        draws = rng.choices(diffs, k=n * reps)
        means.extend(math.fsum(draws[i : i + n]) / n for i in range(0, n * reps, n))
    means.sort()
    return point, _quantile(means, (1 - level) / 2), _quantile(means, (1 + level) / 2)


def _z(alpha: float, power: float) -> tuple[float, float]:
    return NormalDist().inv_cdf(1 - alpha / 2), NormalDist().inv_cdf(power)


def _connor_n(d: float, pd: float, z_a: float, z_b: float) -> float:
    return (z_a * math.sqrt(pd) + z_b * math.sqrt(max(pd - d * d, 0.0))) ** 2 / (d * d)


def cases_needed(d: float, pd: float, alpha: float = 0.05, power: float = 0.8) -> int | None:
    """Return the cases a paired suite needs to detect lift ``d`` (Connor 1987), rounded up.

    ``pd`` is the expected share of discordant cases. Returns None when no suite can detect
    the lift: ``d == 0``, ``pd <= 0`` or ``pd < |d|`` (a lift forces that much discordance).

    Raises:
        ValueError: If ``pd > 1``.
    """
    if pd > 1:
        raise ValueError(f"discordant share must be <= 1, got {pd}")
    if d == 0 or pd <= 0 or pd < abs(d):
        return None
    return math.ceil(_connor_n(d, pd, *_z(alpha, power)) - 1e-9)


def detectable_lift(
    n_cases: int, pd: float | None = None, alpha: float = 0.05, power: float = 0.8
) -> float:
    """Return the smallest lift ``|d|`` a suite of ``n_cases`` cases detects at ``power``.

    Inverts Connor's formula by bisection over ``0 < d <= pd``. When ``pd`` is None it uses
    ``WORST_CASE_PD = 1.0`` (every case discordant): the cases needed for a given ``d`` grow
    with ``pd``, so any true lift at least this large is detected whatever the real discordance
    (which a lift ``d`` forces to be >= ``|d|``), and the answer does not depend on the observed
    outcome. Returns ``math.inf`` when no lift up to ``pd`` is detectable (e.g. fewer than 4
    cases at the worst case).
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


def verdict(lo: float, hi: float) -> str:
    """Return "helps" if the interval is above 0, "hurts" if below, else "no detectable effect"."""
    if lo > 0:
        return "helps"
    if hi < 0:
        return "hurts"
    return "no detectable effect"


def _tally(passes: Sequence[bool | None]) -> tuple[int, int]:
    """Return ``(passes, non-error samples)``; ``list.count`` keeps this fast on big inputs."""
    return passes.count(True), len(passes) - passes.count(None)


def case_status(passes: list[bool | None]) -> str:
    """Classify one case's repeats: "stable pass", "flaky", "stable fail" or "error".

    Errors (None) are ignored unless every repeat errored; an empty list is an "error".
    """
    n_pass, n_valid = _tally(passes)
    if n_valid == 0:
        return "error"
    if n_pass == n_valid:
        return "stable pass"
    return "stable fail" if n_pass == 0 else "flaky"


def majority(passes: list[bool | None]) -> bool:
    """Return True when a strict majority of the non-error repeats pass (ties are False)."""
    n_pass, n_valid = _tally(passes)
    return 2 * n_pass > n_valid


def discordant_share(b: int, c: int, n_cases: int) -> float:
    """Return ``(b + c) / n_cases``, the observed discordant share (0.0 for an empty suite)."""
    return (b + c) / n_cases if n_cases else 0.0


def non_discriminating(
    baseline: Mapping[str, list[bool | None]], skill: Mapping[str, list[bool | None]]
) -> list[str]:
    """Return ids of cases that pass on every repeat in both arms; they cannot show lift."""
    stable = [cid for cid, passes in skill.items() if case_status(passes) == "stable pass"]
    return sorted(c for c in stable if c in baseline and case_status(baseline[c]) == "stable pass")


@dataclass(frozen=True)
class ArmStats:
    """One arm's results. ``lo``/``hi`` follow ``INTERVAL_METHOD``.

    ``pass_rate`` is the mean over cases of each case's pass fraction (errors excluded from
    denominators). The Wilson interval over case majority verdicts bounds ``majority_rate``
    (share of cases whose majority passes); with one repeat per case the two rates coincide.
    Cases with only errors count in ``n_errors`` but not in ``n_cases``.
    """

    n_cases: int
    n_samples: int
    n_errors: int
    pass_rate: float
    lo: float
    hi: float
    majority_rate: float


@dataclass(frozen=True)
class LiftStats:
    """Paired comparison of two arms over the cases usable in both.

    ``lift``/``lo``/``hi`` follow ``LIFT_INTERVAL_METHOD``; ``p_value`` is exact McNemar on
    case majority verdicts (``b``: pass only with the skill, ``c``: pass only without);
    ``detectable``: smallest lift this suite detects at 80% power (see ``detectable_lift``).
    """

    baseline: ArmStats
    skill: ArmStats
    lift: float
    lo: float
    hi: float
    p_value: float
    b: int
    c: int
    normalized_gain: float | None
    verdict: str
    detectable: float
    n_cases: int


def arm_stats(cases: Mapping[str, list[bool | None]]) -> ArmStats:
    """Summarize one arm given ``case_id -> per-repeat verdicts`` (None marks an error)."""
    n_samples = n_errors = n_majority = 0
    fractions: list[float] = []
    for passes in cases.values():
        n_pass, n_valid = _tally(passes)
        n_errors += len(passes) - n_valid
        if n_valid == 0:
            continue
        n_samples += n_valid
        fractions.append(n_pass / n_valid)
        n_majority += 2 * n_pass > n_valid
    n = len(fractions)
    rate, majority_rate = (math.fsum(fractions) / n, n_majority / n) if n else (0.0, 0.0)
    return ArmStats(n, n_samples, n_errors, rate, *wilson_interval(n_majority, n), majority_rate)


def compare_arms(
    baseline: dict[str, list[bool | None]],
    skill: dict[str, list[bool | None]],
    *,
    seed: int = 0,
    n_boot: int = 2000,
) -> LiftStats:
    """Compare a skill arm with its baseline on the same cases.

    Inputs map ``case_id -> per-repeat verdicts`` (None = error). Errors are excluded from
    denominators, and a case with only errors in either arm is left out of the paired
    comparison. With no usable paired case the lift is 0.0 with the full interval [-1, 1].
    """
    scores: tuple[dict[str, list[float]], dict[str, list[float]]] = ({}, {})
    b = c = 0
    for cid, base_passes in baseline.items():
        base_pass, base_valid = _tally(base_passes)
        skill_pass, skill_valid = _tally(skill.get(cid, []))
        if base_valid == 0 or skill_valid == 0:
            continue
        scores[0][cid] = [base_pass / base_valid]
        scores[1][cid] = [skill_pass / skill_valid]
        base_major, skill_major = 2 * base_pass > base_valid, 2 * skill_pass > skill_valid
        b += skill_major and not base_major
        c += base_major and not skill_major
    n = len(scores[0])
    if n:
        lift, lo, hi = paired_bootstrap_lift(*scores, n_boot=n_boot, seed=seed)
        base_rate, skill_rate = (math.fsum(v[0] for v in arm.values()) / n for arm in scores)
        gain = normalized_gain(base_rate, skill_rate)
    else:
        lift, lo, hi, gain = 0.0, -1.0, 1.0, None
    p_value, n_detectable = mcnemar_exact(b, c), detectable_lift(n)
    arms = arm_stats(baseline), arm_stats(skill)
    return LiftStats(*arms, lift, lo, hi, p_value, b, c, gain, verdict(lo, hi), n_detectable, n)
