"""What hubskills knows about each served skill version, for the `_meta` of its MCP entry.

Per (repo, version), from the leaderboard core with the store's verification badges, as
`hubskills leaderboard` shows them: per model and mode, the lift with its 95% interval, the
verdict, the rank and the badge (`entries`), and the trigger recall and false-trigger rate with
their intervals (`trigger_entries`); the version's badge is its best entry's. A store whose
results cannot be read still serves its skills: no figures, and `results_error` says why.
"""

from __future__ import annotations

import logging
import math
from collections import defaultdict
from typing import Any

from registry.errors import HubskillsError
from registry.results.board import Board
from registry.results.leaderboard import Entry, entries
from registry.results.leaderboard_badges import RANKABLE
from registry.results.trigger_board import TriggerEntry, trigger_entries
from registry.stores.base import SkillStore
from registry.stores.verifications import badges

logger = logging.getLogger(__name__)

Figures = dict[tuple[str, str | None], dict[str, Any]]


def version_figures(store: SkillStore) -> tuple[Figures, str | None]:
    """(repo, version) -> its `_meta` figures, and why the results were unreadable (or None)."""
    try:
        frame = store.results_frame()
        found = badges(store)
        ranked, triggers = entries(frame, badges=found), trigger_entries(frame, badges=found)
    except HubskillsError as err:
        logger.warning("results unreadable, serving skills without figures: %s", err)
        return {}, str(err)
    return figures_of(ranked, triggers), None


def board_figures(board: Board) -> Figures:
    """The same figures from a leaderboard `Board` already built (the Space's snapshot): its
    entries table read back into `Entry` rows, so nothing is aggregated twice."""
    ints = {name for name, kind in Entry.__annotations__.items()
            if "int" in str(kind) and "float" not in str(kind)}
    ranked = []
    for row in board.entries.itertuples(index=False, name=None):
        values = dict(zip(board.entries.columns, row, strict=True))
        cells = {name: _value(values.get(name)) for name in Entry._fields}
        ranked.append(Entry._make(int(v) if name in ints and isinstance(v, float) else v
                                  for name, v in cells.items()))
    return figures_of(ranked, list(board.triggers))


def figures_of(ranked: list[Entry], triggers: list[TriggerEntry]) -> Figures:
    """(repo, version) -> figures, from leaderboard and trigger entries."""
    by_version: dict[tuple[str, str | None], list[Entry]] = defaultdict(list)
    for entry in ranked:
        if entry.repo:
            by_version[(entry.repo, entry.version)].append(entry)
    by_trigger: dict[tuple[str, str | None], list[TriggerEntry]] = defaultdict(list)
    for trigger in triggers:
        if trigger.repo:
            by_trigger[(trigger.repo, trigger.version)].append(trigger)
    figures: Figures = {}
    for key in {*by_version, *by_trigger}:
        own = by_version.get(key, [])
        best = next((e for e in own if e.rank is not None), own[0] if own else None)
        figures[key] = {
            "verification": best.verification if best else None,
            "best_lift_lo": _num(best.lift_lo) if best and best.rank is not None else None,
            "lift": [_lift(e) for e in own],
            "triggers": [_trigger(t) for t in by_trigger.get(key, [])],
        }
    return figures


def _value(value: Any) -> Any:
    """A table cell as the entry held it: NaN (a missing number) is None, a whole float of an
    integer column an int."""
    if isinstance(value, float):
        if math.isnan(value):
            return None
    if hasattr(value, "item"):  # numpy scalars
        return _value(value.item())
    return value


def empty_figures() -> dict[str, Any]:
    """The figures of a version with no results."""
    return {"verification": None, "best_lift_lo": None, "lift": [], "triggers": []}


def is_verified(figures: dict[str, Any]) -> bool:
    """Whether a version's best entry is replayed or spot-checked (what `--listing verified`
    lists)."""
    return figures.get("verification") in RANKABLE


def _lift(entry: Entry) -> dict[str, Any]:
    """One leaderboard entry as `_meta` says it: lift and its interval are shares (0.15 is
    +15 points of pass rate)."""
    return {"model": entry.model, "mode": entry.mode, "placement": entry.placement,
            "lift": _num(entry.lift), "lift_lo": _num(entry.lift_lo),
            "lift_hi": _num(entry.lift_hi), "baseline": _num(entry.baseline),
            "with_skill": _num(entry.with_skill),
            "verdict": entry.verdict, "rank": entry.rank, "status": entry.status,
            "verification": entry.verification, "cases": entry.cases,
            "repeats": entry.repeats, "run_id": entry.run_id}


def _trigger(entry: TriggerEntry) -> dict[str, Any]:
    """One trigger entry: recall over should-trigger queries, the false-trigger rate over the
    others, each with its interval (shares)."""
    return {"model": entry.model, "recall": _num(entry.recall), "recall_lo": _num(entry.recall_lo),
            "recall_hi": _num(entry.recall_hi), "should": entry.should,
            "false_triggers": _num(entry.false_triggers), "false_lo": _num(entry.false_lo),
            "false_hi": _num(entry.false_hi), "should_not": entry.should_not,
            "status": entry.status, "verification": entry.verification,
            "run_id": entry.run_id}


def _num(value: float | None) -> float | None:
    """A figure as JSON can carry it (NaN, where a run had no usable case, is null)."""
    return None if value is None or math.isnan(value) else float(value)
