"""A floor under every column of the Space's tables, so headers wrap only between words.

Gradio gives a column its share of the table (`column_widths`) and lets a cell break a word
anywhere to fit it, so in 1024-1280 px windows headers broke inside words ("baseli/ne",
"+token/s"). Each column also gets a minimum width here, from its header's longest word:
where the shares would go below it the floor wins, and the table scrolls sideways (the
leaderboard keeps its first two columns pinned) rather than split a word. The floor is set on
the header cell and on the body cells alike, since Gradio sizes the body from the shares, not
from the header as drawn; and headers may not break inside a word at all (theme.CSS), so a
wider font than planned for widens the header rather than splitting its words.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .evaluate_run import CASE_COLUMNS, SUMMARY_COLUMNS
from .leaderboard_view import MODEL_VIEW_COLUMNS, TRIGGER_COLUMNS, display_table

HEADER_PX_PER_CHAR = 10  # a bold character of the system sans at the tables' size: 7.5-9.3 px
CELL_PX_PER_CHAR = 8.5  # a regular one: 6.5-8.2 px (tabular digits 8.2)
PADDING_PX = 12  # the cell's 6 + 4 px of padding (theme.CSS), and 2 to spare
# The widest word some columns' cells hold, kept whole too (else "inlin/e (user/)");
# identifiers (skill, model) still wrap at their hyphens or anywhere in a narrow window.
CELL_WORDS = {"mode": "(system)", "verdict": "detectable", "verified": "unverified",
              "cost": "(local)", "date": "2026-11-29"}
SUBMITTED_BY = "submitted by"  # the pending view's last column: the Hub's author of the PR
FILE_COLUMNS = ("file", "size")
VERSION_COLUMNS = ("version", "tag", "revision", "date")


def board_columns() -> list[str]:
    """The leaderboard's headers, as its table and the skill page's show them."""
    return list(display_table([]).columns)


def tables() -> dict[str, Sequence[str]]:
    """Every table of the Space by its `elem_id`, with its headers in order."""
    board = board_columns()
    return {"leaderboard-table": board, "skill-results": board,
            "pending-table": [*board, SUBMITTED_BY], "model-view-table": MODEL_VIEW_COLUMNS,
            "eval-summary": SUMMARY_COLUMNS, "eval-cases-table": CASE_COLUMNS,
            "skill-triggers": TRIGGER_COLUMNS, "skill-files": FILE_COLUMNS,
            "skill-versions": VERSION_COLUMNS}


def floor_px(header: str) -> int:
    """The narrowest a column may be: its header's longest word on one line, and the widest
    word its cells are known to hold (`CELL_WORDS`)."""
    head = HEADER_PX_PER_CHAR * max((len(word) for word in header.split()), default=0)
    cell = CELL_PX_PER_CHAR * len(CELL_WORDS.get(header, ""))
    return round(max(head, cell)) + PADDING_PX


def floor_css(headers_by_table: Mapping[str, Sequence[str]] | None = None) -> str:
    """CSS giving each column (header and body cells, by index) its floor."""
    rules = []
    for elem_id, headers in (headers_by_table or tables()).items():
        for index, header in enumerate(headers):
            cells = (f"#{elem_id} th[data-heading='{index}'], "
                     f"#{elem_id} [role=gridcell][data-col='{index}']")
            rules.append(f"{cells} {{min-width: {floor_px(header)}px !important;}}")
    return "\n".join(rules)
