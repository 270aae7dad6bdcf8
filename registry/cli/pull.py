"""`hubskills pull | install | update | remove | list`: skills in your agents' folders."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import click
from rich.markup import escape

from registry.cli import _output as out
from registry.config import Settings
from registry.errors import HubskillsError
from registry.install import (
    Installed,
    PullResult,
    Removed,
    install,
    latest_checker,
    list_installed,
    pull,
    remove,
    update,
)
from registry.install.agents import AGENTS, Agent, agent_names, readers
from registry.install.installed import managed
from registry.install.lockfile import Lockfile, Scope
from registry.install.pull import Plan, pull_source
from registry.install.sources import is_source
from registry.scan import Finding, ScanFailed
from registry.stores import SkillStore, get_store

project_option = click.option(
    "--project", type=click.Path(path_type=Path, file_okay=False), default=".",
    show_default=True, help="Project root (where .agents/ and skills.lock live).")
global_option = click.option("--global", "global_", is_flag=True,
                             help="Use ~/.agents/skills and the agents' user folders.")
json_option = click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
registry_option = click.option(
    "--registry", type=click.Choice(["local", "hub"]), default=None,
    help="The embedded local registry (default) or the Hub [env: HUBSKILLS_REGISTRY].")


def _stores(registry: str | None = None, *,
            offline_fallback: bool = True) -> Callable[[str], SkillStore]:
    """One store per registry name, built on first use (`registry` overrides every name).

    With `offline_fallback` (pulls), the Hub falls back to the local registry when offline.
    """
    settings, cache = Settings.from_env(), {}  # type: ignore[var-annotated]

    def store_for(name: str) -> SkillStore:
        key = registry or name
        if key not in cache:
            cache[key] = get_store(settings, key, offline_fallback=offline_fallback)
        return cache[key]

    return store_for


@click.command("pull")
@click.argument("spec", metavar="NS/NAME[@VERSION|@SHA] | ./FOLDER | "
                "github:OWNER/REPO[/PATH][@REF] | GIT-URL[//PATH][@REF]")
@click.option("--skill", "skills", multiple=True, metavar="NAME",
              help="The skill to take from a source holding several (repeatable).")
@click.option("--all-skills", is_flag=True, help="Take every skill a source holds.")
@click.option("--agent", "agent", metavar="NAME,...",
              help=f"Agents to serve, e.g. claude,cursor ({len(agent_names()) - 1} known: "
                   "`hubskills agents` lists them; default: the detected ones).")
@click.option("--all", "all_agents", is_flag=True, help="Serve every known agent.")
@global_option
@click.option("--copy", is_flag=True, help="Copy into agent folders instead of linking.")
@click.option("--force", is_flag=True, help="Replace a folder hubskills did not install, "
                                            "or discard local changes.")
@click.option("--dry-run", is_flag=True, help="Fetch, verify and scan; write nothing.")
@click.option("--allow-risky", is_flag=True,
              help="Install despite high-severity findings (never despite secrets).")
@registry_option
@project_option
@json_option
def pull_command(spec: str, skills: tuple[str, ...], all_skills: bool, agent: str | None,
                 all_agents: bool, global_: bool, copy: bool, force: bool, dry_run: bool,
                 allow_risky: bool, registry: str | None, project: Path, as_json: bool) -> None:
    """Install a skill into .agents/skills and your agents' folders, pinned in skills.lock.

    SPEC is a registry skill, a folder, or a git source: a folder inside the repository after
    the repository (`//PATH` for a git URL), a branch, tag or commit after `@`.

    \b
    Examples:
      hubskills pull hubskills/kernel-builder-cuda-kernels
      hubskills pull acme/csv-cleaning@v1.2.0 --agent claude,cursor
      hubskills pull acme/csv-cleaning@3f2a9c1 --dry-run
      hubskills pull ./my-skill
      hubskills pull github:anthropics/skills/skills/pdf@main
      hubskills pull https://github.com/anthropics/skills --skill pdf --skill docx
      hubskills pull git@gitlab.com:team/skills.git//csv-cleaning@v2 --global --copy
    """
    options = {"copy": copy, "force": force, "dry_run": dry_run, "allow_risky": allow_risky}
    with _show_findings():
        if is_source(spec):
            plan = Plan.of(project, agents=agent, all_agents=all_agents, global_=global_,
                           **options)
            results = pull_source(spec, plan, skills=_names(skills), all_skills=all_skills)
        elif skills or all_skills:
            raise click.UsageError("--skill and --all-skills pick skills from a folder or a "
                                   "git source; a registry skill is one skill")
        else:
            store = get_store(Settings.from_env(), registry, offline_fallback=True)
            results = [pull(spec, project=project, store=store, agents=agent,
                            all_agents=all_agents, global_=global_, **options)]
    _print_results(results, project, as_json=as_json)


def _names(skills: tuple[str, ...]) -> list[str]:
    """`--skill a --skill b,c` -> [a, b, c]."""
    return [name.strip() for each in skills for name in each.split(",") if name.strip()]


@click.command("install")
@click.option("--frozen", is_flag=True,
              help="Fail on any mismatch with skills.lock; never write it.")
@click.option("--force", is_flag=True, help="Discard local changes to pinned skills.")
@click.option("--allow-risky", is_flag=True, help="Accept high-severity findings (not secrets).")
@registry_option
@global_option
@project_option
@json_option
def install_command(frozen: bool, force: bool, allow_risky: bool, registry: str | None,
                    global_: bool, project: Path, as_json: bool) -> None:
    """Install exactly what skills.lock pins (by sha).

    \b
    Examples:
      hubskills install
      hubskills install --frozen   # in CI
    """
    with _show_findings():
        results = install(project, stores=_stores(registry), frozen=frozen, global_=global_,
                          force=force, allow_risky=allow_risky)
    _print_results(results, project, as_json=as_json, empty="skills.lock pins no skills.")


@click.command("update")
@click.argument("name", required=False)
@click.option("--force", is_flag=True, help="Discard local changes.")
@click.option("--allow-risky", is_flag=True, help="Accept high-severity findings (not secrets).")
@registry_option
@global_option
@project_option
@json_option
def update_command(name: str | None, force: bool, allow_risky: bool, registry: str | None,
                   global_: bool, project: Path, as_json: bool) -> None:
    """Move installed skills (or NAME) to their newest version and show what changed.

    With no NAME, every skill it can, then the ones it skipped (exit 1 if any).

    \b
    Examples:
      hubskills update
      hubskills update csv-cleaning
    """
    stores = _stores(registry)
    results, skipped = [], []
    for each in [name] if name is not None else _ours(project, global_):
        try:
            with _show_findings():
                results += update(project, each, stores=stores, global_=global_, force=force,
                                  allow_risky=allow_risky)
        except HubskillsError as err:
            if name is not None:
                raise
            skipped.append(f"{each}: {err.message}")
    _print_results(results, project, as_json=as_json,
                   empty="" if skipped else "No skills installed by hubskills.")
    if skipped:
        raise HubskillsError(f"{len(skipped)} skill{'s' if len(skipped) > 1 else ''} not "
                             "updated:\n  " + "\n  ".join(skipped),
                             hint="hubskills update NAME --force  (discards its local changes)")


def _ours(project: Path, global_: bool) -> list[str]:
    """The names of the skills hubskills installed in the project (or the user's folders),
    as `update` with no NAME would move them."""
    scope = Scope.of(project, global_)
    return [entry.name for entry in managed(scope, Lockfile.read(scope.lock_path))]


@click.command("remove")
@click.argument("name")
@global_option
@project_option
@json_option
def remove_command(name: str, global_: bool, project: Path, as_json: bool) -> None:
    """Remove a skill hubskills installed: its folder, links, copies and lock entry.

    \b
    Examples:
      hubskills remove csv-cleaning
      hubskills remove csv-cleaning --json
    """
    removed = remove(project, name, global_=global_)
    if as_json:
        out.as_json(asdict(removed))
    else:
        _print_removed(removed, project)


@click.command("list")
@click.option("--offline", is_flag=True, help="Do not ask the registry for newer versions.")
@registry_option
@project_option
@json_option
def list_command(offline: bool, registry: str | None, project: Path, as_json: bool) -> None:
    """List skills in every agent folder (project and user): ours, hf skills', and others.

    \b
    Examples:
      hubskills list
      hubskills list --json
    """
    latest = None if offline else latest_checker(_stores(registry, offline_fallback=False))
    _print_installed(list_installed(project, latest=latest), project, as_json=as_json)


# --- rendering --------------------------------------------------------------------------------


@contextlib.contextmanager
def _show_findings() -> Iterator[None]:
    """Print a refused scan's findings before the error line."""
    try:
        yield
    except ScanFailed as err:
        _findings_table(err.findings)
        raise


def _findings_table(findings: list[Finding]) -> None:
    if findings:
        out.table(["severity", "code", "where", "message"],
                  [(f.severity, f.code, escape(f"{f.path}:{f.line}" if f.line else f.path),
                    escape(f.message)) for f in findings])


def _rel(path: Path, project: Path) -> str:
    """`path` relative to the project (links are not followed), or with `~` for HOME."""
    try:
        return str((path.parent.resolve() / path.name).relative_to(project.resolve()))
    except ValueError:
        return str(path).replace(str(Path.home()), "~", 1)


def _json(result: PullResult) -> dict[str, Any]:
    data = asdict(result)
    data["scan_summary"] = result.scan_summary
    seen, unseen = _visibility(result)
    data["seen_by"], data["not_seen_by"] = [a.name for a in seen], [a.name for a in unseen]
    return data


def _visibility(result: PullResult) -> tuple[list[Agent], list[Agent]]:
    """The agents that will see the pulled skill, and the others (by their folders)."""
    root = result.path.parent.parent.parent  # <root>/.agents/skills/<name>
    global_ = root.resolve() == Path.home().resolve()
    served = {name for p in result.placements for name in p.agents}
    seen = readers(root, served, global_=global_)
    return seen, [a for a in AGENTS.values() if a not in seen]


def _print_visibility(result: PullResult) -> None:
    """Which agents will see the skill, and the command that adds the others."""
    seen, unseen = _visibility(result)
    verb = "would see" if result.status == "dry-run" else "will see"
    out.result(f"  {verb} it: " + ", ".join(a.title for a in seen if a.name != "agents"))
    if unseen:  # 30 agents: name them all, but hint at the first (Claude Code) and --all
        scope = " --global" if result.path.parent.parent.parent.resolve() \
            == Path.home().resolve() else ""
        out.result("  not seen by: " + ", ".join(a.title for a in unseen)
                   + f"; add one with: hubskills pull {result.repo} --agent "
                   + f"{unseen[0].name}{scope} (a comma list adds several, --all every one)")


def _print_results(results: list[PullResult], project: Path, *, as_json: bool,
                   empty: str = "") -> None:
    if as_json:
        out.as_json([_json(r) for r in results])
        return
    if not results and empty:
        out.result(empty)
    for result in results:
        _print_result(result, project)


_VERBS = {"installed": "Installed", "updated": "Updated", "up-to-date": "Up to date:",
          "dry-run": "Would install"}


def _print_result(r: PullResult, project: Path) -> None:
    for note in r.notes:
        out.warn(escape(note))
    version = f" {r.version}" if r.version else ""
    was = ""
    if r.status == "updated" and r.previous:
        was = f" (was {r.previous.version or r.previous.sha[:12]})"
    out.result(f"{_VERBS.get(r.status, r.status)} {r.repo}{version}{was} at sha {r.sha[:12]} "
               + escape(f"[{r.registry}]"))
    for p in r.placements:
        agents = ", ".join(a for a in p.agents if a != "agents")
        serves = f": {agents}" if agents else ""
        out.result(f"  {escape(_rel(p.path, project))}  ({p.mode}{serves})")
    for line in r.changed:
        out.result(f"    {escape(line)}")
    _print_visibility(r)
    if r.status == "up-to-date":
        return
    _findings_table([f for f in r.findings if f.severity in ("high", "medium")])
    counts = r.scan_summary
    out.result(f"  scan: {counts['high']} high, {counts['medium']} medium, {counts['low']} low "
               "(findings are reported; a scan never proves a skill safe)")
    if r.status != "dry-run" and r.lock_path:
        out.result(f"  pinned in {escape(_rel(r.lock_path, project))}")


def _print_removed(removed: Removed, project: Path) -> None:
    out.result(f"Removed {removed.name}" + (f" ({removed.repo})" if removed.repo else ""))
    for path in removed.paths:
        out.result(f"  - {escape(_rel(path, project))}")
    if removed.lock_updated:
        out.result("  skills.lock updated")


def _print_installed(items: list[Installed], project: Path, *, as_json: bool) -> None:
    if as_json:
        out.as_json([i.to_json() for i in items])
        return
    if not items:
        out.result("No skills found in any agent folder.")
        return
    out.table(["name", "scope", "status", "repo", "version", "latest", "where"],
              [(i.name, i.scope, i.state if i.kind == "hubskills" else i.kind, i.repo or "",
                i.version or (i.sha or "")[:12], i.latest or "",
                escape(", ".join(_rel(Path(w.removesuffix(" (copy)")), project)
                                 + (" (copy)" if w.endswith(" (copy)") else "")
                                 for w in i.seen_in) or _rel(i.path, project)))
               for i in items], drop=("latest", "scope", "version"))
