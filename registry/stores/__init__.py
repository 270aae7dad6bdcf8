"""Skill stores: `LocalStore` (a folder, the default), `HubStore` (the Hugging Face Hub) and
`FallbackStore` (the Hub, with the local registry answering pulls when the Hub cannot).

All implement `SkillStore` (versioned skills, `SkillRepos`, and a results dataset,
`store.results`: `ResultsDataset`) and pass one contract suite. Storage only: bytes and
records, nothing from evaluation, the agent or the sandbox (`tests/test_layout.py`). Which
store a command opens, seeded and with the seeded runs replayed, is `registry.registries`.
`HubStore` is imported lazily so that `huggingface_hub` is loaded only when the Hub is used.
"""

from __future__ import annotations

from registry.stores.base import (
    Appended,
    Fetched,
    Published,
    Resolved,
    ResultsDataset,
    SkillInfo,
    SkillRepos,
    SkillStore,
    VersionInfo,
)
from registry.stores.dataset import DEFAULT_RESULTS_NAME
from registry.stores.fallback import FallbackStore
from registry.stores.local import LocalStore

__all__ = [
    "Appended", "FallbackStore", "Fetched", "LocalStore", "Published", "Resolved",
    "ResultsDataset", "SkillInfo", "SkillRepos", "SkillStore", "VersionInfo",
    "DEFAULT_RESULTS_NAME",
]
