"""`Board`: every leaderboard entry and run point of a results frame, aggregated once.

A reader that answers many views of the same results (the Space: each filter combination, each
skill page, each model view) builds a `Board` once per version of the data, then drops the
frame. Building groups the rows a slice of skills at a time (`CHUNK_ROWS`), so the working
memory is that of a slice, not of every row; the board itself keeps the entries as columns
(about 400 bytes each). Every entry key, and every skill label, lies in one slice, so the
entries are exactly `leaderboard.entries`'s: `select` only filters them (each keeps its rank on
the whole board), and `skill_history` equals `leaderboard.skill_history` (the tests compare them).
Trigger entries (`trigger_board`, never ranked) are kept apart, as values: they are few.
Built with the registry's verification badges, the entries carry them and rank only replayed
runs, as `leaderboard.entries(frame, badges=...)` does; `select` hides the entries that are not
replayed or better unless asked to include them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from registry.results.grouping import codes, combine
from registry.results.leaderboard import HISTORY, Entry, entries, history_order, run_entries
from registry.results.leaderboard_badges import RANKABLE, Badge
from registry.results.trigger_board import TriggerEntry, entry_order, trigger_entries

CHUNK_ROWS = 50_000  # rows grouped at a time: a slice's working arrays stay near 15 MB
_OPTIONAL_INT = ("rank", "suite_cases")  # NaN in the board means None
_OPTIONAL_FLOAT = ("normalized_gain", "baseline_cost", "skill_cost", "cost_per_pass")
_TIES = ("skill", "version", "model", "mode", "placement", "suite_hash")  # leaderboard KEY


@dataclass(frozen=True, eq=False)
class Board:
    """The entries (`Entry` fields, leaderboard order) and run points of one results frame.

    ``points`` has the `leaderboard.HISTORY` fields plus ``skill`` and ``name``; ``models``
    every model named in the results (what an exact model filter is checked against);
    ``runs`` the number of evaluation runs; ``triggers`` the trigger entries.
    """

    entries: pd.DataFrame
    points: pd.DataFrame
    models: tuple[str, ...]
    runs: int
    triggers: tuple[TriggerEntry, ...] = field(default=())

    @classmethod
    def build(cls, frame: pd.DataFrame, chunk_rows: int = CHUNK_ROWS,
              badges: Mapping[str, Badge] | None = None) -> Board:
        """Aggregate ``frame`` (one row per result row, as `leaderboard.entries` takes it),
        with the runs' verification ``badges`` when given (run id -> `Badge`)."""
        found, points, triggers = [], [], []
        for part in _slices(frame, chunk_rows):
            found.append(_columns(entries(part, badges=badges)))
            points.append(_columns(run_entries(part), (*HISTORY, "skill", "name")))
            triggers += trigger_entries(part, badges=badges)
        table = _ordered(pd.concat(found, ignore_index=True) if found else _columns([]))
        models = codes(frame, "model")[1] if "model" in frame else np.array([], dtype=object)
        runs = int(frame["run_id"].nunique()) if "run_id" in frame else 0
        return cls(table, pd.concat(points, ignore_index=True) if points else
                   _columns([], (*HISTORY, "skill", "name")),
                   tuple(sorted(str(m) for m in models)), runs,
                   tuple(sorted(triggers, key=entry_order)))

    def select(self, *, skill: str | None = None, model: str | None = None,
               tags: dict[str, list[str]] | None = None, tag: str | None = None,
               verdict: str | None = None, include_unverified: bool = True) -> pd.DataFrame:
        """The entries `leaderboard.entries(frame, ...)` returns for these filters, as rows of
        `entries` with their ranks on the whole board (see `to_entries`): a filter never numbers
        them again. Without ``include_unverified``, entries whose badge is not replayed or
        better are left out (never ranked, so the others keep their numbers).

        Raises:
            ValueError: If ``tag`` is given without ``tags``.
        """
        table = self.entries
        keep = np.ones(len(table), dtype=bool)
        if skill:
            needle = skill.lower()
            keep &= _per_label(table, lambda s, n: needle in f"{s}\n{n}".lower())
        if model:
            exact = model in self.models
            keep &= (table["model"] == model).to_numpy() if exact else \
                table["model"].str.lower().str.contains(model.lower(), regex=False).to_numpy()
        if tag:
            if tags is None:
                raise ValueError("filtering by tag needs the repo -> tags mapping")
            wanted, known = tag.lower(), tags
            keep &= _per_label(table, lambda s, n: wanted in {t.lower() for t in (
                known.get(s) or known.get(n) or [])})
        if not include_unverified:
            keep &= is_shown(table["verification"])
        chosen = table[keep]
        if verdict:
            chosen = chosen[chosen["verdict"].str.startswith(verdict).to_numpy()]
        return chosen

    def skill_triggers(self, skill: str) -> list[TriggerEntry]:
        """The trigger entries of ``skill`` (repo or name, exact), by version and model."""
        return [e for e in self.triggers if skill in (e.skill, e.name)]

    def skill_history(self, skill: str) -> list[dict[str, Any]]:
        """`leaderboard.skill_history(frame, skill)`: one point per run of ``skill``."""
        points = self.points
        mine = points[((points["skill"] == skill) | (points["name"] == skill)).to_numpy()]
        found = [{name: _plain(name, getattr(p, name)) for name in HISTORY}
                 for p in mine.itertuples(index=False)]
        return sorted(found, key=history_order)


