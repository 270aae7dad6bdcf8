"""The skills a skill requires, loaded for `hubskills eval`'s skill arm (`evaluation.dependencies`
says when and how the arm sees them).

A new run resolves the graph with the resolver `pull` uses (`resolve.Resolver`), from the
configured registry, before any model is called: each dependency's revision is staged as a pull
stages it (fetched, re-checked, signature verified, validated, scanned: `staging.prepare`) into
a temporary folder, never into the project. Two things differ from a pull, both because an
evaluation installs nothing: what this project has installed is not consulted (the pick is what
a fresh pull would pick: the run must not depend on the current directory), and a dependency
may come from any namespace (nothing lands in an agent's folder; every dependency is still
scanned and verified, and the manifest names each). A resumed run loads exactly the revisions
its manifest recorded, each checked against its recorded content hash, or refuses.

`EvalDependencies` is a context manager: the staged folders are removed when it closes.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType

from registry._turns import taking_turns
from registry.errors import HubskillsError
from registry.evaluation.dependencies import Dependency
from registry.format.requires import Requirement, parse_requirement
from registry.format.skill import Skill, load_skill
from registry.install.lockfile import Scope
from registry.install.resolve import Graph, Node, Resolver, show, staged_node
from registry.install.staging import Staged, discard, prepare
from registry.results.runs import DependencyRecord
from registry.scan import STORE_LIMITS, SizeLimits
from registry.stores import Resolved, SkillStore

_REVISION = re.compile(r"[0-9a-f]{7,64}")


class _AnyNamespace(frozenset[str]):
    """Every namespace: an evaluation places nothing in an agent's folders."""

    def __contains__(self, item: object) -> bool:
        return True


class EvalDependencies:
    """A `DependencyLoader` over the store `open_store` returns (opened on first use: a run
    whose skill requires nothing never opens it)."""

    def __init__(self, open_store: Callable[[], SkillStore], *,
                 limits: SizeLimits = STORE_LIMITS) -> None:
        self._open_store = open_store
        self._store: SkillStore | None = None
        self.limits = limits
        self.staged: list[Staged] = []
        self._turns = threading.Lock()  # stagers overlap their waits, not their CPU (as pulls)

    def __enter__(self) -> EvalDependencies:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Remove every staged folder."""
        while self.staged:
            discard(self.staged.pop())

    @property
    def store(self) -> SkillStore:
        """The registry the dependencies come from."""
        if self._store is None:
            self._store = self._open_store()
        return self._store

    def __call__(self, skill: Skill, needs: Sequence[Requirement], *, root: str | None,
                 recorded: Sequence[DependencyRecord] | None) -> list[Dependency]:
        """See `evaluation.dependencies.DependencyLoader`."""
        if recorded is not None:
            return self._recorded(skill, recorded)
        return self._resolved(skill, needs, root or skill.name)

    def _stage(self, repo: str, resolved: Resolved, expected: str | None = None) -> Staged:
        # dry_run: a staging folder in the system's temp folder; the scope is never written
        with taking_turns(self._turns):
            return prepare(self.store, repo, resolved, Scope(Path(".")), limits=self.limits,
                           dry_run=True, expected_hash=expected)

    def _resolved(self, skill: Skill, needs: Sequence[Requirement], root: str,
                  ) -> list[Dependency]:
        top = Node(root, Resolved(root, skill.content_hash(), skill.version, "evaluated"),
                   tuple(needs), (root,), installed=skill.name)

        def expand(repo: str, resolved: Resolved, chain: tuple[str, ...]) -> Node:
            return staged_node(repo, resolved, chain, lambda: self._stage(repo, resolved))

        graph = Resolver(self.store, expand, {}, _AnyNamespace()).resolve(top)
        for unused in graph.unused:
            discard(unused)
        try:
            found = [_dependency(graph, node) for repo, node in graph.nodes.items()
                     if repo != root]
            _check_names(skill, found, root)
        except BaseException:
            graph.unused = []
            graph.discard()
            raise
        self.staged += [n.staged for n in graph.nodes.values() if n.staged is not None]
        return found

    def _recorded(self, skill: Skill, recorded: Sequence[DependencyRecord]) -> list[Dependency]:
        found: list[Dependency] = []
        staged: list[Staged] = []
        try:
            for rec in recorded:
                _check_record(rec, skill)
                where = f"{rec.skill} {rec.version or 'unversioned'} at {rec.revision[:12]}"
                try:
                    staged.append(self._stage(rec.skill, Resolved(rec.skill, rec.revision,
                                                                  rec.version, rec.revision),
                                              rec.content_hash))
                except HubskillsError as err:
                    raise HubskillsError(
                        f"the run loaded {where} with {skill.name}, which cannot be loaded "
                        f"again: {err.message}",
                        hint=f"hubskills eval {skill.path}  # a new run, which resolves "
                             f"{skill.name}'s dependencies again") from err
                found.append(Dependency(load_skill(staged[-1].folder), rec))
        except BaseException:
            for each in staged:
                discard(each)
            raise
        self.staged += staged
        return found


def _check_record(rec: DependencyRecord, skill: Skill) -> None:
    """A recorded dependency names a registry skill and a revision, nothing else (a pushed
    run's rows are anyone's text: never a path handed to a store).

    Raises:
        HubskillsError: naming the entry.
    """
    try:
        ok = parse_requirement(rec.skill).repo == rec.skill
    except HubskillsError:
        ok = False
    if not ok or not _REVISION.fullmatch(rec.revision):
        raise HubskillsError(f"the run records a dependency that is not a registry skill at a "
                             f"revision ({rec.skill[:80]!r} at {rec.revision[:80]!r})",
                             hint=f"hubskills eval {skill.path}  # a new run, which resolves "
                                  "its dependencies again")


def _dependency(graph: Graph, node: Node) -> Dependency:
    """A resolved node as the skill arm loads it and the manifest records it."""
    staged = node.staged
    assert staged is not None  # the root alone is not staged (an installed node never is here)
    parent = graph.nodes[node.chain[-2]]
    asked = next((str(r) for r in parent.requires if r.repo == node.repo), node.repo)
    record = DependencyRecord(skill=node.repo, name=staged.name, version=node.resolved.version,
                              revision=node.resolved.sha, content_hash=staged.content_hash,
                              required_as=asked, via=show(node.chain))
    return Dependency(load_skill(staged.folder), record)


def _check_names(skill: Skill, found: list[Dependency], root: str) -> None:
    """Two skills of one name cannot sit side by side (`.agents/skills/<name>`).

    Raises:
        HubskillsError: naming both.
    """
    seen = {skill.name: root}
    for dep in found:
        other = seen.setdefault(dep.skill.name, dep.record.skill)
        if other != dep.record.skill:
            raise HubskillsError(f"{dep.record.via}: {dep.record.skill} is named "
                                 f"'{dep.skill.name}', as {other} is: an agent loads one skill "
                                 "of a name, so the skill arm cannot hold both",
                                 hint="ask the publisher to rename one; nothing was evaluated")
