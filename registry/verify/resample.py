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

Error rows are claims too ("no answer came", "the checks could not run"), and part of what is
drawn: a stored error is ranked between a failure and a pass (it takes a failure out of the
denominator without adding a pass), so a stored error whose re-ask answers is a disagreement
either way: "passed only as stored" when the re-ask fails (the error hid a failure), "passed
only when re-asked" when it passes. A re-ask that got no answer itself pairs with nothing.

The cost is never taken from the rows (their costs are the run's claims, forged as easily as
its outputs): `estimate` prices each arm's first request, built from the suite's prompts and
the skill, plus the run's max output tokens, at the catalogue price (`providers.worst_case`,
the bound the run's cost cap reserves per call).

This module is the check's plan, price and test, pure; reading the run (from a registry too),
taking its skill and re-asking the model is `verify.spot`'s.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from registry._version import __version__
from registry.errors import HubskillsError
from registry.providers import CostCap, worst_case
from registry.providers.base import add_cost
from registry.results.formulas import mcnemar_exact
from registry.results.leaderboard_badges import MIN_SPOT_K as MIN_K
from registry.results.leaderboard_badges import SPOT_ALPHA as ALPHA
from registry.results.leaderboard_badges import SPOT_CHECK, too_few_to_fail
from registry.results.runs import ResultRow, RunManifest, latest_rows, utc_now

if TYPE_CHECKING:
    from registry.evaluation.arms import Mode, Placement
    from registry.format.skill import Skill
    from registry.format.suite import Suite

ARMS = ("baseline", "skill")
# MIN_K and ALPHA are the board's MIN_SPOT_K and SPOT_ALPHA: with fewer than MIN_K pairs per arm
# a check could only ever come out consistent (tests/test_verify_resample.py).
JUDGE_MAX_TOKENS = 200  # what `evaluation.judge.make_judge` asks of a judge per verdict


@dataclass
class ArmCheck:
    """One arm's pairs: stored passed / fresh failed (b), the reverse (c), and the test;
    `stored_errors` of the pairs were stored as errors and answered when re-asked."""

    arm: str
    pairs: int = 0
    b: int = 0
    c: int = 0
    stored_errors: int = 0

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
    estimated_cost: float | None  # at most, one call per sample; None: a price is unknown
    arms: list[ArmCheck] = field(default_factory=list)
    run_id: str | None = None  # the fresh local run
    calls: int = 0  # the model calls re-asking takes at least
    priced: bool = False  # `estimate` has run (the skill was read)
    spent: float | None = None  # what the fresh run cost (usage x catalogue price)
    note: str | None = None  # the fresh run stopped early: why

    @property
    def status(self) -> str:
        """`inconsistent` when an arm's stored outcomes are out of line with the fresh ones;
        else `inconclusive` when an arm compared fewer than MIN_K pairs (fresh answers that
        errored, or a cap that stopped the re-asking, pair with nothing: such a check could
        only pass); else `consistent`."""
        if any(arm.p_value < self.alpha / 2 for arm in self.arms):
            return "inconsistent"
        if min((arm.pairs for arm in self.arms), default=0) < MIN_K:
            return "inconclusive"
        return "consistent"

    @property
    def consistent(self) -> bool:
        """Enough pairs compared in each arm, and none out of line (`status`)."""
        return self.status == "consistent"

    def first_problem(self) -> str | None:
        """Why the check is not consistent, in words (None when it is)."""
        for arm in self.arms:
            if arm.p_value < self.alpha / 2:
                errors = f"; {arm.stored_errors} stored as errors were answered when " \
                         "re-asked" if arm.stored_errors else ""
                return (f"{arm.arm}: of {arm.pairs} pairs, {arm.b} passed only as stored and "
                        f"{arm.c} only when re-asked (p={arm.p_value:.2g} < {self.alpha / 2:g})"
                        + errors)
        for arm in self.arms or [ArmCheck("baseline")]:
            if arm.pairs < MIN_K:
                return (f"{arm.arm}: only {arm.pairs} of {self.k} re-asked samples were "
                        f"answered and paired, under the {MIN_K} a check needs to be able to "
                        "fail")
        return None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"k": self.k, "seed": self.seed, "alpha": self.alpha, "cases": self.cases,
                "estimated_cost_usd": self.estimated_cost, "estimated_calls": self.calls,
                "spent_usd": self.spent, "note": self.note, "fresh_run_id": self.run_id,
                "consistent": self.consistent, "status": self.status,
                "first_problem": self.first_problem(),
                "arms": [{"arm": a.arm, "pairs": a.pairs, "stored_only_passed": a.b,
                          "fresh_only_passed": a.c, "stored_errors_answered": a.stored_errors,
                          "p_value": a.p_value} for a in self.arms]}


