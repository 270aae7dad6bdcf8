"""A skill's dependencies in an evaluation: the skills its `metadata.requires` names, given to
the skill arm with it and never to the baseline.

The evaluation layer does not resolve a graph (the resolver, the stores and staging sit above
it: `registry.install.eval_deps`); the command that runs an evaluation sets a `DependencyLoader` as
`EvalConfig.dependencies`, and this module decides when it is called and what its answer must be:

- a skill that requires nothing never calls it (a run without dependencies is as before);
- a new run calls it with `recorded` None: it resolves the graph afresh (before any model is
  called) and answers every skill of it but the evaluated one, each with its `DependencyRecord`;
- a resumed run calls it with the revisions its manifest recorded: it loads exactly those, or
  refuses (the rows already written were made with them);
- without a loader, a skill that requires others is refused before any call, rather than
  evaluated without what it needs.

How the skill arm sees them is `arms.py`'s (inline and tool modes: each SKILL.md after the
skill's own, in its own `<skill>` block) and `agent_mode.py`'s (each its own folder beside the
skill's in `.agents/skills/`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from registry.errors import HubskillsError
from registry.format.requires import Requirement, requirements
from registry.format.skill import Skill
from registry.results.runs import DependencyRecord, RunManifest


@dataclass(frozen=True)
class Dependency:
    """One skill the evaluated skill requires, loaded: its folder and what the manifest keeps."""

    skill: Skill
    record: DependencyRecord


class DependencyLoader(Protocol):
    """Loads `skill`'s dependencies (`needs`: its own references) for an evaluation.

    `root` is the registry id the evaluated skill is published as (None: a folder of no known
    id); `recorded`, when given, are the exact revisions to load (a resumed run's). Folders it
    makes stay until the caller closes it.

    Raises:
        HubskillsError: the graph does not resolve (a cycle, a conflict, a dependency the
            registry lacks or a pull would refuse), naming the chain; a recorded revision that
            cannot be had.
    """

    def __call__(self, skill: Skill, needs: Sequence[Requirement], *, root: str | None,
                 recorded: Sequence[DependencyRecord] | None) -> list[Dependency]: ...


def load_dependencies(skill: Skill, loader: DependencyLoader | None, manifest: RunManifest, *,
                      resume: bool, command: str) -> tuple[Skill, ...]:
    """The skills the skill arm gets besides the skill, recorded in `manifest`: none when the
    skill requires none, else the answer of `loader` (`EvalConfig.dependencies`): a resumed
    run's, the revisions its manifest recorded; a new run's, resolved afresh.

    Raises:
        HubskillsError: the skill requires others and there is no loader; a resumed run that
            recorded none although the skill requires some; what the loader refuses.
    """
    needs = requirements(skill.frontmatter)
    if not needs:
        return ()
    named = ", ".join(str(req) for req in needs)
    if loader is None:
        raise HubskillsError(f"{skill.name} requires {named}, and this evaluation does not "
                             "load a skill's dependencies: its skill arm would lack them",
                             hint=f"{command}  # hubskills eval loads them in the skill arm")
    if resume and not manifest.dependencies:
        raise HubskillsError(f"the run being resumed was made without {skill.name}'s "
                             f"dependencies ({named}): its answers and new ones would not "
                             "compare", hint=f"{command}  # a new run, which loads them")
    loaded = loader(skill, needs, root=manifest.skill_repo,
                    recorded=manifest.dependencies if resume else None)
    manifest.dependencies = [d.record for d in loaded]
    return tuple(d.skill for d in loaded)


def pinned(loader: DependencyLoader | None, manifest: RunManifest, skill: Skill,
           command: str) -> DependencyLoader | None:
    """For a fresh run that re-asks run `manifest` (a spot check): `loader` held to the
    revisions the run recorded, never resolved afresh; None when the skill requires nothing.

    Raises:
        HubskillsError: the skill requires others and the run records none (a pushed run,
            whose rows do not carry them, or a run made before `eval` loaded them), or there
            is no loader: it cannot be re-asked as it ran.
    """
    needs = requirements(skill.frontmatter)
    if not needs:
        return None
    if not manifest.dependencies or loader is None:
        why = "no loader for them was given" if manifest.dependencies else \
            "the run does not record which revisions of them its skill arm loaded"
        raise HubskillsError(f"{skill.name} requires {', '.join(map(str, needs))}, and {why}: "
                             f"run {manifest.run_id} cannot be re-asked as it ran",
                             hint=f"{command}  # the replay alone, which asks no model")
    records = list(manifest.dependencies)

    def load(skill: Skill, needs: Sequence[Requirement], *, root: str | None,
             recorded: Sequence[DependencyRecord] | None) -> list[Dependency]:
        return loader(skill, needs, root=root, recorded=records if recorded is None else recorded)

    return load


def dependency_lines(records: Sequence[DependencyRecord]) -> list[str]:
    """How a report names the loaded dependencies: `acme/b 1.2.3 @abc123def456 (acme/b@^1.2)`,
    one a line (`via acme/a → acme/b` for one only another dependency requires)."""
    lines = []
    for rec in records:
        asked = rec.required_as if rec.required_as and rec.required_as != rec.skill else ""
        how = f"as {asked}" if asked else ""
        if rec.via and rec.via.count("→") > 1:
            how = f"{how}, via {rec.via}" if how else f"via {rec.via}"
        lines.append(f"{rec.skill} {rec.version or 'unversioned'} @{rec.revision[:12]}"
                     + (f" ({how})" if how else ""))
    return lines
