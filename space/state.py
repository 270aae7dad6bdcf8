"""The Space's view of the configured store: cached reads, fetched skill folders, counts.

Reading the results frame or listing skills can be slow on the Hub, and every visitor's page
load asks for them, so both are cached for `ttl` seconds (a push clears the cache at once).
Skill files are fetched once per revision into `HUBSKILLS_HOME/space/` and reused.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from registry import Settings, SkillInfo, SkillStore, get_store

if TYPE_CHECKING:
    import pandas as pd

SKILL_LIMIT = 5000


class SpaceState:
    """One store and its cached frame and skill list, shared by every request (thread-safe)."""

    def __init__(self, settings: Settings | None = None, store: SkillStore | None = None, *,
                 ttl: float = 30.0) -> None:
        self.settings = settings or Settings.from_env()
        self._store = store
        self.ttl = ttl
        self._lock = threading.RLock()
        self._cache: dict[str, tuple[float, Any]] = {}

    @property
    def store(self) -> SkillStore:
        """The configured store, created on first use (a local store seeds itself then)."""
        with self._lock:
            if self._store is None:
                self._store = get_store(self.settings)
            return self._store

    def _cached(self, key: str, load: Callable[[], Any]) -> Any:
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None and time.monotonic() - hit[0] < self.ttl:
                return hit[1]
        value = load()
        with self._lock:
            self._cache[key] = (time.monotonic(), value)
        return value

    def invalidate(self) -> None:
        """Forget cached reads (after a push or a publish)."""
        with self._lock:
            self._cache.clear()

    def frame(self) -> pd.DataFrame:
        """Every result row (cached)."""
        return self._cached("frame", self.store.results_frame)

    def skills(self) -> list[SkillInfo]:
        """Every listed skill, by repo id (cached)."""
        return self._cached("skills", lambda: sorted(
            self.store.search("", limit=SKILL_LIMIT), key=lambda info: info.repo))

    def skill_ids(self) -> list[str]:
        """Repo ids of the listed skills."""
        return [info.repo for info in self.skills()]

    def tags(self) -> dict[str, list[str]]:
        """repo and name -> tags, for the leaderboard's tag filter."""
        mapping: dict[str, list[str]] = {}
        for info in self.skills():
            mapping[info.repo] = list(info.tags)
            mapping.setdefault(info.name, list(info.tags))
        return mapping

    def counts(self) -> dict[str, int]:
        """Skills listed, evaluation runs and models in the results (for the header)."""
        frame = self.frame()
        runs = int(frame["run_id"].nunique()) if "run_id" in frame else 0
        models = int(frame["model"].nunique()) if "model" in frame else 0
        return {"skills": len(self.skills()), "runs": runs, "models": models}

    def skill_folder(self, repo: str, sha: str) -> Path:
        """The skill's files at `sha`, fetched once into a cache folder named like the skill."""
        target = self.settings.home / "space" / "skills" / repo / sha / repo.split("/")[-1]
        if target.is_dir():
            return target
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".fetch-", dir=target.parent))
        try:
            self.store.fetch(repo, sha, staging / "skill")
            try:
                (staging / "skill").rename(target)
            except OSError:  # another request fetched it first
                if not target.is_dir():
                    raise
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return target
