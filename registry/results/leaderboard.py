"""Leaderboard entries from result rows: shared by the CLI, the Space, cards, `info` and search.

One `Entry` per (skill version, model, mode with placement, suite hash), the skill being its
repo id (else its name), over one run: the newest run that answered every planned sample of the
whole suite, else the newest run. Every figure comes from `stats.table`, so an entry equals
the run's own summary (`report.summarize`). Only entries of a registry repo, from a finished
full-suite run, with a conclusive verdict are ranked (by the lift's lower bound); the others stay
visible, unranked, with the reason in ``status``. Given the registry's verification badges
(`leaderboard_badges`), an entry also needs a ``replayed`` or ``spot-checked`` run to rank, and
a replayed full run is chosen over a newer unverified one. Trigger rows (``mode: trigger``) have no
baseline and no lift: they are `trigger_board`'s entries, never these.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from registry._gc import collector
from registry.results import stats
from registry.results.grouping import (
    Rows,
    allowed,
    combine,
    combine_all,
    designed,
    group_max,
    lookup,
    rank,
)
from registry.results.leaderboard_badges import Badge, run_badges

KEY = ("skill", "skill_version", "model", "mode", "placement", "suite_hash")
TRIGGER_MODE = "trigger"  # `evaluation.trigger.MODE`, named here to keep this module light


class Entry(NamedTuple):
    """One skill version on one model in one mode over one suite, from one run.

    Rates, intervals, lift, test and verdict are `stats.Table`'s (``cases``: paired cases;
    ``uneven``: cases usable in one arm only). ``rank`` is None for an unranked entry, whose
    ``status`` says why (not in the registry, partial, subset, its verdict, or its badge).
    Token figures are means per graded sample; dollars are the arms' totals, None when a price
    is unknown. ``verification`` is the run's badge (`leaderboard_badges.VERIFICATIONS`), None
    when no badges were looked up.
    """

    rank: int | None
    status: str
    skill: str
    repo: str | None
    name: str
    version: str | None
    model: str
    mode: str
    placement: str | None
    suite_hash: str | None
    suite_cases: int | None
    baseline: float
    baseline_lo: float
    baseline_hi: float
    with_skill: float
    skill_lo: float
    skill_hi: float
    lift: float
    lift_lo: float
    lift_hi: float
    verdict: str
    note: str | None
    p_value: float
    b: int
    c: int
    normalized_gain: float | None
    detectable: float
    cases: int
    repeats: int
    errors: int
    uneven: int
    baseline_input_tokens: float
    skill_input_tokens: float
    token_overhead: float
    baseline_output_tokens: float
    skill_output_tokens: float
    baseline_cost: float | None
    skill_cost: float | None
    cost_per_pass: float | None
    date: str | None
    run_id: str
    produced_by: str | None
    produced_via: str | None
    verification: str | None


def row_mask(rows: Rows, skill: str | None, model: str | None,
             tags: dict[str, list[str]] | None, tag: str | None) -> np.ndarray:
    """The rows of an arm and a case that pass the `entries` filters (trigger rows too)."""
    lab, c = rows.labels, rows.cols
    mask = (c["arm"] >= 0) & (c["case_id"] >= 0)
    if skill:
        mask &= allowed(lab["skill"], lambda i: skill.lower() in
                        f"{lab['skill'][i]}\n{lab['name'][i]}".lower())[c["skill"]]
    if model:
        exact = model in set(lab["model"])
        mask &= allowed(lab["model"], lambda i: lab["model"][i] == model if exact
                        else model.lower() in str(lab["model"][i]).lower())[c["model"]]
    if tag:
        if tags is None:
            raise ValueError("filtering by tag needs the repo -> tags mapping")
        wanted, known = tag.lower(), tags
        mask &= allowed(lab["skill"], lambda i: wanted in {t.lower() for t in (
            known.get(lab["skill"][i]) or known.get(lab["name"][i]) or [])})[c["skill"]]
    return mask


def is_trigger(rows: Rows) -> np.ndarray:
    """Per row: whether it is a trigger eval's (no baseline arm, no lift)."""
    return np.append(rows.labels["mode"] == TRIGGER_MODE, False)[rows.cols["mode"]]


