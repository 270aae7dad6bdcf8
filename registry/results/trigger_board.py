"""Trigger entries of the leaderboard: recall and false triggers per skill version and model.

A trigger eval (``mode: trigger``) has no baseline and no lift, so its rows never make a
`leaderboard.Entry`: they make a `TriggerEntry`, keyed like an entry (skill version, model,
mode, placement, suite hash) and taken from one run chosen the same way (the newest run that
answered every planned session of the whole suite, else the newest). Its figures are
`trigger_report`'s, from the one statistics engine over the same rows: recall over the
should-trigger queries, the false-trigger rate over the others, each a mean over queries with
its Wilson interval; failed sessions are counted apart. Entries are listed, never ranked by
figure: ``status`` says when one is partial, a subset or not in the registry. Given the
registry's verification badges, each entry carries its run's (``verification``), the run chosen
is the newest full one that is replayed (else the newest full one), and an entry whose run is
not replayed says why in ``status``, as `leaderboard.entries` does for A/B entries; views then
show only replayed ones by default (`leaderboard_badges.is_shown`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from registry._gc import collector
from registry.errors import HubskillsError
from registry.results import display, stats
from registry.results.grouping import RUN_CELLS, Rows, combine_all, lookup, rank
from registry.results.leaderboard import (
    KEY,
    TRIGGER_MODE,
    chosen_runs,
    row_mask,
    run_groups,
    run_status,
    verified_runs,
)
from registry.results.leaderboard_badges import Badge

COLUMNS = ("skill@version", "model", "recall [95% CI]", "false triggers [95% CI]", "errors",
           "verified", "should+not × runs", "status", "date")


class TriggerEntry(NamedTuple):
    """One skill version's trigger figures on one model, from one run (module docstring).

    ``recall``/``false_triggers`` are None when the run graded no query of that kind;
    ``should``/``should_not``: the queries graded of each kind; ``errors``: failed sessions;
    ``cost``: dollars over graded sessions, None when a price is unknown; ``verification``:
    the run's badge (`leaderboard_badges.VERIFICATIONS`), None when no badges were looked up.
    """

    status: str
    skill: str
    repo: str | None
    name: str
    version: str | None
    model: str
    mode: str
    suite_hash: str | None
    suite_cases: int | None
    recall: float | None
    recall_lo: float | None
    recall_hi: float | None
    should: int
    false_triggers: float | None
    false_lo: float | None
    false_hi: float | None
    should_not: int
    samples: int
    repeats: int
    errors: int
    cost: float | None
    date: str | None
    run_id: str
    produced_by: str | None
    produced_via: str | None
    method: str = stats.INTERVAL_METHOD
    verification: str | None = None


def trigger_entries(frame: pd.DataFrame, *, skill: str | None = None,
                    model: str | None = None, tags: dict[str, list[str]] | None = None,
                    tag: str | None = None,
                    badges: Mapping[str, Badge] | None = None) -> list[TriggerEntry]:
    """The trigger entries of ``frame``, by skill, version and model; filters and ``badges``
    (run id -> `Badge`) as `leaderboard.entries` takes them (a verdict filter has nothing to
    match here).

    Raises:
        ValueError: If ``tag`` is given without ``tags``.
    """
    if frame.empty or "mode" not in frame:
        return []
    mine = (frame["mode"] == TRIGGER_MODE).to_numpy(dtype=bool, na_value=False)
    if not mine.any():
        return []
    part = frame[mine]
    expect = part["expect_skill"].astype("boolean").to_numpy(dtype=bool, na_value=True) \
        if "expect_skill" in part else np.ones(len(part), dtype=bool)
    # a trigger run's design is one-arm (`sequential_rates`): replayed here, not as an A/B's
    designs = part["design"].to_numpy(dtype=object) if "design" in part \
        else np.full(len(part), None, dtype=object)
    rows = Rows.from_frame(part.drop(columns=["design"], errors="ignore"), latest=False)
    keep = row_mask(rows, skill, model, tags, tag) & rows.latest()  # with the arrays above
    rows, expect, designs = rows.take(keep), expect[keep], designs[keep]
    if not len(expect):
        return []
    k, keys = combine_all(rows, KEY)
    runs = run_groups(rows, k, len(keys))
    runs["alpha"], runs["stopped"] = _designed(rows, expect, designs, runs["of"],
                                               len(runs["key"]))
    status = run_status(rows, keys, runs, arms=1, words=("queries", "sessions"))
    status, fit, verification = verified_runs(rows, runs, status, badges)
    chosen = chosen_runs(rows, runs, fit, len(keys))
    on = np.zeros(len(runs["key"]), dtype=bool)
    on[chosen] = True
    picked = on[runs["of"]]
    rows, expect, k = rows.take(picked), expect[picked], k[picked]
    table = stats.table(_outcomes(rows, expect, k), 2 * len(keys))
    return _build(rows, keys, table, {n: v[chosen] for n, v in runs.items() if n != "of"},
                  status[chosen], verification[chosen])


def _designed(rows: Rows, expect: np.ndarray, designs: np.ndarray, of: np.ndarray,
              n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Per run group: the level its figures are reported at (95%, or an adaptive trigger
    run's stopping look's, `sequential_rates.reporting`, from the design its rows carry and
    its rows, as the run's own summary is) and whether its design stopped (an adaptive run
    that stopped early is whole with fewer rows than its plan)."""
    found, stopped = np.full(n_groups, stats.ALPHA), np.zeros(n_groups, dtype=bool)
    carried = np.array([isinstance(d, str) and bool(d) for d in designs], dtype=bool)
    if not carried.any():
        return found, stopped
    import json

    from registry.results.sequential_rates import RateDesign, history_of, reporting

    c, cases = rows.cols, rows.labels["case_id"]
    for g in np.unique(of[carried]).tolist():
        at = np.flatnonzero((of == g) & carried)
        try:  # a row's design is its writer's text: "[1]" raised here and took the board down
            spec = json.loads(str(designs[at[0]]))
            spec.pop("stops", None)
            planned = spec.pop("cases", None)
            kinds = {str(cases[c["case_id"][i]]): bool(expect[i]) for i in at.tolist()}
            queries = {str(q): kinds.get(str(q), True) for q in planned or kinds}
            outcomes = [(str(cases[c["case_id"][i]]), int(c["repeat"][i]),
                         None if c["transport"][i] else bool(c["passed"][i]) == bool(expect[i]))
                        for i in at.tolist()]
            design = RateDesign.from_dict(spec)
            if len(queries) * max(design.runs, 1) > RUN_CELLS:  # a plan no board replays
                continue
            found[g], stopped[g] = reporting(design, history_of(queries, outcomes))
        except (ValueError, TypeError, AttributeError, HubskillsError):  # no hubskills could run it
            continue
    return found, stopped


