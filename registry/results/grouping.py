"""Result rows as integer codes and numbers, grouped without Python loops.

A results frame (one row per `ResultRow`; strings may be pandas categoricals) becomes `Rows`:
every string column as integer codes into its labels (-1 for missing), the outcome of each row
as booleans the statistics engine reads (`stats.Outcomes`), tokens, dollars and times. `combine`
numbers the pairs of two codes present, which is how every grouping (runs, leaderboard keys,
cells) is built. Used by the run report and the leaderboard alike.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from registry.results.stats import Outcomes

NAT = np.iinfo(np.int64).min
#: An adaptive run's plan as cells (its cases x 2 arms x its design's runs) the board replays
#: at most, and the cells it replays at once: a row's design is its writer's text, and one
#: naming 10**9 runs asked gigabytes of the process that serves the board (`designed`).
RUN_CELLS, BATCH_CELLS = 1 << 22, 1 << 24
CODED = ("skill_version", "model", "run_id", "mode", "placement", "suite_hash", "case_id",
         "produced_by", "produced_via", "design")
COUNTS = ("suite_cases", "run_cases", "planned_runs")


class Rows(NamedTuple):
    """The frame as integer codes and numbers; ``labels`` holds the strings behind the codes."""

    cols: dict[str, np.ndarray]
    labels: dict[str, np.ndarray]

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, *, latest: bool = True) -> Rows:
        """Codes, outcomes, tokens, dollars and times of ``frame``'s rows: each sample's own
        (`latest`), or, without ``latest``, every row in frame order (for a caller that
        keeps arrays of its own beside them and applies `latest()` to all of them)."""
        skill, labels = _skill_codes(frame)
        cols = {"skill": skill}
        for name in CODED:
            cols[name], labels[name] = codes(frame, name)
        arm, arms = codes(frame, "arm")
        cols["arm"] = np.append([0 if a == "baseline" else 1 if a == "skill" else -1
                                 for a in arms], -1).astype(np.int64)[arm]
        cols.update(_outcome(frame))
        cols["time"] = _times(frame)
        for name in ("input_tokens", "output_tokens", "cost_usd", "repeat", *COUNTS):
            missing = pd.Series(np.nan if name == "cost_usd" or name in COUNTS else 0.0,
                                frame.index)
            values = pd.to_numeric(frame.get(name, missing), errors="coerce")
            cols[name] = values.to_numpy(dtype=float, na_value=np.nan)
            if name in ("input_tokens", "output_tokens", "repeat"):
                cols[name] = np.nan_to_num(cols[name])
        rows = cls(cols, labels)
        return rows.take(rows.latest()) if latest else rows

    def latest(self) -> np.ndarray:
        """Per row: whether it is its sample's (run, skill, version, model, arm, case, repeat)
        row, as `runs.latest_rows` keeps one for the replay: the last graded row, else the
        last. A run file whose extra error rows repeated graded samples verified clean (the
        replay keeps one row a sample) while the board counted them, turning `helps` into
        `inconclusive: errors in 44 cases` (a red-team note)."""
        c, n = self.cols, len(self.cols["arm"])
        if not n:
            return np.ones(0, dtype=bool)
        repeat, repeats = pd.factorize(c["repeat"])
        sample, n_sample = c["run_id"], len(self.labels["run_id"])
        for code, width in ((c["skill"], len(self.labels["skill"])),
                            (c["skill_version"], len(self.labels["skill_version"])),
                            (c["model"], len(self.labels["model"])), (c["arm"], 2),
                            (c["case_id"], len(self.labels["case_id"])),
                            (repeat.astype(np.int64), len(repeats))):
            sample, present = combine(sample, n_sample, code, width)
            n_sample = len(present)
        score = c["graded"].astype(np.int64) * n + np.arange(n, dtype=np.int64)
        return score == group_max(sample, score, n_sample)[sample]

    def take(self, mask: np.ndarray) -> Rows:
        """The rows where ``mask`` is True (self when it keeps them all)."""
        return self if mask.all() else Rows({k: v[mask] for k, v in self.cols.items()},
                                            self.labels)

    def outcomes(self, group: np.ndarray) -> Outcomes:
        """The engine's input for these rows grouped by ``group`` (cases in label order)."""
        c = self.cols
        return Outcomes(group, rank(self.labels["case_id"])[c["case_id"]], c["arm"],
                        c["graded"], c["passed"], c["transport"], c["input_tokens"],
                        c["output_tokens"], c["cost_usd"])