def run_groups(rows: Rows, k: np.ndarray, n_k: int) -> dict[str, np.ndarray]:
    """Per (key, run) group: key, run code, newest time, rows, the planned counts (-1 when
    unknown, as in rows older than them), an adaptive run's reporting level and whether its
    design stopped (`grouping.designed`), and per row its group ``of``."""
    n_run = len(rows.labels["run_id"])
    g, keys = combine(k, n_k, rows.cols["run_id"], n_run)
    n_g = len(keys)
    planned = {name: group_max(g, np.nan_to_num(rows.cols[name], nan=-1), n_g, -1)
               for name in ("suite_cases", "run_cases", "planned_runs")}
    planned |= {name: group_max(g, rows.cols[name], n_g, -1)
                for name in ("produced_by", "produced_via")}
    alpha, stopped = designed(rows, g, n_g)  # an adaptive run: its level, and where it stopped
    return {"of": g, "alpha": alpha, "stopped": stopped, "key": keys // (n_run + 1) - 1,
            "run": keys % (n_run + 1) - 1,
            "date": group_max(g, rows.cols["time"], n_g),
            "rows": np.bincount(g, minlength=n_g), **planned}


def run_status(rows: Rows, keys: np.ndarray, runs: dict[str, np.ndarray], *, arms: int = 2,
               words: tuple[str, str] = ("cases", "samples")) -> np.ndarray:
    """Per run group of `run_groups`, why it cannot rank by its data ("" when it can): not in
    the registry (no repo), a subset of its suite, or partial (fewer rows than the samples it
    planned, one model a run with `arms` arms a case; an adaptive run whose design stopped is
    whole). `words` names its cases and samples."""
    from registry.results.runs import samples_planned  # loaded by then: keeps this module light

    repo = lookup(rows.labels["repo"], keys[runs["key"], 0])
    want = samples_planned(1, runs["run_cases"], runs["planned_runs"], arms=arms)
    found = []
    for i, (n, planned, cases, suite, stopped) in enumerate(zip(
            runs["rows"].tolist(), want.tolist(), runs["run_cases"].tolist(),
            runs["suite_cases"].tolist(), runs["stopped"].tolist(), strict=True)):
        if repo[i] is None:
            found.append("not in the registry")
        elif cases > 0 and suite > cases:
            found.append(f"subset: {cases} of {suite} {words[0]}")
        elif planned > 0 and n < planned and not stopped:  # a design's stop: the whole run
            found.append(f"partial: {n} of {planned} {words[1]}")
        else:
            found.append("")
    return np.array(found, dtype=object)


def chosen_runs(rows: Rows, runs: dict[str, np.ndarray], fit: np.ndarray,
                n_k: int) -> np.ndarray:
    """Per key, the run group used: the newest of the fittest runs (``fit``: bool or a score,
    higher is fitter), ties by run id."""
    ties = rank(rows.labels["run_id"])[runs["run"]]
    order = np.lexsort((ties, runs["date"], fit, runs["key"]))
    last = np.append(runs["key"][order][1:] != runs["key"][order][:-1], True)
    chosen = np.full(n_k, -1, dtype=np.int64)
    chosen[runs["key"][order][last]] = order[last]
    return chosen


def entries(frame: pd.DataFrame, *, skill: str | None = None, model: str | None = None,
            tags: dict[str, list[str]] | None = None, tag: str | None = None,
            verdict: str | None = None,
            badges: Mapping[str, Badge] | None = None) -> list[Entry]:
    """Every entry in ``frame``: ranked ones by the lift's lower bound, then unranked ones.

    ``frame`` holds one row per `ResultRow` (``output``/``checks`` may be absent; strings may be
    categoricals). ``skill`` keeps skills whose repo or name contains it (case-insensitive);
    ``model`` keeps that exact model, or the models containing it when none is named exactly;
    ``tag`` keeps skills whose entry in ``tags`` (repo or name -> tags) has it; ``verdict``
    keeps verdicts starting with it ("too few cases", "inconclusive", "helps", ...).
    ``badges`` (run id -> `Badge`, a run without one is not replayed yet) ranks only entries of
    replayed runs; None ranks by the data alone (a run's own report).

    The filters never number the ranks again: an entry's rank is its place among every entry
    of ``frame``, as a filtered spreadsheet keeps its row numbers, so `leaderboard --skill`
    and the Space's skill page say the same "#4" (a filtered board said "1" for it).

    Raises:
        ValueError: If ``tag`` is given without ``tags``.
    """
    if frame.empty:
        return []
    rows = Rows.from_frame(frame)
    rows = rows.take(row_mask(rows, None, None, None, None) & ~is_trigger(rows))
    wanted = row_mask(rows, skill, model, tags, tag)  # the same for every row of an entry
    if not wanted.any():
        return []
    k, keys = combine_all(rows, KEY)
    shown = np.zeros(len(keys), dtype=bool)
    shown[k[wanted]] = True
    runs = run_groups(rows, k, len(keys))
    status = run_status(rows, keys, runs)
    status, fit, verification = verified_runs(rows, runs, status, badges)
    chosen = chosen_runs(rows, runs, fit, len(keys))
    on_chosen = np.zeros(len(runs["key"]), dtype=bool)
    on_chosen[chosen] = True
    rows = rows.take(on_chosen[runs["of"]])
    alpha = np.where(chosen >= 0, runs["alpha"][chosen], stats.ALPHA)
    built = _build(rows, keys, stats.table(rows.outcomes(k[on_chosen[runs["of"]]]), len(keys),
                                           alpha),
                   {name: values[chosen] for name, values in runs.items() if name != "of"},
                   status[chosen], verification[chosen], shown)
    return [e for e in built if not verdict or e.verdict.startswith(verdict)]


