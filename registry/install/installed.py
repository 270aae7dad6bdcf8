"""What is installed where: `list_installed`, `remove`, and the views `install`/`update` use.

`list_installed` walks every agent folder of the project and of HOME and reports each skill
folder: ours (with up-to-date / outdated / locally modified), `hf skills`' and others; it never
modifies anything. `remove` takes away only what hubskills installed, links and copies included.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from registry.errors import HubskillsError
from registry.format.skill import NAME_RE, content_hash
from registry.install import made
from registry.install.agents import all_folders, check_inside
from registry.install.deps import dependents, unneeded
from registry.install.lockfile import LockEntry, Lockfile, Scope, is_hf_managed, read_marker
from registry.install.place import LocalChanges
from registry.install.transaction import Transaction, points_to
from registry.stores import Resolved, SkillStore, VersionInfo

StoreFor = Callable[[str], SkillStore]


def check_unpinned(scope: Scope, lock: Lockfile, frozen: bool) -> None:
    """With `frozen`, refuse our installs that the lock does not pin."""
    if not frozen or not scope.skills_dir.is_dir():
        return
    extra = sorted(p.name for p in scope.skills_dir.iterdir()
                   if not p.name.startswith(".") and p.name not in lock.entries
                   and not p.is_symlink() and read_marker(p) is not None)
    if extra:
        raise HubskillsError(f"installed but not pinned in skills.lock: {', '.join(extra)}",
                             hint="commit the skills.lock that pull wrote, or hubskills "
                                  f"remove {extra[0]}")


def managed(scope: Scope, lock: Lockfile) -> list[LockEntry]:
    """Our installs in this scope: the lock's entries, plus marked folders it lacks."""
    entries = dict(lock.entries)
    if scope.skills_dir.is_dir():
        for folder in sorted(scope.skills_dir.iterdir()):
            marker = None if folder.is_symlink() else read_marker(folder)
            if marker and folder.name not in entries and not folder.name.startswith("."):
                entries[folder.name] = LockEntry(folder.name, marker.repo, marker.sha,
                                                 marker.content_hash, marker.version,
                                                 marker.registry)
    return [entries[name] for name in sorted(entries)]


# --- what is installed where ------------------------------------------------------------------

LatestFn = Callable[[str, str], Resolved | None]


@dataclass
class Installed:
    """One skill folder found in an agent folder.

    `kind` is `hubskills` (ours), `hf-skills` or `unmanaged`; `state`, for ours, is
    `up-to-date`, `outdated`, `held` (a newer version exists, which a skill requiring it does
    not accept: `held_by` says which and how), `modified` or `unchecked` (the registry could
    not be asked). `seen_in` lists the agent folders that link to (or hold a copy of) our
    folder.
    """

    name: str
    scope: str
    path: Path
    kind: str
    state: str
    repo: str | None = None
    version: str | None = None
    sha: str | None = None
    latest: str | None = None
    pinned: bool = False
    seen_in: list[str] = field(default_factory=list)
    held_by: str | None = None  # `local/b needs local/a@^0.1`, when `held`

    def to_json(self) -> dict[str, Any]:
        """JSON-ready fields (paths as strings)."""
        return {**asdict(self), "path": str(self.path)}


def list_installed(project: Path, *, home: Path | None = None,
                   latest: LatestFn | None = None) -> list[Installed]:
    """Every skill folder in the agent folders of the project and of HOME, ours or not.

    `latest(repo, registry)` tells the newest revision (None when unknown); without it,
    our installs are `unchecked` unless locally modified. Nothing is ever modified.
    """
    home = Path.home() if home is None else home
    scopes = [("project", Scope(Path(project))), ("user", Scope(home, True))]
    if Path(project).resolve() == home.resolve():
        scopes = scopes[1:]
    found: list[Installed] = []
    locks: dict[str, Lockfile] = {}
    for label, scope in scopes:
        locks[label] = Lockfile.read(scope.lock_path)
        pinned = set(locks[label].entries)
        mains: dict[str, Installed] = {}
        for folder in all_folders(scope.root, global_=scope.global_):
            for path in sorted(folder.iterdir()) if folder.is_dir() else []:
                item = _classify(path, scope, label, mains)
                if item is not None:
                    item.pinned = item.name in pinned and item.kind == "hubskills"
                    found.append(item)
    for item in found:
        if item.kind == "hubskills" and item.state == "unchecked" and latest is not None:
            newest = latest(item.repo or "", _registry(item))
            if newest is not None:
                item.latest = newest.version or newest.sha[:12]
                item.state = "up-to-date" if newest.sha == item.sha else "outdated"
                if item.state == "outdated":
                    item.held_by = _holding(locks[item.scope], item, newest.version, latest)
                    item.state = "held" if item.held_by else item.state
    return found


