"""The leaderboard's data, built on the server from the results' `Board` (no Gradio here).

`leaderboard_view` is what the Leaderboard tab shows for one set of filters: the ranked table
(display strings, each skill a link to its page), the lift-vs-token-overhead scatter, and a
one-line summary. The ranking and statistics are `registry.results.leaderboard`'s; this
module only shapes them for the UI and caps what is sent to the browser.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from registry import (
    Board,
    HubskillsError,
    TriggerEntry,
    check_repo_id,
    display,
    leaderboard,
    trigger_rate_text,
)
from registry import LeaderboardEntry as Entry
from registry import board_entries as to_entries
from registry import leaderboard_label as label
from registry import leaderboard_table_rows as table_rows

ALL = "All"
VERDICTS = ("helps", "no detectable effect", "hurts", "too few cases", "inconclusive")
VERDICT_MARK = {"helps": "🟢", "hurts": "🔴", "no detectable effect": "⚪",
                "too few cases": "◌", "inconclusive": "◌"}
VERDICT_COLORS = {"helps": "#16a34a", "no detectable effect": "#94a3b8", "hurts": "#dc2626",
                  "too few cases": "#cbd5e1", "inconclusive": "#cbd5e1"}
MAX_TABLE_ROWS = 500
MAX_POINTS = 2000
SCATTER_COLUMNS = ("skill", "model", "token_overhead", "lift_points", "lift_ci", "verdict")
_LINK = re.compile(r"\?skill=([^)\s]+)")
_MD_SPECIAL = str.maketrans({c: f"\\{c}" for c in "[]()*_`<>!\\"})


@dataclass(frozen=True)
class LeaderboardView:
    """What the tab shows: `table` (display strings), `scatter` points, counts, a summary, and
    the entries behind the table's rows."""

    table: pd.DataFrame
    scatter: pd.DataFrame
    total: int
    shown: int
    summary: str
    x_lim: list[float]
    entries: Sequence[Entry] = ()


def verdict_kind(verdict: str) -> str:
    """The verdict without its count: "too few cases (4)" -> "too few cases"."""
    return next((v for v in VERDICTS if verdict.startswith(v)), verdict)


def mark(verdict: str) -> str:
    """The verdict with its coloured mark, as the table shows it."""
    return f"{VERDICT_MARK.get(verdict_kind(verdict), '')} {verdict}".strip()


def skill_link(entry: Entry) -> str:
    """A markdown link to the skill's page (`?skill=ns/name`); plain text without a repo, or
    with one that is no skill id (a pending row's is whatever its pull request wrote: a
    `)` there once opened raw HTML in the table)."""
    if not entry.repo or not is_repo_id(entry.repo):
        return label(entry)  # escaped where it is shown (`cache.wire_table`)
    return f"[{label(entry).translate(_MD_SPECIAL)}](?skill={entry.repo})"


def is_repo_id(repo: str) -> bool:
    """Whether `repo` is a skill id, `namespace/name` (`check_repo_id`'s rule)."""
    try:
        check_repo_id(repo)
    except HubskillsError:
        return False
    return True


def skill_from_link(text: str) -> str | None:
    """The `ns/name` a table cell links to (None when the cell holds no link)."""
    match = _LINK.search(text or "")
    return match.group(1) if match else None


def _option(value: str | None) -> str | None:
    return None if not value or value == ALL else value


def display_table(ranked: Sequence[Entry]) -> pd.DataFrame:
    """`leaderboard_table.table_rows` with skill links and marked verdicts."""
    columns, rows = table_rows(ranked)
    frame = pd.DataFrame(rows, columns=columns)
    frame["skill@version"] = [skill_link(e) for e in ranked]
    frame["verdict"] = frame["verdict"].map(mark)
    return frame


MODEL_VIEW_COLUMNS = ("rank", "skill@version", "with skill", "lift [95% CI]", "verdict")


def scatter_points(ranked: Sequence[Entry]) -> pd.DataFrame:
    """One point per entry: token overhead (x), lift in points (y), coloured by verdict."""
    return pd.DataFrame({
        "skill": [label(e) for e in ranked],
        "model": [e.model for e in ranked],
        "token_overhead": [round(e.token_overhead, 1) for e in ranked],
        "lift_points": [round(e.lift * 100, 1) for e in ranked],
        "lift_ci": [display.lift_interval(e.lift, e.lift_lo, e.lift_hi) for e in ranked],
        "verdict": [verdict_kind(e.verdict) for e in ranked],
    }, columns=list(SCATTER_COLUMNS))


