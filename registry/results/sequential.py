"""Adaptive evaluation: which samples a run asks next, and when its verdict is decided.

A `Design` plans a run in rounds (docs/statistics.md#adaptive-evaluation). With several runs
per case, round j asks run j of every case not yet settled (*settled*: its first
``settle_after`` runs all pass or all fail, in both arms); with one run per case the rounds are
batches of cases (at least `MIN_BATCH`, in case-label order); a "fixed" design is one round.

After each round the engine (`stats.table`) looks at the rows so far at the look's level: an
alpha-spending function (Lan-DeMets; linear by default) says how much of ``alpha`` may be
spent by the round's share of the plan, and the *chained* levels (`results.chained_levels`)
spend it against the sign test's exact joint null over the looks, so that under no effect any
look says "helps" or "hurts" with probability at most ``alpha`` (``levels`` "bonferroni":
each look its increment). "helps" or "hurts" stops the run; so does a futility rule (from round
``futility_from`` when there are several runs per case, at any look with one), when even the
current trend carried to the end of the plan reaches the last look with probability under
``futility`` (``early_futility`` before that round): "no effect this suite could detect".
The last round stops as "plan complete". The interval reported at a stop is the engine's at
the stopping look's level. Pure: numpy and `stats.table`, no I/O, no model calls.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields

import numpy as np

from registry.errors import HubskillsError
from registry.results.chained_levels import Spent, chained, sign_test, statuses
from registry.results.formulas import ALPHA
from registry.results.futility import trend_power
from registry.results.schedule import (  # noqa: F401  (the schedule's names, re-exported)
    MIN_BATCH,
    asked_runs,
    fraction,
    look_alpha,
    n_rounds,
    runs_by,
    spent,
    spent_by,
    whole_runs,
)
from registry.results.stats import Outcomes, Table, table
from registry.results.verdicts import MIN_CASES

KINDS = ("adaptive", "fixed")
SPENDING = ("linear", "pocock", "obrien-fleming", "haybittle-peto")
LEVELS = ("chained", "bonferroni")
ARMS = ("baseline", "skill")
NO_EFFECT = "no effect this suite could detect"
COMPLETE = "plan complete"
_HINT = "hubskills eval --help"

History = Mapping[str, Mapping[str, Sequence[bool | None]]]
Row = tuple[str, str, int, "bool | None"]  # (case_id, arm, run_index, outcome)


@dataclass(frozen=True)
class Design:
    """How a run spends its answers: ``kind`` "adaptive" or "fixed"; ``runs`` planned runs per
    case (the cap: the fixed design's plan); ``alpha`` the two-sided level spent over the looks
    by ``spending``; ``settle_after`` runs agreeing in both arms settle a case; ``futility``
    the conditional power under which the run stops for no effect (0: never), at the looks from
    round ``futility_from`` on when ``runs`` is above 1; ``batches`` case batches when ``runs``
    is 1; ``levels`` how the looks spend: "chained" (exact) or "bonferroni";
    ``early_futility`` the one at the looks before ``futility_from`` (at most ``futility``);
    ``splits`` the rounds each run is asked in when ``runs`` is above 1 (`results.schedule`)."""

    kind: str = "adaptive"
    runs: int = 1
    alpha: float = ALPHA
    spending: str = "linear"
    settle_after: int = 4
    futility: float = 0.15
    batches: int = 8
    futility_from: int = 2
    levels: str = "chained"
    early_futility: float = 0.01
    splits: int = 2

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping) -> Design:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            from registry._install import upgrade  # only on this error: a newer record

            raise HubskillsError(f"unknown design parameters: {', '.join(unknown)} (a run "
                                 "recorded by a newer hubskills?)", hint=upgrade())
        return cls(**{k: d[k] for k in d})

    @classmethod
    def from_record(cls, d: Mapping) -> Design:
        """A design as a manifest recorded it (one from before `levels`: Bonferroni, no early
        futility, as it ran)."""
        return cls.from_dict({"levels": "bonferroni", "early_futility": 0.0, "splits": 1, **d})


@dataclass(frozen=True)
class RoundPlan:
    """What to do next: ask ``samples`` ((case_id, run_index), in both arms; on a resume, the
    arms that lack them) in ``round``, or ``stop`` with ``reason`` and the decided ``verdict``.
    ``settled``: cases settled by agreement; ``alpha``: this round's look's level (before it
    is asked, its increment); ``rounds``: rounds in the plan; ``reported``: the level the
    figures are reported at now (the stopping look's, else the last complete look's)."""

    round: int
    samples: tuple[tuple[str, int], ...]
    stop: bool
    reason: str | None
    settled: int
    verdict: str | None
    alpha: float = ALPHA
    rounds: int = 1
    reported: float = ALPHA


def validate_design(design: Design, n_cases: int) -> None:
    """Raise `HubskillsError` (with a hint) for a design that cannot run on ``n_cases``."""
    problems = []
    if design.kind not in KINDS:
        problems.append(f"kind must be one of {', '.join(KINDS)}, got {design.kind!r}")
    if not isinstance(design.runs, int) or design.runs < 1:
        problems.append(f"runs must be at least 1, got {design.runs!r}")
    if not 0 < design.alpha <= ALPHA:  # stricter only: "helps" means as much on every screen
        problems.append(f"alpha must be in (0, {ALPHA}], got {design.alpha!r}")
    for name, allowed in (("spending", SPENDING), ("levels", LEVELS)):
        if getattr(design, name) not in allowed:
            problems.append(f"{name} must be one of {', '.join(allowed)}, got "
                            f"{getattr(design, name)!r}")
    if not isinstance(design.settle_after, int) or design.settle_after < 2:
        problems.append(f"settle_after must be at least 2 runs, got {design.settle_after!r}")
    if not 0 <= design.futility < 0.5:
        problems.append(f"futility must be in [0, 0.5), got {design.futility!r}")
    if not 0 <= design.early_futility < 0.5:
        problems.append(f"early_futility must be in [0, 0.5), got {design.early_futility!r}")
    if not isinstance(design.futility_from, int) or design.futility_from < 1:
        problems.append(f"futility_from must be a round, 1 or more, got {design.futility_from!r}")
    if not isinstance(design.splits, int) or design.splits < 1:
        problems.append(f"splits must be at least 1, got {design.splits!r}")
    if not isinstance(design.batches, int) or design.batches < 1:
        problems.append(f"batches must be at least 1, got {design.batches!r}")
    if n_cases < 1:
        problems.append("the suite has no cases")
    if problems:
        raise HubskillsError("invalid evaluation design: " + "; ".join(problems),
                             hint=_HINT)


# -- the rules, on arrays (a simulation runs them over many suites at once) -------------------


def settled_cases(design: Design, present: np.ndarray, graded: np.ndarray,
                  passed: np.ndarray) -> np.ndarray:
    """Which cases are settled, from arrays (..., case, arm, run): a case whose first
    ``settle_after`` runs are present and graded in both arms, all passing or all failing
    (never when a design asks each case fewer runs, or is fixed)."""
    k = design.settle_after
    if design.kind == "fixed" or design.runs <= k:
        return np.zeros(present.shape[:-2], dtype=bool)
    ok = (present[..., :k] & graded[..., :k]).all(axis=(-1, -2))
    first = passed[..., :k]
    same = first.all(axis=(-1, -2)) | ~first.any(axis=(-1, -2))
    return ok & same


def decide(design: Design, n_cases: int, j: int, tab: Table) -> np.ndarray:
    """The look after round ``j`` for each group of ``tab`` (the engine's table at
    `look_alpha`): 0 go on, 1 decided ("helps"/"hurts") before the last round, 2 futility, 3 plan
    complete (whatever the verdict)."""
    return _codes(design, n_cases, j, tab.verdict, tab.b, tab.c, tab.paired)


def _codes(design: Design, n_cases: int, j: int, verdicts: np.ndarray, b: np.ndarray,
           c: np.ndarray, paired: np.ndarray) -> np.ndarray:
    kinds = np.array([str(v) for v in verdicts], dtype=object)
    code = np.where((kinds == "helps") | (kinds == "hurts"), 1, 0)
    rounds = n_rounds(design, n_cases)
    if j >= rounds:
        return np.full(len(code), 3)
    limit = (design.futility if design.runs == 1
             or whole_runs(design, n_cases, j) >= design.futility_from
             else min(design.early_futility, design.futility))
    if limit > 0:
        power = conditional_power(design, n_cases, j, b, c, paired)
        seen = paired >= MIN_CASES  # fewer cases say too little of where the suite goes
        code = np.where((code == 0) & seen & (power < limit), 2, code)
    return code


def conditional_power(design: Design, n_cases: int, j: int, b: np.ndarray, c: np.ndarray,
                      paired: np.ndarray) -> np.ndarray:
    """The chance that the last look's exact test says "helps" or "hurts" if the trend after
    round ``j`` goes on: every one of the suite's ``n_cases`` cases ends up, independently,
    better with the skill with the share of the ``paired`` cases seen so far that are better
    (``b / paired``), worse with the share seen worse (``c / paired``), else unchanged; summed
    exactly over the (up, down) counts this gives, the test at the last look's level.
    Deterministic, so a check recomputes it to the last digit."""
    last = (design.alpha if design.levels == "chained"  # the last look can spend up to it
            else look_alpha(design, n_cases, n_rounds(design, n_cases)))
    keys, inverse = np.unique(np.stack([b, c, np.maximum(paired, 1)], 1).astype(np.int64),
                              axis=0, return_inverse=True)
    power = np.array([trend_power(n_cases, up / seen, down / seen, last)
                      for up, down, seen in keys.tolist()])
    return power[inverse.reshape(-1)]


# -- one run, from its rows --------------------------------------------------------------------


def _arrays(history: History, cases: list[str], runs: int) -> tuple[np.ndarray, ...]:
    """(present, graded, passed), each (case, arm, run), from the history."""
    shape = (len(cases), 2, runs)
    present, graded, passed = (np.zeros(shape, bool) for _ in range(3))
    for i, cid in enumerate(cases):
        for a, arm in enumerate(ARMS):
            values = list(history.get(cid, {}).get(arm, ()))[:runs]
            present[i, a, :len(values)] = True
            graded[i, a, :len(values)] = [v is not None for v in values]
            passed[i, a, :len(values)] = [v is True for v in values]
    return present, graded, passed


def look(design: Design, n: int, j: int, asked: np.ndarray, graded: np.ndarray,
         passed: np.ndarray, state: Spent | None = None) -> tuple[np.ndarray, Table, Spent]:
    """The look after round ``j`` on the first ``asked[group, case]`` runs of each group's
    samples (group, case, arm, run), after the looks that ``state`` sums up (None: the first):
    the `decide` codes, the engine's table at the look's level, and what is spent with it
    (its ``level`` per group: `chained` levels, or `look_alpha`'s increment with Bonferroni)."""
    state = _levels(design, n, j, statuses(asked, graded, passed), state)
    tab = _table(asked, graded, passed, state.level)
    return decide(design, n, j, tab), tab, state


def look_codes(design: Design, n: int, j: int, asked: np.ndarray, graded: np.ndarray,
               passed: np.ndarray, state: Spent | None = None) -> tuple[np.ndarray, Spent]:
    """`look`'s codes and state without its table (the leaderboard's replay of many runs):
    the engine's table is computed only for the runs whose sign test is under the look's
    level, the only ones whose verdict can be "helps" or "hurts"; the others' codes follow
    from their up, down and paired counts. The same codes as `look`'s, to the last digit."""
    status = statuses(asked, graded, passed)
    state = _levels(design, n, j, status, state)
    keep = np.arange(graded.shape[-1]) < asked[:, :, None, None]
    paired = ((graded & keep).sum(-1) > 0).all(-1).sum(1)
    up, down = (status > 0).sum(1), (status < 0).sum(1)
    verdicts = np.full(len(asked), "", dtype=object)
    maybe = np.flatnonzero(sign_test(up, down) < state.level)
    if len(maybe):
        verdicts[maybe] = _table(asked[maybe], graded[maybe], passed[maybe],
                                 state.level[maybe]).verdict
    return _codes(design, n, j, verdicts, up, down, paired), state


def _levels(design: Design, n: int, j: int, status: np.ndarray, state: Spent | None) -> Spent:
    state = state if state is not None else Spent.start(len(status), n)
    if design.kind == "adaptive" and design.levels == "chained":
        return chained(state, status, spent_by(design, n, j), design.alpha)
    return state._replace(level=np.full(len(status), look_alpha(design, n, j)))


def _table(asked: np.ndarray, graded: np.ndarray, passed: np.ndarray,
           level: np.ndarray) -> Table:
    keep = np.broadcast_to(np.arange(graded.shape[-1]) < asked[:, :, None, None], graded.shape)
    group, case, arm, _ = np.nonzero(keep)
    g, p = graded[keep], passed[keep] & graded[keep]
    zeros = np.zeros(len(case))
    return table(Outcomes(group, case, arm, g, p, ~g, zeros, zeros, zeros), len(asked), level)


def plan_round(design: Design, history: History) -> RoundPlan:
    """The next round of a run whose outcomes so far are ``history[case_id][arm]`` (run order,
    None: an errored sample; every case of the suite present, empty before it is asked): the
    plan is replayed from round 1, so a resumed run continues where its rows end."""
    cases = sorted(history)
    n, rounds = len(cases), n_rounds(design, len(cases))
    present, graded, passed = _arrays(history, cases, design.runs)
    settled = settled_cases(design, present, graded, passed)
    before = np.zeros(n, np.int64)
    state, reported = Spent.start(1, n), design.alpha
    for j in range(1, rounds + 1):
        m = asked_runs(design, n, j, settled)
        missing = tuple((cases[i], r) for i in range(n)
                        for r in range(int(before[i]), int(m[i])) if not present[i, :, r].all())
        done = int(settled.sum()) if whole_runs(design, n, j - 1) >= design.settle_after else 0
        if missing:
            return RoundPlan(j, missing, False, None, done, None, look_alpha(design, n, j),
                             rounds, reported)
        codes, tab, state = look(design, n, j, m[None], graded[None], passed[None], state)
        code, verdict, reported = int(codes[0]), str(tab.verdict[0]), float(state.level[0])
        if code:
            reason = {1: f"{verdict}, decided at round {j}", 2: NO_EFFECT, 3: COMPLETE}[code]
            return RoundPlan(j, (), True, reason, done, verdict, reported, rounds, reported)
        before = m
    raise AssertionError("the last round always stops")  # pragma: no cover


def reporting_alpha(design: Design, history: History) -> float:
    """The level a run's figures are reported at (`stats.table`'s ``alpha``): a fixed run's
    ``alpha``; an adaptive run's stopping look's, so its interval is a repeated confidence
    interval valid under the stop and its verdict the one the design decided; while it is
    partial, its last complete look's."""
    return reporting(design, history)[0]


def reporting(design: Design, history: History) -> tuple[float, bool]:
    """`reporting_alpha`, and whether the design stopped (its rows are the whole run, however
    few of the planned samples they are)."""
    if design.kind == "fixed":
        return design.alpha, False
    plan = plan_round(design, history)
    return plan.reported, plan.stop


def history_of(case_ids: Iterable[str],
               rows: Iterable[tuple[str, str, int, bool | None]]) -> dict[str, dict[str, list]]:
    """A run's history for `plan_round` from its rows ((case_id, arm, run_index, outcome),
    None: an errored sample): every case present, each arm's outcomes in run order up to its
    first missing run."""
    found: dict[tuple[str, str], dict[int, bool | None]] = {}
    for case, arm, run, outcome in rows:
        found.setdefault((case, arm), {})[run] = outcome
    history: dict[str, dict[str, list]] = {}
    for case in case_ids:
        history[case] = {}
        for arm in ARMS:
            runs = found.get((case, arm), {})
            cut = next(r for r in range(len(runs) + 1) if r not in runs)
            history[case][arm] = [runs[r] for r in range(cut)]
    return history


def check_rounds(design: Design, rounds: Sequence[Iterable[Row]], *,
                 cases: Iterable[str] = (), complete: bool = True,
                 stopped: Mapping | None = None) -> list[str]:
    """Recompute a run's plan from its rows grouped by the round they were asked in (rows:
    (case_id, arm, run_index, outcome); ``cases``: the suite's case ids, so cases never asked
    count) and return each mismatch: a sample the plan did not ask, a round asked after the
    design stopped, rows that end where the design had not stopped (``complete``: the run
    says it finished), a recorded stop (``stopped``: round, reason, verdict) it did not make."""
    grouped = [list(r) for r in rounds]
    ids = sorted({*cases, *(row[0] for rows in grouped for row in rows)})
    history: dict[str, dict[str, list]] = {c: {a: [] for a in ARMS} for c in ids}
    found: list[str] = []
    for i, rows in enumerate(grouped, 1):
        plan = plan_round(design, history)
        if plan.stop:
            found.append(f"round {i} asked {len(rows)} samples after the design stopped at "
                         f"round {plan.round} ({plan.reason})")
            return found
        want = {(c, a, r) for c, r in plan.samples for a in ARMS}
        got = {(c, a, r): v for c, a, r, v in rows}
        for c, a, r in sorted(set(got) - want):
            found.append(f"round {i} asked {c} run {r + 1} ({a}), which the design did not ask")
        lacking = want - set(got)
        if lacking and i < len(grouped):
            found.append(f"round {i} lacks {len(lacking)} of the {len(want)} samples its plan "
                         f"asked, yet round {i + 1} was asked")
            return found
        for c, a, r in sorted(want & set(got), key=lambda key: key[2]):
            history[c][a].append(got[(c, a, r)])
    final = plan_round(design, history)
    if complete and not final.stop:
        found.append(f"the rows end in round {final.round} of {final.rounds}, where the design "
                     f"had not stopped: it still asks {len(final.samples)} samples")
    if stopped is not None and final.stop:
        for key in ("round", "reason", "verdict"):
            if key in stopped and stopped[key] != getattr(final, key):
                found.append(f"the run records {key} {stopped[key]!r}; its rows give "
                             f"{getattr(final, key)!r}")
    return found
