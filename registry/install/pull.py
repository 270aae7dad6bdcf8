"""Pull skills into agent folders, pinned in `skills.lock`, safe against hostile repos.

A pull resolves `ns/name[@ref]` to a sha, fetches that revision into a sibling staging folder
(`.agents/skills/.hubskills-staging-*`), re-checks the staged files (no links, safe paths, caps),
loads SKILL.md (its `name` must follow the format's rule), verifies the content hash the registry
reports, scans, and only then swaps the folder into `.agents/skills/<name>` (old one renamed
aside, new one renamed in) and links it into each selected agent's folder. Any failure rolls
back every step, so the previous install stays exactly as it was. Folders we did not install
are never replaced without `force`; folders `hf skills` manages are never touched at all.
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from registry.errors import HubskillsError, UnsafeSkill
from registry.format.skill import content_hash
from registry.install.agents import (
    STAGING_PREFIX,
    Agent,
    LinkPlan,
    Placement,
    Transaction,
    link_folders,
    make_dirs,
    points_to,
    remove_empty,
    select_agents,
)
from registry.install.download import Source, default_source
from registry.install.installed import check_unpinned, managed
from registry.install.lockfile import (
    MARKER_FILE,
    LockEntry,
    Lockfile,
    Marker,
    Scope,
    is_hf_managed,
    now_iso,
    read_marker,
)
from registry.install.staging import Limits, Staged, changes, check_staged, discard, prepare
from registry.scan.scanner import Finding, summarize
from registry.stores import SkillStore
from registry.stores.base import Resolved, check_repo_id

log = logging.getLogger(__name__)
StoreFor = Callable[[str], SkillStore]


@dataclass
class PullResult:
    """What a pull did (or, with `dry_run`, would do)."""

    repo: str
    name: str
    sha: str
    version: str | None
    ref: str
    content_hash: str
    path: Path
    status: str  # installed | updated | up-to-date | dry-run
    registry: str
    placements: list[Placement] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    previous: Marker | None = None
    changed: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    lock_path: Path | None = None

    @property
    def scan_summary(self) -> dict[str, int]:
        """Findings per severity."""
        return summarize(self.findings)


def parse_spec(spec: str) -> tuple[str, str | None]:
    """`ns/name[@ref]` -> (repo, ref or None).

    Raises:
        HubskillsError: not a skill id.
    """
    repo, _, ref = spec.strip().partition("@")
    check_repo_id(repo)
    return repo, ref.strip() or None


def pull(spec: str, *, project: Path, store: SkillStore | Source,
         agents: str | Sequence[str] | None = None, all_agents: bool = False,
         global_: bool = False, copy: bool = False, force: bool = False, dry_run: bool = False,
         allow_risky: bool = False, limits: Limits | None = None) -> PullResult:
    """Install `ns/name[@ref]` into `.agents/skills/<name>` and the selected agents' folders.

    Args:
        spec: `ns/name`, `ns/name@v1.2.0`, `ns/name@1.2.0`, `ns/name@<sha or prefix>`.
        project: the project root (ignored for the target with `global_`, which uses HOME).
        store: the registry, or a `Source` over it.
        agents: `--agent` names (default: `.agents` plus the agents detected).
        all_agents: serve every known agent.
        global_: install into `~/.agents/skills` and the agents' user folders.
        copy: copy into agent folders instead of linking.
        force: replace folders we did not install, or discard local changes.
        dry_run: fetch, verify and scan in a temp folder; write nothing in the project.
        allow_risky: install despite high-severity findings (never despite secrets).
        limits: size and count caps.

    Raises:
        HubskillsError: (and subclasses) resolution, validation, scan or placement refused.
    """
    repo, ref = parse_spec(spec)
    scope = Scope.of(project, global_)
    chosen = select_agents(scope.root, agents, all_agents=all_agents)
    source = store if isinstance(store, Source) else default_source(store)
    lock = Lockfile.read(scope.lock_path)
    current = _find_installed(scope, repo, lock)
    resolved = source.resolve(repo, ref, installed=current[1] if current else None)
    if current and current[1].sha == resolved.sha and not force:
        folder = scope.skills_dir / current[0]
        if content_hash(folder) == current[1].content_hash:
            return _refresh(scope, current[0], current[1], chosen, copy, lock, source,
                            dry_run=dry_run)
    staged = prepare(source, repo, resolved, scope, limits=limits or Limits(),
                     allow_risky=allow_risky, dry_run=dry_run)
    try:
        return place(staged, scope, chosen, lock, registry=source.kind, copy=copy, force=force,
                     dry_run=dry_run)
    finally:
        discard(staged)


@contextlib.contextmanager
def fetched(spec: str, store: SkillStore | Source, *,
            limits: Limits | None = None) -> Iterator[Path]:
    """A temp folder holding the files of `ns/name[@ref]`, removed on exit (for `scan REPO`).

    Paths, links and caps are checked as for a pull; nothing is scanned or refused for its
    content, and nothing is written outside the temp folder.
    """
    repo, ref = parse_spec(spec)
    source = store if isinstance(store, Source) else default_source(store)
    resolved = source.resolve(repo, ref)
    with tempfile.TemporaryDirectory(prefix=STAGING_PREFIX) as tmp:
        folder = Path(tmp) / repo.split("/")[1]
        source.fetch(repo, resolved.sha, folder, limits or Limits())
        check_staged(folder, limits or Limits())
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


# --- placing ----------------------------------------------------------------------------------


def place(staged: Staged, scope: Scope, agents: list[Agent], lock: Lockfile, *, registry: str,
          copy: bool = False, force: bool = False, dry_run: bool = False,
          write_lock: bool = True) -> PullResult:
    """Swap the staged folder into place, link it for each agent, record it in the lock.

    Every conflict is found before anything is written; on any failure every step is undone.

    Raises:
        HubskillsError: a conflicting folder (not ours, `hf skills`', locally modified).
    """
    dest = scope.skills_dir / staged.name
    previous = _check_dest(dest, staged.repo, force)
    links = _plan_links(dest, scope, agents, staged.repo, copy=copy, force=force)
    resolved = staged.resolved
    result = PullResult(
        repo=staged.repo, name=staged.name, sha=resolved.sha,
        version=resolved.version or (previous.version if previous and
                                     previous.sha == resolved.sha else None),
        ref=resolved.ref, content_hash=staged.content_hash, path=dest,
        status="dry-run" if dry_run else ("updated" if previous else "installed"),
        registry=registry, findings=staged.findings, previous=previous,
        changed=changes(dest, staged.folder) if previous else [], notes=staged.notes,
        lock_path=scope.lock_path)
    result.placements = [Placement(dest, "files", ("agents",))] + [
        Placement(link.path, "copy" if copy else "symlink", link.agents) for link in links]
    if dry_run:
        return result
    marker = Marker(staged.repo, resolved.sha, staged.content_hash, result.version,
                    resolved.ref, registry, now_iso())
    (staged.folder / MARKER_FILE).write_text(marker.to_text(), encoding="utf-8")
    txn = Transaction()
    try:
        txn.swap(dest, staged.folder)
        result.placements[1:] = [txn.link(dest, link, copy) for link in links]
        if write_lock:
            _record(lock, result, agents, copy)
    except BaseException:
        txn.rollback()
        raise
    txn.finish()
    return result


def _record(lock: Lockfile, result: PullResult, agents: list[Agent], copy: bool) -> None:
    old = lock.entries.get(result.name)
    names = {a.name for a in agents} | (set(old.agents) if old and old.repo == result.repo
                                        else set())
    lock.entries[result.name] = LockEntry(result.name, result.repo, result.sha,
                                          result.content_hash, result.version, result.registry,
                                          tuple(sorted(names)), copy)
    lock.write()


def _refresh(scope: Scope, name: str, marker: Marker, agents: list[Agent], copy: bool,
             lock: Lockfile, source: Source, *, dry_run: bool,
             write_lock: bool = True) -> PullResult:
    """The revision is installed and intact: only add missing links and the lock entry."""
    dest = scope.skills_dir / name
    links = _plan_links(dest, scope, agents, marker.repo, copy=copy, force=False)
    result = PullResult(marker.repo, name, marker.sha, marker.version, marker.ref,
                        marker.content_hash, dest, "up-to-date", marker.registry,
                        previous=marker, notes=list(source.notes), lock_path=scope.lock_path)
    result.placements = [Placement(dest, "files", ("agents",))]
    if dry_run:
        result.placements += [Placement(x.path, "copy" if copy else "symlink", x.agents)
                              for x in links]
        return result
    txn = Transaction()
    try:
        result.placements += [txn.link(dest, link, copy) for link in links]
        entry = lock.entries.get(name)
        if write_lock and (entry is None or entry.sha != marker.sha or entry.copy != copy
                           or not {a.name for a in agents} <= set(entry.agents)):
            _record(lock, result, agents, copy)
    except BaseException:
        txn.rollback()
        raise
    txn.finish()
    return result


def _check_dest(dest: Path, repo: str, force: bool) -> Marker | None:
    """The marker of our install at `dest` (None when free); refuse what we must not replace."""
    if not (dest.exists() or dest.is_symlink()):
        return None
    if not dest.is_symlink() and is_hf_managed(dest):
        raise HubskillsError(f"{dest} is managed by `hf skills`; hubskills never touches it",
                             hint="remove it with hf skills first, or keep that version")
    marker = None if dest.is_symlink() or not dest.is_dir() else read_marker(dest)
    if marker is None:
        if force:
            return None
        raise HubskillsError(f"{dest} exists and was not installed by hubskills",
                             hint="move it away, or pull again with --force to replace it")
    if marker.repo != repo and not force:
        raise HubskillsError(f"{dest} holds {marker.repo}; {repo} has the same skill name",
                             hint=f"hubskills remove {dest.name} first, or pull with --force")
    if content_hash(dest) != marker.content_hash and not force:
        raise HubskillsError(f"{dest} has local changes that this pull would discard",
                             hint="copy your changes elsewhere, or pull with --force")
    return marker


def _plan_links(dest: Path, scope: Scope, agents: list[Agent], repo: str, *, copy: bool,
                force: bool) -> list[LinkPlan]:
    plans = []
    for folder, names in link_folders(agents, scope.root, global_=scope.global_).items():
        path = folder / dest.name
        action = "create"
        if path.is_symlink():
            action = "keep" if points_to(path, dest) and not copy else "replace"
            if not points_to(path, dest) and not force:
                raise HubskillsError(f"{path} links to {os.readlink(path)}, not to {dest}",
                                     hint="move it away, or pull again with --force")
        elif path.exists():
            marker = read_marker(path) if path.is_dir() else None
            if path.is_dir() and is_hf_managed(path):
                raise HubskillsError(f"{path} is managed by `hf skills`; hubskills never "
                                     "touches it", hint="pick other agents with --agent")
            if (marker is None or marker.repo != repo) and not force:
                raise HubskillsError(f"{path} exists and was not placed there by hubskills for "
                                     f"{repo}", hint="move it away, or pull with --force")
            action = "replace"
        plans.append(LinkPlan(path, tuple(names), action))
    return plans


# --- the lockfile commands --------------------------------------------------------------------


def install(project: Path, *, stores: StoreFor, frozen: bool = False, global_: bool = False,
            force: bool = False, allow_risky: bool = False, limits: Limits | None = None,
            workers: int = 8) -> list[PullResult]:
    """Restore exactly what `skills.lock` pins (by sha), fetching in parallel.

    Installs already at their pinned sha and unmodified are left alone (links are checked).
    With `frozen` the lock is never written and any mismatch fails: no lock, a locally
    modified install, a skill installed but not pinned, files that do not hash as pinned.

    Raises:
        HubskillsError: no lock, a mismatch, or a refused skill (nothing of that skill placed).
    """
    scope = Scope.of(project, global_)
    lock = Lockfile.read(scope.lock_path)
    if not lock.exists:
        raise HubskillsError(f"no {scope.lock_path.name} at {scope.lock_path.parent}",
                             hint="hubskills pull NS/NAME  # pins it in skills.lock")
    check_unpinned(scope, lock, frozen)
    sources: dict[str, Source] = {}
    results, todo = [], []
    for entry in sorted(lock.entries.values(), key=lambda e: e.name):
        source = sources.setdefault(entry.registry, default_source(stores(entry.registry)))
        agents = select_agents(scope.root, list(entry.agents) or None)
        folder = scope.skills_dir / entry.name
        marker = None if folder.is_symlink() else read_marker(folder)
        if marker and marker.repo == entry.repo and marker.sha == entry.sha:
            intact = content_hash(folder) == entry.content_hash
            if intact:
                results.append(_refresh(scope, entry.name, marker, agents, entry.copy, lock,
                                        source, dry_run=False, write_lock=False))
                continue
            if frozen or not force:
                raise HubskillsError(f"{folder} has local changes: it no longer hashes as "
                                     "skills.lock pins", hint="copy your changes elsewhere, "
                                     "then hubskills install --force (discards them)")
        _check_dest(folder, entry.repo, force and not frozen)
        todo.append((entry, source, agents))
    return results + _install_many(todo, scope, lock, frozen=frozen, force=force,
                                   allow_risky=allow_risky, limits=limits or Limits(),
                                   workers=workers)


def _install_many(todo: list[tuple[LockEntry, Source, list[Agent]]], scope: Scope,
                  lock: Lockfile, *, frozen: bool, force: bool, allow_risky: bool,
                  limits: Limits, workers: int) -> list[PullResult]:
    """Fetch and verify every entry in parallel, then place them one by one."""
    def fetch(item: tuple[LockEntry, Source, list[Agent]]) -> Staged:
        entry, source, _ = item
        resolved = Resolved(entry.repo, entry.sha, entry.version, entry.sha)
        staged = prepare(source, entry.repo, resolved, scope, limits=limits,
                         allow_risky=allow_risky, expected_hash=entry.content_hash)
        if staged.name != entry.name:
            discard(staged)
            raise UnsafeSkill(f"skills.lock pins {entry.repo} as '{entry.name}', but the skill "
                              f"is named '{staged.name}'", hint="check skills.lock")
        return staged

    if not todo:
        return []
    created: list[Path] = []
    make_dirs(scope.skills_dir, created)  # once, before the threads stage inside it
    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(todo)))) as pool:
        futures = [pool.submit(fetch, item) for item in todo]
    staged = [f.result() for f in futures if f.exception() is None]
    failed = next((f.exception() for f in futures if f.exception() is not None), None)
    results = []
    try:
        if failed is not None:
            raise failed
        for (entry, _source, agents), item in zip(todo, staged, strict=True):
            results.append(place(item, scope, agents, lock, registry=entry.registry,
                                 copy=entry.copy, force=force and not frozen, write_lock=False))
    finally:
        for item in staged:
            discard(item)
        remove_empty(created)
    return results


def update(project: Path, name: str | None = None, *, stores: StoreFor, global_: bool = False,
           force: bool = False, allow_risky: bool = False,
           limits: Limits | None = None) -> list[PullResult]:
    """Move one installed skill (or all) to the newest version; each result lists changes.

    Raises:
        HubskillsError: `name` is not ours, or a pull is refused.
    """
    scope = Scope.of(project, global_)
    entries = managed(scope, Lockfile.read(scope.lock_path))
    if name is not None:
        entries = [e for e in entries if e.name == name]
        if not entries:
            raise HubskillsError(f"'{name}' is not installed by hubskills in "
                                 f"{scope.skills_dir}", hint="hubskills list")
    return [pull(entry.repo, project=project, store=stores(entry.registry),
                 agents=list(entry.agents) or None, global_=global_, copy=entry.copy,
                 force=force, allow_risky=allow_risky, limits=limits) for entry in entries]
