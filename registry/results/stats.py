"""The one statistics engine: every figure a run summary, the leaderboard, a card or the Space
shows.

`table` takes result rows as integer arrays (a group code per row: a model of one run, or a
leaderboard entry; a case rank; the arm; the outcome) and returns every figure per group, with
numpy and no Python loop over rows. Every screen calls it, so one set of rows gives bit-identical
numbers everywhere: cases are summed in case-label order whatever the order of the rows, and
dollars are summed as integer nanodollars.

Methods (docs/statistics.md; reference values in tests/test_stats.py):

- The unit of independence is the case. A case's score in an arm is its pass fraction over the
  graded repeats. An error caused by the arm (context overflow, refusal, tool loop over budget)
  is a graded failure; a transport or check error is left out of every denominator.
- Arm rate: the mean case score, with a Wilson 95% score interval over cases evaluated at that
  rate (conservative with repeats: case scores in [0, 1] vary at most p(1 - p)).
- Lift: the mean over paired cases (graded in both arms) of skill score minus baseline score,
  with a paired score 95% interval (`formulas.paired_score_interval`), which never collapses to
  a point: 12 cases that all flip give [+39, +100]. Deterministic: no resampling.
- Exact test: the two-sided sign test on the cases whose score changed (b up, c down), which is
  McNemar's exact test when each case runs once.
- Verdict: errors first, as unchecked claims: "inconclusive: errors in N cases"
  (`errors_verdict`) when errors leave N cases usable in one arm only, or when "helps" ("hurts")
  does not survive its errored samples filled in against it (failures with the skill, passes
  without, or the reverse; N: cases with an errored sample), even if both arms lost as many;
  "inconclusive: every sample errored"; "inconclusive: uneven errors (B baseline, S skill)"
  when another verdict changes with the unevenly lost samples filled in either way round. Then
  "too few cases (N)" under `MIN_CASES` paired cases; "helps"/"hurts" when the interval
  excludes 0 *and* the exact test agrees (p < 0.05, same direction); else "no detectable
  effect". Simulated under no effect, with errors where the skill fails or not, "helps" comes
  up at most 2.5% of the time (tests/test_stats_verdict.py).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from registry.results.formulas import (
    ALPHA,
    detectable_lift,
    mcnemar_exact,
    paired_score_interval,
    wilson_arrays,
)
from registry.results.verdicts import (  # noqa: F401 - the engine's public names, as before
    MIN_CASES,
    VERDICT_RULE,
    VERDICTS,
    disagreement,
    errors_verdict,
    is_conclusive,
    verdict,
)

INTERVAL_METHOD = "Wilson 95% score interval over cases, at the mean case pass fraction"
LIFT_INTERVAL_METHOD = ("paired score 95% interval over per-case differences (Tango's, "
                        "studentized; empirical likelihood with several runs)")
EXACT_TEST = "exact two-sided sign test on cases whose pass fraction changed (McNemar)"
NANO = 1_000_000_000  # dollars are summed as integer nanodollars: exact in any order


# -- the table: every figure per group, from rows as arrays ---------------------------------


class Table(NamedTuple):
    """Every figure per group; two-column arrays hold (baseline, skill).

    ``cases``: cases graded at least once in the arm; ``rate``/``rate_lo``/``rate_hi``: the arm
    rate and its interval; ``samples``/``passes``: graded samples and passes; ``errors``:
    samples lost to transport or check errors; ``repeats``: the most rows of one case in one
    arm; ``paired``: cases graded in both arms; ``lift``/``lift_lo``/``lift_hi``,
    ``b``/``c``/``p_value``: the paired lift and the exact test; ``gain``: normalized gain
    (NaN when the baseline is 1); ``uneven``: cases usable in one arm only because of errors;
    ``detectable``: the smallest lift the suite detects at 80% power (inf under `MIN_CASES`);
    token and dollar sums over graded samples (``cost`` NaN when a price is unknown).
    """

    cases: np.ndarray
    samples: np.ndarray
    passes: np.ndarray
    errors: np.ndarray
    rate: np.ndarray
    rate_lo: np.ndarray
    rate_hi: np.ndarray
    repeats: np.ndarray
    paired: np.ndarray
    lift: np.ndarray
    lift_lo: np.ndarray
    lift_hi: np.ndarray
    b: np.ndarray
    c: np.ndarray
    p_value: np.ndarray
    gain: np.ndarray
    uneven: np.ndarray
    detectable: np.ndarray
    verdict: np.ndarray
    input_tokens: np.ndarray
    output_tokens: np.ndarray
    cost: np.ndarray
    alpha: np.ndarray  # the level of each group's interval and test (`table`'s ``alpha``)


class Outcomes(NamedTuple):
    """Rows as arrays: ``group`` (0..n_groups-1), ``case`` (a rank in case-label order),
    ``arm`` (0 baseline, 1 skill), ``graded``/``passed`` (bool) and ``transport`` (bool: a
    transport error), with token counts and dollars (NaN: unknown price) per row."""

    group: np.ndarray
    case: np.ndarray
    arm: np.ndarray
    graded: np.ndarray
    passed: np.ndarray
    transport: np.ndarray
    input_tokens: np.ndarray
    output_tokens: np.ndarray
    cost: np.ndarray


def _cells(o: Outcomes, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row's (group, case) cell, numbered in (group, case) order, and each cell's group."""
    width = int(o.case.max(initial=-1)) + 1
    key = o.group.astype(np.int64) * width + o.case
    size = n_groups * width
    if size <= max(2 * len(key), 1 << 16):  # a bincount keeps keys sorted, faster than a sort
        present = np.bincount(key, minlength=size) > 0
        return (np.cumsum(present) - 1)[key], np.flatnonzero(present) // width
    keys, cell = np.unique(key, return_inverse=True)
    return cell.reshape(-1), keys // width


