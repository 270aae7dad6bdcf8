"""The trigger evals' table that `leaderboard` and `info` print below their results."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.markup import escape

from registry.cli import _output as out

if TYPE_CHECKING:
    from registry.results.trigger_board import TriggerEntry

_TRIGGER_LEGEND = ("Trigger evals, not ranked (no baseline, no lift): recall on the queries that "
                   "should open the skill, false triggers on those that should not, each with "
                   "its Wilson 95% interval over queries; errors are failed sessions, apart.")


def render_triggers(triggers: Sequence[TriggerEntry], *, gap: bool = False) -> None:
    """The trigger entries as their own table, with what their figures mean."""
    from registry.results import trigger_board

    if gap:
        out.result("")
    columns, rows = trigger_board.table_rows(triggers)
    out.table(columns, ([escape(cell) for cell in row] for row in rows),
              title="Trigger evals: does the agent open the skill, listed among others?",
              drop=("date", "should+not × runs", "status", "errors"))
    out.result(_TRIGGER_LEGEND)
