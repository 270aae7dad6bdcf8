"""Human output for the CLI: tables, results, errors and hints. The only place that prints.

Everything printed is scrubbed of the process's secrets first (`registry.secrets`): terminal
output ends up in CI logs and bug reports.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from registry.secrets import scrub

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)


def table(
    columns: Sequence[str], rows: Iterable[Sequence[Any]], *, title: str | None = None
) -> None:
    """Print a table of rows under the given column headers."""
    t = Table(title=title, show_lines=False, header_style="bold")
    for column in columns:
        t.add_column(column, overflow="fold")
    for row in rows:
        t.add_row(*("" if cell is None else scrub(str(cell)) for cell in row))
    out.print(t)


def result(message: str) -> None:
    """Print a line of normal output on stdout."""
    out.print(scrub(message))


def as_json(data: Any) -> None:
    """Print machine output: JSON on stdout, nothing else."""
    sys.stdout.write(scrub(json.dumps(data, indent=2, default=str, ensure_ascii=False)) + "\n")


def error(message: str) -> None:
    """Print an error line on stderr."""
    err.print(f"[bold red]Error:[/] {scrub(message)}", markup=True)


def hint(message: str) -> None:
    """Print the hint that names the next command."""
    err.print(f"[yellow]Hint:[/] {scrub(message)}", markup=True)


def warn(message: str) -> None:
    """Print a warning on stderr."""
    err.print(f"[yellow]Warning:[/] {scrub(message)}", markup=True)


def info(message: str) -> None:
    """Print progress or status on stderr (never mixed into --json stdout)."""
    err.print(scrub(message))
