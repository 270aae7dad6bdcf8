"""`hubskills versions`: a skill's published versions, newest first."""

from __future__ import annotations

from dataclasses import asdict

import click

from registry.cli import _output as out
from registry.cli import _store as shared


@click.command("versions")
@click.argument("repo", metavar="NS/NAME")
@shared.json_option
@shared.registry_option
def versions_command(repo: str, as_json: bool, registry: str | None) -> None:
    """List a skill's published versions, newest first.

    \b
    Example:
      hubskills versions hubskills/agent-skill-md
    """
    _, store = shared.open_store(registry)
    versions = store.versions(repo)
    if as_json:
        out.as_json([asdict(v) for v in versions])
    elif not versions:
        out.result(f"{repo} has no published versions.")
    else:
        out.table(["version", "tag", "sha", "date"],
                  [(v.version, v.tag, v.sha, v.date or "-") for v in versions])
