"""The adaptive design of a one-arm run (a trigger eval): when recall and the false-trigger rate
are settled, and which queries need no more runs.

A trigger eval has one arm: should-trigger queries (recall: the share of sessions that opened
the skill) and should-not queries (false triggers), each query asked up to ``runs`` times. A
`RateDesign` plans it in rounds (docs/statistics.md#adaptive-trigger-evals):

- **Rounds.** Round j asks run j of every query not yet settled, so a run has at most ``runs``
  rounds and the last one completes the fixed plan (the cap: an adaptive run never asks more).
- **Settled queries.** A query whose first ``settle_after`` runs are graded and agree (all
  opened the skill, or none did) gets no more runs: its value is that agreed 0 or 1.
- **Looks.** After round j each figure (recall, false triggers) is its Wilson interval over
  queries at level ``1 - alpha_j``: ``alpha_j`` the increment of the alpha-spending function of
  `results.sequential.spent` at share ``j / runs`` of the plan, so the looks' levels sum to
  ``alpha``. The run stops at a look before the last when both intervals (of the kinds the
  suite holds) are at most ``width`` wide: "figures settled". Rounds that have nothing left to
  ask (every query settled) still look, at their own level; the last round stops as "plan
  complete".

Why the intervals keep their coverage: the interval at look j misses its rate with chance at
most ``alpha_j`` (Wilson over queries, the query the unit as in the fixed report), so the chance
that the interval at *any* look misses, and so the one reported at the stop, is at most their
sum, ``alpha`` (Bonferroni over the looks, whatever rule chose the stop). The figures of an
adaptive run are therefore reported at its stopping look's level (`reporting_alpha`), never at
95% on rows its design chose. A settled query's value is its agreed 0 or 1, which pulls a
value towards the nearer end by at most ``(runs - k) / runs`` of ``p^k (1 - p) - (1 - p)^k p``
(k = ``settle_after``); tests/test_sequential_rates.py and bench/adaptive_triggers.py measure
the coverage through these functions. Pure: numpy, `formulas` and `sequential.spent`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from statistics import NormalDist

import numpy as np

from registry.errors import HubskillsError
from registry.results.formulas import ALPHA, wilson_arrays
from registry.results.sequential import SPENDING, Design, spent
from registry.results.verdicts import MIN_CASES

KINDS = ("adaptive", "fixed")
FIGURES = ("recall", "false_triggers")
SETTLED = "figures settled"
COMPLETE = "plan complete"
_HINT = "hubskills eval SKILL --mode trigger --help"

# query id -> (should it trigger, its outcomes in run order: True opened the skill, None errored)
History = Mapping[str, tuple[bool, Sequence[bool | None]]]
Row = tuple[str, int, "bool | None"]  # (query_id, run_index, opened the skill)


@dataclass(frozen=True)
class RateDesign:
    """How a trigger run spends its sessions: ``kind`` "adaptive" or "fixed"; ``runs`` planned
    runs per query (the cap); ``alpha`` the two-sided level spent over the looks by
    ``spending`` (`results.sequential.SPENDING`); ``settle_after`` agreeing runs settle a
    query; ``width`` the interval width at which a figure is settled."""

    kind: str = "adaptive"
    runs: int = 3
    alpha: float = ALPHA
    spending: str = "haybittle-peto"
    settle_after: int = 2
    width: float = 0.3

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping) -> RateDesign:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise HubskillsError(f"unknown trigger design parameters: {', '.join(unknown)}",
                                 hint=_HINT)
        return cls(**{k: d[k] for k in d})


@dataclass(frozen=True)
class RoundPlan:
    """What to do next: ask ``samples`` ((query_id, run_index)) in ``round``, or ``stop`` with
    ``reason``; ``settled``: queries settled by agreement; ``alpha``: this look's level (the
    figures' at a stop); ``rounds``: rounds in the plan."""

    round: int
    samples: tuple[tuple[str, int], ...]
    stop: bool
    reason: str | None
    settled: int
    alpha: float = ALPHA
    rounds: int = 1