def verified_runs(rows: Rows, runs: dict[str, np.ndarray], status: np.ndarray,
                  badges: Mapping[str, Badge] | None
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per run group: its status with the badge's reason where the data alone would rank it
    (or list it as complete, on the trigger board), how fit it is to be chosen (2: full and
    replayed, 1: full, 0: neither), its badge name; ``badges`` None: the data alone."""
    full = status == ""
    if badges is None:
        return status, full, np.full(len(status), None, dtype=object)
    found = run_badges(badges, lookup(rows.labels["run_id"], runs["run"], ""))
    rankable = np.array([b.is_rankable for b in found], dtype=bool)
    why = np.array([b.status() for b in found], dtype=object)
    return (np.where(full, why, status), full.astype(np.int8) * (1 + rankable),
            np.array([b.verification for b in found], dtype=object))


def _optional(values: np.ndarray) -> list[float | None]:
    return [None if v != v else v for v in values.tolist()]  # NaN marks unknown


def _notes(a: dict[str, np.ndarray]) -> list[str | None]:
    """`stats.disagreement` per entry, computed only where the interval and test disagree."""
    excludes = (a["lift_lo"] > 0) | (a["lift_hi"] < 0)
    significant = (a["p_value"] < a["alpha"]) & (a["b"] != a["c"])
    notes: list[str | None] = [None] * len(excludes)
    for i in np.flatnonzero(excludes | significant).tolist():
        notes[i] = stats.disagreement(*(a[k][i].item() for k in
                                        ("lift_lo", "lift_hi", "p_value", "b", "c", "alpha")))
    return notes


def _order(lab: dict[str, np.ndarray], keys: np.ndarray, t: stats.Table,
           ranked: np.ndarray) -> np.ndarray:
    """Ranked first by lower bound, then lift; then skill, version, model, mode, placement."""
    tie = [rank(lab[name])[keys[:, i]] for i, name in enumerate(KEY)]
    return np.lexsort((*reversed(tie), -t.lift, -t.lift_lo, ~ranked))


@collector(paused=True)
def _build(rows: Rows, keys: np.ndarray, t: stats.Table, run: dict[str, np.ndarray],
           status: np.ndarray, verification: np.ndarray | None = None,
           shown: np.ndarray | None = None) -> list[Entry]:
    """The entries of ``keys`` in leaderboard order, ranked among them all, then only those
    ``shown`` (per key; None: every one) made into `Entry` values."""
    lab = rows.labels
    status = np.array([s or ("" if stats.is_conclusive(v) else v)
                       for s, v in zip(status.tolist(), t.verdict.tolist(), strict=True)],
                      dtype=object)
    ranked = status == ""
    order = _order(lab, keys, t, ranked)
    ranks = np.cumsum(ranked[order])
    if shown is not None:
        ranks, order = ranks[shown[order]], order[shown[order]]
    k, a = keys[order], {name: np.asarray(v)[order] for name, v in t._asdict().items()}
    r = {name: v[order] for name, v in run.items()}
    samples = np.maximum(a["samples"], 1)
    tokens, out_tokens = a["input_tokens"] / samples, a["output_tokens"] / samples
    per_pass = np.where(a["passes"][:, 1] > 0,
                        a["cost"][:, 1] / np.maximum(a["passes"][:, 1], 1), np.nan)
    dates = np.datetime_as_string(r["date"].view("datetime64[ns]").astype("datetime64[s]"),
                                  timezone="UTC").tolist()
    cols: dict[str, Any] = {
        "rank": [int(n) if ok else None for n, ok in zip(ranks.tolist(),
                                                          ranked[order].tolist(), strict=True)],
        "status": status[order].tolist(),
        "skill": lookup(lab["skill"], k[:, 0]), "repo": lookup(lab["repo"], k[:, 0]),
        "name": lookup(lab["name"], k[:, 0]), "version": lookup(lab["skill_version"], k[:, 1]),
        "model": lookup(lab["model"], k[:, 2], ""), "mode": lookup(lab["mode"], k[:, 3], ""),
        "placement": lookup(lab["placement"], k[:, 4]),
        "suite_hash": lookup(lab["suite_hash"], k[:, 5]),
        "suite_cases": [None if n < 0 else n for n in r["suite_cases"].tolist()],
        "baseline": a["rate"][:, 0], "baseline_lo": a["rate_lo"][:, 0],
        "baseline_hi": a["rate_hi"][:, 0], "with_skill": a["rate"][:, 1],
        "skill_lo": a["rate_lo"][:, 1], "skill_hi": a["rate_hi"][:, 1],
        "lift": a["lift"], "lift_lo": a["lift_lo"], "lift_hi": a["lift_hi"],
        "verdict": a["verdict"].tolist(), "p_value": a["p_value"], "b": a["b"], "c": a["c"],
        "note": _notes(a),
        "normalized_gain": _optional(a["gain"]), "detectable": a["detectable"],
        "cases": a["paired"], "repeats": a["repeats"], "errors": a["errors"] @ [1, 1],
        "uneven": a["uneven"],
        "baseline_input_tokens": tokens[:, 0], "skill_input_tokens": tokens[:, 1],
        "token_overhead": tokens[:, 1] - tokens[:, 0],
        "baseline_output_tokens": out_tokens[:, 0], "skill_output_tokens": out_tokens[:, 1],
        "baseline_cost": _optional(a["cost"][:, 0]), "skill_cost": _optional(a["cost"][:, 1]),
        "cost_per_pass": _optional(per_pass),
        "date": [None if d == "NaT" else d for d in dates],
        "run_id": lookup(lab["run_id"], r["run"], ""),
        "produced_by": lookup(lab["produced_by"], r["produced_by"]),
        "produced_via": lookup(lab["produced_via"], r["produced_via"]),
        "verification": [None] * len(order) if verification is None
        else verification[order].tolist(),
    }
    columns = [cols[name] for name in Entry._fields]
    return list(map(Entry._make, zip(*(c.tolist() if isinstance(c, np.ndarray) else c
                                       for c in columns), strict=True)))


def model_view(ranked: Sequence[Entry], model: str) -> list[Entry]:
    """The skills that help ``model`` most (exact model, else models containing it), ranked."""
    chosen = [e for e in ranked if e.model == model] or [
        e for e in ranked if model.lower() in e.model.lower()]
    return sorted(chosen, key=lambda e: (e.rank is None, -e.lift_lo, -e.lift))


HISTORY = ("version", "model", "mode", "run_id", "date", "baseline", "with_skill", "lift",
           "lift_lo", "lift_hi", "verdict", "cases", "repeats", "status")


def skill_history(frame: pd.DataFrame, skill: str) -> list[dict[str, Any]]:
    """One point per run of ``skill`` (repo or name, exact) per entry key, oldest first.

    Each point has the `HISTORY` fields of an `Entry` over that run alone: the Space's chart.
    """
    frame = _rows_of(frame, skill)
    if frame.empty:
        return []
    rows = Rows.from_frame(frame)
    lab = rows.labels
    ok = allowed(lab["skill"], lambda i: skill in (lab["skill"][i], lab["name"][i]))
    points = [{name: getattr(e, name) for name in HISTORY}
              for e in _run_entries(rows.take(ok[rows.cols["skill"]]))]
    return sorted(points, key=history_order)


def history_order(point: dict[str, Any]) -> tuple[str, str, str, str]:
    """How `skill_history` sorts its points: oldest first, then run, version and model."""
    return point["date"] or "", point["run_id"], point["version"] or "", point["model"]


def _rows_of(frame: pd.DataFrame, skill: str) -> pd.DataFrame:
    """The rows every skill label `skill` may match (repo, or a name of the label) can come
    from, before any grouping: a page's history costs its rows, not the whole results set."""
    if frame.empty or "skill_name" not in frame or "skill_repo" not in frame:
        return frame
    named = (frame["skill_name"] == skill).to_numpy(dtype=bool, na_value=False)
    repos = {*frame["skill_repo"][named].dropna().astype(str), skill}
    return frame[frame["skill_repo"].isin(repos).to_numpy(dtype=bool, na_value=False) | named]


def run_entries(frame: pd.DataFrame) -> list[Entry]:
    """One `Entry` per run of every entry key in ``frame`` (unordered, unranked by data)."""
    return _run_entries(Rows.from_frame(frame)) if not frame.empty else []


def _run_entries(rows: Rows) -> list[Entry]:
    rows = rows.take((rows.cols["arm"] >= 0) & (rows.cols["case_id"] >= 0) & ~is_trigger(rows))
    if not len(rows.cols["arm"]):
        return []
    k, keys = combine_all(rows, KEY)
    runs = run_groups(rows, k, len(keys))
    status = run_status(rows, keys, runs)
    return _build(rows, keys[runs["key"]], stats.table(rows.outcomes(runs["of"]),
                                                       len(runs["key"]), runs["alpha"]),
                  {name: v for name, v in runs.items() if name != "of"}, status)