def table(o: Outcomes, n_groups: int, alpha: float | np.ndarray = ALPHA) -> Table:
    """Every figure for each of ``n_groups`` groups of rows (see `Table` and the module doc),
    the interval at level ``1 - alpha`` and the test at ``alpha`` (per group: an adaptive run
    reports at the level its stopping look spent, `registry.results.sequential`)."""
    alpha = np.broadcast_to(np.asarray(alpha, dtype=float), n_groups)
    cell, cell_group = _cells(o, n_groups)
    idx, n_cells = 2 * cell + o.arm, 2 * len(cell_group)

    def per_cell(weights: np.ndarray | None = None) -> np.ndarray:
        return np.bincount(idx, weights, minlength=n_cells).reshape(-1, 2).astype(float)

    def per_group(values: np.ndarray) -> np.ndarray:
        return np.stack([np.bincount(cell_group, values[:, k], minlength=n_groups)
                         for k in (0, 1)], 1)

    graded, passes = per_cell(o.graded), per_cell(o.graded & o.passed)
    transport, rows = per_cell(o.transport), per_cell()
    has = graded > 0
    score = np.divide(passes, graded, out=np.zeros_like(passes), where=has)
    cases = per_group(has).astype(np.int64)
    rate = np.divide(per_group(score * has), cases, out=np.zeros(cases.shape), where=cases > 0)
    rate_lo, rate_hi = wilson_arrays(rate, cases)
    repeats = np.zeros(n_groups, dtype=np.int64)
    np.maximum.at(repeats, cell_group, np.maximum(rows[:, 0], rows[:, 1]).astype(np.int64))
    uneven_cell = (has[:, 0] & ~has[:, 1] & (transport[:, 1] > 0)) | (
        has[:, 1] & ~has[:, 0] & (transport[:, 0] > 0))
    sums = {name: np.bincount(2 * o.group + o.arm, np.where(o.graded, v, 0),
                              minlength=2 * n_groups).reshape(-1, 2)
            for name, v in (("input", o.input_tokens), ("output", o.output_tokens),
                            ("cost", np.round(o.cost * NANO)))}
    paired = _paired(cell_group[has[:, 0] & has[:, 1]], score[has[:, 0] & has[:, 1]], n_groups,
                     alpha)
    uneven = np.bincount(cell_group, uneven_cell, minlength=n_groups).astype(np.int64)
    samples, errors = per_group(graded).astype(np.int64), per_group(transport).astype(np.int64)
    errored = np.bincount(cell_group, transport.sum(1) > 0, minlength=n_groups).astype(np.int64)
    verdicts = _error_verdicts(o, n_groups, _verdicts(paired, uneven, alpha), samples, errors,
                               errored, alpha)
    return Table(cases=cases, samples=samples, passes=per_group(passes).astype(np.int64),
                 errors=errors, rate=rate, rate_lo=rate_lo,
                 rate_hi=rate_hi, repeats=repeats, uneven=uneven, verdict=verdicts,
                 input_tokens=sums["input"], output_tokens=sums["output"],
                 cost=sums["cost"] / NANO, alpha=alpha.copy(), **paired)


