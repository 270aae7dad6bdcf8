"""The levels of an adaptive run's looks, spent against the sign test's own joint null.

`results.sequential` stops a run when the sign test at a look says "helps" or "hurts". Spending
``alpha`` over the looks by Bonferroni (each look's level the spending function's increment)
is valid but wasteful: a look's rows contain the previous look's, so a suite that would say
"helps" at one look mostly says it at the next too, and the increments add up the same chance
twice. The *chained* levels spend what the looks really risk together.

Under no effect each case's arms are exchangeable, so swapping a case's two arms (every one of
its samples at once) is as likely as not: conditionally on what was seen up to the swap, each
of the 2^n swaps of the n cases is equally likely, and a case's sign at every look (better,
worse, unchanged with the skill) flips with it. Every rule that picks samples is symmetric in
the arms (the settle rule, the batches), so the swaps leave the looks' sample sets alone.

With R_k the event "the look after round k rejects" (its exact sign test's p below the look's
level a_k) and the chain (Hunter's) bound

    P(R_1 or ... or R_j) <= U_j = U_{j-1} + P(R_j and not R_{j-1}),   U_1 = P(R_1),

look j takes the largest level a_j, at most the spending function's value at look j's share of
the plan, with U_j at most that value too (the sign test is discrete: a_j is the attained
p-value that the bound would not allow, or that value). ``P(R_j and not
R_{j-1})`` is exact under the swaps: the cases fall in four kinds by their signs at the two
looks (the same sign, opposite signs, decided only at the earlier look, only at the later),
each kind's swapped count is binomial, and the joint distribution of the two looks' "better"
counts follows from the four (`_joint`). At the last look U_J <= ``alpha``: under no effect,
a run says "helps" or "hurts" at any look with probability at most ``alpha``, and, the swaps
being symmetric, a false "helps" at most ``alpha / 2``. Futility stops only remove chances to
reject, so they are left out of the bound (non-binding).

A look with more than `MAX_EXACT` decided cases (the table grows with their square, and the
rows are a submitter's) spends what is left by Bonferroni instead: valid, a little stricter.
Each level is a function of the signs seen so far, which the swaps do not change up to sign,
so a replay from the rows recomputes every level to the last digit. Pure: numpy and exact
binomial coefficients; no I/O.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from registry.results.formulas import mcnemar_exact

_SLACK = 1e-12  # float sums of exact probabilities: a level that meets the cap exactly passes
# Decided cases a look's exact joint sum takes (its table is (d + 1)^2 floats): a run's rows come
# from whoever submits them, and a look with more spends by Bonferroni instead (below).
MAX_EXACT = 500


class Spent(NamedTuple):
    """Per group (one run), where the looks so far stand: each case's sign at the last look
    (``status``: group x case, -1 worse with the skill, 0 unchanged or not paired, 1 better),
    that look's ``level`` and ``union``, the chain bound on the chance under no effect that any
    look so far rejected."""

    status: np.ndarray
    level: np.ndarray
    union: np.ndarray

    @classmethod
    def start(cls, groups: int, cases: int) -> Spent:
        """Before the first look: nothing seen, nothing spent."""
        return cls(np.zeros((groups, cases), np.int8), np.zeros(groups), np.zeros(groups))

    def take(self, index: np.ndarray) -> Spent:
        """The groups at ``index`` (a simulation drops the runs that stopped)."""
        return Spent(self.status[index], self.level[index], self.union[index])


def statuses(asked: np.ndarray, graded: np.ndarray, passed: np.ndarray) -> np.ndarray:
    """Each case's sign at a look (group x case) from the first ``asked[group, case]`` runs of
    arrays (group, case, arm, run): the sign of the skill arm's pass fraction minus the
    baseline's among graded samples, 0 where an arm has none: the engine's "up" and "down"
    cases (`stats.table`'s b and c), compared exactly (cross-multiplied counts)."""
    keep = np.arange(graded.shape[-1]) < asked[:, :, None, None]
    g = (graded & keep).sum(-1)
    p = (passed & graded & keep).sum(-1)
    paired = (g > 0).all(-1)
    sign = np.sign(p[..., 1] * g[..., 0] - p[..., 0] * g[..., 1])
    return np.where(paired, sign, 0).astype(np.int8)


def chained(spent: Spent, status: np.ndarray, cap: float, alpha: float) -> Spent:
    """The next look's level per group (module docstring): the cases' signs ``status`` at
    this look, ``cap`` the alpha the spending function allows by it, at most ``alpha`` each."""
    before, now = spent.status.astype(np.int64), status.astype(np.int64)
    kinds = np.stack([((before != 0) & (now == before)).sum(1),
                      ((before != 0) & (now == -before)).sum(1),
                      ((before != 0) & (now == 0)).sum(1),
                      ((before == 0) & (now != 0)).sum(1)], 1)
    keys = np.column_stack([kinds.astype(float), spent.level, spent.union])
    unique, inverse = np.unique(keys, axis=0, return_inverse=True)
    found = np.array([_level(int(k[0]), int(k[1]), int(k[2]), int(k[3]), float(k[4]),
                             float(k[5]), float(cap), float(alpha)) for k in unique])
    found = found[inverse.reshape(-1)]
    return Spent(status.astype(np.int8), found[:, 0], found[:, 1])


@lru_cache(maxsize=65536)
def _level(same: int, flipped: int, gone: int, new: int, prev_level: float, union: float,
           cap: float, alpha: float) -> tuple[float, float]:
    """(level, union) of a look whose cases relate to the previous look's in the four kinds."""
    if cap <= 0:
        return 0.0, union
    if max(same + flipped + gone, same + flipped + new) > MAX_EXACT:
        # P(R_j and not R_j-1) <= P(R_j) <= the level: valid, and no table to build
        level = max(0.0, min(cap - union, alpha))
        return level, union + level
    joint = _joint(same, flipped, gone, new)
    earlier = _pvalues(same + flipped + gone)
    free = joint[earlier >= prev_level].sum(0)  # not rejected at the previous look
    pv = _pvalues(same + flipped + new)
    values, where = np.unique(pv, return_inverse=True)
    below = np.concatenate([[0.0], np.cumsum(np.bincount(where, free, len(values)))])
    fits = np.flatnonzero(union + below[:len(values)] <= cap * (1 + _SLACK) + _SLACK)
    if not len(fits):  # never with a spending function that grows; nothing left to spend
        return 0.0, union
    m = int(fits[-1])
    level = min(float(values[m]), cap, alpha)  # never above what the spending allows by now
    return level, union + float(free[pv < level].sum())


def sign_test(up: np.ndarray, down: np.ndarray) -> np.ndarray:
    """The exact sign test's p-value (`formulas.mcnemar_exact`) per pair of counts."""
    out = np.ones(len(up))
    for d in np.unique(up + down).tolist():
        at = np.flatnonzero(up + down == d)
        out[at] = _pvalues(int(d))[up[at]]
    return out


@lru_cache(maxsize=4096)
def _pvalues(d: int) -> np.ndarray:
    """The exact sign test's p-value for each count of "better" cases out of ``d`` decided."""
    return np.array([mcnemar_exact(b, d - b) for b in range(d + 1)])


@lru_cache(maxsize=4096)
def _binomial(n: int) -> np.ndarray:
    return np.array([math.comb(n, k) / 2**n for k in range(n + 1)])


@lru_cache(maxsize=128)  # at most (MAX_EXACT + 1)^2 floats each
def _joint(same: int, flipped: int, gone: int, new: int) -> np.ndarray:
    """P(u better at the previous look, v better at this one) under the swaps: ``same`` cases
    with one sign at both, ``flipped`` with opposite signs, ``gone`` decided only before,
    ``new`` only now (each kind's unswapped count binomial, independent)."""
    out = np.zeros((same + flipped + gone + 1, same + flipped + new + 1))
    a, b = np.meshgrid(np.arange(same + 1), np.arange(flipped + 1), indexing="ij")
    np.add.at(out, (a + b, a + flipped - b), np.outer(_binomial(same), _binomial(flipped)))
    if gone:
        out = _shift_sum(out, _binomial(gone), axis=0)
    if new:
        out = _shift_sum(out, _binomial(new), axis=1)
    return out


def _shift_sum(m: np.ndarray, pmf: np.ndarray, axis: int) -> np.ndarray:
    """``m`` convolved with ``pmf`` along ``axis`` (only the nonzero part of ``m`` is kept)."""
    size = m.shape[axis] - len(pmf) + 1  # m was allocated to the final size
    out = np.zeros_like(m)
    core = np.take(m, range(size), axis=axis)
    for k, weight in enumerate(pmf):
        index = [slice(None)] * 2
        index[axis] = slice(k, k + size)
        out[tuple(index)] += weight * core
    return out
