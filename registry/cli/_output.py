"""Human output for the CLI: tables, results, errors and hints (progress: `_progress`). The
only place that prints.

Everything printed is scrubbed of the process's secrets first (`registry.secrets`): terminal
output ends up in CI logs and bug reports. It is also printed without control characters
(`visible`): a skill's description, a model's answer or a registry's listing is anyone's text,
and an escape sequence in it would act on the reader's terminal (retitle it, clear it, set the
clipboard, dress a link as another); `--json` writes such characters as `\\u` escapes.
"""

from __future__ import annotations

import json
import re
import sys
import textwrap
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from contextlib import suppress
from typing import Any

from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from registry.cli._command_lines import command_lines
from registry.format.claims import plain_text
from registry.results import display
from registry.secrets import scrub

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)


#: Columns that hold an identifier (a skill id, a model reference, a run id, a folder): a table
#: never drops one to fit, and breaks it across lines only at its separators (`/`, `-`, `.`,
#: `@`), as a last resort, or else shortens it in the middle and says `--json` has it whole.
ID_COLUMNS = frozenset({"skill", "skill@version", "model", "run", "id", "case", "name",
                        "student", "version", "sha", "alias", "repo", "project folder",
                        "user folder"})
#: Columns that list identifiers (`a, b`): they wrap between ids (then as an id column).
ID_LIST_COLUMNS = frozenset({"models", "where"})
#: Columns of free text: with the id lists, the only ones that narrow to fit (cut with an
#: ellipsis on one line, never a tall cell).
TEXT_COLUMNS = frozenset({"description", "why", "why it failed", "message", "finding", "details",
                          "detail", "prompt", "checks", "assertions", "query", "vs published"})
#: Columns a table never drops to fit, whatever its `drop` list says: a row's answer, its rank.
KEPT_COLUMNS = frozenset({"verdict", "p", "p (exact)", "latest", "status", "lift [95% CI]",
                          "lift pts [95% CI]", "pass", "severity", "change", "check", "stage",
                          "rank", "gate"})
#: Free text keeps this much room at least; another cell wider than `CELL_CAP` (a verdict with
#: its reason) is cut to it only once no column is left to drop; an id never below `ID_FLOOR`;
#: then, the last resort, such a long value is cut to its header (`VALUE_FLOOR` at least).
TEXT_FLOOR, CELL_CAP, ID_FLOOR, VALUE_FLOOR = 20, 24, 16, 8
#: What may need a look in `--json` output: anything but printable ASCII, and the rest of its
#: line with it (`_json_unseen`: one look a line, not a Python call per character).
_NOT_ASCII = re.compile(r"[^\t\n\x20-\x7e][^\n]*")


#: Format characters a terminal only draws with: the joiners that shape Persian and Indic
#: words and join emoji sequences (left out, `👩‍💻` printed as two pictures).
JOINERS = "\u200c\u200d"


def visible(text: str) -> str:
    """`text` as it may reach a terminal: the process's secrets scrubbed, control and format
    characters (escape sequences, bidi overrides) left out, newlines, tabs and `JOINERS` kept."""
    return scrub(plain_text(text, JOINERS))  # a secret cut by a control character is whole


