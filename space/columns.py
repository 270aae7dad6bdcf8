"""How wide the Space's table columns are: a share of the table, and a floor under each.

Gradio gives a column its share of the table (`column_widths`) and lets a cell break a word
anywhere to fit it, so in 1024-1280 px windows headers broke inside words ("baseli/ne",
"+token/s"). Each column also gets a minimum width here, from its header's longest word and
the widest word its cells are known to hold: where the share would go below it the floor
wins, and the table scrolls sideways rather than split a word. The floor is set on the header
cell and on the body cells alike, since Gradio sizes the body from the shares, not from the
header as drawn; and headers may not break inside a word at all (theme.CSS), so a wider font
than planned for widens a header rather than splitting its words.

Gradio 6's data grid takes `pinned_columns` but does not pin them, so the CSS here does:
the leaderboard's rank and skill stay in view while it scrolls sideways.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .evaluate_run import CASE_COLUMNS, SUMMARY_COLUMNS
from .leaderboard_view import MODEL_VIEW_COLUMNS, TRIGGER_COLUMNS, display_table

HEADER_PX_PER_CHAR = 10  # a bold character of the system sans at the tables' size: 7.5-9.3 px
CELL_PX_PER_CHAR = 8.5  # a regular one: 6.5-8.2 px (tabular digits 8.2)
PADDING_PX = 12  # the cell's 6 + 4 px of padding (theme.CSS), and 2 to spare
# The widest word some columns' cells hold, kept whole too (else "inlin/e (user/)"); a
# model's provider prefix likewise. Identifiers (skill, model) still wrap at their hyphens,
# or anywhere where a part is longer still.
CELL_WORDS = {"mode": "(system)", "verdict": "detectable", "verified": "unverified",
              "cost": "(local)", "date": "2026-11-29", "model": "embedded/"}
# The leaderboard's shares: each at least its column's floor in a 1280 px window (the table
# is ~1,200 px wide there, beside a scrollbar), so it fits there without scrolling.
WIDTHS = ["4.4%", "11.9%", "7.7%", "6.7%", "7.7%", "5.2%", "7.1%", "6.9%", "8.1%", "8.1%",
          "6.9%", "6%", "5.2%", "8.1%"]
PINNED = 2  # rank and skill@version
SUBMITTED_BY = "submitted by"  # the pending view's last column: the Hub's author of the PR
FILE_COLUMNS = ("file", "size")
VERSION_COLUMNS = ("version", "tag", "revision", "date")


def tables() -> dict[str, Sequence[str]]:
    """Every table of the Space by its `elem_id`, with its headers in order."""
    board = list(display_table([]).columns)
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


def _cells(elem_id: str, index: int) -> str:
    return (f"#{elem_id} th[data-heading='{index}'], "
            f"#{elem_id} [role=gridcell][data-col='{index}']")


def pinned_css(elem_id: str, headers: Sequence[str], shares: Sequence[str], count: int) -> str:
    """CSS keeping the first `count` columns in view: each sticks at the sum of the widths
    before it, as Gradio sizes them (share x the width it sets in --df-max-col-width, or the
    floor where that is wider)."""
    rules, left = [], "0px"
    for index in range(count):
        rules.append(f"{_cells(elem_id, index)} {{position: sticky !important; left: {left};"
                     " z-index: 4; background: inherit;}")
        width = (f"max({floor_px(headers[index])}px, "
                 f"calc(var(--df-max-col-width) * {float(shares[index].rstrip('%')) / 100:g}))")
        left = f"calc({left} + {width})"
    edge = "inset 1px 0 0 var(--border-color-primary), inset -2px 0 0 var(--border-color-primary)"
    rules.append(f"{_cells(elem_id, count - 1)} {{box-shadow: {edge} !important;}}")
    return "\n".join(rules)


def floor_css(headers_by_table: Mapping[str, Sequence[str]] | None = None) -> str:
    """CSS giving each column (header and body cells, by index) its floor, and pinning the
    leaderboard's first columns."""
    rules = [f"{_cells(elem_id, index)} {{min-width: {floor_px(header)}px !important;}}"
             for elem_id, headers in (headers_by_table or tables()).items()
             for index, header in enumerate(headers)]
    board = list(display_table([]).columns)
    rules.append(pinned_css("leaderboard-table", board, WIDTHS, PINNED))
    return "\n".join(rules)
