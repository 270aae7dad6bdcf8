"""`hubskills verify-install`: re-check installed skills against skills.lock."""

from __future__ import annotations

from pathlib import Path

import click
from rich.markup import escape

from registry.cli import _output as out
from registry.cli import _pull_shared as shared
from registry.errors import HubskillsError
from registry.install.audit import verify_installed


@click.command("verify-install")
@shared.global_option
@shared.project_option
@shared.json_option
def verify_install_command(global_: bool, project: Path, as_json: bool) -> None:
    """Re-check every installed skill against skills.lock: its files' digests, its signature
    and signer, its copies and links. Exit 1 on any mismatch; nothing is changed.

    \b
    Examples:
      hubskills verify-install
      hubskills verify-install --global --json
    """
    audits = verify_installed(project, global_=global_)
    if as_json:
        out.as_json([a.to_json() for a in audits])
    elif audits:
        out.table(["name", "state", "details"],
                  [(a.name, a.state, escape("; ".join(a.problems))) for a in audits])
    else:
        out.result("skills.lock pins no skills.")
    bad = [a for a in audits if a.state != "ok"]
    if bad:
        raise HubskillsError(f"{len(bad)} of {len(audits)} installed skills do not match "
                             f"skills.lock: {', '.join(a.name for a in bad[:5])}",
                             hint="hubskills install --force  # restores what skills.lock pins "
                                  "(discarding local edits)")
