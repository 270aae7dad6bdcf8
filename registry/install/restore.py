"""The lockfile commands: `install` restores exactly what `skills.lock` pins, fetching every
missing skill in parallel; `update` moves installed skills to their newest version.

An entry pins the commit and the content hash, so `install` resolves nothing: the store fetches
that sha as pinned (on the Hub: one listing and one GET per file, no HEADs) and staging holds
the files to the pinned hash before anything is placed. Up to `WORKERS` skills are fetched at
once; their waits for the Hub overlap while the rest of their work takes turns.
"""

from __future__ import annotations

import shlex
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

from registry._turns import taking_turns
from registry.config import Settings
from registry.errors import HubskillsError, UnsafeSkill, hint_command
from registry.format.skill import content_hash
from registry.install.agents import Agent, check_folders, select_agents
from registry.install.audit import signed_as_pinned
from registry.install.deps import check_whole, update_target
from registry.install.installed import check_unpinned, managed, not_installed
from registry.install.lockfile import LockEntry, Lockfile, Scope, read_marker
from registry.install.place import (
    LocalChanges,
    PullResult,
    check_dest,
    install_staged,
    refresh,
)
from registry.install.pull import pull
from registry.install.signers import check_namespace_pin
from registry.install.source_store import SOURCE_REGISTRIES, SourceStore
from registry.install.sources import FolderSource
from registry.install.staging import Staged, discard, prepare
from registry.install.transaction import make_dirs, remove_empty
from registry.scan import STORE_LIMITS, SizeLimits
from registry.signing import SignatureRefused
from registry.signing.verify import same_signer
from registry.stores import Resolved, SkillStore

StoreFor = Callable[[str], SkillStore]
WORKERS = 16  # skills fetched at once by `install`: the one pool (a pinned skill's files are
# fetched one after another in its worker, so no pool is started per skill); the workers'
# waits for the Hub overlap, their CPU work takes turns (`registry/_turns.py`)


def install(project: Path, *, stores: StoreFor, frozen: bool = False, global_: bool = False,
            force: bool = False, allow_risky: bool = False, limits: SizeLimits = STORE_LIMITS,
            workers: int = WORKERS, require_signed: bool = False) -> list[PullResult]:
    """Restore exactly what `skills.lock` pins (by sha), fetching in parallel.

    Installs already at their pinned sha and unmodified are left alone (links are checked).
    With `frozen` the lock is never written and any mismatch fails: no lock, a locally
    modified install, a skill installed but not pinned, files that do not hash as pinned.
    With `require_signed` (or `HUBSKILLS_REQUIRE_SIGNED=1`) a lock pinning an unsigned skill
    is refused before anything is fetched.

    Raises:
        HubskillsError: no lock, a mismatch, or a refused skill (nothing of that skill placed).
    """
    scope, settings = Scope.of(project, global_), Settings.from_env()
    if require_signed or settings.require_signed:
        _check_signed(Lockfile.read(scope.lock_path))
    with SourceStore(scope.root, github_url=settings.github_url) as sources:
        for entry in Lockfile.read(scope.lock_path).entries.values():
            if entry.registry == "mcp" and entry.source and entry.source.get("uri"):
                sources.pin_uri(entry.repo, entry.sha, str(entry.source["uri"]))
        return _install(scope, _with_sources(stores, sources), frozen=frozen, force=force,
                        allow_risky=allow_risky, limits=limits, workers=workers,
                        home=settings.home)


def _check_signed(lock: Lockfile) -> None:
    unsigned = sorted(name for name, entry in lock.entries.items() if entry.signer is None)
    if unsigned:
        raise SignatureRefused(f"skills.lock pins {len(unsigned)} unsigned skill"
                               f"{'s' if len(unsigned) > 1 else ''} ({', '.join(unsigned[:5])})"
                               " and signatures are required; nothing was installed",
                               hint=_remove_each(unsigned) + "  # or install without "
                                    "--require-signed (HUBSKILLS_REQUIRE_SIGNED unset)")


def _remove_each(names: list[str]) -> str:
    """`hubskills remove NAME`, or a loop over every name when there are several."""
    if len(names) == 1:
        return hint_command("remove", names[0])
    return f"for name in {shlex.join(names)}; do hubskills remove \"$name\"; done"


