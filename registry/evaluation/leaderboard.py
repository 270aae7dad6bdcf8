"""Ranked leaderboard tables from result rows: pure functions shared by the CLI and the Space.

One `Entry` per (skill, version, model), the skill being its repo id (else its name), over that
triple's latest run, with the methods of `registry.evaluation.stats`: Wilson 95% over case majority
verdicts, a paired percentile bootstrap of the lift over cases (B=2000, fixed seed), exact
McNemar and `stats.verdict`. Error rows are counted apart, out of rates and token means. Rows
are grouped by integer codes with numpy, so 1,000,000 rows aggregate in a fraction of a second.
"""

from __future__ import annotations

import contextlib
import functools
import gc
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from registry.evaluation import stats

SEED, N_BOOT, LEVEL = 0, 2000, 0.95  # the bootstrap of `stats.paired_bootstrap_lift`
_CHUNK = 1 << 22  # bootstrap means held at once (32 MiB of float64)
_NAT = np.iinfo(np.int64).min
_CODED = ("skill_version", "model", "run_id", "mode", "case_id")
_HISTORY = ("version", "model", "run_id", "date", "baseline", "with_skill", "lift", "lift_lo",
            "lift_hi", "verdict", "cases", "repeats")
COLUMNS = ("rank", "skill@version", "model", "baseline", "with skill", "lift [95% CI]",
           "verdict", "+tokens", "cost", "cases×runs", "date")


class Entry(NamedTuple):
    """One skill version on one model: arm rates, the paired lift, tokens and dollars.

    ``baseline``/``with_skill`` are mean case pass fractions (errors excluded) and their
    ``_lo``/``_hi`` the Wilson 95% interval over case majority verdicts; ``lift`` is paired
    over the ``cases`` answered in both arms, with a bootstrap interval and McNemar ``p_value``
    (``b`` cases pass only with the skill, ``c`` only without). Costs are None when any price is
    unknown. ``runs`` counts the runs pooled (1 unless ``latest_only=False``); ``run_id`` and
    ``date`` (ISO 8601 UTC) name the newest.
    """

    skill: str
    repo: str | None
    name: str
    version: str | None
    model: str
    mode: str
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
    p_value: float
    b: int
    c: int
    cases: int
    repeats: int
    errors: int
    baseline_input_tokens: float
    skill_input_tokens: float
    token_overhead: float
    baseline_output_tokens: float
    skill_output_tokens: float
    baseline_cost: float | None
    skill_cost: float | None
    cost_per_pass: float | None
    runs: int
    date: str | None
    run_id: str


class _Rows(NamedTuple):
    """The frame as integer codes and numbers; ``labels`` holds the strings behind the codes."""

    cols: dict[str, np.ndarray]
    labels: dict[str, np.ndarray]

    @classmethod
    def from_frame(cls, frame: pd.DataFrame) -> _Rows:
        skill, labels = _skill_codes(frame)
        cols = {"skill": skill}
        for name in _CODED:
            cols[name], labels[name] = _codes(frame, name)
        arm, arms = _codes(frame, "arm")
        cols["arm"] = np.append([0 if a == "baseline" else 1 if a == "skill" else -1
                                 for a in arms], -1).astype(np.int64)[arm]
        passed = frame["passed"].astype("boolean")
        error = frame["error"].notna().to_numpy() if "error" in frame else False
        cols["valid"] = passed.notna().to_numpy() & ~error
        cols["passed"] = passed.to_numpy(dtype=bool, na_value=False) & cols["valid"]
        cols["time"] = _times(frame)
        for name in ("input_tokens", "output_tokens", "cost_usd"):  # NaN cost: unknown price
            missing = pd.Series(np.nan if name == "cost_usd" else 0.0, frame.index)
            values = pd.to_numeric(frame.get(name, missing), errors="coerce")
            cols[name] = values.to_numpy(dtype=float, na_value=np.nan)
            cols[name] = cols[name] if name == "cost_usd" else np.nan_to_num(cols[name])
        return cls(cols, labels)

    def take(self, mask: np.ndarray) -> _Rows:
        """The rows where ``mask`` is True (self when it keeps them all)."""
        return self if mask.all() else _Rows({k: v[mask] for k, v in self.cols.items()},
                                             self.labels)


