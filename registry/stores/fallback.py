"""`FallbackStore`: one store, and another that answers pulls when the first is unavailable.

The Hub registry offline is the case it is for: `FallbackStore(HubStore(...), local)` resolves
and fetches from the Hub (or the HF cache), and only when the Hub raises `RegistryUnavailable`
(offline, unreachable, not cached) asks the local registry, saying so in `Resolved.notes`. A
revision is fetched from the store that resolved it. Everything else (publish, search, results)
goes to the primary store alone: a fallback never answers for what the user did not ask of it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from registry.errors import HubskillsError, RegistryUnavailable
from registry.scan import STORE_LIMITS, SizeLimits
from registry.stores.base import (
    Fetched,
    LiftKey,
    Published,
    Resolved,
    ResultsShorthands,
    SkillInfo,
    SkillStore,
    VersionInfo,
)


class FallbackStore(ResultsShorthands):
    """`primary` for everything; `fallback` (built on first need) for unavailable pulls."""

    def __init__(self, primary: SkillStore, fallback: Callable[[], SkillStore]) -> None:
        self.primary = primary
        self.kind = primary.kind
        self.results = primary.results  # the primary's results dataset alone
        self._make_fallback = fallback
        self._fallback: SkillStore | None = None
        self._answered_by: dict[tuple[str, str], SkillStore] = {}
        self._lock = threading.Lock()

    def _fallback_store(self) -> SkillStore:
        with self._lock:
            if self._fallback is None:
                self._fallback = self._make_fallback()
            return self._fallback

    def resolve(self, repo: str, ref: str | None = None) -> Resolved:
        """The primary's answer; when it is unavailable, the fallback's (with a note).

        Raises:
            RegistryUnavailable: the primary is unavailable and the fallback cannot answer.
            HubskillsError: the primary's own errors (an unknown skill or version).
        """
        try:
            resolved = self.primary.resolve(repo, ref)
            store = self.primary
        except RegistryUnavailable as unavailable:
            store = self._fallback_store()
            try:
                resolved = store.resolve(repo, ref)
            except HubskillsError:
                raise unavailable from None
            note = (f"{unavailable.message}; using the {store.kind} registry for {repo}")
            resolved = replace(resolved, notes=(*resolved.notes, note), registry=store.kind)
        self._answered_by[(repo, resolved.sha)] = store
        return resolved

    def fetch(self, repo: str, sha: str, dest: Path, *, limits: SizeLimits = STORE_LIMITS,
              pinned_hash: str | None = None, count: bool = True) -> Fetched:
        """Fetch from the store that resolved `sha` (the primary when none did).

        A pinned sha the primary cannot serve now (offline, not cached) is tried on the
        fallback, which holds it only if it is the same revision there (content-addressed).
        """
        store = self._answered_by.get((repo, sha), self.primary)
        try:
            return store.fetch(repo, sha, dest, limits=limits, pinned_hash=pinned_hash,
                               count=count)
        except RegistryUnavailable as unavailable:
            if store is not self.primary:
                raise
            fallback = self._fallback_store()
            try:
                fetched = fallback.fetch(repo, sha, dest, limits=limits,
                                         pinned_hash=pinned_hash, count=count)
            except HubskillsError:
                raise unavailable from None
            note = f"{unavailable.message}; fetched from the {fallback.kind} registry"
            return replace(fetched, notes=(*fetched.notes, note))

    # -- the primary store alone ------------------------------------------------------------

    def default_namespace(self) -> str:
        """The primary store's."""
        return self.primary.default_namespace()

    def publish(self, skill_dir: Path, *, repo: str, version: str, private: bool = False,
                message: str | None = None) -> Published:
        """Publish to the primary store."""
        return self.primary.publish(skill_dir, repo=repo, version=version, private=private,
                                    message=message)

    def versions(self, repo: str) -> list[VersionInfo]:
        """The primary store's versions."""
        return self.primary.versions(repo)

    def search(self, query: str = "", *, sort: str = "downloads", limit: int = 50,
               lift_key: LiftKey | None = None) -> list[SkillInfo]:
        """Search the primary store."""
        return self.primary.search(query, sort=sort, limit=limit, lift_key=lift_key)

    def info(self, repo: str) -> SkillInfo:
        """The primary store's info."""
        return self.primary.info(repo)

    def refresh_card(self, repo: str) -> None:
        """Refresh the card in the primary store."""
        self.primary.refresh_card(repo)

    def change_token(self) -> tuple[str, str]:
        """The primary store's."""
        return self.primary.change_token()
