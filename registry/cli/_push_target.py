"""Where `hubskills eval --push` sends a run (chat, tool, agent and trigger runs alike): the
store and the published version the folder is, found before any model is called."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from registry.config import Settings
from registry.errors import HubskillsError

if TYPE_CHECKING:
    from registry.format.version_ref import SkillVersionRef
    from registry.stores import SkillStore


def push_target(settings: Settings, skill: Path, repo: str | None, registry_kind: str | None,
                *, push: bool) -> tuple[SkillStore | None, SkillVersionRef | None]:
    """The store to push to (None without `push`) and the published version `skill` is.

    Everything is checked now, before any model is called: an unknown registry, a missing
    token or an unwritable folder, and (with `push`) a folder that is no published version.
    """
    from registry.install.identity import identify, unidentified_hint

    if not push and repo is None and registry_kind is None:
        return None, identify(skill, None)  # a pulled folder's marker only: no store loaded
    from registry.registries import get_store

    if not push:
        return None, identify(skill, get_store(settings, registry_kind), repo=repo)
    store = get_store(settings, registry_kind)
    store.check_writable()
    published = identify(skill, store, repo=repo)
    if published is None:
        raise HubskillsError(f"{skill} matches no published version of a skill in the "
                             f"{store.kind} registry, so pushed results would belong to none",
                             hint=unidentified_hint(skill))
    return store, published
