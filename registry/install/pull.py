"""Pull one skill into agent folders, pinned in `skills.lock`, safe against hostile repos.

A pull resolves `ns/name[@ref]` to a sha (offline, our own install answers `latest`), fetches
that revision into a sibling staging folder (`.agents/skills/.hubskills-staging-*`), re-checks
the staged files (no links, safe paths, caps), validates it as `publish` does (its `name` must
be the repository's name), verifies the content hash the registry reports, scans, and only then
places it (`place.py`). Agent folders that are links leading out of the project (or HOME) are
refused before anything is written.
"""

from __future__ import annotations

import contextlib
import shlex
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from registry.config import Settings
from registry.errors import HubskillsError, InvalidSkill, RegistryUnavailable, hint_command
from registry.format.skill import content_hash
from registry.install import graph
from registry.install.agents import Agent, check_folders, select_agents
from registry.install.audit import check_still_allowed
from registry.install.lockfile import (
    MARKER_FILE,
    Lockfile,
    Marker,
    Scope,
    now_iso,
    read_marker,
)
from registry.install.mcp_source import McpSource, ambiguous
from registry.install.place import PullResult, install_staged, refresh
from registry.install.signers import pin_signer
from registry.install.source_store import MAX_DEPTH, SourceStore
from registry.install.sources import (
    FolderSource,
    Source,
    folder_name,
    is_source,
    parse_source,
)
from registry.install.staging import Staged, check_staged, discard, prepare
from registry.install.transaction import STAGING_PREFIX
from registry.scan import STORE_LIMITS, SizeLimits
from registry.signing import SignaturePolicy
from registry.stores import Resolved, SkillStore
from registry.stores.refs import check_ref, check_repo_id, is_version, normalize_version


def parse_spec(spec: str) -> tuple[str, str | None]:
    """`ns/name[@ref]` -> (repo, ref or None).

    Raises:
        HubskillsError: not a skill id, an `@` with no version after it, or a ref shaped
            like a path or an option.
    """
    repo, at, ref = spec.strip().partition("@")
    check_repo_id(repo)
    if at and not ref.strip():  # `ns/name@` is a slip, not a request for the latest
        raise HubskillsError(f"'{spec}' names no version after '@'",
                             hint=f"hubskills versions {repo}  # then pull {repo}@VERSION, or "
                                  f"{repo} for the latest")
    return repo, check_ref(ref.strip()) if ref.strip() else None


def pull(spec: str, *, project: Path, store: SkillStore | None = None,
         agents: str | Sequence[str] | None = None, all_agents: bool = False,
         global_: bool = False, copy: bool = False, force: bool = False, dry_run: bool = False,
         allow_risky: bool = False, limits: SizeLimits = STORE_LIMITS,
         skill: str | None = None, require_signed: bool = False,
         accept_new_signer: bool = False, allow_namespaces: Sequence[str] = ()) -> PullResult:
    """Install `ns/name[@ref]` (or a folder or git source) into `.agents/skills/<name>` and
    the selected agents' folders, pinned in `skills.lock`.

    Args:
        spec: `ns/name`, `ns/name@v1.2.0`, `ns/name@<sha or prefix>`, or a source
            (`./folder`, `github:owner/repo/path@ref`, a git URL: see `sources.py`).
        project: the project root (ignored for the target with `global_`, which uses HOME).
        store: the registry (a `FallbackStore` to pull offline from another one); a source
            needs none.
        agents: `--agent` names (default: `.agents` plus the agents detected).
        all_agents: serve every known agent.
        global_: install into `~/.agents/skills` and the agents' user folders.
        copy: copy into agent folders instead of linking.
        force: replace folders we did not install, or discard local changes.
        dry_run: fetch, verify and scan in a temp folder; write nothing in the project.
        allow_risky: install despite high-severity findings (never despite secrets).
        limits: size and count caps.
        skill: the skill to take from a source holding several.
        require_signed: refuse a skill without a `skill.oms.sig` (a present one is always
            verified against the anchors `hubskills trust add` stored); also set by
            `HUBSKILLS_REQUIRE_SIGNED=1`.
        accept_new_signer: accept a signer other than the one skills.lock pins for the
            namespace (and re-pin it).
        allow_namespaces: namespaces dependencies may come from besides the skill's own
            (and `HUBSKILLS_ALLOW_NAMESPACES`).

    Raises:
        HubskillsError: (and subclasses) resolution, validation, scan or placement refused.
    """
    plan = Plan.of(project, agents=agents, all_agents=all_agents, global_=global_, copy=copy,
                   force=force, dry_run=dry_run, allow_risky=allow_risky, limits=limits,
                   require_signed=require_signed, accept_new_signer=accept_new_signer,
                   allow_namespaces=tuple(allow_namespaces))
    if is_source(spec):
        return pull_source(spec, plan, skills=[skill] if skill else [])[0]
    repo, ref = parse_spec(spec)
    if store is None:
        from registry.registries import get_store

        store = get_store(Settings.from_env(), offline_fallback=True)
    return _install(_stage(repo, ref, store, plan), plan, store)


