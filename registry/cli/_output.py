"""Human output for the CLI: tables, results, errors, hints and progress. The only place that
prints.

Everything printed is scrubbed of the process's secrets first (`registry.secrets`): terminal
output ends up in CI logs and bug reports.
"""

from __future__ import annotations

import json
import math
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.markup import escape
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from registry.cli._time_left import TimeLeft, clock_text
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


# --- progress ----------------------------------------------------------------------------------
# On a terminal a rich bar; anywhere else (CI logs, pipes, `> log`) the run id at once and a
# plain line every few answers or HEARTBEAT_S seconds, whichever comes first, so a long run
# never looks hung. Both go to stderr, --json or not.

HEARTBEAT_S = 10.0
LINES_PER_RUN = 20  # a plain line at least every 1/20th of the answers


class _Heartbeat:
    """Calls `beat` every `seconds` of silence (nothing said since), from a daemon thread."""

    def __init__(self, beat: Callable[[], None], seconds: float,
                 clock: Callable[[], float]) -> None:
        self.beat, self.seconds, self.clock = beat, seconds, clock
        self.poll = min(1.0, seconds)  # how often the thread looks at the clock
        self.last = clock()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True, name="progress")

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._done.set()

    def said(self) -> None:
        """Something was printed: the next beat is `seconds` from now."""
        self.last = self.clock()

    def _loop(self) -> None:
        while not self._done.wait(self.poll):
            if self.clock() - self.last >= self.seconds:
                self.said()
                self.beat()


class PlainProgress:
    """An evaluation's progress as plain lines (no terminal): see the section comment."""

    def __init__(self, *, seconds: float = HEARTBEAT_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.begun = clock()
        self.run_id, self.done, self.total, self.errors = "", 0, 0, 0
        self.step, self.next_line = 1, 1
        self.time_left = TimeLeft(self.begun)  # the recent pace, steadied: see `_time_left`
        self.heartbeat = _Heartbeat(self.line, seconds, clock)

    def __enter__(self) -> PlainProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.heartbeat.stop()

    def start(self, manifest: Any, total: int) -> None:
        """The run exists: say its id before the first model call, then keep talking."""
        self.run_id, self.total = manifest.run_id, total
        self.step = max(1, -(-total // LINES_PER_RUN))
        self.next_line = self.step
        info(f"run {manifest.run_id} ({escape(manifest.skill_name)}): {total} answers to get; "
             "Ctrl-C stops and keeps the finished ones")
        self.heartbeat.start()

    def update(self, done: int, total: int, row: Any) -> None:
        """One more answer; print a line every `step` answers (and the last)."""
        self.done, self.total = done, total
        self.time_left.answered(done, self.clock())
        self.errors += bool(row.is_error)
        if done >= self.next_line or done == total:
            self.next_line = done + self.step
            self.line()

    def line(self) -> None:
        """`run ID: 12/48 answers (25%) · 1 error · 0:42 elapsed · ~2:06 left`."""
        self.heartbeat.said()
        elapsed = self.clock() - self.begun
        parts = [f"run {self.run_id}: {self.done}/{self.total} answers"
                 + (f" ({self.done / self.total:.0%})" if self.total else "")]
        if self.errors:
            parts.append(f"{self.errors} error{'s' if self.errors > 1 else ''}")
        parts.append(f"{clock_text(elapsed)} elapsed")
        if (left := self.time_left.left(self.total, self.clock())) is not None:
            parts.append(f"~{clock_text(math.ceil(left))} left")  # never ~0:00 with some left
        info(" · ".join(parts))


class BarProgress:
    """An evaluation's progress as a rich bar on the terminal (the run id printed above it),
    shown from `start` on: a run refused by its checks never flashes an empty bar."""

    def __init__(self) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self.bar = Progress(TextColumn("[bold]evaluating"), BarColumn(), MofNCompleteColumn(),
                            TextColumn("{task.fields[last]}"), TimeElapsedColumn(),
                            console=err, transient=True)
        self.task = self.bar.add_task("eval", total=None, last="")
        self.shown = False

    def __enter__(self) -> BarProgress:
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.shown:
            self.bar.__exit__(*exc)

    def start(self, manifest: Any, total: int) -> None:
        """Say the run id, and show the bar under it counting `total` answers."""
        info(f"run {manifest.run_id} ({escape(manifest.skill_name)}): {total} answers to get; "
             "Ctrl-C stops and keeps the finished ones")
        self.bar.update(self.task, total=total)
        if not self.shown:
            self.bar.__enter__()
            self.shown = True

    def update(self, done: int, total: int, row: Any) -> None:
        """One more answer."""
        mark = "error" if row.is_error else ("pass" if row.passed else "fail")
        self.bar.update(self.task, completed=done, total=total,
                        last=escape(f"{row.case_id} [{row.arm}] {mark}"))


def eval_progress() -> BarProgress | PlainProgress:
    """The progress display for an evaluation: a bar on a terminal, plain lines elsewhere."""
    return BarProgress() if err.is_terminal else PlainProgress()


class StepProgress:
    """Progress of a long multi-step command (`generate`): each step's line as it comes, and,
    when nothing was said for `seconds`, a line saying what it is still doing (on a terminal
    a spinner says it instead)."""

    def __init__(self, *, seconds: float = HEARTBEAT_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.clock, self.begun, self.last = clock, clock(), "starting"
        self.said: set[str] = set()  # every line said, so a report does not say it again
        self.heartbeat = _Heartbeat(self._still, seconds, clock)
        self.status = err.status("working…") if err.is_terminal else None

    def __enter__(self) -> StepProgress:
        if self.status is not None:
            self.status.__enter__()
        else:
            self.heartbeat.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.heartbeat.stop()
        if self.status is not None:
            self.status.__exit__(*exc)

    def say(self, line: str) -> None:
        """Print a step's line (user text is printed literally)."""
        self.heartbeat.said()
        self.last = line
        self.said.add(line)
        info(escape(line))
        if self.status is not None:
            self.status.update(escape(line[:70]))

    def _still(self) -> None:
        info(escape(f"… still working ({clock_text(self.clock() - self.begun)} elapsed): "
                    f"{self.last[:80]}"))
