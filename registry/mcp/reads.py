"""Where a catalog's listing comes from (`Reads`): a change token, and when it moves the
skills with their figures; `StoreReads` reads them from the store itself (`hubskills mcp`),
`snapshot.SnapshotReads` from the Space's snapshot."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Protocol

from registry.mcp.meta import Figures, version_figures
from registry.stores.base import SkillInfo, SkillStore

_ALL = 100_000


class Reads(Protocol):
    """Where a catalog's listing comes from: a change token, and the skills with their figures
    when it moves."""

    def token(self) -> Hashable:
        """What changes when the listing or the results may have."""
        ...

    def load(self) -> tuple[list[SkillInfo], Figures, str | None]:
        """Every skill, the figures per (repo, version), why the results are unreadable."""
        ...


class StoreReads:
    """A store's own listing and results (`hubskills mcp`)."""

    def __init__(self, store: SkillStore) -> None:
        self.store = store

    def token(self) -> Hashable:
        """The store's change token."""
        return self.store.change_token()

    def load(self) -> tuple[list[SkillInfo], Figures, str | None]:
        """Search everything; the figures from the results (see `meta.version_figures`)."""
        figures, error = version_figures(self.store)
        return self.store.search("", limit=_ALL), figures, error