def validate(design: RateDesign, n_queries: int) -> None:
    """Raise `HubskillsError` (with a hint) for a design that cannot run on ``n_queries``."""
    problems = []
    if design.kind not in KINDS:
        problems.append(f"kind must be one of {', '.join(KINDS)}, got {design.kind!r}")
    if not isinstance(design.runs, int) or design.runs < 1:
        problems.append(f"runs must be at least 1, got {design.runs!r}")
    if not isinstance(design.alpha, (int, float)) or not 0 < design.alpha <= ALPHA:
        problems.append(f"alpha must be in (0, {ALPHA}] (the figures promise 95% or more), "
                        f"got {design.alpha!r}")
    if design.spending not in SPENDING:
        problems.append(f"spending must be one of {', '.join(SPENDING)}, got {design.spending!r}")
    if not isinstance(design.settle_after, int) or design.settle_after < 1:
        problems.append(f"settle_after must be at least 1 run, got {design.settle_after!r}")
    if not isinstance(design.width, (int, float)) or not 0 < design.width <= 1:
        problems.append(f"width must be in (0, 1], got {design.width!r}")
    if n_queries < 1:
        problems.append("the trigger suite has no queries")
    if problems:
        raise HubskillsError("invalid trigger design: " + "; ".join(problems), hint=_HINT)


def default_kind(n_queries: int, runs: int, settle_after: int | None = None) -> str:
    """What "auto" means for a trigger run, as for `eval`'s: adaptive when the suite is large
    enough to settle (`MIN_CASES` queries or more) and a query has runs left to skip (more
    than ``settle_after``), else fixed."""
    k = RateDesign.settle_after if settle_after is None else settle_after
    return "adaptive" if n_queries >= MIN_CASES and runs > k else "fixed"


# -- the schedule -------------------------------------------------------------------------------


def n_rounds(design: RateDesign) -> int:
    """Rounds in the plan: one per run (one for a fixed design)."""
    return 1 if design.kind == "fixed" else design.runs


def look_alpha(design: RateDesign, j: int) -> float:
    """The level of the look after round ``j``: the alpha spent between shares ``(j - 1) /
    runs`` and ``j / runs`` of the plan (`sequential.spent`); a fixed design's ``alpha``."""
    if design.kind == "fixed":
        return design.alpha
    spending = Design(kind="adaptive", runs=design.runs, alpha=design.alpha,
                      spending=design.spending)
    rounds = n_rounds(design)
    return spent(spending, min(j, rounds) / rounds) - spent(spending, (j - 1) / rounds)


def z_of(alpha: float) -> float:
    """The normal quantile of a two-sided level ``1 - alpha``."""
    return NormalDist().inv_cdf(1 - alpha / 2)


