"""Skill stores: `LocalStore` (a folder, the default) and `HubStore` (the Hugging Face Hub).

`get_store(settings)` picks one; both implement `SkillStore` and pass one contract suite.
`HubStore` is imported lazily so that `huggingface_hub` is loaded only when the Hub is used.
"""

from __future__ import annotations

from collections.abc import Callable

from registry.config import Settings
from registry.errors import HubskillsError
from registry.stores.base import Published, Resolved, SkillInfo, SkillStore, VersionInfo
from registry.stores.dataset import DEFAULT_RESULTS_NAME
from registry.stores.local import LocalStore

__all__ = [
    "LocalStore", "Published", "Resolved", "SkillInfo", "SkillStore", "VersionInfo",
    "get_store", "local_store", "REGISTRIES",
]


def local_store(settings: Settings) -> LocalStore:
    """The embedded registry at `settings.store_dir`, seeded from `skills/` on first use."""
    return LocalStore(settings.store_dir, namespace=settings.namespace or "local",
                      results_repo=settings.results_repo or DEFAULT_RESULTS_NAME,
                      auto_seed=True)


def _hub_store(settings: Settings) -> SkillStore:
    from registry.stores.hub import HubStore

    return HubStore(settings)


REGISTRIES: dict[str, Callable[[Settings], SkillStore]] = {
    "local": local_store,
    "hub": _hub_store,
}


def get_store(settings: Settings, registry: str | None = None) -> SkillStore:
    """The store named by `registry` (default: `settings.registry`, itself "local" by default).

    Raises:
        HubskillsError: an unknown registry name.
    """
    name = (registry or settings.registry or "local").lower()
    factory = REGISTRIES.get(name)
    if factory is None:
        raise HubskillsError(f"unknown registry '{name}'",
                             hint="use --registry local or --registry hub "
                                  "(or HUBSKILLS_REGISTRY=local|hub)")
    return factory(settings)