def _holding(lock: Lockfile, item: Installed, newest: str | None,
             latest: LatestFn) -> str | None:
    """What keeps `item` from its `newest` version: the installed skills requiring it that do
    not accept that version, when none of the versions newer than `item`'s is one they all
    accept (`update` would move it there: it is outdated, not held); None when nothing does."""
    wants = dependents(lock, item.repo or "", besides={item.name})
    held = [f"{entry.repo} needs {req}" for entry, req in wants
            if not req.constraint.allows(newest)]
    versions = latest.versions(item.repo or "", _registry(item)) \
        if isinstance(latest, LatestChecker) else None
    newer = list(itertools.takewhile(lambda v: v.sha != item.sha, versions or []))
    if any(all(req.constraint.allows(v.version) for _, req in wants) for v in newer):
        return None
    return ", ".join(held) or None


def _registry(item: Installed) -> str:
    marker = read_marker(item.path)
    return marker.registry if marker else "local"


def _classify(path: Path, scope: Scope, label: str,
              mains: dict[str, Installed]) -> Installed | None:
    """An `Installed` for `path`, or None when it only adds to a main folder's `seen_in`.

    Links to a folder of `.agents/skills` and our copies of it count as places it is seen in.
    """
    if path.name.startswith("."):
        return None
    main = scope.skills_dir / path.name
    where = str(path.parent)
    if path.is_symlink():
        if points_to(path, main) and path.name in mains:
            mains[path.name].seen_in.append(where)
            return None
        return Installed(path.name, label, path, "unmanaged", f"link to {os.readlink(path)}",
                         seen_in=[where])
    if not path.is_dir():
        return None
    item = _item(path, label, where, mains.get(path.name) if path != main else None)
    if item is not None and path == main:
        mains[path.name] = item
    return item


def _item(path: Path, label: str, where: str, main: Installed | None) -> Installed | None:
    if is_hf_managed(path):
        return Installed(path.name, label, path, "hf-skills", "managed by hf skills",
                         seen_in=[where])
    marker = read_marker(path)
    if marker is None:
        if not (path / "SKILL.md").is_file():
            return None
        return Installed(path.name, label, path, "unmanaged", "unmanaged", seen_in=[where])
    if main is not None and main.kind == "hubskills" and main.repo == marker.repo:
        main.seen_in.append(f"{where} (copy)")
        return None
    state = "modified" if content_hash(path) != marker.content_hash else "unchecked"
    return Installed(path.name, label, path, "hubskills", state, marker.repo, marker.version,
                     marker.sha, seen_in=[where])


@dataclass
class Removed:
    """What `remove` took away: the folder, its links and copies, and the lock entry; `also`
    the dependencies nothing needs any more (removed too), `kept` those still needed."""

    name: str
    repo: str | None
    paths: list[Path]
    lock_updated: bool
    also: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    folders: list[Path] = field(default_factory=list)  # agent folders a pull made, now empty


def remove(project: Path, name: str, *, global_: bool = False, force: bool = False) -> Removed:
    """Remove a skill we installed (`name`, or the `ns/name` skills.lock records it under):
    its folder, the links and copies to it, its lock entry, and the dependencies it alone
    needed (installed only as dependencies).

    Raises:
        HubskillsError: the folder is not ours (unmanaged, or `hf skills`'), or not there; or
            another installed skill requires it, or it (or a copy of it) has local edits
            (`LocalChanges`), unless `force`.
    """
    scope = Scope.of(project, global_)
    lock = Lockfile.read(scope.lock_path)
    if not NAME_RE.match(name) or len(name) > 64:  # the skill's id names it too (a walk)
        by_repo = next((e.name for e in lock.entries.values() if e.repo == name), None)
        if by_repo is None:
            raise HubskillsError(f"'{name}' is not a skill name", hint="hubskills list")
        name = by_repo
    dest = scope.skills_dir / name
    check_inside(scope.skills_dir, scope.root)
    present = dest.exists() or dest.is_symlink()
    if present and not dest.is_symlink() and is_hf_managed(dest):
        raise HubskillsError(f"{dest} is managed by `hf skills`; hubskills never touches it",
                             hint="remove it with the hf CLI")
    marker = None if not present or dest.is_symlink() else read_marker(dest)
    if present and marker is None:
        raise HubskillsError(f"{dest} was not installed by hubskills; it is left alone",
                             hint="delete it yourself if you no longer want it")
    entry = lock.entries.get(name)
    needed = dependents(lock, entry.repo, besides={name}) if entry else []
    if needed and not force:
        who = ", ".join(f"{e.repo} (requires {req})" for e, req in needed)
        raise HubskillsError(f"{name} stays: installed skills need it: {who}",
                             hint=f"hubskills remove {needed[0][0].name}  # removes what only "
                                  f"it needed, or hubskills remove {name} --force")
    also, kept = unneeded(lock, {name}) if entry else ([], [])
    lock.entries.pop(name, None)
    if not present and entry is None:
        elsewhere = [f / name for f in all_folders(scope.root, global_=global_)
                     if (f / name).exists() or (f / name).is_symlink()]
        if elsewhere:
            raise HubskillsError(f"{elsewhere[0]} was not installed by hubskills; it is left "
                                 "alone", hint="delete it yourself if you no longer want it")
        raise not_installed("remove", project, name, global_)
    repo = marker.repo if marker else entry.repo if entry else None
    paths = [p for p in _placed(scope, dest, repo)] + ([dest] if present else [])
    for other in also:  # dependencies only `name` needed: theirs, as `remove` would find them
        gone = lock.entries.pop(other)
        folder = scope.skills_dir / other
        mine = not folder.is_symlink() and getattr(read_marker(folder), "repo", None) == gone.repo
        paths += _placed(scope, folder, gone.repo) + ([folder] if mine else [])
    _check_unedited(name, paths, force)
    with Transaction() as txn:
        for path in paths:
            txn.remove(path)
        lock_updated = lock.write() if lock.exists else False
    return Removed(name, repo, paths, lock_updated, also, kept, made.prune(scope.root))


