"""`hubskills verify ... --resample K`: a spot check of a run's outputs against the model itself.

A replay proves the grading and the arithmetic; an output edited to pass regrades cleanly. A
spot check re-asks the recorded model, with the recorded settings (mode, placement, temperature,
max tokens, judge, agent budget), for K samples per arm: K cases drawn with a seeded generator
(every case once before any twice: stratified over cases), each asked in both arms, as a fresh
local run (`use_cache=False`). Each fresh sample is paired with a stored sample of the same
case, arm and model.

The test: if the stored outputs came from that model with those settings, a stored and a fresh
sample of one case are two independent draws from the same distribution, so of the pairs that
disagree, "stored passed, fresh failed" (b) and "stored failed, fresh passed" (c) are equally
likely whatever each case's pass rate. The exact two-sided sign test on (b, c) (the statistics
engine's `mcnemar_exact`) then has a false-alarm rate of at most its level; each arm is tested
at `alpha / 2`, so a genuine run is called inconsistent at most `alpha` of the time (default
1%; checked by simulation in tests/test_verify_resample.py).

This module is the check's plan and test, pure; reading the run (from a registry too), taking
its skill and re-asking the model is `publishing.resample`'s.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from registry._version import __version__
from registry.errors import HubskillsError
from registry.results.formulas import mcnemar_exact
from registry.results.leaderboard_badges import SPOT_CHECK
from registry.results.runs import ResultRow, RunManifest, latest_rows, utc_now

ALPHA = 0.01
ARMS = ("baseline", "skill")


@dataclass
class ArmCheck:
    """One arm's pairs: stored passed / fresh failed (b), the reverse (c), and the test."""

    arm: str
    pairs: int = 0
    b: int = 0
    c: int = 0

    @property
    def p_value(self) -> float:
        """The exact two-sided sign test on (b, c)."""
        return float(mcnemar_exact(self.b, self.c))


@dataclass
class SpotCheck:
    """What re-asking the model found: `consistent` unless an arm's test falls under
    `alpha / 2`."""

    k: int
    seed: int
    alpha: float
    cases: list[str]
    estimated_cost: float | None
    arms: list[ArmCheck] = field(default_factory=list)
    run_id: str | None = None  # the fresh local run

    @property
    def consistent(self) -> bool:
        """No arm's stored outcomes are out of line with the fresh ones."""
        return all(arm.p_value >= self.alpha / 2 for arm in self.arms)

    def first_problem(self) -> str | None:
        """The first arm out of line, in words (None when consistent)."""
        for arm in self.arms:
            if arm.p_value < self.alpha / 2:
                return (f"{arm.arm}: of {arm.pairs} pairs, {arm.b} passed only as stored and "
                        f"{arm.c} only when re-asked (p={arm.p_value:.2g} < {self.alpha / 2:g})")
        return None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"k": self.k, "seed": self.seed, "alpha": self.alpha, "cases": self.cases,
                "estimated_cost_usd": self.estimated_cost, "fresh_run_id": self.run_id,
                "consistent": self.consistent,
                "arms": [{"arm": a.arm, "pairs": a.pairs, "stored_only_passed": a.b,
                          "fresh_only_passed": a.c, "p_value": a.p_value} for a in self.arms]}


