"""`hubskills verify-install`: re-check installed skills against skills.lock."""

from __future__ import annotations

from pathlib import Path

import click
from rich.markup import escape

from registry.cli import _output as out
from registry.cli import _pull_shared as shared
from registry.errors import HubskillsError
from registry.install.audit import UNKNOWN_AGENT, Audit, verify_installed


@click.command("verify-install")
@shared.global_option
@shared.project_option
@shared.json_option
def verify_install_command(global_: bool, project: Path, as_json: bool) -> None:
    """Re-check every installed skill against skills.lock: its files' digests, its signature
    and signer, its copies and links. Exit 1 on any mismatch; nothing is changed. An agent
    skills.lock names that this version does not know is reported, not a mismatch.

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
                  [(a.name, a.state, escape("; ".join(a.problems))) for a in audits],
                  wrap=["details"])  # what differs from the lock: the point of the command
    else:
        out.result("skills.lock pins no skills.")
    _warn_unknown(audits)
    bad = [a for a in audits if a.state not in ("ok", UNKNOWN_AGENT)]
    if bad:
        raise HubskillsError(f"{len(bad)} of {len(audits)} installed skills do not match "
                             f"skills.lock: {', '.join(a.name for a in bad[:5])}",
                             hint="hubskills install --force  # restores what skills.lock pins "
                                  "(discarding local edits)")


def _warn_unknown(audits: list[Audit]) -> None:
    """Name the agents skills.lock names that this version does not know (no mismatch: their
    folders were not checked), and the upgrade that knows them."""
    unknown = sorted({name for a in audits for name in a.unknown_agents})
    if unknown:
        from registry._install import upgrade

        out.warn(f"skills.lock names agents this hubskills does not know ({', '.join(unknown)}): "
                 "their folders were not checked")
        out.hint(f"{upgrade()}  # a newer hubskills wrote skills.lock")
