"""`hubskills remove`: remove a skill hubskills installed."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import click
from rich.markup import escape

from registry.cli import _output as out
from registry.cli import _pull_shared as shared
from registry.install import Removed, remove


@click.command("remove")
@click.argument("name")
@click.option("--force", is_flag=True,
              help="Remove it although installed skills require it, or although it has "
                   "local edits (they are discarded).")
@shared.global_option
@shared.project_option
@shared.json_option
def remove_command(name: str, force: bool, global_: bool, project: Path,
                   as_json: bool) -> None:
    """Remove a skill hubskills installed: its folder, links, copies and lock entry, and the
    dependencies only it needed. A skill another installed skill requires stays, and so does
    one with local edits (unless --force), and so do dependencies something else still needs.

    \b
    Examples:
      hubskills remove csv-cleaning
      hubskills remove csv-cleaning --json
    """
    removed = remove(project, name, global_=global_, force=force)
    if as_json:
        out.as_json(asdict(removed))
    else:
        _print_removed(removed, project)


def _print_removed(removed: Removed, project: Path) -> None:
    out.result(f"Removed {removed.name}" + (f" ({removed.repo})" if removed.repo else ""))
    for path in removed.paths:
        out.result(f"  - {escape(shared.rel(path, project))}")
    for other in removed.also:
        out.result(f"  also removed {other}: no other skill needs it")
    if removed.folders:  # `pull --all` makes up to 15: one line names them
        names = ", ".join(escape(shared.rel(f, project)) for f in removed.folders)
        out.result(f"  also removed the empty agent folders pulls had made: {names}")
    for other in removed.kept:
        out.result(f"  kept {escape(other)}")
    if removed.lock_updated:
        out.result("  skills.lock updated")