def leaderboard_view(board: Board, tags: dict[str, list[str]] | None = None, *,
                     query: str = "", model: str | None = None, tag: str | None = None,
                     verdict: str | None = None, limit: int = MAX_TABLE_ROWS,
                     include_unverified: bool = False) -> LeaderboardView:
    """Rank, filter and shape the leaderboard (`ALL` or empty means no filter); entries not
    replayed or better are left out unless ``include_unverified`` (the count is said)."""
    select = functools.partial(board.select, skill=query.strip() or None, model=_option(model),
                               tags=tags or {}, tag=_option(tag), verdict=_option(verdict))
    chosen = select(include_unverified=include_unverified)
    hidden = 0 if include_unverified else \
        len(select(include_unverified=True)) - len(chosen)
    shown = to_entries(chosen.head(limit))  # only what is shown becomes `Entry` values
    summary = _summary(chosen, len(shown), board.runs, hidden)
    points = scatter_points(to_entries(chosen.head(MAX_POINTS)))
    return LeaderboardView(display_table(shown), points, len(chosen), len(shown), summary,
                           x_limits(points["token_overhead"].tolist()), shown)


def _summary(chosen: pd.DataFrame, shown: int, runs: int, hidden: int) -> str:
    """The line above the table: how many results, ranked, unranked and left out."""
    ranked = chosen["rank"].notna().to_numpy()
    total, unranked = len(chosen), int((~ranked).sum())
    helps = int(((chosen["verdict"] == "helps").to_numpy() & ranked).sum())
    if total:
        summary = (f"**{total}** skill × model results, **{total - unranked}** ranked by "
                   f"the lift's lower bound, **{helps}** of them with a lift surely above "
                   "zero" + (f"; **{unranked}** unranked (too few cases, errors, a subset or "
                             "partial run)" if unranked else "") + ".")
        if total > shown:
            summary += f" Showing the top {shown}; narrow the filters to see others."
        summary += " Click a row to open its skill's page."
    elif hidden:
        summary = "No replayed results match these filters yet."
    elif not runs:
        return ("No evaluation results yet. Run one in the [Evaluate](work/?tab=evaluate) tab "
                "and press *Push results*, or `hubskills eval SKILL --push` from the CLI.")
    else:
        return "No results match these filters."
    if hidden:
        summary += (f" {hidden} result(s) not replayed or better left out (unverified or "
                    "mismatch; a replay proves a run's grading and arithmetic).")
    return summary


TRIGGER_COLUMNS = ("version", "model", "recall [95% CI]", "false triggers [95% CI]", "errors",
                   "should+not × runs", "status", "date")


def trigger_table(found: Sequence[TriggerEntry]) -> pd.DataFrame:
    """Trigger evals per version and model: recall and false triggers with their intervals."""
    return pd.DataFrame([
        (e.version or "-", e.model, trigger_rate_text(e.recall, e.recall_lo, e.recall_hi),
         trigger_rate_text(e.false_triggers, e.false_lo, e.false_hi), str(e.errors),
         f"{e.should}+{e.should_not}×{e.repeats}", e.status or "complete", (e.date or "")[:10])
        for e in found], columns=list(TRIGGER_COLUMNS))


def x_limits(overheads: list[float]) -> list[float]:
    """The scatter's x range: from 0 (or below, for negative overheads) to 10% past the max,
    so no point sits half-clipped on the edge."""
    low = min([0.0, *overheads])
    high = max([100.0, *overheads])
    return [low * 1.1, high * 1.1]


def model_choices(board: Board) -> list[str]:
    """`ALL` then every model with results, sorted."""
    return [ALL, *board.models]


def tag_choices(tags: dict[str, list[str]]) -> list[str]:
    """`ALL` then every tag of a listed skill, sorted."""
    return [ALL, *sorted({t for values in tags.values() for t in values})]


def model_table(board: Board, model: str | None) -> pd.DataFrame:
    """Which skills help `model` most: its entries ranked by the lift's lower bound, each with
    its rank on the whole leaderboard (the number every other view shows for it)."""
    ranked = [] if not _option(model) else leaderboard.model_view(
        to_entries(board.select(model=model)), model or "")
    return display_table(ranked[:MAX_TABLE_ROWS])[list(MODEL_VIEW_COLUMNS)]