def draw_cases(rows: list[ResultRow], k: int, seed: int) -> list[tuple[str, int]]:
    """K (case, fresh repeat) slots: the run's cases in a seeded order, every case once before
    any case twice."""
    cases = sorted({row.case_id for row in rows})
    if not cases or k < 1:
        raise HubskillsError("a spot check needs K >= 1 and a run with graded samples",
                             hint="hubskills verify NS/NAME --run RUN_ID --resample 10")
    random.Random(seed).shuffle(cases)
    return [(cases[i % len(cases)], i // len(cases)) for i in range(k)]


def estimate(check: SpotCheck, manifest: RunManifest, skill: Skill, suite: Suite,
             runs: int, dependencies: tuple[Skill, ...] = ()) -> None:
    """Fill ``check``'s cost (at most, one call per sample) and calls (at least) for re-asking
    its cases ``runs`` times in both arms on each model: each arm's first request as the run
    builds it from the suite's prompt and the skill (tool mode's for agent mode), the run's max
    output tokens, one judge call per judged check (the answer counted at its max tokens) and
    two per pairwise check and pair (both answers), at the catalogue price. Never from the
    rows. The cost is None when a price is unknown. The skill arm's prompt holds the skills the
    skill requires (`dependencies`, as the run loaded them)."""
    from registry.evaluation.arms import build_arm
    from registry.evaluation.judge import judge_messages
    from registry.evaluation.pairwise import pairwise_messages
    from registry.format.checks_schema import JudgeCheck, PairwiseCheck

    by_id = {case.id: case for case in suite.cases}
    mode: Mode = "inline" if manifest.mode == "inline" else "tool"
    placement: Placement = "system" if manifest.placement == "system" else "user"
    judge = manifest.judge or ""
    total: float | None = 0.0
    calls = 0
    for case in (by_id[case_id] for case_id in check.cases if case_id in by_id):
        rubrics = [c.rubric for c in case.checks if isinstance(c, JudgeCheck)] + case.assertions
        for arm in ARMS:
            plan = build_arm(arm, case, skill, mode=mode, placement=placement,
                             dependencies=dependencies)
            for model in manifest.models:
                total = add_cost(total, worst_case(model, plan.messages, plan.tools,
                                                   manifest.max_tokens))
                calls += 1
                for rubric in rubrics if judge else []:
                    total = add_cost(total, worst_case(
                        judge, judge_messages(rubric, case.prompt, ""), None,
                        JUDGE_MAX_TOKENS, more_prompt=manifest.max_tokens))
                    calls += 1
        for rubric in [c.rubric for c in case.checks if isinstance(c, PairwiseCheck)] \
                if judge else []:  # once a pair, in both orders, both answers in the prompt
            each = worst_case(judge, pairwise_messages(rubric, case.prompt, "", ""), None,
                              JUDGE_MAX_TOKENS, more_prompt=2 * manifest.max_tokens)
            for _order in range(2 * len(manifest.models)):
                total = add_cost(total, each)
                calls += 1
    check.estimated_cost = None if total is None else total * runs
    check.calls, check.priced = calls * runs, True


def check_limits(check: SpotCheck, manifest: RunManifest, max_cost: float | None,
                 max_calls: int | None, command: str) -> None:
    """Refuse, before any call, a spot check its limits cannot hold: a model without a known
    price under ``max_cost`` without ``max_calls``, an estimate over ``max_cost``, or more calls
    than ``max_calls``; ``command`` is the one to repeat with ``--max-calls N``.

    Raises:
        HubskillsError: what is refused, with the option that lets it run.
    """
    refs = [*manifest.models, *([manifest.judge] if manifest.judge else [])]
    CostCap(max_cost, max_calls).refuse_unpriced(refs, command)
    check_cost(check.estimated_cost, max_cost)
    if max_calls is not None and check.calls > max_calls:
        raise HubskillsError(f"the spot check makes at least {check.calls} model calls, over "
                             f"--max-calls {max_calls}",
                             hint="lower --resample K, or raise --max-calls")


def check_cost(estimate: float | None, max_cost: float | None) -> None:
    """Refuse a spot check whose estimate is over ``max_cost`` (before any call).

    Raises:
        HubskillsError: the estimate is over the limit.
    """
    if estimate is not None and max_cost is not None and estimate > max_cost:
        raise HubskillsError(f"the spot check may cost up to ${estimate:.4f}, over "
                             f"--max-cost ${max_cost:g}",
                             hint="lower --resample K, or raise --max-cost")


def compare(stored: list[ResultRow], fresh: list[ResultRow], check: SpotCheck) -> None:
    """Pair each fresh sample with a stored one of the same (model, case, arm), stored errors
    included, and count the disagreements per arm into ``check.arms`` (module docstring); a
    fresh sample that got no answer pairs with nothing."""
    pool: dict[tuple[str, str, str], list[ResultRow]] = defaultdict(list)
    for row in sorted(latest_rows(stored), key=lambda r: r.repeat):
        pool[(row.model, row.case_id, row.arm)].append(row)
    arms = {arm: ArmCheck(arm) for arm in ARMS}
    for row in fresh:
        found = pool.get((row.model, row.case_id, row.arm), [])
        if row.is_error or not found:
            continue
        mate = found[row.repeat % len(found)]
        arm = arms[row.arm]
        arm.pairs += 1
        arm.b += _standing(mate) > _standing(row)
        arm.c += _standing(row) > _standing(mate)
        arm.stored_errors += mate.is_error
    check.arms = list(arms.values())


def _standing(row: ResultRow) -> int:
    """What a sample claims for its arm's pass rate: a failure 0, a lost sample 1 (a failure
    taken out of the denominator), a pass 2."""
    return 1 if row.is_error else 2 if row.passed else 0


def plan_check(manifest: RunManifest, rows: list[ResultRow], k: int, seed: int,
               alpha: float = ALPHA) -> tuple[list[tuple[str, int]], SpotCheck]:
    """The (case, fresh repeat) slots a spot check re-asks and the check to fill: what is known
    from the rows before any call (`estimate` prices it once the skill is read).

    Raises:
        HubskillsError: a trigger run, or a run without graded samples.
    """
    if manifest.mode == "trigger":
        raise HubskillsError("trigger runs are not spot-checked yet", hint="hubskills verify")
    if (why := too_few_to_fail(k)) is not None:
        raise HubskillsError(why, hint=f"--resample {MIN_K} or more (re-asks {MIN_K} samples "
                                       "per arm)")
    slots = draw_cases(rows, k, seed)
    return slots, SpotCheck(k, seed, alpha, sorted({case for case, _ in slots}), None)


def spot_record(check: SpotCheck, run_id: str, rows_hash: str, *, skill_repo: str | None,
                skill_revision: str | None, verified_by: str) -> dict[str, Any]:
    """The verification record of a spot check of the rows hashed ``rows_hash`` (the format of
    `stores.verifications`: `leaderboard_badges.badge_from` reads ``status`` and ``k``)."""
    return {"kind": SPOT_CHECK, "run_id": run_id, "rows_hash": rows_hash,
            "skill_repo": skill_repo, "skill_revision": skill_revision,
            "status": check.status,
            **check.to_dict(),
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
