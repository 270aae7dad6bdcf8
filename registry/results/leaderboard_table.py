"""The leaderboard as display strings and as JSON records, from `leaderboard.Entry` values."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from registry._gc import collector
from registry.results import display
from registry.results.leaderboard import Entry

COLUMNS = ("rank", "skill@version", "model", "mode", "baseline", "with skill",
           "lift [95% CI]", "p (exact)", "verdict", "verified", "+tokens", "cost", "cases × runs",
           "date")
#: The columns a narrow terminal leaves out, first to last: what remains at 80 columns is the
#: skill, the model and the lift (`--json` keeps every field).
NARROW_DROP = ("date", "cases × runs", "cost", "+tokens", "p (exact)", "mode", "baseline",
               "with skill", "verified", "verdict", "rank")


def label(entry: Entry) -> str:
    """`ns/name@version` (or the bare skill when the rows carry no version)."""
    return f"{entry.skill}@{entry.version}" if entry.version else entry.skill


def verdict_text(entry: Entry) -> str:
    """The verdict, with why the entry is unranked when that is not the verdict itself."""
    if entry.rank is None and entry.status and entry.status != entry.verdict:
        return f"{entry.verdict} · unranked: {entry.status}"
    return entry.verdict


def cases_runs(entry: Entry) -> str:
    """Paired cases × runs, with the suite size when the entry covers fewer cases."""
    suite = f"/{entry.suite_cases}" if entry.suite_cases and entry.suite_cases != entry.cases \
        else ""
    return f"{entry.cases}{suite}×{entry.repeats}"


@collector(paused=True)
def table_rows(entries: Sequence[Entry]) -> tuple[list[str], list[list[str]]]:
    """Column headers and display strings (`COLUMNS`), one row per entry in order."""
    return list(COLUMNS), [
        [str(e.rank) if e.rank else "-", label(e), e.model, display.mode(e.mode, e.placement),
         display.pct(e.baseline), display.pct(e.with_skill),
         display.lift_interval(e.lift, e.lift_lo, e.lift_hi), display.p_value(e.p_value),
         verdict_text(e), e.verification or "-", f"{e.token_overhead:+,.0f}",
         display.usd(e.skill_cost, e.model),
         cases_runs(e), e.date[:10] if e.date else "-"]
        for e in entries]


def _json_number(value: Any) -> Any:
    return None if isinstance(value, float) and value in (float("inf"), float("-inf")) else value


def to_records(entries: Sequence[Entry]) -> list[dict[str, Any]]:
    """JSON-ready dicts with every `Entry` field, numbers exactly as the engine computed them
    (an infinite detectable lift is null)."""
    return [{k: _json_number(v) for k, v in e._asdict().items()} for e in entries]
