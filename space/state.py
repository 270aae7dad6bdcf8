"""The Space's view of the configured store: cached reads, fetched skill folders, counts,
and who may write.

Reading the results frame or listing skills can be slow on the Hub, and every visitor's page
load asks for them, so both are cached for `ttl` seconds (a push clears the cache at once).
Skill files are fetched once per revision into `HUBSKILLS_HOME/space/` and reused.

Off a Space (`make run`) the local user is the owner: writes go to the configured store with
the owner's credentials, and the owner's API keys are used. On a Space, a write (push results,
publish) needs the visitor's Hugging Face sign-in and is made with their own token, never the
server's; the server's API keys are lent to visitors only if the owner sets
`HUBSKILLS_SPACE_LEND_KEYS=1`.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from registry import (
    HubskillsError,
    Settings,
    SkillInfo,
    SkillStore,
    get_store,
)

if TYPE_CHECKING:
    import pandas as pd

SKILL_LIMIT = 5000
LOCAL_WRITE = "hubskills eval SKILL --push  (or hubskills publish SKILL) on your own machine"


class SignInRequired(HubskillsError):
    """An anonymous visitor asked a Space to write."""


def oauth_available() -> bool:
    """Whether Gradio's Hugging Face sign-in can work here: on a real Space (`SPACE_ID`, which
    Gradio's OAuth needs; elsewhere it mocks sign-in with the machine's own HF login) with the
    `gradio[oauth]` extra installed."""
    installed = all(importlib.util.find_spec(name) for name in ("authlib", "itsdangerous"))
    return installed and bool(os.environ.get("SPACE_ID"))


class SpaceState:
    """One store and its cached frame and skill list, shared by every request (thread-safe)."""

    def __init__(self, settings: Settings | None = None, store: SkillStore | None = None, *,
                 ttl: float = 30.0, on_space: bool | None = None) -> None:
        self.settings = settings or Settings.from_env()
        self.on_space = self.settings.on_space if on_space is None else on_space
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

    @property
    def lends_keys(self) -> bool:
        """Whether a visitor's request may use the server's own API keys (module docstring)."""
        return not self.on_space or self.settings.space_lend_keys

    def store_for_writes(self, visitor_token: str | None) -> SkillStore:
        """The store a push or a publish writes to, as whom (see the module docstring).

        Raises:
            SignInRequired: on a Space, a visitor who has not signed in.
        """
        if not self.on_space:
            return self.store
        if not visitor_token:
            if not oauth_available():
                raise SignInRequired(
                    "writing from this Space needs Hugging Face sign-in, which it does not "
                    "offer (it needs `hf_oauth: true` and `gradio[oauth]`)", hint=LOCAL_WRITE)
            raise SignInRequired("writing from this Space needs Hugging Face sign-in (the "
                                 "button above): results and skills are written with your "
                                 "own account, never the Space's", hint=LOCAL_WRITE)
        return get_store(self.settings.with_(hf_token=visitor_token))

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
