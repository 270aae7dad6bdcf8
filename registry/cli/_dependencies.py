"""`hubskills eval` and a skill's dependencies (`metadata.requires`): the loader it hands the
engine, which imports the resolver and opens the registry only when the skill requires others
(a plain chat eval loads neither), and the refusal of a Jobs run, whose shards cannot load them
yet."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from registry.config import Settings
from registry.errors import HubskillsError

if TYPE_CHECKING:
    from registry.evaluation.dependencies import Dependency
    from registry.format.requires import Requirement
    from registry.format.skill import Skill
    from registry.results.runs import DependencyRecord
    from registry.stores import SkillStore


class EvalDependencyLoader:
    """`evaluation.dependencies.DependencyLoader` for the CLI: loads from the registry
    `open_store` opens (None: the configured one, `HUBSKILLS_REGISTRY`), only when called; the
    folders it stages are removed when the command ends."""

    def __init__(self, settings: Settings,
                 open_store: Callable[[], SkillStore] | None = None) -> None:
        self.settings, self.open_store = settings, open_store

    def __call__(self, skill: Skill, needs: Sequence[Requirement], *, root: str | None,
                 recorded: Sequence[DependencyRecord] | None) -> list[Dependency]:
        from registry.install.eval_deps import EvalDependencies
        from registry.registries import get_store

        loader = click.get_current_context().with_resource(
            EvalDependencies(self.open_store or (lambda: get_store(self.settings, None))))
        return loader(skill, needs, root=root, recorded=recorded)


def refuse_on_jobs(skill: Path) -> None:
    """Before any Job starts: a skill that requires others runs here only (the shards would
    evaluate it without them).

    Raises:
        HubskillsError: the skill's `metadata.requires` names skills.
    """
    from registry.format.requires import requirements
    from registry.format.skill import load_skill

    needs = requirements(load_skill(skill).frontmatter)
    if needs:
        raise HubskillsError(f"{skill} requires {', '.join(map(str, needs))}: Jobs' shards do "
                             "not load a skill's dependencies yet",
                             hint=f"hubskills eval {skill}  # here, without --on jobs: the "
                                  "skill arm loads them")
