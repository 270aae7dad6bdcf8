"""The installed dependency graph as `skills.lock` records it: who needs a skill, what a removal
leaves unneeded, what versions an update may move to, and the tree `list --tree` shows.

Each lock entry keeps its skill's `requires` (as written) and whether it was installed only as a
dependency; edges go from an entry to the entries whose `repo` its references name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from registry.errors import HubskillsError, hint_command
from registry.format.requires import Requirement, parse_requirement
from registry.install.lockfile import LockEntry, Lockfile
from registry.stores import SkillStore


def read_requires(entries: tuple[str, ...] | list[str], where: str) -> tuple[Requirement, ...]:
    """References as written in a lock entry or a staged skill, parsed.

    Raises:
        HubskillsError: one no longer parses (an edited lock), naming `where`.
    """
    try:
        return tuple(parse_requirement(entry) for entry in entries)
    except HubskillsError as err:
        raise HubskillsError(f"{where}: {err.message}", hint=err.hint) from err


def _needs(entry: LockEntry) -> tuple[Requirement, ...]:
    return read_requires(entry.requires, f"skills.lock ({entry.name})")


def dependents(lock: Lockfile, repo: str, *, besides: set[str] | frozenset[str] = frozenset(),
               ) -> list[tuple[LockEntry, Requirement]]:
    """The entries (other than `besides`, by name) whose requires name `repo`, with how."""
    return [(e, req) for e in lock.entries.values() if e.name not in besides
            for req in _needs(e) if req.repo == repo]


def check_whole(lock: Lockfile) -> None:
    """Every reference a pinned skill requires is pinned too, at a version it accepts.

    Raises:
        HubskillsError: naming the skill, what it requires and what the lock pins instead.
    """
    for entry, why in unmet(lock)[:1]:
        raise HubskillsError(f"skills.lock pins {entry.repo}, which {why}; the graph is not "
                             "whole", hint=f"{hint_command('pull', entry.repo)}  # resolves its "
                                           "dependencies again and re-pins them")


def unmet(lock: Lockfile) -> list[tuple[LockEntry, str]]:
    """Each pinned skill with a requirement the lock does not meet, and what is wrong
    (`requires local/b@^0.1, and does not pin it`), by name."""
    by_repo = {e.repo: e for e in lock.entries.values()}
    found = []
    for entry in sorted(lock.entries.values(), key=lambda e: e.name):
        for req in _needs(entry):
            have = by_repo.get(req.repo)
            if have is None or not req.constraint.allows(have.version):
                pinned = f"pins {have.version or have.sha[:12]}" if have else "does not pin it"
                found.append((entry, f"requires {req}, and {pinned}"))
    return found


def unneeded(lock: Lockfile, gone: set[str]) -> tuple[list[str], list[str]]:
    """After removing the entries named `gone`: the dependencies no remaining skill needs (to
    remove with them), and those another skill still needs (kept, as `name (needed by x)`)."""
    by_repo = {e.repo: e for e in lock.entries.values()}
    removing, kept, todo = set(gone), [], [lock.entries[n] for n in gone if n in lock.entries]
    while todo:
        entry = todo.pop()
        for req in _needs(entry):
            child = by_repo.get(req.repo)
            if child is None or child.name in removing:
                continue
            still = dependents(lock, child.repo, besides=removing)
            if still or not child.dependency:
                why = ", ".join(sorted({e.repo for e, _ in still})) or "you asked for it by name"
                kept.append(f"{child.name} (needed by {why})" if still
                            else f"{child.name} ({why})")
                continue
            removing.add(child.name)
            todo.append(child)
    return sorted(removing - set(gone)), sorted(set(kept))


def update_target(lock: Lockfile, entry: LockEntry, store: SkillStore) -> tuple[str, list[str]]:
    """The spec `update` pulls for a registry entry: its newest version that every installed
    skill requiring it accepts (`ns/name@X.Y.Z`), and notes when that is not the newest.

    Raises:
        HubskillsError: the installed skills that require it agree on no published version.
    """
    wants = dependents(lock, entry.repo, besides={entry.name})
    if all(req.constraint.any for _, req in wants):
        return entry.repo, []
    versions = store.versions(entry.repo)
    fits = [v for v in versions if all(req.constraint.allows(v.version) for _, req in wants)]
    asked = ", ".join(f"{e.repo} needs {req}" for e, req in wants if not req.constraint.any)
    if not fits:
        raise HubskillsError(f"no version of {entry.repo} satisfies what installed skills "
                             f"need ({asked})", hint=f"hubskills versions {entry.repo}")
    notes = [] if not versions or fits[0].sha == versions[0].sha else [
        f"{entry.repo}: keeping to {fits[0].version}, not the newest {versions[0].version}: "
        f"{asked}"]
    return f"{entry.repo}@{fits[0].version}", notes


@dataclass
class TreeNode:
    """One installed skill in `list --tree`: its entry, how it was asked for, its children."""

    name: str
    repo: str
    version: str | None
    sha: str
    asked: str = ""  # the reference that required it (`acme/b@^1`), "" for a root
    children: list[TreeNode] = field(default_factory=list)
    missing: bool = False  # required, not installed
    shown_above: bool = False  # met again: its requirements are listed where first met

    def to_json(self) -> dict[str, Any]:
        """Nested JSON."""
        data = {"name": self.name, "repo": self.repo, "version": self.version, "sha": self.sha,
                "required_as": self.asked or None, "missing": self.missing,
                "requires": [c.to_json() for c in self.children]}
        return data | {"shown_above": True} if self.shown_above else data


def tree(lock: Lockfile) -> list[TreeNode]:
    """The installed graph from its roots (skills asked for by name, and dependencies nothing
    needs any more), a cycle cut. A skill is listed wherever it is required, but its own
    requirements only where it is first met (depth first, as printed); met again, it is one
    node marked `shown_above`: so the tree holds a node per edge at most. (Listing each
    subtree again made a lock of 32 rows of diamonds, which any cloned project may hold, 2**33
    nodes: `list --tree` never returned.)"""
    by_repo = {e.repo: e for e in lock.entries.values()}
    expanded: set[str] = set()

    def node(entry: LockEntry, asked: str, path: tuple[str, ...]) -> TreeNode:
        item = TreeNode(entry.name, entry.repo, entry.version, entry.sha, asked)
        needs = _needs(entry)
        if entry.repo in expanded and needs:
            item.shown_above = True
            return item
        expanded.add(entry.repo)
        for req in needs:
            child = by_repo.get(req.repo)
            if child is None:
                item.children.append(TreeNode(req.name, req.repo, None, "", str(req),
                                              missing=True))
            elif child.repo not in path:
                item.children.append(node(child, str(req), (*path, child.repo)))
        return item

    roots = [e for e in lock.entries.values()
             if not e.dependency or not dependents(lock, e.repo, besides={e.name})]
    return [node(e, "", (e.repo,)) for e in sorted(roots, key=lambda e: e.name)]


def render_tree(nodes: list[TreeNode]) -> list[str]:
    """Lines with `├──`/`└──` branches: `name version  (repo, required as ns/x@^1)`."""
    lines: list[str] = []

    def walk(item: TreeNode, prefix: str, last: bool, top: bool) -> None:
        label = f"{item.name} {item.version or item.sha[:12]}".rstrip()
        extra = "not installed" if item.missing else item.repo
        if item.asked and item.asked != item.repo:
            extra += f", as {item.asked}"
        if item.shown_above:
            extra += "; requirements shown above"
        lines.append(("" if top else prefix + ("└── " if last else "├── "))
                     + f"{label}  ({extra})")
        inner = "" if top else prefix + ("    " if last else "│   ")
        for i, child in enumerate(item.children):
            walk(child, inner, i == len(item.children) - 1, False)

    for item in nodes:
        walk(item, "", True, True)
    return lines
