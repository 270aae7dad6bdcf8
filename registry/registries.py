"""Which registry a command opens: `get_store(settings)`, the local one seeded on first use.

The local registry seeds itself with the example skills and their recorded runs the first time
it is read; the seeded runs are replayed by the verifier (`registry.verify.seed`) so that they
rank as `replayed` on a fresh machine. Storage (`registry.stores`) knows nothing of replays:
this module, above both, joins them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from registry.config import Settings
from registry.errors import HubskillsError
from registry.stores import DEFAULT_RESULTS_NAME, FallbackStore, LocalStore, SkillStore
from registry.stores.seed import default_seed_dir
from registry.verify.seed import seed_hook

if TYPE_CHECKING:
    from datasets import Dataset

__all__ = ["REGISTRIES", "get_store", "local_store", "results_dataset"]


def local_store(settings: Settings) -> LocalStore:
    """The embedded registry at `settings.store_dir`, seeded with the examples on first use."""
    return LocalStore(settings.store_dir, namespace=settings.namespace or "local",
                      results_repo=settings.results_repo or DEFAULT_RESULTS_NAME,
                      seed=seed_hook(default_seed_dir(), settings))


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


def results_dataset(settings: Settings | None = None, registry: str | None = None) -> Dataset:
    """Every evaluation result of a registry as a 🤗 Datasets split, for your own analysis.

    `datasets.load_dataset` on the results dataset (the Hub repo, or the local registry's
    folder), with its cache under `HUBSKILLS_HOME/datasets-cache`: a second call reads the
    Arrow files it made, and only new result files are parsed again. The CLI and the Space read
    results through the stores' columnar path instead (measured several times faster at
    start-up on 1,000 runs); this is the same data in the design's own format.
    """
    from datasets import load_dataset

    settings = settings or Settings.from_env()
    source = get_store(settings, registry).dataset_source()
    return load_dataset(source, split="evals",
                        cache_dir=str(settings.home / "datasets-cache"))
