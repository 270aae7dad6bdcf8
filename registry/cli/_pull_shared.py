"""What `pull`, `install`, `update`, `remove` and `list` share: their options, the
stores they open, and how they print a refused scan and the skills that landed."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import click
from rich.markup import escape

from registry.cli import _output as out
from registry.config import Settings
from registry.errors import hint_command
from registry.install import PullResult
from registry.install.agents import AGENTS, Agent, readers
from registry.install.lockfile import LOCK_FILE
from registry.install.resolve import DependencyError
from registry.registries import get_store
from registry.scan import Finding, ScanFailed
from registry.stores import SkillStore


def _project(ctx: click.Context, param: click.Parameter, value: Path) -> Path:
    """`--project` as given; left at its default in a folder below a project, that project:
    the nearest folder above holding a skills.lock, said on stderr. It looks no further than
    the repository's root (a `.git`), or else HOME's folders below it, and nowhere outside
    both: a skills.lock a stranger left in `/tmp` is no one's project (a red-team note). Run
    from `src/pkg`, `list` said "No skills found" and `pull` planned a second `.agents/`
    there (a walk)."""
    from click.core import ParameterSource

    here = Path.cwd()
    if ctx.params.get("global_"):  # given on the command line, so read before this default
        return value  # `--global` works in HOME: no project to find or to name (a walk)
    if ctx.get_parameter_source(param.name or "") is not ParameterSource.DEFAULT \
            or (here / LOCK_FILE).exists() or (here / ".agents").exists():
        return value
    above = _looked_in(here)
    found = next((folder for folder in above if (folder / LOCK_FILE).is_file()), None)
    if found is None or not _yours(found / LOCK_FILE):
        return value
    out.info(f"Project: {found} (its {LOCK_FILE}; --project . for this folder)")
    return found


def _looked_in(here: Path) -> list[Path]:
    """The folders above `here` that may be its project: up to the nearest repository root
    (a `.git` of yours that git would take: a file, or a folder holding HEAD), or else up to
    (not including) HOME when `here` is below it; none otherwise."""
    chain = [here, *here.parents]
    root = next((i for i, folder in enumerate(chain) if _is_repository(folder)), None)
    if root is not None:
        return chain[1:root + 1]
    home = Path.home().resolve()
    return chain[1:chain.index(home)] if home in chain[1:] and home != home.parent else []


def _is_repository(folder: Path) -> bool:
    """Whether `folder` is a repository's root of yours (an empty `.git` a stranger made
    beside their skills.lock is not; a review note)."""
    git = folder / ".git"
    return (git.is_file() or (git / "HEAD").is_file()) and _yours(git)


def _yours(path: Path) -> bool:
    """Whether `path` belongs to the user running this, and no one else may write it."""
    try:
        stat = path.stat()
    except OSError:
        return False
    owner = getattr(os, "getuid", None)
    return (owner is None or stat.st_uid == owner()) and not stat.st_mode & 0o002


project_option = click.option(
    "--project", type=click.Path(path_type=Path, file_okay=False), default=".",
    callback=_project,
    help="Project root (where .agents/ and skills.lock live) [default: the nearest folder "
         "holding a skills.lock, up to the repository's root or else HOME; else .].")
global_option = click.option("--global", "global_", is_flag=True,
                             help="Use ~/.agents/skills and the agents' user folders.")
json_option = click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
registry_option = click.option(
    "--registry", type=click.Choice(["local", "hub"]), default=None,
    help="The embedded local registry (default) or the Hub [env: HUBSKILLS_REGISTRY].")
_allow_risky_option = click.option("--allow-risky", is_flag=True,
                                   help="Accept high-severity findings (not secrets).")


_accept_new_signer_option = click.option(
    "--accept-new-signer", is_flag=True,
    help="Accept a signer other than the one skills.lock pins for the namespace (trust on "
         "first use) and pin the new one.")
_allow_namespace_option = click.option(
    "--allow-namespace", "allow_namespace", multiple=True, metavar="NS[,NS]",
    help="Namespaces dependencies may come from besides the skill's own (repeatable) "
         "[env: HUBSKILLS_ALLOW_NAMESPACES].")


def given_options(ctx: click.Context) -> list[str]:
    """The options typed on the command line, as they would be typed again (for a hint that
    repeats the command with another argument)."""
    from click.core import ParameterSource

    words: list[str] = []
    for param in ctx.command.params:
        name = param.name or ""
        if not isinstance(param, click.Option) or name not in ctx.params \
                or ctx.get_parameter_source(name) is not ParameterSource.COMMANDLINE:
            continue
        value = ctx.params[name]
        if param.is_flag:
            words += [param.opts[0]] if value else []
            continue
        for each in value if param.multiple else [value]:
            words += [param.opts[0], str(each)]
    return words


def graph_options(command: Callable[..., None]) -> Callable[..., None]:
    """`--accept-new-signer` and `--allow-namespace`: what a pull of a signed skill, or of one
    with dependencies, may accept (`pull`, `update`)."""
    return _accept_new_signer_option(_allow_namespace_option(command))


def asking(run: Callable[[], list[PullResult]], allowed: list[str], *,
           quiet: bool = False) -> list[PullResult]:
    """`run()`; on a terminal, a dependency from a namespace not allowed is asked about (the
    chain shown) and, once allowed, the pull runs again with it. Elsewhere (a pipe, CI,
    `--json`) the refusal stands, its hint naming `--allow-namespace`."""
    while True:
        try:
            return run()
        except DependencyError as err:
            if err.namespace is None or quiet or not sys.stdin.isatty():
                raise
            out.warn(escape(err.message))
            if not click.confirm(f"Allow skills from the namespace '{err.namespace}' for this "
                                 "pull?", default=False, err=True):
                raise
            allowed.append(err.namespace)


def lock_options(command: Callable[..., None]) -> Callable[..., None]:
    """`--allow-risky`, `--registry`, `--global`, `--project` and `--json`, in that order: the
    options of the commands that follow skills.lock (`install`, `update`)."""
    for option in reversed((_allow_risky_option, registry_option, global_option,
                            project_option, json_option)):
        command = option(command)
    return command


def stores(registry: str | None = None, *,
           offline_fallback: bool = True) -> Callable[[str], SkillStore]:
    """One store per registry name, built on first use (`registry` overrides every name).

    With `offline_fallback` (pulls), the Hub falls back to the local registry when offline.
    """
    settings = Settings.from_env()
    cache: dict[str, SkillStore] = {}

    def store_for(name: str) -> SkillStore:
        key = registry or name
        if key not in cache:
            cache[key] = get_store(settings, key, offline_fallback=offline_fallback)
        return cache[key]

    return store_for


@contextlib.contextmanager
def show_findings(subject: str | None = None) -> Iterator[None]:
    """Print a refused scan's findings before the error line (`subject`: the skill scanned,
    for the command that shows cut text whole)."""
    try:
        yield
    except ScanFailed as err:
        _findings_table(err.findings, subject)
        raise


def _findings_table(findings: list[Finding], subject: str | None) -> None:
    if findings:  # pull has no JSON: scan has
        whole = hint_command("scan", subject, "--json") if subject else "hubskills scan --json"
        out.table(["severity", "code", "where", "message"],
                  [(f.severity, f.code, escape(f"{f.path}:{f.line}" if f.line else f.path),
                    escape(f.message)) for f in findings],
                  whole=f"a wider terminal or {whole}", wrap=["message"])  # why it was refused


def rel(path: Path, project: Path) -> str:
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


def _print_visibility(result: PullResult, others: Sequence[PullResult] = ()) -> None:
    """Which agents will see the skill (and `others`, served alike: said once for them all,
    `install` said it for each), and the command that adds the others."""
    seen, unseen = _visibility(result)
    verb = "would see" if result.status == "dry-run" else "will see"
    out.result(f"  {verb} {'these skills' if others else 'it'}: "
               + ", ".join(a.title for a in seen if a.name != "agents"))
    if unseen:  # 30 agents: name them all, but hint at the first (Claude Code) and --all
        scope = ["--global"] if result.path.parent.parent.parent.resolve() \
            == Path.home().resolve() else []
        out.result("  not seen by: " + ", ".join(a.title for a in unseen)
                   + "; add one with (a comma list adds several, --all every one):")
        # on lines of its own that paste as printed: cut to fit, it was cut mid-command
        repos = [r.repo for r in (*others, result)][:3]
        out.command("", " && ".join(hint_command("pull", repo, "--agent", unseen[0].name,
                                                 *scope) for repo in repos), indent="    ")


def print_results(results: list[PullResult], project: Path, *, as_json: bool,
                  empty: str = "") -> None:
    if as_json:
        out.as_json([_json(r) for r in results])
        return
    if not results and empty:
        out.result(empty)
    for result in results:
        _print_result(result, project)


def print_moves(results: list[PullResult], project: Path, *, as_json: bool,
                empty: str = "", lock_written: bool = True) -> None:
    """`update`'s and `install`'s results: each as `pull` prints it, but a skill already in
    place in one line (its folders, agents and scan are those of its last pull: `hubskills
    list` shows them); `install --frozen` in CI printed nine lines for each. Without
    `lock_written` (the lock's bytes did not change) a placed skill is `as skills.lock pins`,
    not `pinned in skills.lock`."""
    if as_json or not results:
        print_results(results, project, as_json=as_json, empty=empty)
        return
    shown = [r for r in results if r.status != "up-to-date" or r.linked]
    alike = len(shown) > 1 and len({_agent_names(r) for r in shown}) == 1
    for result in results:
        if result.status != "up-to-date" or result.linked:  # agents said once when alike
            _print_result(result, project, visibility=not alike, lock_written=lock_written)
            continue
        for note in result.notes:
            out.warn(escape(note))
        version = f" {result.version}" if result.version else ""
        out.result(f"Up to date: {result.repo}{version} at sha {result.sha[:12]} "
                   + escape(f"[{result.registry}]"))
    if alike:
        out.result(f"{len(shown)} skills placed:")
        _print_visibility(shown[-1], shown[:-1])


_VERBS = {"installed": "Installed", "updated": "Updated", "restored": "Restored",
          "up-to-date": "Up to date:", "dry-run": "Would install"}


def _agent_names(result: PullResult) -> tuple[tuple[str, ...], tuple[str, ...]]:
    seen, unseen = _visibility(result)
    return tuple(a.name for a in seen), tuple(a.name for a in unseen)


def _print_result(r: PullResult, project: Path, *, visibility: bool = True,
                  lock_written: bool = True) -> None:
    for note in r.notes:
        out.warn(escape(note))
    version = f" {r.version}" if r.version else ""
    was = ""
    if r.status == "updated" and r.previous:
        was = f" (was {r.previous.version or r.previous.sha[:12]})"
    verb = _VERBS.get(r.status, r.status)
    if r.status == "dry-run" and r.previous:  # `update --dry-run`: what would move, from → to
        moves = r.previous.sha != r.sha
        verb = "Would update" if moves else "Would restore"
        if moves:
            version = f" {r.previous.version or r.previous.sha[:12]} → {r.version or r.sha[:12]}"
    if r.status == "up-to-date" and r.linked:  # installed already: this pull adds links
        verb = "Would link" if r.dry_run else "Linked"
    out.result(f"{verb} {r.repo}{version}{was} at sha {r.sha[:12]} " + escape(f"[{r.registry}]"))
    if r.registry == "mcp" and "://" in r.ref:  # which repo the server's files came from
        out.result(f"  from {escape(r.ref)}")
    for p in r.placements:
        agents = ", ".join(a for a in p.agents if a != "agents")
        serves = f": {agents}" if agents else ""
        new = ", new" if p.path in r.linked else ""
        out.result(f"  {escape(rel(p.path, project))}  ({p.mode}{serves}{new})")
    for line in r.changed:
        out.result(f"    {escape(line)}")
    if visibility:  # `install` of several skills served alike: once, after them all
        _print_visibility(r)
    if r.signer:  # skill.oms.sig verified against a trusted anchor
        out.result(f"  signed by {escape(r.signer)} (a signature says who, not that it is safe)")
    for dep in r.dependencies:  # the rest of its graph, placed with it
        for note in dep.notes:
            out.warn(escape(note))
        out.result(f"  requires {dep.repo} {dep.version or dep.sha[:12]}: "
                   f"{_VERBS.get(dep.status, dep.status).rstrip(':').lower()}"
                   + (f", signed by {escape(dep.signer)}" if dep.signer else ""))
    if r.status == "up-to-date":
        return
    _findings_table([f for f in r.findings if f.severity in ("high", "medium")], r.repo)
    counts = r.scan_summary
    out.result(f"  scan: {counts['high']} high, {counts['medium']} medium, {counts['low']} low "
               "(findings are reported; a scan never proves a skill safe)")
    if r.status != "dry-run" and r.lock_path:
        lock = escape(rel(r.lock_path, project))
        out.result(f"  pinned in {lock}" if lock_written else f"  as {lock} pins")
