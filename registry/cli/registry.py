"""`hubskills registry seed|path`: the embedded local registry."""

from __future__ import annotations

from pathlib import Path

import click
from rich.markup import escape

from registry.cli import _output as out
from registry.cli._path_arg import ExistingPath
from registry.config import Settings
from registry.registries import local_store
from registry.stores.seed import default_seed_dir
from registry.verify.seed import seed_and_replay


@click.group("registry")
def registry_group() -> None:
    """Manage the embedded local registry."""


@registry_group.command("seed")
@click.option("--force", is_flag=True, help="Seed again, adding what is missing.")
@click.option("--from", "source", type=ExistingPath(
    "folder", retry="hubskills registry seed --from {path}",
    otherwise="hubskills registry seed  # the project's example skills"),
              help="A folder of skills (default: the project's example skills).")
def registry_seed_command(force: bool, source: Path | None) -> None:
    """Publish example skills (and their recorded runs) into the local registry.

    \b
    Examples:
      hubskills registry seed
      hubskills registry seed --from ./my-skills --force
    """
    settings = Settings.from_env()
    report = seed_and_replay(local_store(settings), source or default_seed_dir(),
                             force=force, settings=settings)
    if report.already_seeded:
        out.result("Already seeded (use --force to add what is missing).")
        return
    for line in report.published:
        out.result(f"published  {line}")
    for line in report.skipped:
        out.result(f"skipped    {escape(line)}")
    for run_id, status in report.verified.items():
        out.result(f"replayed   run {run_id}: {status}")
    out.result(f"{len(report.published)} skills, {len(report.runs)} runs seeded.")


@registry_group.command("path")
def registry_path_command() -> None:
    """Print the local registry's folder."""
    out.result(str(Settings.from_env().store_dir))
