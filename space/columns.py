"""How wide the Space's table columns are: a share of the table, and a floor under each.

Gradio gives a column its share of the table (`column_widths`) and lets a cell break a word
anywhere to fit it, so in 1024-1280 px windows headers broke inside words ("baseli/ne",
"+token/s"). Each column also gets a minimum width here, from its header's longest word and
the widest word its cells are known to hold: where the share would go below it the floor
wins, and the table scrolls sideways rather than split a word. The floor is set on the header
cell and on the body cells alike, since Gradio sizes the body from the shares, not from the
header as drawn; and headers may not break inside a word at all (theme.CSS), so a wider font
than planned for widens a header rather than splitting its words.

Floors come from how wide the widest usual system sans draws each character (`text_px`), and
the leaderboard's shares from the floors, so it fits where the floors do. Gradio 6's data
grid takes `pinned_columns` but does not pin them, so the CSS here does: the rank and skill
of the leaderboard and of the pending view stay in view while they scroll sideways.

On a phone (`PHONE_PX` wide or less) a table of results shows no more than its first three or
four columns, so `phone_css` reorders them there: the lift and the verdict, the point of the
board, come right after the skill (`PHONE_FIRST`), the rest follow in their order; and a
shade on the table's right edge says that it scrolls sideways. Gradio lays each body row out
as a flex row, so the cells take CSS `order`; the header row is made one too.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Literal

from .evaluate_run import CASE_COLUMNS, SUMMARY_COLUMNS
from .leaderboard_view import MODEL_VIEW_COLUMNS, TRIGGER_COLUMNS, display_table

# How wide DejaVu Sans draws each printable ASCII character (33-126) at the tables' 14 px, in
# px, regular and bold, as chromium's canvas measures them (a header word drawn in the table
# measured the same to 0.1 px). DejaVu is Linux's default and among the widest system sans
# (Segoe UI, San Francisco and Roboto draw words narrower), so a floor from it holds on those
# too; where a font draws wider, a header widens rather than split (theme.CSS). Any other
# character (×, an emoji) counts as the widest.
_REGULAR = ("5.6 6.4 11.7 8.9 13.3 10.9 3.8 5.5 5.5 7 11.7 4.5 5.1 4.5 4.7 " + "8.9 " * 10
            + "4.7 4.7 11.7 11.7 11.7 7.4 14 9.6 9.6 9.8 10.8 8.8 8.1 10.8 10.5 4.1 4.1 9.2 7.8 "
            "12.1 10.5 11 8.4 11 9.7 8.9 8.6 10.2 9.6 13.8 9.6 8.6 9.6 5.5 4.7 5.5 11.7 7 7 8.6 "
            "8.9 7.7 8.9 8.6 4.9 8.9 8.9 3.9 3.9 8.1 3.9 13.6 8.9 8.6 8.9 8.9 5.8 7.3 5.5 8.9 8.3 "
            "11.5 8.3 8.3 7.3 8.9 4.7 8.9 11.7")
_BOLD = ("6.4 7.3 11.7 9.7 14 12.2 4.3 6.4 6.4 7.3 11.7 5.3 5.8 5.3 5.1 " + "9.7 " * 10
         + "5.6 5.6 11.7 11.7 11.7 8.1 14 10.8 10.7 10.3 11.6 9.6 9.6 11.5 11.7 5.2 5.2 10.8 8.9 "
         "13.9 11.7 11.9 10.3 11.9 10.8 10.1 9.5 11.4 10.8 15.4 10.8 10.1 10.2 6.4 5.1 6.4 11.7 "
         "7 7 9.4 10 8.3 10 9.5 6.1 10 10 4.8 4.8 9.3 4.8 14.6 10 9.6 10 10 6.9 8.3 6.7 10 9.1 "
         "12.9 9 9.1 8.1 10 5.1 10 11.7")
_PX = {style: {chr(33 + i): float(w) for i, w in enumerate(widths.split())}
       for style, widths in (("regular", _REGULAR), ("bold", _BOLD))}
WIDEST_PX = 15.4
PADDING_PX = 11  # the cell's 6 + 4 px of padding (theme.CSS), and 1 to spare
# The widest word some columns' cells hold, kept whole too (else "inlin/e (user/)", "0.0/0391");
# a lift's interval with two-digit bounds whole, so such a lift takes two lines at most ("+17",
# "[+7, +28]"), not three (the pending view, one column more, holds "[+100," whole only);
# a model id's longest part likewise ("embedded/": model ids break after each separator,
# `cache.wire_table`). Skill ids still wrap at their hyphens.
CELL_WORDS = {"mode": "(system)", "verdict": "detectable", "verified": "unverified",
              "baseline": "100%", "with skill": "100%", "lift [95% CI]": "[-10, +10]",
              "p (exact)": "0.00391", "cost": "$0.000123",
              "cases × runs": "40×10", "date": "2026-11-29", "model": "embedded/"}
PINNED = 2  # rank and skill@version, on the leaderboard and the pending view
SUBMITTED_BY = "submitted by"  # the pending view's last column: the Hub's author of the PR
BOARD_COLUMNS = tuple(display_table([]).columns)
PENDING_COLUMNS = (*BOARD_COLUMNS, SUBMITTED_BY)
FILE_COLUMNS = ("file", "size")
VERSION_COLUMNS = ("version", "tag", "revision", "date")
# The trigger evals' shares: the model id has room to stay on two lines or fewer, the rates
# with their intervals on one, in a 1024 px window.
TRIGGER_WIDTHS: list[str | int] = ["8%", "26%", "14%", "14%", "7%", "11%", "10%", "10%"]


def tables() -> dict[str, Sequence[str]]:
    """Every table of the Space by its `elem_id`, with its headers in order."""
    return {"leaderboard-table": BOARD_COLUMNS, "skill-results": BOARD_COLUMNS,
            "pending-table": PENDING_COLUMNS, "model-view-table": MODEL_VIEW_COLUMNS,
            "eval-summary": SUMMARY_COLUMNS, "eval-cases-table": CASE_COLUMNS,
            "skill-triggers": TRIGGER_COLUMNS, "skill-files": FILE_COLUMNS,
            "skill-versions": VERSION_COLUMNS}


def datatypes(columns: Sequence[str]) -> list[Literal["markdown", "str"]]:
    """`gr.Dataframe`'s datatype per column: markdown for the identifiers `cache.wire_table`
    gives break points (`<wbr>`, which copied text leaves out), text for the rest."""
    return ["markdown" if column in ("skill@version", "model") else "str" for column in columns]


def text_px(text: str, style: str = "regular") -> float:
    """How wide `text` is drawn in the tables' font at most (`_PX`)."""
    widths = _PX[style]
    return sum(widths.get(char, WIDEST_PX) for char in text)


