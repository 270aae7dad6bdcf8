"""`hubskills install`: install exactly what skills.lock pins."""

from __future__ import annotations

from pathlib import Path

import click

from registry.cli import _pull_shared as shared
from registry.errors import HubskillsError, hint_command
from registry.install import install
from registry.install.lockfile import Scope


# `install NAME` (npm's and pip's way) is taken as extra arguments, then answered with `pull`.
@click.command("install", context_settings={"allow_extra_args": True})
@click.option("--frozen", is_flag=True,
              help="Fail on any mismatch with skills.lock; never write it.")
@click.option("--force", is_flag=True, help="Discard local changes to pinned skills.")
@click.option("--require-signed", is_flag=True,
              help="Refuse a lock that pins an unsigned skill, and an install whose own "
                   "signature does not verify [env: HUBSKILLS_REQUIRE_SIGNED].")
@shared.lock_options
@click.pass_context
def install_command(ctx: click.Context, frozen: bool, force: bool, require_signed: bool,
                    allow_risky: bool, registry: str | None, global_: bool, project: Path,
                    as_json: bool) -> None:
    """Install exactly what skills.lock pins (by sha).

    \b
    Examples:
      hubskills install
      hubskills install --frozen   # in CI
    """
    if ctx.args:  # it said "Got unexpected extra argument" and named only `install --help`
        raise HubskillsError(f"install takes no skill name: it installs what skills.lock pins "
                             f"(got {' '.join(ctx.args)})",
                             hint=" && ".join(hint_command("pull", arg) for arg in ctx.args))
    lock = Scope.of(project, global_).lock_path
    before = lock.read_bytes() if lock.is_file() else None
    with shared.show_findings():
        results = install(project, stores=shared.stores(registry), frozen=frozen,
                          global_=global_, force=force, allow_risky=allow_risky,
                          require_signed=require_signed)
    written = (lock.read_bytes() if lock.is_file() else None) != before
    shared.print_moves(results, project, as_json=as_json, empty="skills.lock pins no skills.",
                       lock_written=written)