def table(
    columns: Sequence[str], rows: Iterable[Sequence[Any]], *, title: str | None = None,
    drop: Sequence[str] = (), per_row: Sequence[str] = (),
    whole: str = "a wider terminal or --json", wrap: Sequence[str] = (),
) -> list[str]:
    """Print a table fitted to the terminal's width (80 columns when piped); returns the
    columns left out (a legend need not explain them).

    While it is too wide, a column with one value in every row is said once above it
    (`model: embedded/smollm2-135m`; a blank one, nothing to say, is just left out), then the
    `drop` columns, then any other but ids and `KEPT_COLUMNS` (from the right) are left out,
    and stderr names them (`--json` keeps them); a one-row table says its widest cells above
    it (also to make room for the column left out last), and a column left out comes back
    where that freed room for it (the last left out first, and none left out before one that
    still does not fit). Still too wide, long cells are cut with an ellipsis, then ids are
    wrapped at their separators (`_fitted`), `wrap` columns (doctor's reasons) at spaces. A
    `per_row` column (search's versions) is never said. `whole` says what shows cut text whole.
    """
    cells = [["" if cell is None else visible(str(cell)) for cell in row] for row in rows]
    spans = {name: _span(name, [row[i] for row in cells]) for i, name in enumerate(columns)}
    shown = list(columns)
    hidden: list[str] = []
    said: list[str] = []

    def fits(also: Sequence[str] = ()) -> bool:
        names = [*shown, *also]
        return sum(spans[name][0] for name in names) + 2 * (len(names) - 1) <= out.width

    def widest(name: str) -> int:  # the widest is said first
        return -cell_len(cells[0][columns.index(name)])

    same = [n for n in columns if len(cells) > 1 and len({r[columns.index(n)] for r in cells}) == 1]
    _say_once(sorted(set(same) - set(per_row), key=widest), cells, columns, shown, said, fits)
    spare = [name for name in reversed(columns) if name not in drop
             and name not in ID_COLUMNS | ID_LIST_COLUMNS | TEXT_COLUMNS | KEPT_COLUMNS]
    for name in [*(n for n in drop if n not in KEPT_COLUMNS), *spare]:
        if fits():
            break
        if name in shown and len(shown) > 1:
            shown.remove(name)
            hidden.append(name)
    if len(cells) == 1:  # one row: its widest cells are said once above it, also to bring
        _say_once(sorted(shown, key=widest), cells, columns, shown, said, fits)  # back the
        if hidden:  # column left out last (the with-skill rate beside the lift)
            _say_once(sorted(shown, key=widest), cells, columns, shown, said,
                      lambda: fits(hidden[-1:]))
    for name in reversed(hidden[:]):  # one left out early may fit now: the last one first
        shown[:] = [n for n in columns if n in shown or n == name]
        if not fits():  # and none left out before it (a baseline without its with-skill rate)
            shown.remove(name)
            break
        hidden.remove(name)
    if title:
        _prose(title, style="italic")
    if said:  # under the title, above the table
        joined(said)
    widths = _widths({name: spans[name] for name in shown})
    kept = [columns.index(name) for name in shown]
    fitted, shortened = _fitted(shown, [[row[i] for i in kept] for row in cells], widths, wrap)
    out.print(_built_table(shown, fitted, widths))
    if hidden:  # wrapped at spaces to the width, as the table is
        err.print(f"(left out at {out.width} columns: {', '.join(hidden)}; {whole} shows them)",
                  soft_wrap=False)
    if shortened:
        err.print(f"(ids shortened with … in the middle to fit {out.width} columns; --json "
                  "shows them whole)", soft_wrap=False)
    if any(cell_len(Text.from_markup(row[i]).plain) > widths[name] for row in fitted
           for i, name in enumerate(shown) if _kind(name) == "text" and name not in wrap):
        err.print(f"(text cut with … to fit {out.width} columns; {whole} shows it whole)",
                  soft_wrap=False)
    return hidden


def _say_once(names: list[str], cells: list[list[str]], columns: Sequence[str],
              shown: list[str], said: list[str], fits: Callable[[], bool]) -> None:
    """Move columns out of the table into `name: value` lines until it fits (a blank value,
    unknown, is not said: `latest: ` would tell nothing)."""
    for name in names:
        if fits() or len(shown) == 1:
            break
        shown.remove(name)
        if value := cells[0][columns.index(name)]:
            said.append(f"{name}: {value}")


def joined(parts: list[str], sep: str = " · ") -> None:
    """`a · b · c` on stdout, on as few lines as fit the width, each part whole on its line
    (one wider than the width alone, wrapped at spaces and its ids at their separators)."""
    line = ""
    for part in map(visible, parts):
        if cell_len(Text.from_markup(part).plain) > out.width:
            if line:
                out.print(line)
            for wrapped in _wrapped(Text.from_markup(part).plain, out.width):
                out.print(wrapped, markup=False)
            line = ""
        elif line and cell_len(Text.from_markup(line + sep + part).plain) > out.width:
            out.print(line)
            line = part
        else:
            line = f"{line}{sep}{part}" if line else part
    if line:
        out.print(line)


def _wrapped(text: str, width: int) -> list[str]:
    """``text`` wrapped at spaces; a word still wider than ``width`` (an id) at its separators,
    or shortened in the middle."""
    lines = []
    for line in textwrap.wrap(display.glued(text), width, break_long_words=False,
                              break_on_hyphens=False):
        line = display.unglued(line)  # a count kept with its noun (`3 skills`)
        lines += [line] if cell_len(line) <= width else (
            display.wrap_id(line, width) or [display.middle_ellipsis(line, width)])
    return lines


def _kind(name: str) -> str:
    """How a column narrows: an id, a list of ids, free text, or another value."""
    return ("list" if name in ID_LIST_COLUMNS else "id" if name in ID_COLUMNS
            else "text" if name in TEXT_COLUMNS else "value")


