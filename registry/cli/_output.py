"""Human output for the CLI: tables, results, errors and hints (progress: `_progress`). The
only place that prints.

Everything printed is scrubbed of the process's secrets first (`registry.secrets`): terminal
output ends up in CI logs and bug reports.
"""

from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.markup import escape
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from registry.secrets import scrub

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)


#: Columns that hold an identifier (a skill id, a model reference, a run id): a table never
#: breaks one across lines, and never drops it to fit.
ID_COLUMNS = frozenset({"skill", "skill@version", "model", "run", "id", "case", "name",
                        "student", "version", "sha", "alias", "repo"})
#: Columns that list identifiers: they wrap between ids, never inside one.
ID_LIST_COLUMNS = frozenset({"models", "where"})
#: Columns of free text: with the id lists, the only ones that narrow to fit (cut with an
#: ellipsis on one line, never a tall cell; id lists wrap between ids instead).
TEXT_COLUMNS = frozenset({"description", "why", "why it failed", "message", "finding",
                          "detail", "prompt", "checks", "assertions", "query",
                          *ID_LIST_COLUMNS})
#: Columns a table never drops to fit, whatever its `drop` list says: a row's answer.
KEPT_COLUMNS = frozenset({"verdict", "p", "p (exact)", "latest", "status", "lift [95% CI]",
                          "lift pts [95% CI]", "pass", "severity", "change", "check", "stage"})


def table(
    columns: Sequence[str], rows: Iterable[Sequence[Any]], *, title: str | None = None,
    drop: Sequence[str] = (), per_row: Sequence[str] = (),
) -> None:
    """Print a table fitted to the terminal's width (80 columns when piped), no id broken.

    While it is too wide, a column with one value in every row is said once above it
    (`model: embedded/smollm2-135m`), then the `drop` columns, then any other but ids and
    `KEPT_COLUMNS` (from the right) are left out, and stderr names them (`--json` keeps
    them); a one-row table says its widest cells above it. Free text is cut with an ellipsis.
    A `per_row` column (one value in every row by chance: search's versions) is never said.
    """
    cells = [["" if cell is None else scrub(str(cell)) for cell in row] for row in rows]
    shown, hidden, said = list(columns), [], []

    def fits() -> bool:
        return _min_width(_built_table(columns, shown, cells)) <= out.width

    def widest(name: str) -> int:  # the widest is said first
        return -cell_len(cells[0][columns.index(name)])

    same = [n for n in columns if len(cells) > 1 and len({r[columns.index(n)] for r in cells}) == 1]
    _say_once(sorted(set(same) - set(per_row), key=widest), cells, columns, shown, said, fits)
    spare = [name for name in reversed(columns) if name not in drop
             and name not in ID_COLUMNS | TEXT_COLUMNS | KEPT_COLUMNS]
    for name in [*(n for n in drop if n not in KEPT_COLUMNS), *spare]:
        if fits():
            break
        if name in shown and len(shown) > 1:
            shown.remove(name)
            hidden.append(name)
    if len(cells) == 1:  # one row: its widest cells are said once above it
        _say_once(sorted(shown, key=widest), cells, columns, shown, said, fits)
    if title:
        _prose(title, style="italic")
    if said:  # under the title, above the table
        _print_joined(said)
    out.print(_built_table(columns, shown, cells, fit=True))
    if hidden:  # wrapped at spaces to the width, as the table is
        err.print(f"(left out at {out.width} columns: {', '.join(hidden)}; a wider terminal or "
                  "--json shows them)", soft_wrap=False)


def _say_once(names: list[str], cells: list[list[str]], columns: Sequence[str],
              shown: list[str], said: list[str], fits: Callable[[], bool]) -> None:
    """Move columns out of the table into `name: value` lines until it fits."""
    for name in names:
        if fits() or len(shown) == 1:
            break
        shown.remove(name)
        said.append(f"{name}: {cells[0][columns.index(name)]}")


def _print_joined(parts: list[str], sep: str = " · ") -> None:
    """`a · b · c` on as few lines as fit the width, each part whole on its line."""
    line = ""
    for part in parts:
        if line and cell_len(Text.from_markup(line + sep + part).plain) > out.width:
            out.print(line)
            line = part
        else:
            line = f"{line}{sep}{part}" if line else part
    out.print(line)


def _min_width(built: Table) -> int:
    """The narrowest the table can be drawn without breaking a cell that must stay whole
    (measured as if the terminal were unbounded: rich clamps a measurement to its width)."""
    return Measurement.get(out, out.options.update_width(1 << 16), built).minimum


