"""`hubskills list`: the skills in every agent folder, ours and others."""

from __future__ import annotations

from pathlib import Path

import click
from rich.markup import escape

from registry.cli import _output as out
from registry.cli import _pull_shared as shared
from registry.install import Installed, latest_checker, list_installed
from registry.install.deps import render_tree
from registry.install.deps import tree as dependency_tree
from registry.install.lockfile import Lockfile, Scope


@click.command("list")
@click.option("--offline", is_flag=True, help="Do not ask the registry for newer versions.")
@click.option("--tree", is_flag=True,
              help="Show the dependency graph skills.lock records (offline).")
@shared.global_option
@shared.registry_option
@shared.project_option
@shared.json_option
def list_command(offline: bool, tree: bool, global_: bool, registry: str | None,
                 project: Path, as_json: bool) -> None:
    """List skills in every agent folder (project and user): ours, hf skills', and others.

    \b
    Examples:
      hubskills list
      hubskills list --json
      hubskills list --tree   # which skill requires which (--global: the user's)
    """
    if tree:
        _print_tree(project, global_, as_json=as_json)
        return
    latest = None if offline else latest_checker(shared.stores(registry, offline_fallback=False))
    _print_installed(list_installed(project, latest=latest), project, as_json=as_json)


def _print_tree(project: Path, global_: bool, *, as_json: bool) -> None:
    scope = Scope.of(project, global_)
    nodes = dependency_tree(Lockfile.read(scope.lock_path))
    if as_json:
        out.as_json([n.to_json() for n in nodes])
    elif not nodes:
        out.result(f"{scope.lock_path.name} pins no skills.")
    for line in [] if as_json else render_tree(nodes):
        out.result(escape(line))


def _pinned_not_placed(project: Path, items: list[Installed]) -> list[str]:
    """The skills the project's skills.lock pins that no project folder holds."""
    scope = Scope.of(project, False)
    placed = {i.name for i in items if i.scope == "project"}
    return sorted(name for name in Lockfile.read(scope.lock_path).entries if name not in placed
                  and not (scope.skills_dir / name).is_dir())


def _print_installed(items: list[Installed], project: Path, *, as_json: bool) -> None:
    if as_json:
        out.as_json([i.to_json() for i in items])
        return
    missing = _pinned_not_placed(project, items)
    if not items:
        out.result("No skills found in any agent folder.")
    if missing:  # a fresh clone of a project: its lock, not its agent folders
        out.result(f"skills.lock pins {len(missing)} skill{'s' if len(missing) > 1 else ''} "
                   f"not in .agents/skills: {', '.join(missing[:5])}"
                   + (f" (+{len(missing) - 5} more)" if len(missing) > 5 else ""))
        out.hint("hubskills install  # places what skills.lock pins")
    if not items:
        if not missing:  # a new project: where skills come from
            out.hint("hubskills search  # then: hubskills pull NS/NAME")
        return
    out.table(["name", "scope", "status", "repo", "version", "latest", "where"],
              [(i.name, i.scope, i.state if i.kind == "hubskills" else i.kind, i.repo or "",
                i.version or (i.sha or "")[:12], i.latest or "",
                escape(", ".join(shared.rel(Path(w.removesuffix(" (copy)")), project)
                                        + (" (copy)" if w.endswith(" (copy)") else "")
                                        for w in i.seen_in) or shared.rel(i.path, project)))
               for i in items], drop=("latest", "scope", "version"))
    for i in items:  # what update would keep it to, and why: not "outdated" forever
        if i.state == "held":
            out.result(f"{escape(i.name)} is held at {escape(i.version or '')}: "
                       f"{escape(i.held_by or '')} (latest {escape(i.latest or '')})")
