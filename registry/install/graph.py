"""Pull a skill with its dependencies: resolve the whole graph (`resolve.py`), then place every
skill in one transaction and pin them all in `skills.lock`, or nothing at all.

Each node is staged as a pull stages one skill (fetch, verify, signature, scan); a node whose
picked revision is installed here already and intact is not fetched again. Signers are checked
against the lock's pins (`signers.py`) for every node before anything is placed; then the nodes
are placed dependencies first, the lock written once, and any failure undoes every step.
"""

from __future__ import annotations

import threading
from typing import Protocol

from registry._turns import taking_turns
from registry.errors import HubskillsError, hint_command
from registry.format.skill import content_hash
from registry.install import made
from registry.install.agents import Agent
from registry.install.audit import check_still_allowed
from registry.install.deps import dependents, read_requires
from registry.install.lockfile import Lockfile, Scope, read_marker
from registry.install.place import PullResult, install_staged, record, refresh
from registry.install.resolve import (
    DependencyError,
    Graph,
    Installed,
    Node,
    Resolver,
    show,
    staged_node,
)
from registry.install.signers import pin_signer
from registry.install.sources import is_source
from registry.install.staging import Staged, prepare
from registry.install.transaction import Transaction, make_dirs
from registry.scan import SizeLimits
from registry.signing import SignaturePolicy
from registry.stores import Resolved, SkillStore
from registry.stores.refs import version_key


class Plan(Protocol):
    """What `pull.Plan` tells a graph's pull (where, for whom, and the caller's choices)."""

    @property
    def scope(self) -> Scope: ...
    @property
    def agents(self) -> list[Agent]: ...
    @property
    def copy(self) -> bool: ...
    @property
    def force(self) -> bool: ...
    @property
    def dry_run(self) -> bool: ...
    @property
    def allow_risky(self) -> bool: ...
    @property
    def limits(self) -> SizeLimits: ...
    @property
    def signatures(self) -> SignaturePolicy | None: ...
    @property
    def accept_new_signer(self) -> bool: ...
    @property
    def allow_namespaces(self) -> tuple[str, ...]: ...


def installed_skills(scope: Scope, lock: Lockfile) -> dict[str, Installed]:
    """The registry skills the lock pins in this scope, by repo, with what they require."""
    return {e.repo: Installed(e.name, e.sha, e.version,
                              read_requires(e.requires, f"skills.lock ({e.name})"))
            for e in lock.entries.values() if not is_source(e.repo)}


def root_node(ready: Staged | PullResult, lock: Lockfile) -> Node:
    """The node of the skill asked for: staged, or installed and up to date."""
    if isinstance(ready, Staged):
        return Node(ready.repo, ready.resolved, read_requires(ready.requires, ready.repo),
                    (ready.repo,), staged=ready)
    entry = lock.entries.get(ready.name)
    requires = entry.requires if entry and entry.repo == ready.repo else ()
    return Node(ready.repo, Resolved(ready.repo, ready.sha, ready.version, ready.ref),
                read_requires(requires, ready.repo), (ready.repo,), installed=ready.name)


def check_needed(lock: Lockfile, repo: str, name: str, version: str | None) -> None:
    """Refuse to move `repo` to `version` when an installed skill requires another version.

    Raises:
        DependencyError: naming the installed skills and what they require.
    """
    wants = [(e, req) for e, req in dependents(lock, repo, besides={name})
             if not req.constraint.allows(version)]
    if wants:
        asked = ", ".join(f"{e.repo} needs {req}" for e, req in wants)
        raise DependencyError(f"{repo} {version or 'unversioned'} would break installed skills: "
                              f"{asked}", chain=(wants[0][0].repo, repo),
                              hint=f"hubskills update {name}  # the newest version they accept, "
                                   f"or hubskills remove {wants[0][0].name} first")


