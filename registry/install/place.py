"""Installing a staged revision: swap it into `.agents/skills/<name>`, link it for each agent,
record it in `skills.lock` and the install marker. Every conflict is found before anything is
written; any failure rolls back every step, so the previous install stays exactly as it was.
Folders we did not install are never replaced without `force`; folders `hf skills` manages are
never touched at all.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from registry.errors import HubskillsError
from registry.format.skill import content_hash
from registry.install import made
from registry.install.agents import AGENTS, Agent, AgentLink, link_folders
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
from registry.install.signers import namespace_pin
from registry.install.sources import source_entry
from registry.install.staging import Staged, changes, file_digests
from registry.install.transaction import LinkPlan, Transaction, points_to
from registry.scan import Finding, summarize


class LocalChanges(HubskillsError):
    """An install whose files differ from what its marker records: a pull would discard them."""


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
    status: str  # installed | updated | restored (same revision) | up-to-date | dry-run
    registry: str
    placements: list[AgentLink] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    previous: Marker | None = None
    changed: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    lock_path: Path | None = None
    signer: str | None = None  # who signed it (skill.oms.sig verified), None when unsigned
    requires: list[str] = field(default_factory=list)  # its metadata.requires
    dependency: bool = False  # placed because another skill of the pull requires it
    dependencies: list[PullResult] = field(default_factory=list)  # the rest of its graph
    linked: list[Path] = field(default_factory=list)  # links an up-to-date pull added (or would)
    dry_run: bool = False  # nothing was written (an install's status says it: "dry-run")

    @property
    def scan_summary(self) -> dict[str, int]:
        """Findings per severity."""
        return summarize(self.findings)


def install_staged(staged: Staged, scope: Scope, agents: list[Agent], lock: Lockfile, *,
                   registry: str, copy: bool = False, force: bool = False, dry_run: bool = False,
                   write_lock: bool = True, txn: Transaction | None = None) -> PullResult:
    """Swap the staged folder into place, link it for each agent, record it in the lock.

    Every conflict is found before anything is written; on any failure every step is undone
    (with `txn`, a graph's transaction, the caller undoes it with the rest).

    Raises:
        HubskillsError: a conflicting folder (not ours, `hf skills`', locally modified).
    """
    dest = scope.skills_dir / staged.name
    previous = check_dest(dest, staged.repo, force)
    links = _plan_links(dest, scope, agents, staged.repo, staged.content_hash, copy=copy,
                         force=force)
    resolved = staged.resolved
    result = PullResult(
        repo=staged.repo, name=staged.name, sha=resolved.sha,
        version=resolved.version or (previous.version if previous and
                                     previous.sha == resolved.sha else None),
        ref=resolved.ref, content_hash=staged.content_hash, path=dest,
        status="dry-run" if dry_run else _status(previous, resolved.sha),
        registry=registry, findings=staged.findings, previous=previous,
        changed=changes(dest, staged.folder) if previous else [], notes=staged.notes,
        lock_path=scope.lock_path, signer=staged.signer, requires=list(staged.requires))
    result.placements = [AgentLink(dest, "files", ("agents",))] + [
        AgentLink(link.path, "copy" if copy else "symlink", link.agents) for link in links]
    standing = _standing(dest, scope, staged.repo, staged.content_hash, links)
    if dry_run:
        result.placements += standing
        return result
    marker = Marker(staged.repo, resolved.sha, staged.content_hash, result.version,
                    resolved.ref, registry, now_iso(), file_digests(staged.folder))
    (staged.folder / MARKER_FILE).write_text(marker.to_text(), encoding="utf-8")
    with _within(txn, scope) as step:
        step.swap(dest, staged.folder)
        result.placements[1:] = [step.link(dest, link, copy) for link in links]
        if write_lock:
            record(lock, result, agents, copy)
    result.placements += standing
    return result


def _status(previous: Marker | None, sha: str) -> str:
    """`installed` where nothing of ours was; `restored` where the same revision is placed
    again (its files were edited, `--force`); else `updated`."""
    if previous is None:
        return "installed"
    return "restored" if previous.sha == sha else "updated"


@contextlib.contextmanager
def _within(txn: Transaction | None, scope: Scope) -> Iterator[Transaction]:
    """The caller's transaction as it is, or a new one finished (or undone) here, the agent
    folders it made recorded (`made.note`)."""
    if txn is not None:
        yield txn
        return
    with Transaction() as own:
        yield own
    made.note(scope.root, own.made)


def record(lock: Lockfile, result: PullResult, agents: list[Agent], copy: bool, *,
           write: bool = True) -> None:
    """Pin `result` in the lock (keeping the agents an earlier pull of the same repo served,
    and a skill asked for by name stays so when a graph needs it too)."""
    old = lock.entries.get(result.name)
    same = old is not None and old.repo == result.repo
    names = {a.name for a in agents} | (set(old.agents) if old and same else set())
    dependency = result.dependency and (not same or bool(old and old.dependency))
    lock.entries[result.name] = LockEntry(result.name, result.repo, result.sha,
                                          result.content_hash, result.version, result.registry,
                                          tuple(sorted(names)), copy,
                                          source_entry(result.repo, result.ref), result.signer,
                                          tuple(result.requires), dependency,
                                          _accepted_unsigned(lock, result))
    if write:
        lock.write()


def _accepted_unsigned(lock: Lockfile, result: PullResult) -> bool:
    """An unsigned skill recorded where its namespace pins a signer was accepted as such: a
    pull or a graph placed it only past `pin_signer` (`--accept-new-signer`), and an
    up-to-date one is recorded only past `check_namespace_pin`, which asks the same of it."""
    return result.signer is None and \
        namespace_pin(lock, result.repo, result.name, result.ref) is not None


def refresh(scope: Scope, name: str, marker: Marker, agents: list[Agent], copy: bool,
             lock: Lockfile, notes: list[str], *, dry_run: bool, write_lock: bool = True,
             txn: Transaction | None = None, force: bool = False) -> PullResult:
    """The revision is installed and intact: only add missing links and the lock entry
    (`force`: replace what stands in a link's way, an edited copy included)."""
    dest = scope.skills_dir / name
    links = _plan_links(dest, scope, agents, marker.repo, marker.content_hash, copy=copy,
                         force=force)
    pinned = lock.entries.get(name)
    result = PullResult(marker.repo, name, marker.sha, marker.version, marker.ref,
                        marker.content_hash, dest, "up-to-date", marker.registry,
                        previous=marker, notes=notes, lock_path=scope.lock_path,
                        signer=getattr(pinned, "signer", None),
                        requires=list(pinned.requires) if pinned and pinned.repo == marker.repo
                        else [])
    result.placements = [AgentLink(dest, "files", ("agents",))]
    result.linked = [x.path for x in links if x.action != "keep"]
    result.dry_run = dry_run
    standing = _standing(dest, scope, marker.repo, marker.content_hash, links)
    if dry_run:
        result.placements += [AgentLink(x.path, "copy" if copy else "symlink", x.agents)
                              for x in links] + standing
        return result
    with _within(txn, scope) as step:
        result.placements += [step.link(dest, link, copy) for link in links]
        entry = lock.entries.get(name)
        if write_lock and (entry is None or entry.sha != marker.sha or entry.copy != copy
                           or not {a.name for a in agents} <= set(entry.agents)):
            record(lock, result, agents, copy)
    result.placements += standing
    return result


def _standing(dest: Path, scope: Scope, repo: str, content: str,
              planned: list[LinkPlan]) -> list[AgentLink]:
    """The links to `dest` (and our copies holding `content`) already in the agent folders
    this pull does not serve: they stay, so their agents still see the skill. A walk: `pull
    --agent windsurf` after a pull for Claude Code said Claude Code did not see it, and
    hinted `--agent claude`, though `.claude/skills/NAME` still linked to it."""
    served = {plan.path.parent.resolve() for plan in planned}
    found: list[AgentLink] = []
    for folder, names in link_folders(AGENTS.values(), scope.root,
                                      global_=scope.global_).items():
        path = folder / dest.name
        if folder.resolve() in served:
            continue
        if path.is_symlink():
            if not points_to(path, dest):
                continue
            mode = "symlink"
        elif not path.is_dir() or is_hf_managed(path):
            continue
        else:
            marker = read_marker(path)
            if marker is None or marker.repo != repo or content_hash(path) != content:
                continue
            mode = "copy"
        served.add(folder.resolve())
        found.append(AgentLink(path, mode, tuple(names)))
    return found


def check_dest(dest: Path, repo: str, force: bool) -> Marker | None:
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
        raise LocalChanges(f"{dest} has local changes that this pull would discard",
                           hint="copy your changes elsewhere, or pull with --force")
    return marker


def _plan_links(dest: Path, scope: Scope, agents: list[Agent], repo: str, content: str, *,
                copy: bool, force: bool) -> list[LinkPlan]:
    """What to do in each agent folder to place `dest` (whose files hash to `content`): a link
    or a copy already as it should be is kept; one of ours that was edited is refused, as the
    `.agents` folder is, unless `force`.

    Raises:
        HubskillsError: a link elsewhere, a folder not ours or `hf skills`'; `LocalChanges`.
    """
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
            action = _copy_action(path, repo, content, copy=copy, force=force)
        plans.append(LinkPlan(path, tuple(names), action))
    return plans


def _copy_action(path: Path, repo: str, content: str, *, copy: bool, force: bool) -> str:
    """`keep` a copy of ours that holds `content` already (when copies are asked), else
    `replace` it; refuse what is not ours, and a copy edited since it was placed."""
    marker = read_marker(path) if path.is_dir() else None
    if path.is_dir() and is_hf_managed(path):
        raise HubskillsError(f"{path} is managed by `hf skills`; hubskills never "
                             "touches it", hint="pick other agents with --agent")
    if force:
        return "replace"
    if marker is None or marker.repo != repo:
        raise HubskillsError(f"{path} exists and was not placed there by hubskills for "
                             f"{repo}", hint=f"move it away, or hubskills pull {repo} --force "
                                             "(hubskills install --force for every skill)")
    now = content_hash(path)
    if now != marker.content_hash:
        raise LocalChanges(f"{path} has local changes that this pull would discard",
                           hint="copy your changes elsewhere, or pull with --force")
    return "keep" if copy and now == content else "replace"
