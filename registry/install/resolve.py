"""Resolve a skill's dependency graph (`metadata.requires`) before anything is installed.

Breadth-first from the skill asked for: each reference is checked against the namespaces the
user allows, its versions are listed once, and the version picked is the one already installed
when it satisfies every constraint met so far, else the newest that does; that revision is then
staged (fetched, verified, signature-checked, scanned: `staging.prepare`) and its own
`requires` read; up to `WORKERS` skills are staged at once, in the order they were picked, while
the walk goes on (their waits for the registry overlap; a node is read when the walk reaches
it). A constraint met later that the pick does not satisfy re-picks that skill (the
newest satisfying all of them) and walks again from the top, keeping what was staged; when no
version satisfies them all, the error names every chain that asked (`a → b@^1`,
`a → c → b@^2`). Constraints of installed skills outside the graph count too, so a pull or an
update never breaks what another installed skill needs. A cycle, a graph over `MAX_SKILLS`
skills or deeper than `MAX_DEPTH`, a dependency from a namespace not allowed, and any refusal
of a dependency (hostile, invalid, unsigned when signatures are required) stop the pull with
the chain named; nothing is placed until the whole graph is staged (`graph.py` places it).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from registry.errors import HubskillsError, VersionNotFound
from registry.format.requires import Requirement
from registry.install.deps import read_requires
from registry.install.staging import Staged, discard
from registry.stores import Resolved, SkillStore, VersionInfo

MAX_SKILLS = 500  # skills in one graph, the one asked for included
MAX_DEPTH = 32  # skills on the longest chain from the one asked for
MAX_ROUNDS = 20  # walks from the top after a re-pick
WORKERS = 8  # skills staged at once
ARROW = " → "


class DependencyError(HubskillsError):
    """A graph that cannot be installed as asked; `chain` names the skills that led there."""

    def __init__(self, message: str, *, chain: Sequence[str] = (), hint: str | None = None,
                 namespace: str | None = None):
        super().__init__(message, hint=hint)
        self.chain = tuple(chain)
        self.namespace = namespace  # set when the refusal is a namespace not allowed


def show(chain: Iterable[str]) -> str:
    """`acme/a → acme/b → acme/c`."""
    return ARROW.join(chain)


@dataclass
class Node:
    """One skill of the graph at the revision picked. `staged` is None when that revision is
    installed here already and intact (`installed` is then its folder name)."""

    repo: str
    resolved: Resolved
    requires: tuple[Requirement, ...]
    chain: tuple[str, ...]
    staged: Staged | None = None
    installed: str | None = None


def staged_node(repo: str, resolved: Resolved, chain: tuple[str, ...],
                stage: Callable[[], Staged]) -> Node:
    """The node of `repo` at `resolved`, staged by `stage` (an expander's common part, for a
    pull's graph and an evaluation's alike).

    Raises:
        HubskillsError: the staging's, its message led by the chain; a staged skill whose
            requires do not parse is discarded before its error goes up.
    """
    try:
        staged = stage()
    except HubskillsError as err:
        err.message = f"{show(chain)}: {err.message}"
        err.args = (err.message, *err.args[1:])
        raise
    try:
        return Node(repo, resolved, read_requires(staged.requires, repo), chain, staged=staged)
    except BaseException:
        discard(staged)
        raise


@dataclass
class Installed:
    """What the resolver knows of one installed skill: its folder, revision and needs."""

    name: str
    sha: str
    version: str | None
    requires: tuple[Requirement, ...]


@dataclass
class Graph:
    """The resolved graph: nodes by repo (the one asked for first) and their edges."""

    root: str
    nodes: dict[str, Node]
    unused: list[Staged] = field(default_factory=list)  # staged, then not picked

    def order(self) -> list[Node]:
        """Every node, each after the skills it requires (the root last)."""
        done: dict[str, Node] = {}

        def visit(repo: str) -> None:
            if repo in done:
                return
            node = self.nodes[repo]
            done[repo] = node  # no cycle survives `_check_cycles`
            for req in node.requires:
                visit(req.repo)
            done[repo] = done.pop(repo)  # after its requirements

        visit(self.root)
        return list(done.values())

    def discard(self) -> None:
        """Remove every staging folder the resolution made."""
        for staged in [*(n.staged for n in self.nodes.values() if n.staged), *self.unused]:
            discard(staged)


Expand = Callable[[str, Resolved, tuple[str, ...]], Node]


@dataclass
class Resolver:
    """Walks the graph of `root` (its node given, staged or installed already).

    `store` answers versions and refs of the dependencies; `expand(repo, resolved, chain)`
    stages one revision (or reads the installed one) and returns its node; `installed` is what
    this scope holds, by repo; `allowed` the namespaces dependencies may come from.
    """

    store: SkillStore
    expand: Expand
    installed: dict[str, Installed]
    allowed: frozenset[str]
    allow_hint: str = "--allow-namespace"
    workers: int = WORKERS
    _versions: dict[str, list[VersionInfo]] = field(default_factory=dict)
    _asked: dict[tuple[str, bool], Future[Any]] = field(default_factory=dict)  # listings
    _lister: ThreadPoolExecutor | None = None
    _expanded: dict[tuple[str, str], Future[Node]] = field(default_factory=dict)

    def resolve(self, root: Node) -> Graph:
        """The whole graph, every node staged or installed.

        Raises:
            DependencyError: a cycle, a conflict, a namespace not allowed, a graph too big or
                too deep; any error staging a dependency, with its chain in the message.
        """
        done: Future[Node] = Future()
        done.set_result(root)
        self._expanded[(root.repo, root.resolved.sha)] = done
        pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="resolve")
        self._lister = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="list")
        try:
            graph = self._rounds(root, pool)
        except BaseException:
            self._lister.shutdown(wait=True, cancel_futures=True)
            pool.shutdown(wait=True, cancel_futures=True)
            for node in self._nodes():
                if node.staged is not None and node is not root:
                    discard(node.staged)
            raise
        self._lister.shutdown(wait=True)
        pool.shutdown(wait=True)
        return graph

    def _nodes(self) -> list[Node]:
        """Every node staged so far (a cancelled or failed staging has none)."""
        return [f.result() for f in self._expanded.values()
                if f.done() and not f.cancelled() and f.exception() is None]

    def _rounds(self, root: Node, pool: ThreadPoolExecutor) -> Graph:
        hints: dict[str, str] = {}
        for _ in range(MAX_ROUNDS):
            picked = self._walk(root, hints, pool)
            if picked is not None:
                _check_cycles(root.repo, picked)
                for future in self._expanded.values():  # staged meanwhile, maybe unused
                    future.exception()
                used = {(n.repo, n.resolved.sha) for n in picked.values()}
                unused = [n.staged for n in self._nodes()
                          if (n.repo, n.resolved.sha) not in used and n.staged is not None]
                return Graph(root.repo, picked, unused)
        raise DependencyError(f"the versions of {root.repo}'s dependencies did not settle in "
                              f"{MAX_ROUNDS} rounds", chain=(root.repo,),
                              hint=f"pin versions: hubskills pull {root.repo}@VERSION")

    def _walk(self, root: Node, hints: dict[str, str],
              pool: ThreadPoolExecutor) -> dict[str, Node] | None:
        """One walk from the top; None when a skill was re-picked (`hints`: walk again)."""
        picks: dict[str, Resolved] = {root.repo: root.resolved}
        chosen: dict[str, Node] = {}
        wants: dict[str, list[tuple[Requirement, tuple[str, ...]]]] = {}
        queue: deque[tuple[str, tuple[str, ...]]] = deque([(root.repo, root.chain)])
        while queue:
            repo, at = queue.popleft()
            node = self._expanded[(repo, picks[repo].sha)].result()  # raises its staging error
            node.chain = at
            chosen[repo] = node
            self._prefetch(node)
            for req in node.requires:
                chain = (*node.chain, req.repo)
                self._check_edge(req, chain, node)
                wants.setdefault(req.repo, []).append((req, chain))
                have = picks.get(req.repo)
                if have is not None:
                    if not req.constraint.allows(have.version):
                        if req.repo == root.repo:
                            raise _conflict(req.repo, self._constraints(req.repo, wants,
                                                                        picks, root))
                        again = self._pick(req.repo, self._constraints(req.repo, wants,
                                                                       picks, root), hints)
                        hints[req.repo] = again.sha
                        return None
                    continue
                if len(picks) >= MAX_SKILLS:
                    raise DependencyError(f"{root.repo} needs more than {MAX_SKILLS} skills "
                                          f"(reached at {show(chain)}); refusing the graph",
                                          chain=chain, hint="ask the publisher to trim its "
                                                            "dependencies; nothing was installed")
                resolved = self._pick(req.repo, self._constraints(req.repo, wants, picks,
                                                                  root), hints)
                key = (req.repo, resolved.sha)
                if key not in self._expanded:
                    self._expanded[key] = pool.submit(self.expand, req.repo, resolved, chain)
                picks[req.repo] = resolved
                queue.append((req.repo, chain))
        return chosen

    def _check_edge(self, req: Requirement, chain: tuple[str, ...], node: Node) -> None:
        if req.repo in node.chain:
            loop = chain[node.chain.index(req.repo):]
            raise DependencyError(f"dependency cycle: {show(loop)}; refusing {chain[0]}",
                                  chain=chain, hint="ask the publisher to break the cycle; "
                                                    "nothing was installed")
        if len(chain) > MAX_DEPTH:
            raise DependencyError(f"{chain[0]}'s dependencies go deeper than {MAX_DEPTH} "
                                  f"skills ({show(chain[:3])} → … → {show(chain[-2:])}); "
                                  "refusing the graph", chain=chain,
                                  hint="nothing was installed; ask the publisher to flatten it")
        if req.namespace not in self.allowed:
            raise DependencyError(
                f"{show(chain)}: {req.repo} is from the namespace '{req.namespace}', which "
                f"you have not allowed ({', '.join(sorted(self.allowed)) or 'none'} allowed)",
                chain=chain, hint=f"hubskills pull {chain[0]} {self.allow_hint} "
                                  f"{req.namespace}  # once you trust {req.namespace}'s skills",
                namespace=req.namespace)

    def _constraints(self, repo: str, wants: dict[str, list[tuple[Requirement, tuple[str, ...]]]],
                     picks: dict[str, Resolved], root: Node,
                     ) -> list[tuple[Requirement, tuple[str, ...]]]:
        """What the graph asks of `repo`, plus what installed skills outside it ask."""
        found = list(wants.get(repo, []))
        for other, item in self.installed.items():
            picked = picks.get(other)
            if other == root.repo or (picked is not None and picked.sha != item.sha):
                continue  # replaced by this graph: its new requirements count instead
            found += [(req, (f"{other} (installed)", repo)) for req in item.requires
                      if req.repo == repo]
        return found

    def _pick(self, repo: str, wants: list[tuple[Requirement, tuple[str, ...]]],
              hints: dict[str, str]) -> Resolved:
        """The installed version if it satisfies every constraint, else the hinted one, else
        the newest that does."""
        if all(req.constraint.any for req, _ in wants):
            installed = self.installed.get(repo)
            if installed is not None:
                return Resolved(repo, installed.sha, installed.version, "installed")
            if repo in hints:
                return Resolved(repo, hints[repo], self._version_of(repo, hints[repo]), "hint")
            return self._resolve_latest(repo, wants)
        versions = self._versions_of(repo, wants)
        fits = [v for v in versions if all(req.constraint.allows(v.version) for req, _ in wants)]
        if not fits:
            raise _conflict(repo, wants, versions)
        installed = self.installed.get(repo)
        for sha in (installed.sha if installed else None, hints.get(repo)):
            match = next((v for v in fits if v.sha == sha), None)
            if match is not None:
                return Resolved(repo, match.sha, match.version, match.version)
        return Resolved(repo, fits[0].sha, fits[0].version, fits[0].version)

    def _prefetch(self, node: Node) -> None:
        """Ask the registry, all at once, what picking `node`'s requirements will need: the
        versions of a ranged one, the latest revision of an unranged one not installed."""
        for req in node.requires:
            key = (req.repo, req.constraint.any)
            if key in self._asked or (req.constraint.any and req.repo in self.installed) \
                    or self._lister is None:
                continue
            ask = self.store.resolve if req.constraint.any else self.store.versions
            self._asked[key] = self._lister.submit(ask, req.repo)

    def _asked_for(self, repo: str, latest: bool) -> Any:
        future = self._asked.get((repo, latest))
        if future is not None:
            return future.result()
        return self.store.resolve(repo, None) if latest else self.store.versions(repo)

    def _resolve_latest(self, repo: str, wants: list[tuple[Requirement, tuple[str, ...]]],
                        ) -> Resolved:
        try:
            return self._asked_for(repo, True)
        except HubskillsError as err:
            raise _prefixed(err, wants[0][1]) from err

    def _versions_of(self, repo: str, wants: list[tuple[Requirement, tuple[str, ...]]],
                     ) -> list[VersionInfo]:
        if repo not in self._versions:
            try:
                self._versions[repo] = self._asked_for(repo, False)
            except HubskillsError as err:
                raise _prefixed(err, wants[0][1]) from err
        return self._versions[repo]

    def _version_of(self, repo: str, sha: str) -> str | None:
        return next((v.version for v in self._versions.get(repo, []) if v.sha == sha), None)


def _conflict(repo: str, wants: list[tuple[Requirement, tuple[str, ...]]],
              versions: Sequence[VersionInfo] | None = None) -> DependencyError:
    """No version of `repo` satisfies all of `wants`: every chain that asked, named."""
    asked = "; ".join(f"{show(chain[:-1])} needs {req}" for req, chain in wants)
    have = ", ".join(v.version for v in (versions or [])[:8]) or "none published"
    if len(wants) == 1:
        message = f"{show(wants[0][1])}: no version of {repo} satisfies {wants[0][0]} " \
                  f"(versions: {have})"
    else:
        message = f"version conflict on {repo}: {asked}; no version satisfies them all " \
                  f"(versions: {have})"
    root = wants[0][1][0].removesuffix(" (installed)")
    return DependencyError(message, chain=wants[0][1],
                           hint=f"hubskills versions {repo}  # then pull {root}@VERSION that "
                                "agrees, or ask the publishers to align; nothing was installed")


def _prefixed(err: HubskillsError, chain: Sequence[str]) -> HubskillsError:
    """`err` with the chain that led to it before its message (same type, same hint)."""
    if len(chain) < 2:
        return err
    err.message = f"{show(chain)}: {err.message}"
    err.args = (err.message, *err.args[1:])
    return err


def _check_cycles(root: str, nodes: dict[str, Node]) -> None:
    """A cycle the breadth-first walk met only across branches (a → b → c → b)."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(repo: str) -> None:
        state[repo] = 1
        path.append(repo)
        for req in nodes[repo].requires:
            if state.get(req.repo) == 1:
                loop = [*path[path.index(req.repo):], req.repo]
                raise DependencyError(f"dependency cycle: {show(loop)}; refusing {root}",
                                      chain=loop, hint="ask the publisher to break the cycle; "
                                                       "nothing was installed")
            if state.get(req.repo) is None and req.repo in nodes:
                visit(req.repo)
        path.pop()
        state[repo] = 2

    visit(root)


__all__ = ["DependencyError", "Graph", "Installed", "Node", "Resolver", "VersionNotFound", "show",
           "staged_node"]
