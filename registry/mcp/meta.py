"""What hubskills knows about each served skill, for the `_meta` of its MCP entry.

Per skill (its latest version): the version, the license, the verification badge of its best
entry and, per model and mode, the lift with its 95% interval, the verdict, the rank and the
badge, all from the leaderboard core (`results.leaderboard.entries` with the store's badges),
as `hubskills leaderboard` shows them. A store whose results cannot be read still serves its
skills: their lift list is empty and `results_error` says why.
"""

from __future__ import annotations

import logging
import math
from typing import Any

from registry.errors import HubskillsError
from registry.results.leaderboard import Entry, entries
from registry.stores.base import SkillInfo, SkillStore
from registry.stores.verifications import badges

logger = logging.getLogger(__name__)


def skill_meta(store: SkillStore, infos: list[SkillInfo]) -> dict[str, dict[str, Any]]:
    """Repo id -> the `_meta` figures of its latest version (see the module docstring)."""
    error = None
    try:
        ranked = entries(store.results_frame(), badges=badges(store))
    except HubskillsError as err:
        logger.warning("results unreadable, serving skills without lift: %s", err)
        ranked, error = [], str(err)
    meta = {}
    for info in infos:
        own = [e for e in ranked if e.repo == info.repo and e.version == info.version]
        best = next((e for e in own if e.rank is not None), own[0] if own else None)
        meta[info.repo] = {
            "version": info.version, "license": info.license,
            "verification": best.verification if best else None,
            "best_lift_lo": _num(best.lift_lo) if best and best.rank is not None else None,
            "lift": [_lift(e) for e in own],
            **({"results_error": error} if error else {}),
        }
    return meta


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


def _num(value: float | None) -> float | None:
    """A figure as JSON can carry it (NaN, where a run had no usable case, is null)."""
    return None if value is None or math.isnan(value) else float(value)