@dataclass(frozen=True)
class Plan:
    """Where a pull writes and how: the scope, the agents served, the caller's choices."""

    scope: Scope
    agents: list[Agent]
    copy: bool = False
    force: bool = False
    dry_run: bool = False
    allow_risky: bool = False
    limits: SizeLimits = STORE_LIMITS
    signatures: SignaturePolicy | None = None  # None: the configured trust store
    accept_new_signer: bool = False
    allow_namespaces: tuple[str, ...] = ()  # dependencies' namespaces allowed besides its own

    @classmethod
    def of(cls, project: Path, *, agents: str | Sequence[str] | None = None,
           all_agents: bool = False, global_: bool = False, require_signed: bool = False,
           **choices: Any) -> Plan:
        """The scope and agents checked (links leading out refused) before anything else;
        `HUBSKILLS_REQUIRE_SIGNED` and `HUBSKILLS_ALLOW_NAMESPACES` add to the choices."""
        settings = Settings.from_env()
        if require_signed or settings.require_signed:
            choices["signatures"] = SignaturePolicy(settings.home, True)
        choices["allow_namespaces"] = tuple(dict.fromkeys(
            (*choices.get("allow_namespaces", ()), *settings.allow_namespaces)))
        scope = Scope.of(project, global_)
        chosen = select_agents(scope.root, agents, all_agents=all_agents, global_=scope.global_)
        check_folders(scope.root, chosen, global_=scope.global_)
        return cls(scope, chosen, **choices)


def pull_source(spec: str, plan: Plan, *, skills: Sequence[str] = (),
                all_skills: bool = False, github_url: str | None = None) -> list[PullResult]:
    """Pull the skill a folder or git source names, or the ones picked from a source holding
    several (`skills` by folder name or path, or `all_skills`); every one is staged and
    checked before any is placed.

    Raises:
        HubskillsError: (and subclasses) the source, the pick, or any skill refused.
    """
    source = parse_source(spec)
    if isinstance(source, FolderSource):
        if not Path(source.text).expanduser().is_dir():
            word = Path(source.text).name or "WORD"
            raise InvalidSkill(f"{source.text}: no such folder",
                               hint="check the path, or find a registry skill (NS/NAME): "
                                    f"hubskills search {shlex.quote(word)}")
        source = source.keyed(plan.scope.root)
    url = github_url or Settings.from_env().github_url
    with SourceStore(plan.scope.root, github_url=url, typed=source) as store:
        lock = Lockfile.read(plan.scope.lock_path)
        if isinstance(source, McpSource):
            store.follow_pins(source, lock.entries.values())
        if skills or all_skills or not _find_installed(plan.scope, source.key, lock):
            resolved = store.resolve(source.key, source.ref)
            picked = pick(store.skills(source, resolved.sha), source, skills, all_skills)
        else:  # installed from exactly this key: one skill, maybe up to date without a fetch
            picked = [""]
        staged: list[_Ready] = []
        try:
            for folder in picked:
                staged.append(_stage(source.at(folder).key, source.ref,
                                     cast(SkillStore, store), plan))
            _check_names_apart(staged, source)
            return [_install(item, plan, None) for item in staged]
        finally:
            for item in reversed(staged):  # the last first: the first made the folders
                if isinstance(item, tuple):
                    discard(item[0])


_Ready = tuple[Staged, str] | PullResult  # staged with the registry that answered, or done


def _folder_of(repo: str, source: Source) -> str:
    """The folder in `source` that skill `repo` (`source.at(folder).key`) comes from (an MCP
    server's: the `NAME` or `NS/NAME` after `#`)."""
    base = source.key.rstrip("/")
    return repo[len(base):].lstrip("/#") if repo.startswith(base) else repo


def _check_names_apart(staged: list[_Ready], source: Source) -> None:
    """Refuse, before any is placed, two skills of one pull that go by the same name: both
    would be `.agents/skills/NAME` (a red-team note: the first was placed and the second
    refused, half an install; with --force the second replaced the first).

    Raises:
        HubskillsError: the first name two of them share.
    """
    seen: dict[str, str] = {}
    for item in staged:
        if isinstance(item, tuple):
            name, repo = item[0].name, item[0].repo
            if name in seen:
                raise HubskillsError(f"{seen[name]} and {repo} are both named {name}: one "
                                     "folder cannot hold both; nothing was installed",
                                     hint=hint_command("pull", source.spec, "--skill",
                                                       _folder_of(repo, source)))
            seen[name] = repo