def designed(rows: Rows, group: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Per group of one run: the level `stats.table` reports it at (`stats.ALPHA`, or an
    adaptive run's stopping look's, `sequential.reporting`, from the design its rows carry and
    its rows, as the run's own summary is: `report.levels`), and whether its design stopped
    (an adaptive run that stopped early is whole with fewer rows than its plan). The runs of
    one design and suite size are replayed together (`sequential_board.reportings`): no loop over
    runs, so a board of thousands of adaptive runs costs what its rows do, `BATCH_CELLS` at a
    time. A design no hubskills could have run (not a JSON object, an unknown or invalid
    parameter) or a plan over `RUN_CELLS` is no design here: its run is reported at
    `stats.ALPHA`, and only its replay, which refuses it, can badge it."""
    from registry.results.stats import ALPHA

    found, stopped = np.full(n_groups, ALPHA), np.zeros(n_groups, dtype=bool)
    design = rows.cols["design"]
    if not (design >= 0).any():
        return found, stopped
    from registry.results.sequential_board import reportings

    at = np.flatnonzero(design >= 0)
    groups, first = np.unique(group[at], return_index=True)
    plans, pos = _planned(rows, group, groups, design[at[first]])
    c = rows.cols
    case, arm, run = pos[group[at], c["case_id"][at]], c["arm"][at], c["repeat"][at]
    for (plan, n), every in plans.items():
        cells = n * 2 * plan.runs
        if cells > RUN_CELLS:
            continue
        step = max(1, BATCH_CELLS // max(cells, 1))
        for start in range(0, len(every), step):
            members = every[start:start + step]
            local = np.full(n_groups, -1, dtype=np.int64)
            local[members] = np.arange(len(members))
            g = local[group[at]]
            use = (g >= 0) & (case >= 0) & (arm >= 0) & (run >= 0) & (run < plan.runs)
            where = (g[use], case[use], arm[use], run[use].astype(np.int64))
            shape = (len(members), n, 2, plan.runs)
            recorded, graded, passed = (np.zeros(shape, dtype=bool) for _ in range(3))
            recorded[where] = True
            graded[where], passed[where] = ~c["transport"][at][use], c["passed"][at][use]
            present = np.logical_and.accumulate(recorded, axis=-1)  # up to the first missing
            found[members], stopped[members] = reportings(plan, present, graded & present,
                                                          passed & present)
    return found, stopped


def _spec(text: str) -> tuple[Any, tuple[str, ...] | None] | None:
    """A row's design label as (its `Design`, the cases it planned, None when it names none);
    None for a design no hubskills could have run (`designed`)."""
    import json

    from registry.errors import HubskillsError
    from registry.results.sequential import Design, validate_design

    try:
        spec = json.loads(text)
        if not isinstance(spec, dict):
            return None
        spec.pop("stops", None)
        planned = spec.pop("cases", None)
        design = Design.from_record(spec)
        validate_design(design, 1)
        return design, tuple(sorted(set(map(str, planned)))) if planned else None
    except (ValueError, TypeError, HubskillsError):
        return None


def _planned(rows: Rows, group: np.ndarray, groups: np.ndarray,
             labels: np.ndarray) -> tuple[dict[tuple[Any, int], np.ndarray], Any]:
    """For the adaptive groups ``groups`` (each with its design label's code): the groups of
    each (design, suite size), and ``pos[g, case code]``, a case's place among its group's
    planned cases in label order (the design's ``cases``, else the cases in its rows; -1 for
    a case outside them), as a lookup indexed by (group, case code)."""
    cases = rows.labels["case_id"]
    code_of = {str(label): i for i, label in enumerate(cases.tolist())}
    specs = {label: _spec(str(rows.labels["design"][label]))
             for label in np.unique(labels).tolist()}
    per_plan: dict[tuple[Any, int], list[int]] = {}
    known: dict[tuple[str, ...], tuple[np.ndarray, np.ndarray]] = {}
    keys, places = [np.zeros(0, dtype=np.int64)], [np.zeros(0, dtype=np.int64)]
    for g, label in zip(groups.tolist(), labels.tolist(), strict=True):
        if (found := specs[label]) is None:  # no design here: its cases have no place
            continue
        plan, planned = found
        if planned is None:  # rows older than the design's case list: the cases in its rows
            seen = rows.cols["case_id"][(group == g) & (rows.cols["case_id"] >= 0)]
            planned = tuple(sorted(str(cases[k]) for k in np.unique(seen).tolist()))
        per_plan.setdefault((plan, len(planned)), []).append(g)
        if planned not in known:  # a case never asked has no code and no rows
            pairs = [(code_of[cid], i) for i, cid in enumerate(planned) if cid in code_of]
            known[planned] = (np.array([k for k, _ in pairs], dtype=np.int64),
                              np.array([i for _, i in pairs], dtype=np.int64))
        codes_of, places_of = known[planned]
        keys.append(g * (len(cases) + 1) + codes_of + 1)
        places.append(places_of)
    return ({key: np.array(members, dtype=np.int64) for key, members in per_plan.items()},
            _PairLookup(np.concatenate(keys), np.concatenate(places), len(cases)))


class _PairLookup:
    """``lookup[g, k]``: the value stored for (group g, case code k), -1 where none."""

    def __init__(self, keys: np.ndarray, values: np.ndarray, n_cases: int) -> None:
        order = np.argsort(keys, kind="stable")
        self.keys, self.values, self.width = keys[order], values[order], n_cases + 1

    def __getitem__(self, index: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        g, k = index
        wanted = g.astype(np.int64) * self.width + k + 1
        at = np.minimum(np.searchsorted(self.keys, wanted), max(len(self.keys) - 1, 0))
        hit = (self.keys[at] == wanted) if len(self.keys) else np.zeros(len(wanted), bool)
        return np.where(hit, self.values[at] if len(self.keys) else -1, -1)


def _outcome(frame: pd.DataFrame) -> dict[str, np.ndarray]:
    """``graded``/``passed``/``transport`` per row: an arm-caused error is a graded failure;
    any other error (transport, or a check that could not run), or no verdict, is out of
    denominators (``transport``)."""
    n = len(frame)
    passed = frame["passed"].astype("boolean") if "passed" in frame else pd.Series(
        pd.NA, index=frame.index, dtype="boolean")
    error = frame["error"].notna().to_numpy() if "error" in frame else np.zeros(n, bool)
    kind = frame["error_kind"].astype(object).to_numpy() if "error_kind" in frame else \
        np.full(n, None, dtype=object)
    by_arm = kind == "arm"
    graded = (passed.notna().to_numpy() & ~error) | by_arm
    ok = passed.to_numpy(dtype=bool, na_value=False) & graded & ~by_arm
    return {"graded": graded, "passed": ok, "transport": ~graded}


def codes(frame: pd.DataFrame, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes (-1 for missing) and the labels they index, categoricals for free."""
    if name not in frame:
        return np.full(len(frame), -1, dtype=np.int64), np.array([], dtype=object)
    column = frame[name]
    if isinstance(column.dtype, pd.CategoricalDtype):
        return (column.cat.codes.to_numpy().astype(np.int64),
                np.asarray(column.cat.categories, dtype=object))
    found, uniques = pd.factorize(column)
    return found.astype(np.int64), np.asarray(uniques, dtype=object)


def _skill_codes(frame: pd.DataFrame) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Codes of the skill label (repo when set, else name), with each label's repo and name."""
    repo, repos = codes(frame, "skill_repo")
    name, names = codes(frame, "skill_name")
    pair, pairs = combine(repo, len(repos), name, len(names))
    width = len(names) + 1
    repo_of = [str(repos[r]) if r >= 0 and repos[r] else None for r in pairs // width - 1]
    name_of = [str(names[n]) if n >= 0 else "" for n in pairs % width - 1]
    label, uniques = pd.factorize(np.asarray(
        [r or n for r, n in zip(repo_of, name_of, strict=True)], dtype=object))
    first = np.unique(label, return_index=True)[1]  # each label's first (repo, name) pair
    return label[pair], {"skill": np.asarray(uniques, dtype=object),
                         "repo": np.asarray(repo_of, dtype=object)[first],
                         "name": np.asarray(name_of, dtype=object)[first]}


def combine(a: np.ndarray, n_a: int, b: np.ndarray, n_b: int) -> tuple[np.ndarray, np.ndarray]:
    """Codes of the (a, b) pairs present (-1 allowed) and their keys ``(a+1)*(n_b+1) + b+1``;
    small key spaces are compacted with a bincount, several times faster than hashing."""
    keys = (a + 1) * (n_b + 1) + b + 1
    size = (n_a + 1) * (n_b + 1)
    if size <= max(2 * len(keys), 1 << 16):
        present = np.bincount(keys, minlength=size) > 0
        return (np.cumsum(present) - 1)[keys], np.flatnonzero(present)
    found, uniques = pd.factorize(keys)
    return found.astype(np.int64), np.asarray(uniques, dtype=np.int64)


def combine_all(rows: Rows, names: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Group codes of the tuples of ``names`` present, and per group the code of each name."""
    group = rows.cols[names[0]]
    n_group = len(rows.labels[names[0]])
    keys = np.arange(n_group, dtype=np.int64)[:, None]
    for name in names[1:]:
        n_b = len(rows.labels[name])
        group, pair_keys = combine(group, n_group, rows.cols[name], n_b)
        parent, child = pair_keys // (n_b + 1) - 1, pair_keys % (n_b + 1) - 1
        keys = np.column_stack([keys[parent] if len(keys) else keys[:0], child])
        n_group = len(pair_keys)
    return group, keys


def _times(frame: pd.DataFrame) -> np.ndarray:
    """``created_at`` as int64 nanoseconds since the epoch (unknown times sort first)."""
    column = frame.get("created_at", pd.Series(pd.NaT, index=frame.index))
    if not isinstance(column.dtype, pd.DatetimeTZDtype):
        column = pd.to_datetime(column, utc=True, errors="coerce", format="ISO8601")
    return column.dt.tz_localize(None).to_numpy("datetime64[ns]").view(np.int64)


def allowed(labels: np.ndarray, keep: Callable[[int], bool]) -> np.ndarray:
    """A lookup from codes to keep/drop; code -1 (missing) indexes the trailing False."""
    return np.append(np.fromiter((keep(i) for i in range(len(labels))), bool, len(labels)),
                     False)


def group_max(g: np.ndarray, values: np.ndarray, n_g: int, empty: int = NAT) -> np.ndarray:
    """The int64 maximum of ``values`` per group code (``empty`` for an empty group)."""
    out = np.full(n_g, empty, dtype=np.int64)
    np.maximum.at(out, g, values.astype(np.int64, copy=False))
    return out


def lookup(labels: np.ndarray, found: np.ndarray, missing: Any = None) -> list[Any]:
    """Labels of codes ``found`` as a list, ``missing`` where the code is -1."""
    return np.append(labels, np.array([missing], dtype=object))[found].tolist()


def rank(labels: np.ndarray) -> np.ndarray:
    """Code-point rank of each label, -1 for a missing one (code -1): Python's string order."""
    ranks = np.full(len(labels) + 1, -1, dtype=np.int64)
    ranks[np.argsort(labels.astype(str), kind="stable")] = np.arange(len(labels))
    return ranks