def _items(text: str) -> list[str]:
    """The ids of an id list cell, each but the last with its comma: how it wraps."""
    parts = text.split(", ")
    return [part + "," for part in parts[:-1]] + parts[-1:]


def _span(name: str, column: list[str]) -> tuple[int, int]:
    """(narrowest before any cell is cut or an id broken, natural) width of a column: a whole
    column is as wide as its widest cell; free text keeps room for a short word, so it is never
    squeezed to nothing, and a list of ids for its longest id."""
    plain = [Text.from_markup(cell).plain for cell in column]
    widest = max([cell_len(line) for cell in plain for line in cell.splitlines()]
                 + [cell_len(name)])
    kind = _kind(name)
    if kind == "text":  # room for a phrase: a walk read search's descriptions cut to 16
        return min(widest, TEXT_FLOOR), widest  # characters ("Build CUDA kerne…")
    if kind == "list":
        return max([cell_len(item) for cell in plain for item in _items(cell)]
                   + [cell_len(word) for word in name.split()]), widest
    return widest, widest


def _widths(spans: dict[str, tuple[int, int]]) -> dict[str, int]:
    """Each column's width, all of them within the terminal when they can be: free text and id
    lists at least their narrowest; then values wider than `CELL_CAP` cut to it; then ids
    narrowed, the widest first, to no less than `ID_FLOOR`; then those long values cut to
    their header. The room left is shared by how much more each column would take."""
    room = out.width - 2 * (len(spans) - 1)  # collapsed padding: two spaces between columns
    if sum(high for _, high in spans.values()) <= room:
        return {name: high for name, (_, high) in spans.items()}
    least = {name: low for name, (low, _) in spans.items()}
    if sum(least.values()) > room:
        least |= {name: min(high, max(CELL_CAP, cell_len(name)))
                  for name, (_, high) in spans.items() if _kind(name) == "value"}
    ids = [name for name in spans if _kind(name) in ("id", "list")]
    level = max([least[name] for name in ids] + [0])
    while sum(least.values()) > room and level > ID_FLOOR:
        level -= 1
        least |= {name: max(min(least[name], level),
                            min(least[name], max(ID_FLOOR, cell_len(name)))) for name in ids}
    if sum(least.values()) > room:  # the last resort: long values (a verdict's reason) go
        least |= {name: max(cell_len(name), VALUE_FLOOR) for name, (_, high) in spans.items()
                  if _kind(name) == "value" and high > CELL_CAP}
    spare = max(0, room - sum(least.values()))
    want = sum(high - least[name] for name, (_, high) in spans.items()) or 1
    return {name: least[name] + (high - least[name]) * spare // want
            for name, (_, high) in spans.items()}


def _fitted(names: list[str], rows: list[list[str]], widths: dict[str, int],
            wrap: Sequence[str] = ()) -> tuple[list[list[str]], bool]:
    """The rows with every id cell wider than its column broken at its separators (an id list:
    between ids first) or shortened in the middle, a `wrap` cell at spaces; whether any was."""
    shortened = False

    def fit(cell: str, width: int, kind: str) -> str:
        nonlocal shortened
        plain = Text.from_markup(cell).plain
        if kind == "wrap" and cell_len(plain) > width:
            return escape("\n".join(_wrapped(plain, width)))
        if kind not in ("id", "list") or cell_len(plain) <= width:
            return cell
        lines: list[str] = []
        for item in _items(plain) if kind == "list" else [plain]:
            if lines and cell_len(lines[-1]) + 1 + cell_len(item) <= width:
                lines[-1] += " " + item
                continue
            broken = [item] if cell_len(item) <= width else display.wrap_id(item, width)
            shortened |= broken is None
            lines += broken or [display.middle_ellipsis(item, width)]
        return escape("\n".join(lines))

    return [[fit(cell, widths[name], "wrap" if name in wrap else _kind(name))
             for name, cell in zip(names, row, strict=True)] for row in rows], shortened


def _built_table(names: list[str], rows: list[list[str]], widths: dict[str, int]) -> Table:
    """The table drawn at ``widths``: a cell wider than its column (free text, a long value) is
    cut with an ellipsis on one line; ids arrive broken into lines that fit."""
    t = Table(header_style="bold", box=box.SIMPLE_HEAD, show_edge=False,
              pad_edge=False, collapse_padding=True)
    for name in names:
        t.add_column(name, no_wrap=True, overflow="ellipsis", width=widths[name])
    for row in rows:
        t.add_row(*row)
    return t


