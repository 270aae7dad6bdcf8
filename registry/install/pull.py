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
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from registry.errors import HubskillsError, RegistryUnavailable
from registry.format.skill import content_hash
from registry.install.agents import STAGING_PREFIX, check_folders, select_agents
from registry.install.lockfile import (
    MARKER_FILE,
    Lockfile,
    Marker,
    Scope,
    now_iso,
    read_marker,
)
from registry.install.place import PullResult, place, refresh
from registry.install.staging import check_staged, discard, prepare
from registry.scan import STORE_LIMITS, SizeLimits
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


def pull(spec: str, *, project: Path, store: SkillStore,
         agents: str | Sequence[str] | None = None, all_agents: bool = False,
         global_: bool = False, copy: bool = False, force: bool = False, dry_run: bool = False,
         allow_risky: bool = False, limits: SizeLimits = STORE_LIMITS) -> PullResult:
    """Install `ns/name[@ref]` into `.agents/skills/<name>` and the selected agents' folders.

    Args:
        spec: `ns/name`, `ns/name@v1.2.0`, `ns/name@1.2.0`, `ns/name@<sha or prefix>`.
        project: the project root (ignored for the target with `global_`, which uses HOME).
        store: the registry (a `FallbackStore` to pull offline from another one).
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
    chosen = select_agents(scope.root, agents, all_agents=all_agents, global_=scope.global_)
    check_folders(scope.root, chosen, global_=scope.global_)
    lock = Lockfile.read(scope.lock_path)
    current = _find_installed(scope, repo, lock)
    resolved = resolve(store, repo, ref, installed=current[1] if current else None)
    if current and current[1].sha == resolved.sha and not force:
        folder = scope.skills_dir / current[0]
        if content_hash(folder) == current[1].content_hash:
            return refresh(scope, current[0], current[1], chosen, copy, lock,
                            list(resolved.notes), dry_run=dry_run)
    staged = prepare(store, repo, resolved, scope, limits=limits, allow_risky=allow_risky,
                     dry_run=dry_run)
    try:
        return place(staged, scope, chosen, lock, registry=resolved.registry or store.kind,
                     copy=copy, force=force, dry_run=dry_run)
    finally:
        discard(staged)


def resolve(store: SkillStore, repo: str, ref: str | None, *,
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