PENDING_CELL_WORDS = {**CELL_WORDS, "lift [95% CI]": "[+100,"}
# The leaderboard, a skill's evaluations and the model view keep a lift and its interval on one
# line ("+17 [+7," / "+28]" read as two numbers): wide enough for two-digit values and one
# three-digit bound, and never wrapped (`nowrap_css`).
BOARD_CELL_WORDS = {**CELL_WORDS, "lift [95% CI]": "+10 [-100, +10]"}
PHONE_CELL_WORDS = {**CELL_WORDS, "lift [95% CI]": "-10 [-10, +10]"}
NOWRAP_TABLES = ("leaderboard-table", "skill-results", "model-view-table")
NOWRAP_COLUMNS = ("lift [95% CI]",)


def floor_px(header: str, cells: Mapping[str, str] = CELL_WORDS) -> int:
    """The narrowest a column may be: its header's longest word on one line, and the widest
    word its cells are known to hold (`cells`)."""
    head = max((text_px(word, "bold") for word in header.split()), default=0.0)
    return math.ceil(max(head, text_px(cells.get(header, "")))) + PADDING_PX


def shares(headers: Sequence[str], cells: Mapping[str, str] = CELL_WORDS,
           fit_px: int | None = None) -> list[str]:
    """Each column's share of the table, in proportion to its floor: where the table is as wide
    as the floors' sum or wider, every column gets at least its floor and nothing scrolls.
    With `fit_px` (a table that wide still fits), what it has beyond the floors goes to the
    skill's column, whose ids then wrap on fewer lines."""
    floors = [floor_px(header, cells) for header in headers]
    if fit_px is not None and "skill@version" in headers:
        floors[headers.index("skill@version")] += max(0, fit_px - sum(floors))
    return [f"{100 * floor / sum(floors):.2f}%" for floor in floors]


# The leaderboard's and the pending view's shares: both fit a 1280 px window (the board is
# 1,199 px wide there beside a classic scrollbar, the pending view in its accordion ~1,190 px;
# their floors' sums are ~1,160 and ~1,170 px) and scroll sideways in narrower ones. The
# board's skill column takes what its floors leave of 1,195 px.
BOARD_FIT_PX = 1195
WIDTHS = shares(BOARD_COLUMNS, BOARD_CELL_WORDS, BOARD_FIT_PX)
PENDING_WIDTHS = shares(PENDING_COLUMNS, PENDING_CELL_WORDS)
# The model view, half the window beside the scatter: it fits in a 1024 px one (~470 px).
MODEL_VIEW_FIT_PX = 465
MODEL_VIEW_WIDTHS: list[str | int] = list(shares(MODEL_VIEW_COLUMNS, BOARD_CELL_WORDS,
                                                 MODEL_VIEW_FIT_PX))


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