PROSE_WRAP_WIDTH = 100  # piped prose wraps up to this width (a pipe is 80), not wider


def result(message: str) -> None:
    """Print a line of normal output on stdout."""
    _prose(visible(message))


def _prose(message: str, style: str | None = None) -> None:
    """Print text wrapped at spaces, indent kept (a terminal's markup by rich; piped: narrow)."""
    plain = Text.from_markup(message).plain
    if max(map(cell_len, plain.splitlines() or [""])) <= out.width \
            or (not out.is_terminal and out.width > PROSE_WRAP_WIDTH):
        out.print(message, style=style, soft_wrap=not out.is_terminal)
        return
    if out.is_terminal and plain != message:  # markup: rich wraps it, each line's indent kept
        for row in Text.from_markup(message, style=style or "").split("\n"):
            lead = len(row.plain) - len(row.plain.lstrip())
            row.plain = display.glued(row.plain)  # a count with its noun (same length: styles)
            for piece in row[lead:].wrap(out, max(out.width - lead, 20)):
                piece.rstrip()
                piece.plain = display.unglued(piece.plain)
                out.print(Text(" " * lead) + piece, soft_wrap=True)
        return
    for line in display.glued(plain).splitlines():
        indent = line[:len(line) - len(line.lstrip())]
        for part in textwrap.wrap(line, out.width, subsequent_indent=indent,
                                  break_long_words=False, break_on_hyphens=False) or [""]:
            out.print(display.unglued(part), markup=False, style=style)


def command(label: str, line: str, indent: str = "  ") -> None:
    """`label  LINE` where it fits the width; else the label (if any), then the command LINE on
    lines of its own, indented, that paste into a shell as printed (`Pull it:  hubskills pull`
    and the id on the next line ran as two commands)."""
    if label and cell_len(f"{label}  {line}") <= out.width:  # both plain text, never markup
        result(escape(f"{label}  {line}"))
        return
    if label:
        result(escape(label))
    for part in command_lines(visible(line), out.width, indent):  # as they are: no re-wrapping
        out.print(part, markup=False, soft_wrap=True)


def as_json(data: Any) -> None:
    """Print machine output: JSON on stdout, nothing else."""
    text = scrub(json.dumps(data, indent=2, default=str, ensure_ascii=False))
    sys.stdout.write(_NOT_ASCII.sub(_json_unseen, text) + "\n")


class _JsonEscapes(dict[int, str]):
    """`str.translate`'s table for `_json_unseen`, a character looked up when first met: JSON's
    `\\u` escape for category C (a C1 control, a bidi override, a joiner, private use: what a
    terminal acts on or hides; the same string once decoded), else the character (a tab too)."""

    def __missing__(self, code: int) -> str:
        char = chr(code)
        escaped = char != "\t" and unicodedata.category(char)[0] == "C"
        self[code] = found = json.dumps(char)[1:-1] if escaped else char
        return found


_JSON_ESCAPES = _JsonEscapes()


def _json_unseen(found: re.Match[str]) -> str:
    """`found` with each character `json.dumps` leaves raw but a terminal acts on escaped; a
    printable text has none (`isprintable`: no category C, nor Z but the space)."""
    text = found.group()
    return text if text.isprintable() else text.translate(_JSON_ESCAPES)


def error(message: str) -> None:
    """Print an error line on stderr (its text as written: `[local]` is not markup)."""
    err.print(f"[bold red]Error:[/] {escape(visible(message))}", markup=True)


def hint(message: str) -> None:
    """Print the hint that names the next command (as written: `hubskills[local]` stays)."""
    err.print(f"[yellow]Hint:[/] {escape(visible(message))}", markup=True)


def warn(message: str) -> None:
    """Print a warning on stderr."""
    err.print(f"[yellow]Warning:[/] {visible(message)}", markup=True)


def info(message: str) -> None:
    """Print progress or status on stderr (never mixed into --json stdout)."""
    err.print(visible(message))


def notice_now(message: str) -> None:
    """Write one line to stderr at once, bypassing rich: safe inside a signal handler (which
    may run while the console is half-way through drawing a progress bar)."""
    with suppress(OSError, ValueError):  # stderr closed or gone: nothing left to tell
        sys.stderr.write(f"\n{visible(message)}\n")
        sys.stderr.flush()


def flush() -> None:
    """Flush stdout and stderr (before the process ends without the usual clean-up)."""
    for stream in (sys.stdout, sys.stderr):
        with suppress(OSError, ValueError):
            stream.flush()