def interval(rate: np.ndarray, n: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """The Wilson interval over ``n`` queries at level ``1 - alpha`` (the report's, at 95%
    exactly `formulas.wilson_arrays`' default)."""
    if alpha == ALPHA:
        return wilson_arrays(rate, n)
    return wilson_arrays(rate, n, z_of(alpha))


# -- the rules, on arrays (a simulation runs them over many suites at once) --------------------


def settled_queries(design: RateDesign, present: np.ndarray, graded: np.ndarray,
                    opened: np.ndarray) -> np.ndarray:
    """Which queries are settled, from arrays (..., query, run): the first ``settle_after``
    runs present, graded and agreeing (never for a fixed design or one with no runs to skip)."""
    k = design.settle_after
    if design.kind == "fixed" or design.runs <= k:
        return np.zeros(present.shape[:-1], dtype=bool)
    ok = (present[..., :k] & graded[..., :k]).all(-1)
    first = opened[..., :k]
    return ok & (first.all(-1) | ~first.any(-1))


def asked_runs(design: RateDesign, j: int, settled: np.ndarray) -> np.ndarray:
    """Runs asked of each query by the end of round ``j``."""
    if design.kind == "fixed":
        return np.full(settled.shape, design.runs if j >= 1 else 0)
    cap = min(j, design.runs)
    return np.where(settled & (cap > design.settle_after), design.settle_after, cap)


def figures(asked: np.ndarray, graded: np.ndarray, opened: np.ndarray, should: np.ndarray,
            alpha: float) -> dict[str, np.ndarray]:
    """Recall and the false-trigger rate (axis -1: `FIGURES`) on the first ``asked[..., q]``
    runs of each query (arrays (..., query, run); ``should`` (..., query)): ``rate`` the mean
    over queries with a graded session of each query's share that opened the skill, ``n``
    those queries, ``lo``/``hi`` the Wilson interval at ``1 - alpha``."""
    keep = np.arange(graded.shape[-1]) < asked[..., None]
    g = (graded & keep).sum(-1)
    hits = (graded & keep & opened).sum(-1)
    has = g > 0
    share = np.divide(hits, g, out=np.zeros(g.shape), where=has)
    rate, n = [], []
    for kind in (should, ~should):
        mine = has & kind
        count = mine.sum(-1)
        rate.append(np.divide((share * mine).sum(-1), count, out=np.zeros(count.shape),
                              where=count > 0))
        n.append(count)
    rates, ns = np.stack(rate, -1), np.stack(n, -1)
    lo, hi = interval(rates, ns, alpha)
    return {"rate": rates, "n": ns, "lo": lo, "hi": hi}


def decide(design: RateDesign, j: int, found: Mapping[str, np.ndarray]) -> np.ndarray:
    """The look after round ``j`` (`figures` at `look_alpha`): 0 go on, 1 "figures settled"
    (every figure with queries no wider than ``width``) before the last round, 3 plan
    complete."""
    shape = found["n"].shape[:-1]
    if j >= n_rounds(design):
        return np.full(shape, 3)
    narrow = (found["n"] == 0) | (found["hi"] - found["lo"] <= design.width + 1e-12)
    return np.where(narrow.all(-1) & (found["n"] > 0).any(-1), 1, 0)


# -- one run, from its history ------------------------------------------------------------------


def _arrays(design: RateDesign, history: History, ids: list[str]) -> tuple[np.ndarray, ...]:
    shape = (len(ids), design.runs)
    present, graded, opened = (np.zeros(shape, bool) for _ in range(3))
    should = np.array([bool(history[q][0]) for q in ids], dtype=bool)
    for i, q in enumerate(ids):
        values = list(history[q][1])[:design.runs]
        present[i, :len(values)] = True
        graded[i, :len(values)] = [v is not None for v in values]
        opened[i, :len(values)] = [v is True for v in values]
    return present, graded, opened, should


def plan_round(design: RateDesign, history: History) -> RoundPlan:
    """The next round of a run whose outcomes so far are ``history`` (every query of the run
    present, its outcomes empty before it is asked): the plan is replayed from round 1, so a
    resumed run continues where its rows end."""
    ids = sorted(history)
    rounds = n_rounds(design)
    present, graded, opened, should = _arrays(design, history, ids)
    settled = settled_queries(design, present, graded, opened)
    before = np.zeros(len(ids), np.int64)
    for j in range(1, rounds + 1):
        m = asked_runs(design, j, settled)
        missing = tuple((ids[i], r) for i in range(len(ids))
                        for r in range(int(before[i]), int(m[i])) if not present[i, r])
        done = int(settled.sum()) if j > design.settle_after else 0
        alpha = look_alpha(design, j)
        if missing:
            return RoundPlan(j, missing, False, None, done, alpha, rounds)
        code = int(decide(design, j, figures(m, graded, opened, should, alpha)))
        if code:
            reason = f"{SETTLED} at round {j}" if code == 1 else COMPLETE
            return RoundPlan(j, (), True, reason, done, alpha, rounds)
        before = m
    raise AssertionError("the last round always stops")  # pragma: no cover


def reporting(design: RateDesign, history: History) -> tuple[float, bool]:
    """The level a run's figures are reported at, and whether its design stopped: a fixed
    run's ``alpha``; an adaptive run's stopping look's (so its intervals keep their coverage
    under the stop); while it is partial, its last complete look's."""
    if design.kind == "fixed":
        return design.alpha, False
    plan = plan_round(design, history)
    if plan.stop:
        return plan.alpha, True
    return (look_alpha(design, plan.round - 1) if plan.round > 1 else design.alpha), False


def history_of(queries: Mapping[str, bool], rows: Iterable[Row]) -> dict[str, tuple[bool, list]]:
    """A run's history for `plan_round` from ``queries`` (id -> should trigger) and its rows
    ((query_id, run_index, opened), None: an errored session): each query's outcomes in run
    order up to its first missing run."""
    found: dict[str, dict[int, bool | None]] = {}
    for query, run, outcome in rows:
        found.setdefault(query, {})[run] = outcome
    history: dict[str, tuple[bool, list]] = {}
    for query, should in queries.items():
        runs = found.get(query, {})
        cut = next(r for r in range(len(runs) + 1) if r not in runs)
        history[query] = (should, [runs[r] for r in range(cut)])
    return history


def check_rounds(design: RateDesign, queries: Mapping[str, bool],
                 rounds: Sequence[Iterable[Row]], *, complete: bool = True,
                 stopped: Mapping | None = None) -> list[str]:
    """Recompute a run's plan from its rows grouped by the round they were asked in and return
    each mismatch: a session the plan did not ask, a round asked after the design stopped,
    rows that end where the design had not stopped (``complete``: the run says it finished), a
    recorded stop (``stopped``: round, reason) it did not make."""
    grouped = [list(r) for r in rounds]
    history: dict[str, tuple[bool, list]] = {q: (s, []) for q, s in queries.items()}
    found: list[str] = []
    for i, rows in enumerate(grouped, 1):
        plan = plan_round(design, history)
        if plan.stop:
            found.append(f"round {i} asked {len(rows)} sessions after the design stopped at "
                         f"round {plan.round} ({plan.reason})")
            return found
        want = set(plan.samples)
        got = {(q, r): v for q, r, v in rows}
        for q, r in sorted(set(got) - want):
            found.append(f"round {i} asked {q} run {r + 1}, which the design did not ask")
        lacking = want - set(got)
        if lacking and i < len(grouped):
            found.append(f"round {i} lacks {len(lacking)} of the {len(want)} sessions its plan "
                         f"asked, yet round {i + 1} was asked")
            return found
        for q, r in sorted(want & set(got), key=lambda key: key[1]):
            if q in history:
                history[q][1].append(got[(q, r)])
    final = plan_round(design, history)
    if complete and not final.stop:
        found.append(f"the rows end in round {final.round} of {final.rounds}, where the design "
                     f"had not stopped: it still asks {len(final.samples)} sessions")
    if stopped is not None and final.stop:
        for key in ("round", "reason"):
            if key in stopped and stopped[key] != getattr(final, key):
                found.append(f"the run records {key} {stopped[key]!r}; its rows give "
                             f"{getattr(final, key)!r}")
    return found


def simulate(design: RateDesign, should: np.ndarray, p: np.ndarray, rng: np.random.Generator,
             errors: float = 0.0) -> dict[str, np.ndarray]:
    """Play ``len(p)`` simulated suites through the design with these functions: ``p`` (suite,
    query) each query's chance to open the skill, ``should`` (query) its kind, ``errors`` the
    chance a session fails. Returns per suite the sessions asked (``calls``), the round it
    stopped at, and the figures reported there (`figures` at the stopping look's level)."""
    sims, nq = p.shape
    opened = rng.random((sims, nq, design.runs)) < p[..., None]
    graded = rng.random(opened.shape) >= errors
    should_b = np.broadcast_to(should, (sims, nq))
    settled = settled_queries(design, np.ones_like(opened), graded, opened)
    stop_round = np.zeros(sims, np.int64)
    calls = np.zeros(sims, np.int64)
    out = {k: np.zeros((sims, 2)) for k in ("rate", "lo", "hi")}
    out["n"] = np.zeros((sims, 2), np.int64)
    live = np.ones(sims, bool)
    for j in range(1, n_rounds(design) + 1):
        m = asked_runs(design, j, settled)
        found = figures(m, graded, opened, should_b, look_alpha(design, j))
        code = decide(design, j, found)
        now = live & (code > 0)
        for k in out:
            out[k][now] = found[k][now]
        stop_round[now], calls[now] = j, m[now].sum(-1)
        live &= ~now
    return {"calls": calls, "round": stop_round, **out}