def resolve(root: Node, store: SkillStore, plan: Plan, lock: Lockfile) -> Graph:
    """The graph of `root`, every dependency staged (or installed already, intact).

    Raises:
        DependencyError, HubskillsError: see `Resolver.resolve`; a refused dependency's error
            starts with the chain that led to it.
    """
    scope = plan.scope
    installed = installed_skills(scope, lock)
    turns = threading.Lock()  # stagers overlap their waits for the registry, not their CPU
    if not plan.dry_run:  # there already (the root was staged in it); never made twice at once
        make_dirs(scope.skills_dir, [])

    def expand(repo: str, resolved: Resolved, chain: tuple[str, ...]) -> Node:
        have = installed.get(repo)
        if have is not None and have.sha == resolved.sha:
            folder = scope.skills_dir / have.name
            marker = None if folder.is_symlink() else read_marker(folder)
            if marker and marker.sha == have.sha and content_hash(folder) == \
                    lock.entries[have.name].content_hash:
                try:  # kept as it is, it passes the gate a staged one would
                    check_still_allowed(folder, lock.entries[have.name], plan.signatures,
                                        lock)
                except HubskillsError as err:
                    err.message = f"{show(chain)}: {err.message}"
                    err.args = (err.message, *err.args[1:])
                    raise
                return Node(repo, resolved, have.requires, chain, installed=have.name)

        def stage() -> Staged:
            with taking_turns(turns):
                return prepare(store, repo, resolved, scope, limits=plan.limits,
                               allow_risky=plan.allow_risky, dry_run=plan.dry_run,
                               signatures=plan.signatures)

        return staged_node(repo, resolved, chain, stage)

    namespace = () if is_source(root.repo) else (root.repo.split("/")[0],)
    allowed = frozenset((*namespace, *plan.allow_namespaces))
    return Resolver(store, expand, installed, allowed).resolve(root)


def install_graph(graph: Graph, plan: Plan, store: SkillStore) -> PullResult:
    """Place every node (dependencies first) and pin them all, in one transaction.

    Raises:
        HubskillsError: a signer change, a conflicting folder; nothing of the graph is placed.
    """
    lock = Lockfile.read(plan.scope.lock_path)
    try:
        if not plan.force:
            _check_no_downgrade(graph, lock)
        notes = [pin_signer(lock, n.repo, n.staged.name, n.staged.signer,
                            ref=n.staged.resolved.ref, accept_new=plan.accept_new_signer)
                 for n in graph.order() if n.staged is not None]
        results: list[PullResult] = []
        with Transaction() as txn:
            for node in graph.order():
                results.append(_place(node, graph, plan, lock, store, txn))
            if not plan.dry_run:
                lock.write()
        made.note(plan.scope.root, txn.made)
    finally:
        graph.discard()
    root = results.pop()
    root.notes[:0] = [n for n in notes if n]
    root.dependencies = results
    return root


def _check_no_downgrade(graph: Graph, lock: Lockfile) -> None:
    """Refuse to move a skill you pulled yourself down to an older version because a skill
    that requires it accepts only that one (a red-team note: a dependent's publisher could pin
    your skill to an old release, and the pull said "updated").

    Raises:
        DependencyError: the first such skill; `--force` accepts the downgrade.
    """
    pulled = {e.repo: e for e in lock.entries.values() if not e.dependency}
    for node in graph.order():
        have = pulled.get(node.repo)
        new = node.resolved.version
        if node.repo == graph.root or node.staged is None or have is None or not have.version \
                or not new or not _older(new, have.version):
            continue
        raise DependencyError(
            f"{graph.root} needs {node.repo} {new}, older than the {have.version} you pulled "
            f"yourself; nothing was installed", chain=node.chain,
            hint=hint_command("pull", graph.root, "--force") + "  # to move it down to "
                 f"{new}, or keep {have.version} and an older {graph.root}")


def _older(new: str, old: str) -> bool:
    try:
        return version_key(new) < version_key(old)
    except HubskillsError:  # not semantic versions: nothing to compare
        return False


def _place(node: Node, graph: Graph, plan: Plan, lock: Lockfile, store: SkillStore,
           txn: Transaction) -> PullResult:
    scope, dependency = plan.scope, node.repo != graph.root
    if node.staged is not None:
        registry = node.resolved.registry or node.staged.resolved.registry or store.kind
        result = install_staged(node.staged, scope, plan.agents, lock, registry=registry,
                                copy=plan.copy, force=plan.force, dry_run=plan.dry_run,
                                write_lock=False, txn=txn)
    else:
        name = node.installed or ""
        marker = read_marker(scope.skills_dir / name)
        if marker is None:  # checked intact when resolved; gone since
            raise HubskillsError(f"{scope.skills_dir / name} changed while pulling",
                                 hint=hint_command("pull", graph.root) + "  # again")
        result = refresh(scope, name, marker, plan.agents, plan.copy, lock, [],
                         dry_run=plan.dry_run, write_lock=False, txn=txn, force=plan.force)
        result.requires = [str(r) for r in node.requires]
    result.dependency = dependency
    if not plan.dry_run:
        record(lock, result, plan.agents, plan.copy, write=False)
    return result
