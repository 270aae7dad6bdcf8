"""Skill stores: `LocalStore` (a folder, the default), `HubStore` (the Hugging Face Hub) and
`FallbackStore` (the Hub, with the local registry answering pulls when the Hub cannot).

`get_store(settings)` picks one; all implement `SkillStore` and pass one contract suite.
`HubStore` is imported lazily so that `huggingface_hub` is loaded only when the Hub is used.
"""

from __future__ import annotations

from collections.abc import Callable

from registry.config import Settings
from registry.errors import HubskillsError
from registry.stores.base import Fetched, Published, Resolved, SkillInfo, SkillStore, VersionInfo
from registry.stores.dataset import DEFAULT_RESULTS_NAME
from registry.stores.fallback import FallbackStore
from registry.stores.local import LocalStore
from registry.stores.seed import default_seed_dir, seed_from

__all__ = [
    "FallbackStore", "Fetched", "LocalStore", "Published", "Resolved", "SkillInfo", "SkillStore",
    "VersionInfo", "get_store", "local_store", "REGISTRIES",
]


def local_store(settings: Settings) -> LocalStore:
    """The embedded registry at `settings.store_dir`, seeded with the examples on first use."""
    return LocalStore(settings.store_dir, namespace=settings.namespace or "local",
                      results_repo=settings.results_repo or DEFAULT_RESULTS_NAME,
                      seed=seed_from(default_seed_dir()))


def _hub_store(settings: Settings) -> SkillStore:
    from registry.stores.hub import HubStore

    return HubStore(settings)


REGISTRIES: dict[str, Callable[[Settings], SkillStore]] = {
    "local": local_store,
    "hub": _hub_store,
}


def get_store(settings: Settings, registry: str | None = None, *,
              offline_fallback: bool = False) -> SkillStore:
    """The store named by `registry` (default: `settings.registry`, itself "local" by default).

    With `offline_fallback` (what pulls use), a remote registry is wrapped in a `FallbackStore`
    whose fallback is the local registry: offline, a pull still resolves what it holds.

    Raises:
        HubskillsError: an unknown registry name.
    """
    name = (registry or settings.registry or "local").lower()
    factory = REGISTRIES.get(name)
    if factory is None:
        raise HubskillsError(f"unknown registry '{name}'",
                             hint="use --registry local or --registry hub "
                                  "(or HUBSKILLS_REGISTRY=local|hub)")
    store = factory(settings)
    if offline_fallback and name != "local":
        return FallbackStore(store, lambda: local_store(settings))
    return store