def _check_unedited(name: str, paths: list[Path], force: bool) -> None:
    """Refuse to delete an install or copy whose files no longer hash as its marker records
    (local edits), as `pull`, `update` and `install` refuse to discard them, unless `force`.

    Raises:
        LocalChanges: naming the edited folders.
    """
    edited = [str(p) for p in paths if not force and not p.is_symlink() and p.is_dir()
              and getattr(read_marker(p), "content_hash", None) != content_hash(p)]
    if edited:
        raise LocalChanges(f"{', '.join(edited[:3])} {'has' if len(edited) == 1 else 'have'} "
                           "local changes that removing it would discard",
                           hint=f"copy your changes elsewhere, then hubskills remove {name} "
                                "--force  # discards them")


def not_installed(verb: str, project: Path, name: str, global_: bool) -> HubskillsError:
    """`name` is not installed in the scope: said with the closest installed name when it
    looks like a typo of one (a walk: `remove csv-clean` for `csv-cleaning` hinted `list`),
    else hinting the other scope or `list` (`other_scope_hint`)."""
    scope = Scope.of(project, global_)
    hint = other_scope_hint(verb, project, name, global_)
    by = " by hubskills" if verb == "update" else ""  # a folder of another may be there
    message = f"'{name}' is not installed{by} in {scope.skills_dir}"
    close = closest_installed(scope, name) if hint == "hubskills list" else None
    if close is not None:
        message += f" (did you mean '{close}'?)"
        hint = " ".join(["hubskills", verb, close, *(["--global"] if global_ else [])])
    return HubskillsError(message, hint=hint)


def closest_installed(scope: Scope, name: str) -> str | None:
    """The name of our install in `scope` closest to a mistyped `name`, if one is close."""
    import difflib

    names = [entry.name for entry in managed(scope, Lockfile.read(scope.lock_path))]
    return next(iter(difflib.get_close_matches(name, names, n=1, cutoff=0.6)), None)


def other_scope_hint(verb: str, project: Path, name: str, global_: bool) -> str:
    """`hubskills remove NAME --global` (`verb`: remove, update) when the skill is installed
    for the user, not in the project (or the other way round): `list` shows both, and the
    plain hint led back to it."""
    other = Scope.of(project, not global_)
    if (other.skills_dir / name).exists() or name in Lockfile.read(other.lock_path).entries:
        return f"hubskills {verb} {name}" + ("" if global_ else " --global") + (
            "  # it is installed in your project" if global_ else "  # it is installed for you")
    return "hubskills list"


def _placed(scope: Scope, dest: Path, repo: str | None) -> list[Path]:
    """Links to `dest` and our copies of `repo` in every agent folder of the scope."""
    found = []
    for folder in all_folders(scope.root, global_=scope.global_):
        path = folder / dest.name
        if path == dest or not (path.exists() or path.is_symlink()):
            continue
        check_inside(folder, scope.root)
        if path.is_symlink():
            if points_to(path, dest):
                found.append(path)
        elif path.is_dir() and not is_hf_managed(path):
            marker = read_marker(path)
            if marker is not None and marker.repo == repo:
                found.append(path)
    return found


@dataclass(frozen=True)
class LatestChecker:
    """A `latest(repo, registry)` for `list_installed` over the stores (None when offline or
    unknown), which can also list a repo's published versions (to tell `held` from
    `outdated`)."""

    stores: StoreFor

    def __call__(self, repo: str, registry: str) -> Resolved | None:
        """The newest revision of `repo`, or None."""
        try:
            return self.stores(registry).resolve(repo, None)
        except HubskillsError:
            return None

    def versions(self, repo: str, registry: str) -> list[VersionInfo] | None:
        """The published versions of `repo`, newest first, or None."""
        try:
            return self.stores(registry).versions(repo)
        except HubskillsError:
            return None


def latest_checker(stores: StoreFor) -> LatestChecker:
    """A `latest(repo, registry)` for `list_installed`: None when offline or unknown."""
    return LatestChecker(stores)