def is_shown(verification: pd.Series) -> np.ndarray:
    """Per entry: whether the default view shows it (replayed or better, or no badge looked
    up)."""
    return (verification.isna() | verification.isin(RANKABLE)).to_numpy(dtype=bool)


def to_entries(rows: pd.DataFrame) -> list[Entry]:
    """`Entry` values of board rows (from `Board.entries` or `Board.select`)."""
    columns = [[_plain(name, v) for v in rows[name].tolist()] for name in Entry._fields]
    return list(map(Entry._make, zip(*columns, strict=True)))


def _plain(name: str, value: Any) -> Any:
    """A board cell as the `Entry` field holds it (NaN back to None, counts back to int)."""
    if name in _OPTIONAL_INT:
        return None if value is None or value != value else int(value)
    if name in _OPTIONAL_FLOAT:
        return None if value is None or value != value else value
    return value


def _columns(found: list[Entry], names: tuple[str, ...] = Entry._fields) -> pd.DataFrame:
    """Entries as columns: numbers as float or int arrays, strings as objects (None kept)."""
    data: dict[str, Any] = {}
    for name in names:
        values = [getattr(e, name) for e in found]
        if name in _OPTIONAL_INT or name in _OPTIONAL_FLOAT:
            data[name] = np.array([np.nan if v is None else v for v in values], dtype=float)
        else:
            data[name] = pd.Series(values, dtype=object if not values or isinstance(
                values[0], str | type(None)) else None)
    return pd.DataFrame(data, columns=list(names))


def _label_rank(values: pd.Series) -> np.ndarray:
    """`grouping.rank` over a column of labels: code-point order, -1 for None."""
    missing = values.isna().to_numpy()
    text = np.where(missing, "", values.astype(object).to_numpy()).astype(str)
    order = np.unique(text, return_inverse=True)[1].astype(np.int64)
    return np.where(missing, -1, order)


def _ordered(table: pd.DataFrame) -> pd.DataFrame:
    """`leaderboard._order` over the merged slices, and the ranks numbered over them all."""
    if table.empty:
        return table
    ranked = (table["status"] == "").to_numpy()
    ties = [_label_rank(table[name]) for name in _TIES]
    order = np.lexsort((*reversed(ties), -table["lift"].to_numpy(),
                        -table["lift_lo"].to_numpy(), ~ranked))
    table = table.iloc[order].reset_index(drop=True)
    ranked = ranked[order]
    table["rank"] = np.where(ranked, np.cumsum(ranked), np.nan)
    return table


def _per_label(table: pd.DataFrame, keep: Any) -> np.ndarray:
    """`keep(skill, name)` once per distinct skill label, spread to its entries."""
    pairs, uniques = pd.factorize(table["skill"] + "\n" + table["name"].fillna(""))
    verdicts = np.array([keep(*u.split("\n", 1)) for u in uniques], dtype=bool)
    return verdicts[pairs] if len(pairs) else np.zeros(0, dtype=bool)


def _slices(frame: pd.DataFrame, chunk_rows: int) -> Iterator[pd.DataFrame]:
    """``frame`` in slices of about ``chunk_rows`` rows, each skill label's rows in one."""
    if frame.empty:
        return
    repo, repos = codes(frame, "skill_repo")
    name, names = codes(frame, "skill_name")
    pair, pairs = combine(repo, len(repos), name, len(names))
    del repo, name  # over millions of rows, each of these arrays is tens of MB
    width = len(names) + 1
    labels = [str(repos[r]) if r >= 0 and repos[r] else str(names[n]) if n >= 0 else ""
              for r, n in zip((pairs // width - 1).tolist(), (pairs % width - 1).tolist(),
                              strict=True)]
    label_of_pair = pd.factorize(np.asarray(labels, dtype=object))[0]
    sizes = np.bincount(label_of_pair, weights=np.bincount(pair, minlength=len(pairs)))
    part_of = ((np.cumsum(sizes) - sizes) // max(chunk_rows, 1)).astype(np.int32)
    row_part = part_of[label_of_pair][pair]
    del pair
    for part in np.unique(part_of).tolist():
        yield frame.take(np.flatnonzero(row_part == part))