def _built_table(columns: Sequence[str], shown: list[str], cells: list[list[str]], *,
                 fit: bool = False) -> Table:
    """The table of the `shown` columns; with `fit`, free text gets widths that fit the
    terminal (rich's own shrinking can squeeze a column below its minimum, then overflow)."""
    spans = {name: _span(name, [row[columns.index(name)] for row in cells]) for name in shown}
    widths = _text_widths(spans) if fit else {}
    t = Table(header_style="bold", box=box.SIMPLE_HEAD, show_edge=False,
              pad_edge=False, collapse_padding=True)
    for name in shown:  # measured, text may wrap (to its minimum); drawn, it is cut short
        wraps = name in ID_LIST_COLUMNS or (name in TEXT_COLUMNS and not fit)
        t.add_column(name, no_wrap=not wraps, overflow="fold" if wraps else "ellipsis",
                     min_width=spans[name][0], width=widths.get(name))
    keep = [columns.index(name) for name in shown]
    for row in cells:
        t.add_row(*(row[i] for i in keep))
    return t


def _span(name: str, column: list[str]) -> tuple[int, int]:
    """(narrowest, natural) width of a column: a whole column is as wide as its widest cell
    (rich would measure it by its longest word); free text keeps room for a short word, so
    it is never squeezed to nothing, and a list of ids for its longest id."""
    widest = max([cell_len(Text.from_markup(cell).plain) for cell in column] + [len(name)])
    if name not in TEXT_COLUMNS:
        return widest, widest
    longest = max([len(word) for cell in column for word in cell.split()]
                  + [len(word) for word in name.split()])
    return (longest if name in ID_LIST_COLUMNS else min(longest, 20)), widest


def _text_widths(spans: dict[str, tuple[int, int]]) -> dict[str, int]:
    """Widths for the free-text columns of a table wider than the terminal: each its minimum
    plus a share of the room left, by how much more it would take."""
    gaps = 2 * (len(spans) - 1)  # collapsed padding: two spaces between columns
    if sum(high for _, high in spans.values()) + gaps <= out.width:
        return {}
    room = max(0, out.width - gaps - sum(low for low, _ in spans.values()))  # 0: minimums
    text = {name: span for name, span in spans.items() if name in TEXT_COLUMNS}
    want = sum(high - low for low, high in text.values()) or 1
    return {name: low + (high - low) * room // want for name, (low, high) in text.items()}


PROSE_WRAP_WIDTH = 100  # piped prose wraps up to this width (a pipe is 80), not wider


def result(message: str) -> None:
    """Print a line of normal output on stdout."""
    _prose(scrub(message))


def _prose(message: str, style: str | None = None) -> None:
    """Print text wrapped at spaces, indent kept (a terminal's markup by rich; piped: narrow)."""
    plain = Text.from_markup(message).plain
    if (plain != message if out.is_terminal else out.width > PROSE_WRAP_WIDTH) \
            or max(map(cell_len, plain.splitlines() or [""])) <= out.width:
        out.print(message, style=style, soft_wrap=not out.is_terminal)
        return
    for line in plain.splitlines():
        indent = line[:len(line) - len(line.lstrip())]
        for part in textwrap.wrap(line, out.width, subsequent_indent=indent,
                                  break_long_words=False, break_on_hyphens=False) or [""]:
            out.print(part, markup=False, style=style)


def as_json(data: Any) -> None:
    """Print machine output: JSON on stdout, nothing else."""
    sys.stdout.write(scrub(json.dumps(data, indent=2, default=str, ensure_ascii=False)) + "\n")


def error(message: str) -> None:
    """Print an error line on stderr (its text as written: `[local]` is not markup)."""
    err.print(f"[bold red]Error:[/] {escape(scrub(message))}", markup=True)


def hint(message: str) -> None:
    """Print the hint that names the next command (as written: `hubskills[local]` stays)."""
    err.print(f"[yellow]Hint:[/] {escape(scrub(message))}", markup=True)


def warn(message: str) -> None:
    """Print a warning on stderr."""
    err.print(f"[yellow]Warning:[/] {scrub(message)}", markup=True)


def info(message: str) -> None:
    """Print progress or status on stderr (never mixed into --json stdout)."""
    err.print(scrub(message))


def notice_now(message: str) -> None:
    """Write one line to stderr at once, bypassing rich: safe inside a signal handler (which
    may run while the console is half-way through drawing a progress bar)."""
    try:
        sys.stderr.write(f"\n{scrub(message)}\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # stderr closed or gone: nothing left to tell
        pass


def flush() -> None:
    """Flush stdout and stderr (before the process ends without the usual clean-up)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
