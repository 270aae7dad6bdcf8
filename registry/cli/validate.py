"""`hubskills validate`: check skill folders and their test suites."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import click
from rich.markup import escape

from registry.cli import _output as out
from registry.cli._path_arg import ExistingPath
from registry.format.skill import SKILL_FILE, Problem
from registry.format.suite_check import check_suite
from registry.format.validate import has_errors, validate_skill
from registry.publishing.checks import stale_signature


@click.command("validate")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Machine-readable findings.")
def validate_command(paths: tuple[Path, ...], as_json: bool) -> None:
    """Check skill folders and their test suites; exit 1 on any error.

    The suite (evals/evals.json) is read as `hubskills eval` reads it, so every error eval
    would stop with is found here first; the scaffold's placeholders are warned about.

    \b
    Example:
      hubskills validate skills/*
    """
    report = {str(path): validate_skill(path) + check_suite(path) + stale_signature(path)
              for path in paths}
    if as_json:
        out.as_json({p: [vars(f) for f in found] for p, found in report.items()})
    else:
        for path, found in report.items():
            _print_findings(path, found)
        for missing in (p for p in paths if not p.exists()):  # a typo, or a skill to make
            out.hint(ExistingPath("folder", retry="hubskills validate {path}",
                                  otherwise="{new}")._hint(missing))
    if any(has_errors(found) for found in report.values()):
        raise SystemExit(1)


def _print_findings(path: str, found: list) -> None:
    errors = sum(f.severity == "error" for f in found)
    warnings = len(found) - errors
    status = "[red]invalid[/]" if errors else "[green]valid[/]"
    out.result(f"{escape(path)}: {status} ({errors} error{'s' * (errors != 1)}, "
               f"{warnings} warning{'s' * (warnings != 1)})")
    print_problems(found, str(Path(path).parent) if Path(path).name == SKILL_FILE else path)


def print_problems(found: Sequence[Problem], folder: str | None = None) -> None:
    """Each problem on lines of its own, its message whole (wrapped, never cut: it says what
    to fix), where it is relative to `folder` when given (`publish` says the folder)."""
    for f in found:
        colour = "red" if f.severity == "error" else "yellow"
        where = escape(f"{folder}/{f.location()}" if folder else f.location())
        out.result(f"  {where}: [{colour}]{f.severity}[/] {f.code}: {escape(f.message)}")