def draw_cases(rows: list[ResultRow], k: int, seed: int) -> list[tuple[str, int]]:
    """K (case, fresh repeat) slots: the run's cases in a seeded order, every case once before
    any case twice."""
    cases = sorted({row.case_id for row in rows})
    if not cases or k < 1:
        raise HubskillsError("a spot check needs K >= 1 and a run with graded samples",
                             hint="hubskills verify NS/NAME --run RUN_ID --resample 10")
    random.Random(seed).shuffle(cases)
    return [(cases[i % len(cases)], i // len(cases)) for i in range(k)]


def estimate_cost(rows: list[ResultRow], slots: list[tuple[str, int]]) -> float | None:
    """What re-asking ``slots`` in both arms costs, from the stored samples' costs (None when
    the run does not know its costs)."""
    costs: dict[str, list[float]] = defaultdict(list)
    for row in rows:
        if row.cost_usd is not None:
            costs[row.case_id].append(row.cost_usd)
    if not costs:
        return None
    per_case = {case: sum(found) / len(found) * 2 for case, found in costs.items()}
    mean = sum(per_case.values()) / len(per_case)
    models = len({row.model for row in rows})
    return sum(per_case.get(case, mean) for case, _ in slots) * models


def check_cost(estimate: float | None, max_cost: float | None) -> None:
    """Refuse a spot check whose estimate is over ``max_cost`` (before any call).

    Raises:
        HubskillsError: the estimate is over the limit.
    """
    if estimate is not None and max_cost is not None and estimate > max_cost:
        raise HubskillsError(f"the spot check would cost about ${estimate:.4f}, over "
                             f"--max-cost ${max_cost:g}",
                             hint="lower --resample K, or raise --max-cost")


def compare(stored: list[ResultRow], fresh: list[ResultRow], check: SpotCheck) -> None:
    """Pair each fresh sample with a stored one of the same (model, case, arm) and count the
    disagreements per arm into ``check.arms``; error rows pair with nothing."""
    pool: dict[tuple[str, str, str], list[ResultRow]] = defaultdict(list)
    for row in sorted(latest_rows(stored), key=lambda r: r.repeat):
        if not row.is_error:
            pool[(row.model, row.case_id, row.arm)].append(row)
    arms = {arm: ArmCheck(arm) for arm in ARMS}
    for row in fresh:
        found = pool.get((row.model, row.case_id, row.arm), [])
        if row.is_error or not found:
            continue
        mate = found[row.repeat % len(found)]
        arm = arms[row.arm]
        arm.pairs += 1
        arm.b += bool(mate.passed) and not row.passed
        arm.c += bool(row.passed) and not mate.passed
    check.arms = list(arms.values())


def plan_check(manifest: RunManifest, rows: list[ResultRow], k: int, seed: int,
               alpha: float = ALPHA) -> tuple[list[tuple[str, int]], SpotCheck]:
    """The (case, fresh repeat) slots a spot check re-asks and the check to fill, with its
    estimated cost: what is known before any call (and before a Job is started).

    Raises:
        HubskillsError: a trigger run, or a run without graded samples.
    """
    if manifest.mode == "trigger":
        raise HubskillsError("trigger runs are not spot-checked yet", hint="hubskills verify")
    slots = draw_cases(rows, k, seed)
    return slots, SpotCheck(k, seed, alpha, sorted({case for case, _ in slots}),
                            estimate_cost(rows, slots))


def spot_record(check: SpotCheck, run_id: str, rows_hash: str, *, skill_repo: str | None,
                skill_revision: str | None, verified_by: str) -> dict[str, Any]:
    """The verification record of a spot check of the rows hashed ``rows_hash`` (the format of
    `stores.verifications`: `leaderboard_badges.badge_from` reads ``status`` and ``k``)."""
    return {"kind": SPOT_CHECK, "run_id": run_id, "rows_hash": rows_hash,
            "skill_repo": skill_repo, "skill_revision": skill_revision,
            "status": "consistent" if check.consistent else "inconsistent",
            "first_problem": check.first_problem(), **check.to_dict(),
            "verified_by": verified_by, "verified_at": utc_now(),
            "hubskills_version": __version__}


def false_alarm_rate(pass_rates: list[float], k: int, trials: int, seed: int,
                     alpha: float = ALPHA) -> float:
    """How often a genuine run is called inconsistent: stored and fresh outcomes drawn
    independently from each case's pass rate, both arms, ``trials`` times (a simulation of the
    test's false-alarm rate)."""
    rng = random.Random(seed)
    alarms = 0
    for _ in range(trials):
        check = SpotCheck(k, seed, alpha, [], None)
        for arm in ARMS:
            tally = ArmCheck(arm, pairs=k)
            for i in range(k):
                rate = pass_rates[i % len(pass_rates)]
                stored, fresh = rng.random() < rate, rng.random() < rate
                tally.b += stored and not fresh
                tally.c += fresh and not stored
            check.arms.append(tally)
        alarms += not check.consistent
    return alarms / trials if trials else math.nan
