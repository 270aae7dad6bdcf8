"""A skill's results as the stores show them: the `info` table, the card section, the lift key.

Every figure is a leaderboard entry's (`registry.evaluation.leaderboard`), so `info`, the card,
`search --sort lift`, the leaderboard and a run's own summary agree to the last digit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from registry.evaluation import display
from registry.evaluation.leaderboard import Entry, entries
from registry.evaluation.leaderboard_table import cases_runs, to_records, verdict_text

if TYPE_CHECKING:
    import pandas as pd


def lift_key(frame: pd.DataFrame) -> dict[str, float]:
    """Per skill repo: the best lower bound of the lift among its ranked entries (unranked
    results give no key, so those skills sort after the ranked ones)."""
    best: dict[str, float] = {}
    for entry in entries(frame):
        if entry.rank is not None and entry.repo and entry.repo not in best:
            best[entry.repo] = entry.lift_lo  # entries come best first
    return best


mean_lift = lift_key  # the name the stores' `search(sort="lift")` imports


def latest_summary(frame: pd.DataFrame, repo: str) -> list[dict[str, Any]]:
    """The leaderboard records of ``repo`` (one per version x model x mode x suite), in
    leaderboard order: ranked first."""
    return to_records([e for e in entries(frame, skill=repo) if e.repo == repo])


SUMMARY_COLUMNS = ("version", "model", "mode", "cases × runs", "baseline", "with skill",
                   "lift [95% CI]", "p (exact)", "verdict", "run")


def summary_rows(summary: list[dict[str, Any]]) -> tuple[list[list[str]], list[str]]:
    """`SUMMARY_COLUMNS` cells per `latest_summary` record, and the notes on disagreements."""
    rows, notes = [], []
    for s in summary:
        entry = Entry(**{k: s.get(k) for k in Entry._fields})
        rows.append([s["version"] or "-", s["model"], display.mode(s["mode"], s["placement"]),
                     cases_runs(entry), display.pct(s["baseline"]),
                     display.pct(s["with_skill"]),
                     display.lift_interval(s["lift"], s["lift_lo"], s["lift_hi"]),
                     display.p_value(s["p_value"]), verdict_text(entry), s["run_id"]])
        if s["note"]:
            notes.append(f"{s['model']} ({s['version'] or '-'}): {s['note']}")
    return rows, notes


def summary_markdown(summary: list[dict[str, Any]]) -> str:
    """A markdown table of `latest_summary` records, with the notes on disagreements."""
    if not summary:
        return ""
    rows, notes = summary_rows(summary)
    lines = ["| " + " | ".join(SUMMARY_COLUMNS) + " |", "|---" * len(SUMMARY_COLUMNS) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines + ([""] + [f"- {n}" for n in notes] if notes else []))