def _with_sources(stores: StoreFor, sources: SourceStore) -> StoreFor:
    """`stores`, with the folder and git entries of the lock fetched from their sources."""
    return lambda name: cast(SkillStore, sources) if name in SOURCE_REGISTRIES else stores(name)


def _install(scope: Scope, stores: StoreFor, *, frozen: bool, force: bool, allow_risky: bool,
             limits: SizeLimits, workers: int, home: Path) -> list[PullResult]:
    """`install`'s work; `home`: whose anchors must vouch for an install already in place
    that the lock says is signed (a fetched one is checked as it is staged)."""
    lock = Lockfile.read(scope.lock_path)
    if not lock.exists:
        raise HubskillsError(f"no {scope.lock_path.name} in {scope.lock_path.parent.resolve()}",
                             hint="hubskills pull NS/NAME  # pins it in skills.lock")
    check_unpinned(scope, lock, frozen)
    check_whole(lock)  # every dependency pinned at a version its dependents accept
    entries = sorted(lock.entries.values(), key=lambda e: e.name)
    for entry in entries:  # before anything is fetched: "unsigned" where a signer is pinned
        check_namespace_pin(lock, entry)
    chosen = {e.name: select_agents(scope.root, list(e.agents) or None) for e in entries}
    check_folders(scope.root, [a for agents in chosen.values() for a in agents],
                  global_=scope.global_)
    results, todo = [], []
    for entry in entries:
        store, agents = stores(entry.registry), chosen[entry.name]
        folder = scope.skills_dir / entry.name
        marker = None if folder.is_symlink() else read_marker(folder)
        if marker and marker.repo == entry.repo and marker.sha == entry.sha:
            intact = content_hash(folder) == entry.content_hash
            if intact:
                _check_stored_hash(store, entry)
                if entry.signer is not None:  # the lock's signer is only its author's word
                    intact = _signed(folder, entry, home, force=force)
            if intact:
                try:
                    results.append(refresh(scope, entry.name, marker, agents, entry.copy, lock,
                                           [], dry_run=False, write_lock=False, force=force))
                except LocalChanges as err:  # an edited copy: the way out is install's own
                    err.hint = (f"copy your changes elsewhere, then hubskills install"
                                f"{' --frozen' if frozen else ''} --force (discards them)")
                    raise
                continue
            if not force:  # --force restores what the lock pins, --frozen or not
                raise HubskillsError(f"{folder} has local changes: it no longer hashes as "
                                     "skills.lock pins", hint="copy your changes elsewhere, "
                                     f"then hubskills install{' --frozen' if frozen else ''} "
                                     "--force (discards them)")
        check_dest(folder, entry.repo, force)
        todo.append((entry, store, agents))
    return results + _install_many(todo, scope, lock, force=force,
                                   allow_risky=allow_risky, limits=limits, workers=workers)


def _check_stored_hash(store: SkillStore, entry: LockEntry) -> None:
    """An install in place that hashes as the lock pins must hash as the registry's revision
    too, where the store says so without a request (a local registry: one file read); the
    lock's `content_hash` is only its author's word. The Hub and git sources are not asked:
    that would fetch for every skill that is up to date.

    Raises:
        UnsafeSkill: the registry's revision hashes otherwise.
    """
    stored = getattr(store, "revision_content_hash", None)
    want = stored(entry.repo, entry.sha) if callable(stored) else None
    if isinstance(want, str) and want != entry.content_hash:
        raise UnsafeSkill(f"skills.lock pins {entry.name} ({entry.repo} at {entry.sha[:12]}) "
                          f"with content hash {entry.content_hash[:19]}…, but the registry's "
                          f"revision hashes {want[:19]}…: the lock and the folder were edited",
                          hint=hint_command("pull", entry.repo, "--force")
                          + "  # places the registry's files again")