def _codes(frame: pd.DataFrame, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes (-1 for missing) and the labels they index, categoricals for free."""
    if name not in frame:
        return np.full(len(frame), -1, dtype=np.int64), np.array([], dtype=object)
    column = frame[name]
    if isinstance(column.dtype, pd.CategoricalDtype):
        return (column.cat.codes.to_numpy().astype(np.int64),
                np.asarray(column.cat.categories, dtype=object))
    codes, uniques = pd.factorize(column)
    return codes.astype(np.int64), np.asarray(uniques, dtype=object)


def _skill_codes(frame: pd.DataFrame) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Codes of the skill label (repo when set, else name), with each label's repo and name."""
    repo, repos = _codes(frame, "skill_repo")
    name, names = _codes(frame, "skill_name")
    pair, pairs = _combine(repo, len(repos), name, len(names))
    width = len(names) + 1
    repo_of = [str(repos[r]) if r >= 0 and repos[r] else None for r in pairs // width - 1]
    name_of = [str(names[n]) if n >= 0 else "" for n in pairs % width - 1]
    label, uniques = pd.factorize(np.asarray(
        [r or n for r, n in zip(repo_of, name_of, strict=True)], dtype=object))
    first = np.unique(label, return_index=True)[1]  # each label's first (repo, name) pair
    return label[pair], {"skill": np.asarray(uniques, dtype=object),
                         "repo": np.asarray(repo_of, dtype=object)[first],
                         "name": np.asarray(name_of, dtype=object)[first]}


def _combine(a: np.ndarray, n_a: int, b: np.ndarray, n_b: int) -> tuple[np.ndarray, np.ndarray]:
    """Codes of the (a, b) pairs present (-1 allowed) and their keys ``(a+1)*(n_b+1) + b+1``;
    small key spaces are compacted with a bincount, several times faster than hashing."""
    keys = (a + 1) * (n_b + 1) + b + 1
    size = (n_a + 1) * (n_b + 1)
    if size <= max(2 * len(keys), 1 << 16):
        present = np.bincount(keys, minlength=size) > 0
        return (np.cumsum(present) - 1)[keys], np.flatnonzero(present)
    codes, uniques = pd.factorize(keys)
    return codes.astype(np.int64), np.asarray(uniques, dtype=np.int64)


def _times(frame: pd.DataFrame) -> np.ndarray:
    """``created_at`` as int64 nanoseconds since the epoch (unknown times sort first)."""
    column = frame.get("created_at", pd.Series(pd.NaT, index=frame.index))
    if not isinstance(column.dtype, pd.DatetimeTZDtype):
        column = pd.to_datetime(column, utc=True, errors="coerce", format="ISO8601")
    return column.dt.tz_localize(None).to_numpy("datetime64[ns]").view(np.int64)


def _allowed(labels: np.ndarray, keep: Callable[[int], bool]) -> np.ndarray:
    """A lookup from codes to keep/drop; code -1 (missing) indexes the trailing False."""
    return np.append(np.fromiter((keep(i) for i in range(len(labels))), bool, len(labels)),
                     False)


def _row_mask(rows: _Rows, skill: str | None, model: str | None,
              tags: dict[str, list[str]] | None, tag: str | None) -> np.ndarray:
    mask, lab, c = rows.cols["arm"] >= 0, rows.labels, rows.cols
    if skill:
        mask &= _allowed(lab["skill"], lambda i: skill.lower() in
                         f"{lab['skill'][i]}\n{lab['name'][i]}".lower())[c["skill"]]
    if model:
        exact = model in set(lab["model"])
        mask &= _allowed(lab["model"], lambda i: lab["model"][i] == model if exact
                         else model.lower() in str(lab["model"][i]).lower())[c["model"]]
    if tag and tags is None:
        raise ValueError("filtering by tag needs the repo -> tags mapping")
    if tag:
        mask &= _allowed(lab["skill"], lambda i: tag.lower() in {t.lower() for t in (
            tags.get(lab["skill"][i]) or tags.get(lab["name"][i]) or [])})[c["skill"]]
    return mask


def _triples(rows: _Rows) -> tuple[np.ndarray, np.ndarray]:
    """Group codes of (skill, version, model) and, per group, the three label codes."""
    c, lab = rows.cols, rows.labels
    sv, sv_keys = _combine(c["skill"], len(lab["skill"]), c["skill_version"],
                           len(lab["skill_version"]))
    t, t_keys = _combine(sv, len(sv_keys), c["model"], len(lab["model"]))
    n_model, n_version = len(lab["model"]) + 1, len(lab["skill_version"]) + 1
    sv_of = t_keys // n_model - 1
    keys = np.stack([sv_keys[sv_of] // n_version - 1, sv_keys[sv_of] % n_version - 1,
                     t_keys % n_model - 1], axis=1)
    return t, keys


def _group_max(g: np.ndarray, values: np.ndarray, n_g: int) -> np.ndarray:
    """The int64 maximum of ``values`` per group code (the int64 minimum for an empty group)."""
    out = np.full(n_g, _NAT, dtype=np.int64)
    np.maximum.at(out, g, values.astype(np.int64, copy=False))
    return out


def _latest(rows: _Rows, t: np.ndarray, n_t: int) -> dict[str, np.ndarray]:
    """Per group its newest run (latest ``created_at``, then run id), date and run count;
    per row, ``on_latest``: whether the row is in its group's newest run."""
    n_run = len(rows.labels["run_id"]) + 1
    pair, keys = _combine(t, n_t, rows.cols["run_id"], n_run - 1)
    newest = _group_max(pair, rows.cols["time"], len(keys))
    group, run = keys // n_run - 1, keys % n_run - 1
    ties = _rank(rows.labels["run_id"])[run] if len(keys) > n_t else run  # one run each: no tie
    order = np.lexsort((ties, newest, group))
    last = order[np.append(group[order][1:] != group[order][:-1], True)]
    is_chosen = np.zeros(len(keys), dtype=bool)
    is_chosen[last] = True
    return {"run": run[last], "date": newest[last], "on_latest": is_chosen[pair],
            "runs": np.bincount(group, minlength=n_t)}


def _div(num: np.ndarray, den: np.ndarray) -> np.ndarray:  # 0 where den is 0
    return np.divide(num, den, out=np.zeros(np.shape(num)), where=den > 0)


def _unique_rows(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of ``matrix`` and each row's index among them (hash, then exact check)."""
    codes = pd.factorize(matrix.ravel())[0].reshape(matrix.shape).astype(np.uint64)
    key = np.zeros(len(matrix), dtype=np.uint64)
    for column in codes.T:
        key = key * np.uint64(1_000_003) + column  # wraps modulo 2**64: a hash, checked below
    inverse = pd.factorize(key)[0]
    first = np.unique(inverse, return_index=True)[1]
    if np.array_equal(matrix[first][inverse], matrix):
        return matrix[first], inverse
    unique, inverse = np.unique(matrix, axis=0, return_inverse=True)  # a hash collision
    return unique, inverse.reshape(-1)


def _per_map(fn: Callable[[int, int], Any], a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``fn(a, b)`` over pairs of counts, evaluated once per distinct pair."""
    a, b = a.astype(np.int64), b.astype(np.int64)
    width = int(b.max(initial=0)) + 1
    inverse, keys = pd.factorize(a * width + b)
    return np.array([fn(*divmod(int(k), width)) for k in keys], dtype=float)[inverse]


def _aggregate(rows: _Rows, g: np.ndarray, n_g: int) -> dict[str, np.ndarray]:
    """Per-group statistics, two-column arrays holding (baseline, skill); rows are summed per
    (group, case, arm) cell first, so each pass over the rows is one bincount."""
    c, n_case = rows.cols, len(rows.labels["case_id"])
    pair, keys = _combine(g, n_g, c["case_id"], n_case)
    group, n_cells = keys // (n_case + 1) - 1, 2 * len(keys)
    cell = 2 * pair + c["arm"]

    def per_cell(weights: np.ndarray | None = None) -> np.ndarray:
        return np.bincount(cell, weights, minlength=n_cells).reshape(-1, 2)

    def per_group(values: np.ndarray) -> np.ndarray:
        return np.stack([np.bincount(group, values[:, k], minlength=n_g) for k in (0, 1)], 1)

    valid, passes, total = per_cell(c["valid"]), per_cell(c["passed"]), per_cell()
    samples, has = per_group(valid), valid > 0
    n_cases = per_group(has)
    repeats = _group_max(group, np.maximum(*total.T), n_g)  # max(axis=1) is slow on 2 columns
    mode = np.full(n_g, -1, dtype=np.int64)
    mode[g] = c["mode"]
    majority = per_group(has & (2 * passes > valid))
    out = {
        "rate": _div(per_group(_div(passes, valid)), n_cases), "passes": per_group(passes),
        "wilson": np.stack([_per_map(stats.wilson_interval, majority[:, k], n_cases[:, k])
                            for k in (0, 1)], 1),
        "errors": per_group(total - valid) @ [1, 1], "repeats": repeats, "mode": mode,
        "input": _div(per_group(per_cell(np.where(c["valid"], c["input_tokens"], 0))), samples),
        "output": _div(per_group(per_cell(np.where(c["valid"], c["output_tokens"], 0))),
                       samples),
        "cost": per_group(per_cell(np.where(c["valid"], c["cost_usd"], 0))),  # NaN: unknown
    }
    return out | _paired(group, valid, passes, n_g)


def _paired(group: np.ndarray, valid: np.ndarray, passes: np.ndarray,
            n_g: int) -> dict[str, np.ndarray]:
    """Lift, bootstrap interval, McNemar counts and p over the cases answered in both arms."""
    both = (valid[:, 0] > 0) & (valid[:, 1] > 0)
    grp, valid, passes = group[both], valid[both], passes[both]
    diff = passes[:, 1] / valid[:, 1] - passes[:, 0] / valid[:, 0]
    n = np.bincount(grp, minlength=n_g)
    major = 2 * passes > valid
    b = np.bincount(grp, weights=major[:, 1] & ~major[:, 0], minlength=n_g)
    c = np.bincount(grp, weights=major[:, 0] & ~major[:, 1], minlength=n_g)
    lo, hi = _bootstrap(grp, diff, n_g)
    lift = np.round(_div(np.bincount(grp, weights=diff, minlength=n_g), n), 12)  # stable ranks
    return {"cases": n, "lift": lift, "lift_lo": lo, "lift_hi": hi, "b": b, "c": c,
            "p_value": _per_map(stats.mcnemar_exact, b, c)}


def _bootstrap(group: np.ndarray, diff: np.ndarray, n_g: int, *, seed: int = SEED,
               n_boot: int = N_BOOT, level: float = LEVEL) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap of each group's mean diff, as `stats.paired_bootstrap_lift`.

    Every group of ``n`` cases (diffs sorted) resamples with the same ``default_rng(seed)``
    draws, so an interval depends only on the group's data and equal groups are computed once.
    Groups without cases get [-1, 1].
    """
    lo, hi = np.full(n_g, -1.0), np.full(n_g, 1.0)
    if (np.diff(group) < 0).any():  # `_combine` usually yields them grouped already
        order = np.argsort(group, kind="stable")
        group, diff = group[order], diff[order]
    sizes = np.bincount(group, minlength=n_g)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    for n in np.unique(sizes[sizes > 0]):
        members = np.flatnonzero(sizes == n)
        data, inverse = _unique_rows(np.sort(diff[starts[members, None] + np.arange(n)], axis=1))
        draws = np.random.default_rng(seed).integers(0, n, size=(n_boot, n))
        weights = np.bincount((draws + n * np.arange(n_boot)[:, None]).ravel(),
                              minlength=n_boot * n).reshape(n_boot, n).T.astype(float)
        bounds = np.empty((len(data), 2))
        step = max(1, _CHUNK // n_boot)
        for s in range(0, len(data), step):
            means = np.round(data[s:s + step] @ weights / n, 12)  # exact 0 stays 0
            bounds[s:s + step] = np.quantile(means, [(1 - level) / 2, (1 + level) / 2], axis=1).T
        bounds = np.round(bounds, 12)[inverse]
        lo[members], hi[members] = bounds[:, 0], bounds[:, 1]
    return lo, hi


def _lookup(labels: np.ndarray, codes: np.ndarray, missing: Any = None) -> list[Any]:
    """Labels of ``codes`` as a list, ``missing`` where the code is -1."""
    return np.append(labels, np.array([missing], dtype=object))[codes].tolist()


def _rank(labels: np.ndarray) -> np.ndarray:
    """Alphabetical rank of each label, -1 for a missing one (code -1)."""
    rank = np.full(len(labels) + 1, -1, dtype=np.int64)
    rank[np.argsort(labels.astype(str), kind="stable")] = np.arange(len(labels))
    return rank


def _optional(values: np.ndarray) -> list[float | None]:
    return [None if v != v else v for v in values.tolist()]  # NaN marks unknown


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic GC while building many acyclic objects: otherwise collections walk
    everything built so far, tripling the time to build 100,000 entries or table rows."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@_gc_paused()
def _build(lab: dict[str, np.ndarray], keys: np.ndarray, agg: dict[str, np.ndarray],
           verdict: str | None) -> list[Entry]:
    """Entries ranked by the lift's lower bound, then lift, then skill, version and model.

    ``agg`` also holds each group's ``run`` code, ``date`` and number of ``runs``.
    """
    verdicts = np.asarray([stats.verdict(lo, hi) for lo, hi in
                           zip(agg["lift_lo"].tolist(), agg["lift_hi"].tolist(), strict=True)])
    order = np.lexsort((_rank(lab["model"])[keys[:, 2]], _rank(lab["skill_version"])[keys[:, 1]],
                        _rank(lab["skill"])[keys[:, 0]], -agg["lift"], -agg["lift_lo"]))
    if verdict:
        order = order[verdicts[order] == verdict]
    k, a = keys[order], {name: values[order] for name, values in agg.items()}
    rate, wilson, tokens = a["rate"], a["wilson"], a["input"]
    per_pass = np.where(a["passes"][:, 1] > 0, a["cost"][:, 1] / np.maximum(a["passes"][:, 1], 1),
                        np.nan)
    dates = np.datetime_as_string(a["date"].view("datetime64[ns]").astype("datetime64[s]"),
                                  timezone="UTC").tolist()
    cols: dict[str, list[Any]] = {
        "skill": _lookup(lab["skill"], k[:, 0]), "repo": _lookup(lab["repo"], k[:, 0]),
        "name": _lookup(lab["name"], k[:, 0]), "version": _lookup(lab["skill_version"], k[:, 1]),
        "model": _lookup(lab["model"], k[:, 2], ""), "mode": _lookup(lab["mode"], a["mode"], ""),
        "baseline": rate[:, 0], "baseline_lo": wilson[:, 0, 0], "baseline_hi": wilson[:, 0, 1],
        "with_skill": rate[:, 1], "skill_lo": wilson[:, 1, 0], "skill_hi": wilson[:, 1, 1],
        "lift": a["lift"], "lift_lo": a["lift_lo"], "lift_hi": a["lift_hi"],
        "verdict": verdicts[order].tolist(), "p_value": a["p_value"],
        **{name: a[name].astype(np.int64) for name in ("b", "c", "cases", "repeats", "errors")},
        "baseline_input_tokens": tokens[:, 0], "skill_input_tokens": tokens[:, 1],
        "token_overhead": tokens[:, 1] - tokens[:, 0], "baseline_output_tokens": a["output"][:, 0],
        "skill_output_tokens": a["output"][:, 1], "baseline_cost": _optional(a["cost"][:, 0]),
        "skill_cost": _optional(a["cost"][:, 1]), "cost_per_pass": _optional(per_pass),
        "runs": a["runs"].astype(np.int64), "date": [None if d == "NaT" else d for d in dates],
        "run_id": _lookup(lab["run_id"], a["run"], ""),
    }
    columns = [cols[name] for name in Entry._fields]
    return list(map(Entry._make, zip(*(c.tolist() if isinstance(c, np.ndarray) else c
                                       for c in columns), strict=True)))


def entries(frame: pd.DataFrame, *, skill: str | None = None, model: str | None = None,
            tags: dict[str, list[str]] | None = None, tag: str | None = None,
            verdict: str | None = None, latest_only: bool = True) -> list[Entry]:
    """Rank every (skill, version, model) in ``frame`` by the lower bound of its lift.

    ``frame`` holds one row per `ResultRow` (``output``/``checks`` may be absent; strings may be
    categoricals). ``skill`` keeps skills whose repo or name contains it (case-insensitive);
    ``model`` keeps that exact model, or the models containing it when none is named exactly;
    ``tag`` keeps skills whose entry in ``tags`` (repo or name -> tags) has it; ``verdict``
    keeps one verdict. With ``latest_only`` each triple uses only its newest run (latest
    ``created_at``, then the greatest run id); otherwise its runs are pooled by case id.

    Raises:
        ValueError: If ``tag`` is given without ``tags``.
    """
    if frame.empty:
        return []
    rows = _Rows.from_frame(frame)
    rows = rows.take(_row_mask(rows, skill, model, tags, tag))
    if not len(rows.cols["arm"]):
        return []
    t, keys = _triples(rows)
    latest = _latest(rows, t, len(keys))
    if latest_only:
        rows, t = rows.take(latest["on_latest"]), t[latest["on_latest"]]
        latest["runs"] = np.ones(len(keys), dtype=np.int64)
    del latest["on_latest"]
    return _build(rows.labels, keys, _aggregate(rows, t, len(keys)) | latest, verdict)


def model_view(ranked: Sequence[Entry], model: str) -> list[Entry]:
    """The skills that help ``model`` most (exact model, else models containing it), ranked."""
    chosen = [e for e in ranked if e.model == model] or [
        e for e in ranked if model.lower() in e.model.lower()]
    return sorted(chosen, key=lambda e: (-e.lift_lo, -e.lift))


def skill_history(frame: pd.DataFrame, skill: str) -> list[dict[str, Any]]:
    """One point per run of ``skill`` (repo or name, exact) per version x model, oldest first.

    Each point has version, model, run_id, date, baseline, with_skill, lift, lift_lo, lift_hi,
    verdict, cases and repeats: the Space's history chart.
    """
    if frame.empty:
        return []
    rows = _Rows.from_frame(frame)
    lab = rows.labels
    ok = _allowed(lab["skill"], lambda i: skill in (lab["skill"][i], lab["name"][i]))
    rows = rows.take(ok[rows.cols["skill"]] & (rows.cols["arm"] >= 0))
    if not len(rows.cols["arm"]):
        return []
    t, keys = _triples(rows)
    g, g_keys = _combine(t, len(keys), rows.cols["run_id"], len(lab["run_id"]))
    n_run = len(lab["run_id"]) + 1
    per_run = {"run": g_keys % n_run - 1, "date": _group_max(g, rows.cols["time"], len(g_keys)),
               "runs": np.ones(len(g_keys), dtype=np.int64)}
    built = _build(lab, keys[g_keys // n_run - 1], _aggregate(rows, g, len(g_keys)) | per_run,
                   None)
    points = [{k: r[k] for k in _HISTORY} for r in to_records(built)]
    return sorted(points, key=lambda p: (p["date"] or "", p["run_id"], p["version"] or "",
                                         p["model"]))


def _rounded(name: str, value: Any) -> Any:
    if not isinstance(value, float):
        return value
    if name == "p_value":
        return float(f"{value:.4g}")
    return round(value, 1 if name.endswith(("tokens", "overhead"))
                 else 6 if name.endswith(("cost", "per_pass")) else 4)


def to_records(ranked: Sequence[Entry]) -> list[dict[str, Any]]:
    """JSON-ready dicts with a ``rank``; rates 4 decimals, p 4 digits, tokens 1, dollars 6."""
    return [{"rank": i, **{k: _rounded(k, v) for k, v in e._asdict().items()}}
            for i, e in enumerate(ranked, 1)]


@functools.lru_cache(maxsize=1 << 16)
def _pct(x: float) -> str:
    return f"{x * 100:.0f}%"


@functools.lru_cache(maxsize=1 << 16)
def _interval(lift: float, lo: float, hi: float) -> str:
    return f"{lift * 100:+.0f} [{lo * 100:+.0f}, {hi * 100:+.0f}]"


def _usd(value: float | None, model: str) -> str:
    """Like the CLI's `usd`: unknown is "unknown", never a fake $0."""
    if value is None or (value == 0 and model.startswith(("embedded/", "local/"))):
        return "unknown" if value is None else "$0 (local)"
    return f"${value:.4f}" if value < 1 else f"${value:.2f}"


@_gc_paused()
def table_rows(ranked: Sequence[Entry]) -> tuple[list[str], list[list[str]]]:
    """Column headers and display strings (`COLUMNS`), one row per entry in rank order."""
    return list(COLUMNS), [
        [str(i), f"{e.skill}@{e.version}" if e.version else e.skill, e.model, _pct(e.baseline),
         _pct(e.with_skill), _interval(e.lift, e.lift_lo, e.lift_hi), e.verdict,
         f"{e.token_overhead:+,.0f}", _usd(e.skill_cost, e.model), f"{e.cases}×{e.repeats}",
         e.date[:10] if e.date else "-"]
        for i, e in enumerate(ranked, 1)]