def _outcomes(rows: Rows, expect: np.ndarray, k: np.ndarray) -> stats.Outcomes:
    """Entry ``i``'s should-trigger rows as group ``2i``, its should-nots as ``2i + 1``, each
    in the skill arm, "passed" meaning the skill was opened (as `trigger_report.rates`)."""
    c = rows.cols
    opened = c["graded"] & (c["passed"] == expect)
    return stats.Outcomes(2 * k + ~expect, rank(rows.labels["case_id"])[c["case_id"]],
                          np.ones(len(k), dtype=np.int64), c["graded"], opened,
                          c["transport"], c["input_tokens"], c["output_tokens"], c["cost_usd"])


def _rate(t: stats.Table, g: int,
          alpha: float = stats.ALPHA) -> tuple[float | None, float | None, float | None]:
    if not t.cases[g, 1]:
        return None, None, None
    if alpha != stats.ALPHA:  # an adaptive run's: at its stopping look's level
        from registry.results.sequential_rates import interval

        lo, hi = interval(t.rate[g:g + 1, 1], t.cases[g:g + 1, 1], alpha)
        return float(t.rate[g, 1]), float(lo[0]), float(hi[0])
    return float(t.rate[g, 1]), float(t.rate_lo[g, 1]), float(t.rate_hi[g, 1])


@collector(paused=True)
def _build(rows: Rows, keys: np.ndarray, t: stats.Table, run: dict[str, np.ndarray],
           status: np.ndarray, verification: np.ndarray) -> list[TriggerEntry]:
    lab = rows.labels
    labels = {name: lookup(lab[name], keys[:, 0]) for name in ("skill", "repo", "name")}
    version = lookup(lab["skill_version"], keys[:, 1])
    model, suite = lookup(lab["model"], keys[:, 2], ""), lookup(lab["suite_hash"], keys[:, 5])
    dates = np.datetime_as_string(run["date"].view("datetime64[ns]").astype("datetime64[s]"),
                                  timezone="UTC").tolist()
    run_id = lookup(lab["run_id"], run["run"], "")
    by, via = lookup(lab["produced_by"], run["produced_by"]), \
        lookup(lab["produced_via"], run["produced_via"])
    found = []
    for i in range(len(keys)):
        s, n = 2 * i, 2 * i + 1
        cost = float(t.cost[s, 1] + t.cost[n, 1])
        found.append(TriggerEntry(
            status[i], labels["skill"][i], labels["repo"][i], labels["name"][i], version[i],
            model[i], TRIGGER_MODE, suite[i],
            None if run["suite_cases"][i] < 0 else int(run["suite_cases"][i]),
            *_rate(t, s, float(run["alpha"][i])), int(t.cases[s, 1]),
            *_rate(t, n, float(run["alpha"][i])), int(t.cases[n, 1]),
            samples=int(t.samples[s, 1] + t.samples[n, 1]),
            repeats=int(max(t.repeats[s], t.repeats[n])),
            errors=int(t.errors[s, 1] + t.errors[n, 1]), cost=None if cost != cost else cost,
            date=None if dates[i] == "NaT" else dates[i], run_id=run_id[i],
            produced_by=by[i], produced_via=via[i], verification=verification[i]))
    return sorted(found, key=entry_order)


def entry_order(entry: TriggerEntry) -> tuple[str, str, str, str]:
    """How trigger entries are listed: by skill, version, model and suite (never by figure)."""
    return entry.skill, entry.version or "", entry.model, entry.suite_hash or ""


def rate_text(rate: float | None, lo: float | None, hi: float | None) -> str:
    """`60% [23–88%]`, or `-` when no query of the kind was graded."""
    if rate is None:
        return "-"
    return f"{display.pct(rate)} [{(lo or 0) * 100:.0f}–{display.pct(hi)}]"


def table_rows(found: Sequence[TriggerEntry]) -> tuple[list[str], list[list[str]]]:
    """Column headers (`COLUMNS`) and display strings, one row per entry."""
    return list(COLUMNS), [
        [f"{e.skill}@{e.version}" if e.version else e.skill, e.model,
         rate_text(e.recall, e.recall_lo, e.recall_hi),
         rate_text(e.false_triggers, e.false_lo, e.false_hi), str(e.errors),
         e.verification or "-", f"{e.should}+{e.should_not}×{e.repeats}", e.status or "complete",
         e.date[:10] if e.date else "-"]
        for e in found]


def to_records(found: Sequence[TriggerEntry]) -> list[dict[str, Any]]:
    """JSON-ready dicts with every field, and ``rank`` null: trigger entries are not ranked by
    figure (no baseline, no lift)."""
    return [{"rank": None, **e._asdict()} for e in found]