def _stage(repo: str, ref: str | None, store: SkillStore, plan: Plan) -> _Ready:
    """The revision staged and checked, or the refreshed install when it is already there."""
    scope, lock = plan.scope, Lockfile.read(plan.scope.lock_path)
    current = _find_installed(scope, repo, lock)
    resolved = _resolved_or_installed(store, repo, ref,
                                      installed=current[1] if current else None)
    if current and current[1].sha == resolved.sha and not plan.force:
        folder = scope.skills_dir / current[0]
        if content_hash(folder) == current[1].content_hash:
            check_still_allowed(folder, lock.entries.get(current[0]), plan.signatures, lock)
            return refresh(scope, current[0], current[1], plan.agents, plan.copy, lock,
                           list(resolved.notes), dry_run=plan.dry_run)
    staged = prepare(store, repo, resolved, scope, limits=plan.limits,
                     allow_risky=plan.allow_risky, dry_run=plan.dry_run,
                     signatures=plan.signatures)
    return staged, resolved.registry or store.kind


def _install(ready: _Ready, plan: Plan, store: SkillStore | None) -> PullResult:
    """Place one staged skill; one that requires others is placed with its whole graph
    (`graph.py`), resolved from `store` (the configured registry for a source)."""
    lock = Lockfile.read(plan.scope.lock_path)
    item = ready[0] if isinstance(ready, tuple) else ready
    entry = lock.entries.get(item.name)
    if isinstance(item, Staged) and not is_source(item.repo):
        try:
            graph.check_needed(lock, item.repo, item.name, item.resolved.version)
        except BaseException:
            discard(item)
            raise
    if item.requires or (isinstance(item, PullResult) and entry and entry.requires):
        if store is None:
            from registry.registries import get_store

            store = get_store(Settings.from_env(), offline_fallback=True)
        root = graph.root_node(item, lock)
        try:
            return graph.install_graph(graph.resolve(root, store, plan, lock), plan, store)
        finally:
            if isinstance(item, Staged):
                discard(item)
    if isinstance(ready, PullResult):
        return ready
    staged, registry = ready
    try:
        note = pin_signer(lock, staged.repo, staged.name, staged.signer,
                          ref=staged.resolved.ref, accept_new=plan.accept_new_signer)
        result = install_staged(staged, plan.scope, plan.agents, lock, registry=registry,
                                copy=plan.copy, force=plan.force, dry_run=plan.dry_run)
        if note:
            result.notes.append(note)
        return result
    finally:
        discard(staged)


def pick(found: list[str], source: Source, skills: Sequence[str], all_skills: bool, *,
         command: str = "pull") -> list[str]:
    """The folders to pull among the skills `found` in `source` (see `pull_source`).

    Raises:
        InvalidSkill: no skill there; HubskillsError: several and no pick, or an unknown one.
    """
    if not found:
        raise InvalidSkill(f"{source.spec} holds no skill (no SKILL.md in it or in the "
                           f"folders {MAX_DEPTH} levels below)",
                           hint="point at the folder holding SKILL.md: PATH after the "
                                "repository (github:OWNER/REPO/PATH, URL//PATH)")
    if found == [""] or all_skills:
        return found
    leaves = [f.rsplit("/", 1)[-1] for f in found]
    by_name = dict(zip(leaves, found, strict=True)) | {f: f for f in found}
    if isinstance(source, McpSource):  # `NS/NAME`: the server's listing is asked for it
        by_name |= {s: s for s in skills if "/" in s}
    listed = ", ".join(leaf if leaves.count(leaf) == 1 else f  # a name two share: both whole
                       for leaf, f in zip(leaves[:20], found[:20], strict=True)) + (
        f" (+{len(found) - 20} more)" if len(found) > 20 else "")
    for name in skills:  # a name two folders go by names neither (a red-team note)
        alike = [f for f in found if f.rsplit("/", 1)[-1] == name and f != name]
        if len(alike) > 1 and isinstance(source, McpSource):  # two repos, one name
            raise ambiguous(source.server, source.key, name, alike)
        if len(alike) > 1:
            raise HubskillsError(f"{source.spec} holds {len(alike)} skills named {name}: "
                                 f"{', '.join(alike[:5])}; say which by its folder",
                                 hint=hint_command(command, source.spec, "--skill", alike[0]))
    unknown = [s for s in skills if s not in by_name]
    if not skills or unknown:
        what = f"has no skill {', '.join(unknown)}; it" if unknown else ""
        first = leaves[0] if leaves.count(leaves[0]) == 1 else found[0]
        hint = (hint_command("pull", source.spec, "--skill", first) + "  # or --all-skills"
                if command == "pull" else hint_command(command, source.at(found[0]).spec))
        raise HubskillsError(f"{source.spec} {what} holds {len(found)} skills: {listed}".replace(
            "  ", " "), hint=hint)
    return list(dict.fromkeys(by_name[s] for s in skills))