def _verdicts(paired: dict[str, np.ndarray], uneven: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """`verdict` per group, called once per distinct combination of what it depends on."""
    lo, hi, n = paired["lift_lo"], paired["lift_hi"], paired["paired"]
    flags = ((lo > 0) * 1 + (hi < 0) * 2 + (paired["p_value"] < alpha) * 4
             + (paired["b"] > paired["c"]) * 8 + (paired["c"] > paired["b"]) * 16)
    key = (uneven * (MIN_CASES + 1) + np.minimum(n, MIN_CASES)) * 32 + flags
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    texts = [verdict(float(lo[i]), float(hi[i]), float(paired["p_value"][i]),
                     int(paired["b"][i]), int(paired["c"][i]), cases=int(n[i]),
                     uneven=int(uneven[i]), alpha=float(alpha[i])) for i in first.tolist()]
    return np.array(texts, dtype=object)[inverse.reshape(-1)]


def _error_verdicts(o: Outcomes, n_groups: int, verdicts: np.ndarray, samples: np.ndarray,
                    errors: np.ndarray, errored: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """Verdicts the errors leave standing, the others inconclusive (module docstring): no
    sample graded; "helps"/"hurts" undone by its errored samples filled in against it; another
    verdict changed by uneven errors filled in either way. ``errored``: cases with an error."""
    lost_all = (samples.sum(1) == 0) & (errors.sum(1) > 0)
    if not errors.any():
        return verdicts  # most tables: nothing for these rules to look at
    verdicts, kinds = verdicts.copy(), _kinds(verdicts)
    claims = (errored > 0) & ((kinds == "helps") | (kinds == "hurts"))
    if claims.any():  # every errored sample fails in the arm the claim favours, passes in the other
        favoured = np.where(kinds == "helps", 1, 0)
        undone = claims & (_filled_kinds(o, n_groups, claims, 1 - favoured, alpha) != kinds)
        for i in np.flatnonzero(undone).tolist():
            verdicts[i] = errors_verdict(int(errored[i]))
    lopsided = (errors[:, 0] != errors[:, 1]) & ~lost_all & (kinds != "inconclusive") & ~claims
    if lopsided.any():
        changed = np.zeros(n_groups, dtype=bool)
        for passing in (0, 1):  # every lost sample passes in this arm, fails in the other
            changed |= _filled_kinds(o, n_groups, lopsided,
                                     np.full(n_groups, passing), alpha) != kinds
        for i in np.flatnonzero(lopsided & changed).tolist():
            verdicts[i] = (f"inconclusive: uneven errors ({errors[i, 0]} baseline, "
                           f"{errors[i, 1]} skill)")
    verdicts[lost_all & (kinds != "inconclusive")] = "inconclusive: every sample errored"
    return verdicts


def _filled_kinds(o: Outcomes, n_groups: int, chosen: np.ndarray,
                  passing: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """The verdict kinds of the ``chosen`` groups with every errored sample graded: a pass in
    arm ``passing[group]``, a failure in the other (other groups: "")."""
    sub = Outcomes(*(np.asarray(column)[chosen[o.group]] for column in o))
    filled = sub._replace(graded=sub.graded | sub.transport,
                          passed=(sub.passed & sub.graded)
                          | (sub.transport & (sub.arm == passing[sub.group])),
                          transport=np.zeros_like(sub.transport))
    return np.where(chosen, _kinds(table(filled, n_groups, alpha).verdict), "")


def _kinds(verdicts: np.ndarray) -> np.ndarray:
    """Each verdict without its figures: "too few cases (9)" and "(12)" are one kind."""
    return np.array([str(v).split(" (")[0].split(":")[0] for v in verdicts], dtype=object)


def _paired(group: np.ndarray, score: np.ndarray, n_groups: int,
            alpha: np.ndarray) -> dict[str, np.ndarray]:
    """Lift, score interval, sign test and normalized gain over the paired cells of each
    group."""
    diff = score[:, 1] - score[:, 0]
    n = np.bincount(group, minlength=n_groups)
    lift = np.divide(np.bincount(group, diff, minlength=n_groups), n, out=np.zeros(n_groups),
                     where=n > 0)
    lo, hi = paired_score_interval(group, diff, n_groups, alpha)
    b = np.bincount(group, diff > 0, minlength=n_groups).astype(np.int64)
    c = np.bincount(group, diff < 0, minlength=n_groups).astype(np.int64)
    base, skill = (np.divide(np.bincount(group, score[:, k], minlength=n_groups), n,
                             out=np.zeros(n_groups), where=n > 0) for k in (0, 1))
    return {"paired": n.astype(np.int64), "lift": lift,
            "lift_lo": np.minimum(lo, lift), "lift_hi": np.maximum(hi, lift),
            "b": b, "c": c, "p_value": _per_pair(mcnemar_exact, b, c),
            "gain": np.divide(skill - base, 1 - base, out=np.full(n_groups, np.nan),
                              where=(base < 1) & (n > 0)),
            "detectable": np.where(n >= MIN_CASES, _per_value(detectable_lift, n), math.inf)}


def _per_value(fn: Any, values: np.ndarray) -> np.ndarray:
    """``fn(value)`` over integers, evaluated once per distinct value."""
    keys, inverse = np.unique(values, return_inverse=True)
    return np.array([fn(int(k)) for k in keys.tolist()], dtype=float)[inverse.reshape(-1)]


def _per_pair(fn: Any, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``fn(a, b)`` over pairs of counts, evaluated once per distinct pair."""
    width = int(b.max(initial=0)) + 1
    keys, inverse = np.unique(a * width + b, return_inverse=True)
    return np.array([fn(*divmod(int(k), width)) for k in keys.tolist()],
                    dtype=float)[inverse.reshape(-1)]


# -- one group as values ---------------------------------------------------------------------


@dataclass(frozen=True)
class ArmStats:
    """One arm: ``pass_rate`` (mean case pass fraction) inside ``lo``/``hi`` (`INTERVAL_METHOD`).

    ``n_cases`` counts cases graded at least once; ``n_samples`` graded samples (an arm-caused
    error is a graded failure); ``n_errors`` transport errors, out of every denominator.
    """

    n_cases: int
    n_samples: int
    n_errors: int
    pass_rate: float
    lo: float
    hi: float


@dataclass(frozen=True)
class LiftStats:
    """Paired comparison of two arms over the ``n_cases`` cases graded in both.

    ``lift``/``lo``/``hi`` follow `LIFT_INTERVAL_METHOD`; ``p_value`` is `EXACT_TEST` (``b``
    cases score higher with the skill, ``c`` lower); ``detectable``: smallest lift this suite
    detects at 80% power; ``uneven``: cases usable in one arm only (transport errors);
    ``note``: the sentence shown when the interval and the exact test disagree.
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
    uneven: int = 0
    note: str | None = None


def lift_stats(t: Table, i: int) -> LiftStats:
    """Group ``i`` of a `table` as values."""
    baseline, skill = (ArmStats(int(t.cases[i, k]), int(t.samples[i, k]), int(t.errors[i, k]),
                                float(t.rate[i, k]), float(t.rate_lo[i, k]),
                                float(t.rate_hi[i, k]))
                       for k in (0, 1))
    lo, hi, p, b, c = (float(t.lift_lo[i]), float(t.lift_hi[i]), float(t.p_value[i]),
                       int(t.b[i]), int(t.c[i]))
    gain = float(t.gain[i])
    return LiftStats(baseline, skill, lift=float(t.lift[i]), lo=lo, hi=hi, p_value=p, b=b, c=c,
                     normalized_gain=None if math.isnan(gain) else gain,
                     verdict=str(t.verdict[i]), detectable=float(t.detectable[i]),
                     n_cases=int(t.paired[i]), uneven=int(t.uneven[i]),
                     note=disagreement(lo, hi, p, b, c, float(t.alpha[i])))


def outcomes(groups: Sequence[Mapping[str, Sequence[Sequence[bool | None]]]]) -> Outcomes:
    """Outcomes from ``[{case_id: (baseline repeats, skill repeats)}]``, one mapping per group;
    a repeat is True (pass), False (fail, an arm-caused error included) or None (transport
    error). Tokens and dollars are zero."""
    labels = sorted({cid for g in groups for cid in g})
    rank = {cid: i for i, cid in enumerate(labels)}
    cols: list[list[Any]] = [[], [], [], []]
    for gi, cases in enumerate(groups):
        for cid, arms in cases.items():
            for side, repeats in enumerate(arms):
                for value in repeats:
                    for col, v in zip(cols, (gi, rank[cid], side, value), strict=True):
                        col.append(v)
    group, case, arm = (np.asarray(c, dtype=np.int64) for c in cols[:3])
    passed = np.array([v is True for v in cols[3]], dtype=bool)
    transport = np.array([v is None for v in cols[3]], dtype=bool)
    zeros = np.zeros(len(group))
    return Outcomes(group, case, arm, ~transport, passed, transport, zeros, zeros, zeros)


def compare_arms(baseline: Mapping[str, Sequence[bool | None]],
                 skill: Mapping[str, Sequence[bool | None]]) -> LiftStats:
    """Compare a skill arm with its baseline: ``case_id -> per-repeat verdicts`` in each
    (None marks a transport error). The same `table` every screen uses, for one group."""
    cases = {cid: (baseline.get(cid, ()), skill.get(cid, ())) for cid in {*baseline, *skill}}
    return lift_stats(table(outcomes([cases]), 1), 0)


def case_status(passes: Sequence[bool | None]) -> str:
    """Classify one case's repeats: "stable pass", "flaky", "stable fail" or "error" (every
    repeat, if any, a transport error: None)."""
    graded = [p for p in passes if p is not None]
    if not graded:
        return "error"
    if all(graded):
        return "stable pass"
    return "flaky" if any(graded) else "stable fail"


def shown_status(passes: Sequence[bool | None]) -> str:
    """`case_status` as a per-case table shows it: one graded answer reads "pass" or "fail",
    since one answer says nothing of stable."""
    graded = [p for p in passes if p is not None]
    return case_status(passes) if len(graded) != 1 else "pass" if graded[0] else "fail"
