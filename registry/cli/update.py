"""`hubskills update`: move installed skills to their newest version."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from registry.cli import _output as out
from registry.cli import _pull_shared as shared
from registry.errors import HubskillsError
from registry.install import update
from registry.install.installed import managed
from registry.install.lockfile import Lockfile, Scope
from registry.install.place import LocalChanges


@click.command("update")
@click.argument("name", required=False)
@click.option("--force", is_flag=True, help="Discard local changes.")
@click.option("--dry-run", is_flag=True,
              help="Show what would move (version from → to); write nothing.")
@click.option("--require-signed", is_flag=True,
              help="Refuse a skill without a skill.oms.sig [env: HUBSKILLS_REQUIRE_SIGNED].")
@shared.graph_options
@shared.lock_options
def update_command(name: str | None, force: bool, dry_run: bool, require_signed: bool,
                   accept_new_signer: bool, allow_namespace: tuple[str, ...],
                   allow_risky: bool, registry: str | None, global_: bool, project: Path,
                   as_json: bool) -> None:
    """Move installed skills (or NAME) to their newest version and show what changed.

    With no NAME, every skill it can, then the ones it skipped (exit 1 if any). A skill
    other installed skills require moves only as far as they all accept.

    \b
    Examples:
      hubskills update
      hubskills update csv-cleaning
      hubskills update --dry-run   # what would move, nothing written
    """
    stores = shared.stores(registry)
    choices: dict[str, Any] = {
        "require_signed": require_signed, "accept_new_signer": accept_new_signer,
        "allow_namespaces": [n.strip() for each in allow_namespace
                             for n in each.split(",") if n.strip()]}
    results, skipped, hints = [], [], []
    for each in [name] if name is not None else _ours(project, global_):
        try:
            with shared.show_findings():
                results += update(project, each, stores=stores, global_=global_, force=force,
                                  allow_risky=allow_risky, dry_run=dry_run, **choices)
        except HubskillsError as err:
            if name is not None:
                raise
            skipped.append(f"{each}: {err.message}")
            hints.append(f"hubskills update {each} --force  # discards its local changes"
                         if isinstance(err, LocalChanges) else
                         err.hint or f"hubskills update {each}  # alone, to see why")
    shared.print_moves(results, project, as_json=as_json,
                       empty="" if skipped else "No skills installed by hubskills.")
    if not results and not skipped and not as_json and name is None:
        out.hint("hubskills search  # then: hubskills pull NS/NAME")
    if skipped:
        raise HubskillsError(f"{len(skipped)} skill{'s' if len(skipped) > 1 else ''} not "
                             "updated:\n  " + "\n  ".join(skipped),
                             hint=hints[0])  # the first refusal's own way on


def _ours(project: Path, global_: bool) -> list[str]:
    """The names of the skills hubskills installed in the project (or the user's folders),
    as `update` with no NAME would move them."""
    scope = Scope.of(project, global_)
    return [entry.name for entry in managed(scope, Lockfile.read(scope.lock_path))]