def _install_many(todo: list[tuple[LockEntry, SkillStore, list[Agent]]], scope: Scope,
                  lock: Lockfile, *, force: bool, allow_risky: bool,
                  limits: SizeLimits, workers: int) -> list[PullResult]:
    """Fetch and verify every entry in parallel, then place them one by one."""
    turns = threading.Lock()

    def fetch(item: tuple[LockEntry, SkillStore, list[Agent]]) -> Staged:
        entry, store, _ = item
        uri = (entry.source or {}).get("uri") if entry.registry == "mcp" else None
        resolved = Resolved(entry.repo, entry.sha, entry.version, str(uri or entry.sha))
        with taking_turns(turns):  # the waits for the Hub overlap, the rest takes turns
            staged = prepare(store, entry.repo, resolved, scope, limits=limits,
                             allow_risky=allow_risky, expected_hash=entry.content_hash)
        if staged.name != entry.name:
            discard(staged)
            raise UnsafeSkill(f"skills.lock pins {entry.repo} as '{entry.name}', but the skill "
                              f"is named '{staged.name}'", hint="check skills.lock")
        if entry.signer and same_signer(staged.signer, entry.signer) is None:  # who signed it
            discard(staged)
            now = f"signed by {staged.signer}" if staged.signer else "unsigned"
            raise UnsafeSkill(f"skills.lock pins {entry.name} as signed by {entry.signer}; the "
                              f"files are {now}",
                              hint=f"{hint_command('pull', entry.repo)}  # re-pins it, once you "
                                   "trust "
                                   "the new signer")
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
        for (entry, _store, agents), item in zip(todo, staged, strict=True):
            results.append(install_staged(item, scope, agents, lock, registry=entry.registry,
                                          copy=entry.copy, force=force, write_lock=False))
    finally:
        for item in staged:
            discard(item)
        remove_empty(created)
    return results


def _signed(folder: Path, entry: LockEntry, home: Path, *, force: bool) -> bool:
    """Whether `folder` (its files as pinned) carries the pinned signer's valid signature;
    with `force`, a folder whose signature fails (a file the content hash leaves out added
    since, a signature file edited) is placed again from its registry, as `verify-install`'s
    hint says, instead of refused (a team lead's walk: `install --force` kept refusing it).

    Raises:
        SignatureRefused: the signature fails, without `force`.
    """
    try:
        signed_as_pinned(folder, entry, home)
    except SignatureRefused:
        if not force:
            raise
        return False
    return True


def update(project: Path, name: str | None = None, *, stores: StoreFor, global_: bool = False,
           force: bool = False, allow_risky: bool = False, limits: SizeLimits = STORE_LIMITS,
           dry_run: bool = False, **choices: Any) -> list[PullResult]:
    """Move one installed skill (or all) to the newest version every installed skill that
    requires it accepts (its own dependencies follow, as a pull resolves them); each result
    lists changes. `choices`: `pull`'s signature and namespace options. With `dry_run`,
    nothing is written: the results say what would move (`pull`'s dry run).

    Raises:
        HubskillsError: `name` is not ours, or a pull is refused.
    """
    scope = Scope.of(project, global_)
    entries = managed(scope, Lockfile.read(scope.lock_path))
    if name is not None:
        entries = [e for e in entries if e.name == name]
        if not entries:
            raise not_installed("update", project, name, global_)
    results = []
    for entry in entries:
        spec, notes = _spec(entry, scope), list[str]()
        store = None if entry.source is not None else stores(entry.registry)
        if store is not None:  # what the skills that require it accept
            spec, notes = update_target(Lockfile.read(scope.lock_path), entry, store)
        try:
            result = pull(spec, project=project, store=store,
                          agents=list(entry.agents) or None, global_=global_, copy=entry.copy,
                          force=force, allow_risky=allow_risky, limits=limits,
                          dry_run=dry_run, **choices)
        except LocalChanges as err:  # a walk: it said "or pull with --force", no update's way
            err.hint = ("copy your changes elsewhere, then "
                        + hint_command("update", entry.name, *(["--global"] if global_ else []),
                                       "--force") + "  # discards them")
            raise
        result.notes[:0] = notes
        if entry.dependency and not dry_run:  # still there for the skills that require it
            _mark_dependency(scope, entry.name)
        results.append(result)
    return results


def _mark_dependency(scope: Scope, name: str) -> None:
    lock = Lockfile.read(scope.lock_path)
    if name in lock.entries and not lock.entries[name].dependency:
        lock.entries[name] = replace(lock.entries[name], dependency=True)
        lock.write()


def _spec(entry: LockEntry, scope: Scope) -> str:
    """What `update` pulls again: the repo, a git source at the ref it asked, or the folder."""
    if entry.source is None:
        return entry.repo
    if entry.registry == "folder":
        return str(FolderSource(entry.repo).resolved(scope.root))
    ref = entry.source.get("ref")
    return entry.repo + (f"@{ref}" if ref and ref != "HEAD" else "")