def _resolved_or_installed(store: SkillStore, repo: str, ref: str | None, *,
                           installed: Marker | None = None) -> Resolved:
    """`store.resolve`; when the registry is unavailable, our install if it is what `ref` asks.

    Offline, `latest` keeps what is installed (saying it could not check for a newer one); a
    version or sha prefix matching the install resolves to it.

    Raises:
        RegistryUnavailable: the registry cannot answer and the install is not what `ref` asks.
    """
    try:
        return store.resolve(repo, ref)
    except RegistryUnavailable:
        wanted = (ref or "latest").lower()
        if installed is None or not (
                wanted == "latest" or installed.sha.startswith(wanted)
                or (is_version(wanted) and normalize_version(wanted) == installed.version)):
            raise
    notes = (f"cannot check for a newer {repo} offline; keeping "
             f"{installed.version or installed.sha[:12]}",) if wanted == "latest" else ()
    return Resolved(repo, installed.sha, installed.version, ref or "latest", notes,
                    installed.registry)


@contextlib.contextmanager
def fetched(spec: str, store: SkillStore, *, limits: SizeLimits = STORE_LIMITS,
            mark: bool = False) -> Iterator[Path]:
    """A temp folder holding the files of `ns/name[@ref]`, removed on exit (for `scan REPO`,
    `eval REPO`); a look, not counted as a download.

    Paths, links and caps are checked as for a pull; nothing is scanned or refused for its
    content, and nothing is written outside the temp folder. With `mark` the folder gets an
    install marker, so it is placed as that version and treated as pulled (never run unsandboxed).
    """
    repo, ref = parse_spec(spec)
    resolved = store.resolve(repo, ref)
    with tempfile.TemporaryDirectory(prefix=STAGING_PREFIX) as tmp:
        folder = Path(tmp) / repo.split("/")[1]
        store.fetch(repo, resolved.sha, folder, limits=limits, count=False)
        check_staged(folder, limits)
        if mark:
            marker = Marker(repo, resolved.sha, content_hash(folder), resolved.version,
                            ref or "latest", resolved.registry or store.kind, now_iso())
            (folder / MARKER_FILE).write_text(marker.to_text(), encoding="utf-8")
        yield folder


@contextlib.contextmanager
def fetched_source(spec: str, *, command: str = "scan", limits: SizeLimits = STORE_LIMITS,
                   mark: bool = False, github_url: str | None = None) -> Iterator[Path]:
    """`fetched` for a git source: a temp folder holding the one skill it names.

    Raises:
        HubskillsError: the source holds several skills (the error names them) or none.
    """
    source = parse_source(spec)
    url = github_url or Settings.from_env().github_url
    with SourceStore(Path.cwd(), github_url=url, typed=source) as store, \
            tempfile.TemporaryDirectory(prefix=STAGING_PREFIX) as tmp:
        resolved = store.resolve(source.key, source.ref)
        key = source.at(pick(store.skills(source, resolved.sha), source, [], False,
                             command=command)[0]).key
        folder = Path(tmp) / folder_name(key)
        store.fetch(key, resolved.sha, folder, limits=limits)
        check_staged(folder, limits)
        if mark:
            marker = Marker(key, resolved.sha, content_hash(folder), None, resolved.ref,
                            resolved.registry or "git", now_iso())
            (folder / MARKER_FILE).write_text(marker.to_text(), encoding="utf-8")
        yield folder


def _find_installed(scope: Scope, repo: str, lock: Lockfile) -> tuple[str, Marker] | None:
    """(name, marker) of our install of `repo` in this scope, if any."""
    names = [e.name for e in lock.entries.values() if e.repo == repo]
    if scope.skills_dir.is_dir():
        names += sorted(p.name for p in scope.skills_dir.iterdir() if not p.name.startswith("."))
    for name in names:
        folder = scope.skills_dir / name
        marker = None if folder.is_symlink() else read_marker(folder)
        if marker and marker.repo == repo:
            return name, marker
    return None
