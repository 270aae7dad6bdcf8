"""`hubskills install`: install exactly what skills.lock pins."""

from __future__ import annotations

from pathlib import Path

import click

from registry.cli import _pull_shared as shared
from registry.install import install
from registry.install.lockfile import Scope


@click.command("install")
@click.option("--frozen", is_flag=True,
              help="Fail on any mismatch with skills.lock; never write it.")
@click.option("--force", is_flag=True, help="Discard local changes to pinned skills.")
@click.option("--require-signed", is_flag=True,
              help="Refuse a lock that pins an unsigned skill, and an install whose own "
                   "signature does not verify [env: HUBSKILLS_REQUIRE_SIGNED].")
@shared.lock_options
def install_command(frozen: bool, force: bool, require_signed: bool, allow_risky: bool,
                    registry: str | None, global_: bool, project: Path, as_json: bool) -> None:
    """Install exactly what skills.lock pins (by sha).

    \b
    Examples:
      hubskills install
      hubskills install --frozen   # in CI
    """
    lock = Scope.of(project, global_).lock_path
    before = lock.read_bytes() if lock.is_file() else None
    with shared.show_findings():
        results = install(project, stores=shared.stores(registry), frozen=frozen,
                          global_=global_, force=force, allow_risky=allow_risky,
                          require_signed=require_signed)
    written = (lock.read_bytes() if lock.is_file() else None) != before
    shared.print_moves(results, project, as_json=as_json, empty="skills.lock pins no skills.",
                       lock_written=written)