PHONE_PX = 640  # theme.CSS's phone layout starts at this width too
# The columns a phone shows first, in this order, where a table has them; the others follow.
PHONE_FIRST = ("rank", "skill@version", "lift [95% CI]", "verdict", "baseline", "with skill")
PHONE_TABLES = ("leaderboard-table", "skill-results", "pending-table", "model-view-table")


def phone_order(headers: Sequence[str]) -> list[int]:
    """The column indices of `headers` in the order a phone shows them (`PHONE_FIRST`)."""
    first = [headers.index(name) for name in PHONE_FIRST if name in headers]
    return first + [i for i in range(len(headers)) if i not in first]


def phone_css(headers_by_table: Mapping[str, Sequence[str]] | None = None) -> str:
    """CSS for `PHONE_TABLES` in a window `PHONE_PX` wide or less: columns in `phone_order`
    (header and body alike) and a shade on the right edge, where more columns lie."""
    found = {**tables(), **(headers_by_table or {})}
    rules = []
    for elem_id in PHONE_TABLES:
        rules.append(f"#{elem_id} .header-table, #{elem_id} thead {{display: block;}}"
                     f" #{elem_id} thead tr {{display: flex; padding: 0;}}"
                     f" #{elem_id} .table-wrap {{position: relative;}}"
                     f" #{elem_id} .table-wrap::after {{content: ''; position: absolute; top: 0;"
                     " right: 0; bottom: 0; width: 14px; pointer-events: none; z-index: 5;"
                     " background: linear-gradient(to right, transparent,"
                     " rgba(15, 23, 42, .18));}")
        rules += [f"{_cells(elem_id, index)} {{order: {place};}}"
                  for place, index in enumerate(phone_order(found[elem_id]))]
    # the lift on one line still, but as narrow as two-digit values allow: the verdict's mark
    # stays in view beside it
    rules += [f"{_cells(elem_id, found[elem_id].index(column))} "
              f"{{min-width: {floor_px(column, PHONE_CELL_WORDS)}px !important;}}"
              for elem_id in NOWRAP_TABLES for column in NOWRAP_COLUMNS
              if column in found[elem_id]]
    # the model view's rows are tall on a phone (skill ids wrap): more of them in view
    rules.append("#model-view-table .virtual-table-viewport {max-height: 70vh !important;}")
    return f"@media (max-width: {PHONE_PX}px) {{\n" + "\n".join(rules) + "\n}"


def _cell_words(elem_id: str) -> Mapping[str, str]:
    if elem_id in NOWRAP_TABLES:
        return BOARD_CELL_WORDS
    return PENDING_CELL_WORDS if elem_id == "pending-table" else CELL_WORDS


def nowrap_css(headers_by_table: Mapping[str, Sequence[str]] | None = None) -> str:
    """CSS keeping the `NOWRAP_COLUMNS` of the `NOWRAP_TABLES` on one line."""
    found = {**tables(), **(headers_by_table or {})}
    return "\n".join(
        f"#{elem_id} [role=gridcell][data-col='{found[elem_id].index(column)}'] span "
        "{white-space: nowrap !important;}"
        for elem_id in NOWRAP_TABLES for column in NOWRAP_COLUMNS if column in found[elem_id])


def floor_css(headers_by_table: Mapping[str, Sequence[str]] | None = None) -> str:
    """CSS giving each column (header and body cells, by index) its floor, and pinning the
    first columns of the leaderboard and the pending view; the lift on one line
    (`nowrap_css`); on a phone, the results' columns in `phone_order` (`phone_css`)."""
    rules = [f"{_cells(elem_id, index)} "
             f"{{min-width: {floor_px(header, _cell_words(elem_id))}px !important;}}"
             for elem_id, headers in (headers_by_table or tables()).items()
             for index, header in enumerate(headers)]
    rules.append(pinned_css("leaderboard-table", BOARD_COLUMNS, WIDTHS, PINNED))
    rules.append(pinned_css("pending-table", PENDING_COLUMNS, PENDING_WIDTHS, PINNED))
    rules.append(nowrap_css(headers_by_table))
    rules.append(phone_css(headers_by_table))
    return "\n".join(rules)
