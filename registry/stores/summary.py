"""A skill's results as the stores show them: the `info` table, the card section, the lift key.

Every figure is a leaderboard entry's (`registry.results.leaderboard`), so `info`, the card,
`search --sort lift`, the leaderboard and a run's own summary agree to the last digit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from registry.results import display
from registry.results.leaderboard import TRIGGER_MODE, Entry, entries
from registry.results.leaderboard_badges import Badge
from registry.results.leaderboard_table import cases_runs, to_records, verdict_text

if TYPE_CHECKING:
    import pandas as pd

    from registry.stores.base import LiftKey, SkillStore


def best_entries(frame: pd.DataFrame, badges: Mapping[str, Badge] | None = None
                 ) -> dict[tuple[str, str | None], Entry]:
    """Per (skill repo, version): its best ranked entry, ranked as the leaderboard ranks it
    with the runs' verification ``badges`` (a version with no ranked entry has none)."""
    best: dict[tuple[str, str | None], Entry] = {}
    for entry in entries(frame, badges=badges):
        if entry.rank is not None and entry.repo:
            best.setdefault((entry.repo, entry.version), entry)  # entries come best first
    return best


def lift_key(frame: pd.DataFrame, badges: Mapping[str, Badge] | None = None
             ) -> dict[tuple[str, str | None], float]:
    """Per (skill repo, version): the lower bound of its best ranked entry's lift, what
    `search --sort lift` orders the version a result lists by (`base.lift_order`)."""
    return {key: entry.lift_lo for key, entry in best_entries(frame, badges).items()}



def store_lifts(store: SkillStore, key: LiftKey | None = None
                ) -> Mapping[tuple[str, str | None], float]:
    """`key` (default `lift_key`) of `store`'s results with the runs' verification badges:
    what a store's `search(sort="lift")` orders by (`base.sort_infos`)."""
    from registry.stores.verifications import badges

    return (key or lift_key)(store.results_frame(), badges(store))


def latest_summary(frame: pd.DataFrame, repo: str,
                   badges: Mapping[str, Badge] | None = None) -> list[dict[str, Any]]:
    """The leaderboard records of ``repo`` (one per version x model x mode x suite), in
    leaderboard order: ranked first. With ``badges`` (run id -> `Badge`, the registry's
    verification records), each record's ``verification`` is its run's and, as on the
    leaderboard, only replayed runs are ranked."""
    return to_records([e for e in entries(frame, skill=repo, badges=badges) if e.repo == repo])


def card_summary(frame: pd.DataFrame, repo: str,
                 badges: Mapping[str, Badge] | None = None) -> list[dict[str, Any]]:
    """What the card shows of ``repo``: its `latest_summary` records (each with its run's
    badge from ``badges``), then its trigger entries' records (``mode: "trigger"``: recall
    and false triggers, never ranked)."""
    from registry.results import trigger_board

    triggers = [e for e in trigger_board.trigger_entries(frame, skill=repo) if e.repo == repo]
    return latest_summary(frame, repo, badges) + trigger_board.to_records(triggers)


SUMMARY_COLUMNS = ("version", "model", "mode", "cases × runs", "baseline", "with skill",
                   "lift [95% CI]", "p (exact)", "verdict", "run")
CARD_COLUMNS = (*SUMMARY_COLUMNS[:-1], "verified", "run")
"""The card's lift table: each entry's verification badge too (`-`: no badges given)."""


def summary_rows(summary: list[dict[str, Any]], *,
                 verified: bool = False) -> tuple[list[list[str]], list[str]]:
    """`SUMMARY_COLUMNS` cells per `latest_summary` record (with ``verified``, `CARD_COLUMNS`
    ones), and the notes on disagreements."""
    rows, notes = [], []
    for s in summary:
        entry = Entry._make(s.get(k) for k in Entry._fields)
        rows.append([s["version"] or "-", s["model"], display.mode(s["mode"], s["placement"]),
                     cases_runs(entry), display.pct(s["baseline"]),
                     display.pct(s["with_skill"]),
                     display.lift_interval(s["lift"], s["lift_lo"], s["lift_hi"]),
                     display.p_value(s["p_value"]), verdict_text(entry),
                     *([s.get("verification") or "-"] if verified else []), s["run_id"]])
        if s["note"]:
            notes.append(f"{s['model']} ({s['version'] or '-'}): {s['note']}")
    return rows, notes


def summary_markdown(summary: list[dict[str, Any]]) -> str:
    """Markdown tables of `card_summary` records: the lift table with the notes on
    disagreements, then the trigger evals' table when there are any."""
    lifts = [s for s in summary if s["mode"] != TRIGGER_MODE]
    triggers = [s for s in summary if s["mode"] == TRIGGER_MODE]
    parts = []
    if lifts:
        rows, notes = summary_rows(lifts, verified=True)
        parts.append(_markdown_table(CARD_COLUMNS, rows)
                     + "".join(f"\n- {n}" for n in (["", *notes] if notes else [])))
    if triggers:
        from registry.results import trigger_board

        found = [trigger_board.TriggerEntry._make(s.get(k) for k in
                                                  trigger_board.TriggerEntry._fields)
                 for s in triggers]
        parts.append("Trigger evals (does the description make an agent open the skill?):\n\n"
                     + _markdown_table(*trigger_board.table_rows(found)))
    return "\n\n".join(parts)


def _markdown_table(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    cells = [[str(c).replace("|", "\\|") for c in row] for row in rows]
    lines = ["| " + " | ".join(columns) + " |", "|---" * len(columns) + "|"]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in cells])
