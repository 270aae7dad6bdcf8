"""An adaptive design's schedule: which runs of which cases each round asks, the share of the
plan asked by each round, and how much of ``alpha`` may be spent by then.

With several runs per case the plan asks one run of every case per ``splits`` rounds: the cases
are cut into ``splits`` parts in case-label order, and round j asks the next run of one part,
so a look comes after every part (with ``splits`` 2 and 3 runs: half the cases' first run, the
other half's, then the first half's second run, and so on; a record made before ``splits``
asked every case each round: 1). With one run per case the rounds are batches of cases (at
least `MIN_BATCH` each). A fixed design is one round. `results.sequential` holds the rules that
look at the outcomes; this module looks only at the design and the suite's size.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Protocol

import numpy as np

from registry.results.verdicts import MIN_CASES


class Design(Protocol):
    """What the schedule reads of a design (`results.sequential.Design`)."""

    @property
    def kind(self) -> str: ...
    @property
    def runs(self) -> int: ...
    @property
    def alpha(self) -> float: ...
    @property
    def spending(self) -> str: ...
    @property
    def settle_after(self) -> int: ...
    @property
    def batches(self) -> int: ...
    @property
    def splits(self) -> int: ...

MIN_BATCH = 5  # cases in a batch (one run per case): a first look that can stop for futility
_NORMAL = NormalDist()


def _batch(design: Design, n: int) -> int:
    return max(MIN_BATCH, math.ceil(n / design.batches))


def _parts(design: Design, n: int) -> tuple[int, int]:
    """(parts, cases a part) of a plan with several runs per case."""
    parts = max(1, min(design.splits, n))
    return parts, math.ceil(n / parts)


def n_rounds(design: Design, n_cases: int) -> int:
    """Rounds in the plan of a suite of ``n_cases`` cases."""
    if design.kind == "fixed":
        return 1
    if design.runs > 1:
        return design.runs * _parts(design, n_cases)[0]
    return max(1, math.ceil(n_cases / _batch(design, n_cases)))


def runs_by(design: Design, n_cases: int, j: int) -> np.ndarray:
    """Runs asked of each case (in case-label order) by the end of round ``j``, settling aside."""
    if design.kind == "fixed":
        return np.full(n_cases, design.runs if j >= 1 else 0, dtype=np.int64)
    rank = np.arange(n_cases)
    if design.runs > 1:
        parts, size = _parts(design, n_cases)
        j = min(j, n_rounds(design, n_cases))
        return (j // parts + (rank // size < j % parts)).astype(np.int64)
    return (rank < min(n_cases, j * _batch(design, n_cases))).astype(np.int64)


def whole_runs(design: Design, n_cases: int, j: int) -> int:
    """Runs every case has been asked by the end of round ``j`` (settling aside)."""
    runs = runs_by(design, n_cases, j)
    return int(runs.min()) if len(runs) else 0


def asked_runs(design: Design, n_cases: int, j: int, settled: np.ndarray) -> np.ndarray:
    """Runs asked of each case (last axis, in case-label order) by the end of round ``j``: a
    settled case (``settled``, same shape) stops at ``settle_after``."""
    cap = np.broadcast_to(runs_by(design, n_cases, j), settled.shape)
    if design.kind == "fixed" or design.runs == 1:
        return np.array(cap)
    return np.where(settled & (cap > design.settle_after), design.settle_after, cap)


def fraction(design: Design, n_cases: int, j: int) -> float:
    """The share of the planned samples asked by the end of round ``j`` (settling aside)."""
    if j >= n_rounds(design, n_cases):
        return 1.0
    return float(runs_by(design, n_cases, j).sum()) / (n_cases * design.runs)


def spent(design: Design, t: float) -> float:
    """The alpha spent by share ``t`` of the plan (Lan-DeMets; exactly ``alpha`` at 1)."""
    if t >= 1:
        return design.alpha
    if t <= 0:
        return 0.0
    if design.spending == "pocock":
        return design.alpha * math.log(1 + (math.e - 1) * t)
    if design.spending == "linear":  # Kim-DeMets' power family at rho = 1
        return design.alpha * t
    if design.spending == "haybittle-peto":  # a fiftieth of alpha per tenth of the plan
        return design.alpha / 50 * min(t * 10, 10)
    if design.spending.startswith("power-"):  # Kim-DeMets' family at rho: not offered, measured
        return design.alpha * t ** float(design.spending[6:])  # (bench/adaptive_frontier.py)
    z = _NORMAL.inv_cdf(1 - design.alpha / 2)
    return 2 * (1 - _NORMAL.cdf(z / math.sqrt(t)))


def look_alpha(design: Design, n_cases: int, j: int) -> float:
    """The increment spent at the look after round ``j``: what may be spent by it less what
    was by the look before (one with fewer than `MIN_CASES` cases asked spends none: it can
    only stop for futility, and what it would have spent passes to the next)."""
    if design.kind == "fixed":
        return design.alpha
    return spent_by(design, n_cases, j) - spent_by(design, n_cases, j - 1)


def spent_by(design: Design, n_cases: int, j: int) -> float:
    """What may be spent by the look after round ``j``."""
    if j < 1:
        return 0.0
    if j < n_rounds(design, n_cases) and \
            int((runs_by(design, n_cases, j) > 0).sum()) < MIN_CASES:
        return 0.0
    return spent(design, fraction(design, n_cases, j))
