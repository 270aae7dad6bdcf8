"""The Space's view of the configured store: reads served from memory, fetched skill folders,
counts, and who may write.

Reads come from a `snapshot.Snapshots` (the results' board and the skill list, refreshed in
the background and at once after the Space writes), and each view built on them is kept in a
`cache.Memo` keyed by the data's version, so visitors share one computation per change of the
data. Skill files are fetched once per revision into `HUBSKILLS_HOME/space/` and reused.

Off a Space (`make run`) the local user is the owner: writes go to the configured store with
the owner's credentials, and the owner's API keys are used. On a Space, a write (push results,
publish) needs the visitor's Hugging Face sign-in and is made with their own token, never the
server's; the server's API keys are lent to visitors only if the owner sets
`HUBSKILLS_SPACE_LEND_KEYS=1`.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from registry import (
    Board,
    HubskillsError,
    Settings,
    SkillInfo,
    SkillStore,
    StopSignal,
    check_repo_id,
    get_store,
)

from .cache import Memo
from .snapshot import Snapshot, Snapshots

_REVISION = re.compile(r"[0-9a-f]{7,64}")  # a commit's hex id, whole or abbreviated

REFRESH_S = 60.0  # a check asks the store's change tokens: a file listing, or two Hub calls
VIEW_SLOTS = 1  # view computations at once: one leaves the other core to cached reads
MEMO_SIZES = {"leaderboard": 48, "model": 16, "skill": 256, "choices": 4, "estimate": 64}
MAX_KEY_CHARS = 300  # longer visitor input is answered but not kept (it could fill memory)
LOCAL_WRITE = "hubskills eval SKILL --push  (or hubskills publish SKILL) on your own machine"


class SignInRequired(HubskillsError):
    """An anonymous visitor asked a Space to write."""


LEFT = "its visitor left the Space"  # the note of a run stopped when its tab closed
STOPPED = "stopped from the Space"


@dataclass
class Evaluation:
    """One visitor's evaluation running in a slot: `stop` ends it (finished answers kept);
    `kept` runs on after its visitor leaves (a signed-in visitor asked for it)."""

    session: str
    kept: bool
    stop: StopSignal = field(default_factory=StopSignal)


class Evaluations:
    """The evaluations running in this process, by the visitor's session: what the Stop
    button and a closed tab end (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: list[Evaluation] = []

    @contextmanager
    def running(self, session: str | None, *, kept: bool = False) -> Iterator[StopSignal]:
        """Hold an evaluation for `session` while the block runs; its `StopSignal`."""
        evaluation = Evaluation(session or "", kept)
        with self._lock:
            self._running.append(evaluation)
        try:
            yield evaluation.stop
        finally:
            with self._lock:
                self._running.remove(evaluation)

    def stop(self, session: str | None, reason: str = STOPPED, *,
             keep_kept: bool = False) -> int:
        """Stop the evaluations of `session` (with `keep_kept`, not those kept on leaving);
        how many were asked to stop."""
        with self._lock:
            chosen = [e for e in self._running if session and e.session == session
                      and not (keep_kept and e.kept) and not e.stop.is_set()]
        for evaluation in chosen:
            evaluation.stop.request(reason)
        return len(chosen)

    def left(self, session: str | None) -> int:
        """Its visitor closed the tab: stop the session's evaluations not kept."""
        return self.stop(session, LEFT, keep_kept=True)

    def count(self) -> int:
        """Evaluations running now."""
        with self._lock:
            return len(self._running)


class AnswerTimes:
    """Seconds of wall time per answer, per model, as measured by this Space's runs (a moving
    average; thread-safe): what an estimate multiplies the planned answers by."""

    WEIGHT = 0.3  # of the newest measurement

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seconds: dict[str, float] = {}
        self.version = 0  # changes with every measurement (a key for estimates kept)

    def record(self, model: str, seconds: float) -> None:
        """Fold in one run's seconds per answer for `model`."""
        with self._lock:
            self.version += 1
            old = self._seconds.get(model)
            self._seconds[model] = seconds if old is None else (
                old + self.WEIGHT * (seconds - old))

    def get(self, model: str) -> float | None:
        """The measured seconds per answer for `model`; None before any run of it here."""
        with self._lock:
            return self._seconds.get(model)


def oauth_available() -> bool:
    """Whether Gradio's Hugging Face sign-in can work here: on a real Space (`SPACE_ID`, which
    Gradio's OAuth needs; elsewhere it mocks sign-in with the machine's own HF login) with the
    `gradio[oauth]` extra installed."""
    installed = all(importlib.util.find_spec(name) for name in ("authlib", "itsdangerous"))
    return installed and bool(os.environ.get("SPACE_ID"))


class SpaceState:
    """One store, its data in memory and the views built on them, shared by every request
    (thread-safe).

    Args:
        refresh_every: seconds between background refreshes (see `start_refresh`); by
            default `REFRESH_S`.
    """

    def __init__(self, settings: Settings | None = None, store: SkillStore | None = None, *,
                 refresh_every: float | None = None, on_space: bool | None = None) -> None:
        self.settings = settings or Settings.from_env()
        self.on_space = self.settings.on_space if on_space is None else on_space
        self._store = store
        self._lock = threading.RLock()
        self.data = Snapshots(lambda: self.store, refresh_every or REFRESH_S)
        slots = threading.Semaphore(VIEW_SLOTS)
        self.views = {kind: Memo(size, None if kind in ("skill", "estimate") else slots)
                      for kind, size in MEMO_SIZES.items()}
        self.data.on_change(self._forget_views)
        self.evaluations = Evaluations()
        self.answer_times = AnswerTimes()

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

    def snapshot(self) -> Snapshot:
        """The data to read now (loaded on first use)."""
        return self.data.current()

    def view(self, kind: str, key: Hashable, compute: Callable[[], Any]) -> Any:
        """`compute()` once per `key` and version of the data (see `cache.Memo`)."""
        memo = self.views[kind]
        if len(repr(key)) > MAX_KEY_CHARS:
            return memo.run(compute)
        return memo.get((self.snapshot().key, key), compute)

    def _forget_views(self, fresh: Snapshot) -> None:
        """Let go of the views built on older data. Those built on `fresh` stay: a reader
        that saw it swapped in may have built one already (this runs after the swap, in the
        refreshing thread), and forgetting it had a burst of visitors build it twice."""
        for memo in self.views.values():
            memo.clear(keep=lambda key: isinstance(key, tuple) and key[0] == fresh.key)

    def invalidate(self) -> None:
        """Reload what changed now (after a push or a publish): this caller waits, readers
        keep the previous data until the new are swapped in."""
        self.data.refresh()

    def start_refresh(self) -> None:
        """Refresh in the background from now on (see `snapshot.Snapshots.start`)."""
        self.data.start()

    def board(self) -> Board:
        """Every leaderboard entry and run point of the results (see `snapshot`)."""
        return self.snapshot().board

    def skills(self) -> list[SkillInfo]:
        """Every listed skill, by repo id."""
        return list(self.snapshot().skills)

    def skill_ids(self) -> list[str]:
        """Repo ids the skill pickers offer (see `Snapshot.skill_ids`)."""
        return self.snapshot().skill_ids

    def tags(self) -> dict[str, list[str]]:
        """repo and name -> tags, for the leaderboard's tag filter."""
        return self.snapshot().tags

    def counts(self) -> dict[str, int]:
        """Skills listed, evaluation runs and models in the results (for the header)."""
        return self.snapshot().counts

    def skill_folder(self, repo: str, sha: str) -> Path:
        """The skill's files at `sha`, fetched once into a cache folder named like the skill.

        Raises:
            HubskillsError: `repo` is no skill id or `sha` no revision (a results row names
                them: `../..` would have named a folder of the server's; a red-team note).
        """
        check_repo_id(repo)
        if not _REVISION.fullmatch(sha):
            raise HubskillsError(f"{sha[:80]!r} is not a revision (hex digits)",
                                 hint="pick a run whose rows name a published version")
        target = self.settings.home / "space" / "skills" / repo / sha / repo.split("/")[-1]
        if target.is_dir():
            return target
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".fetch-", dir=target.parent))
        try:
            self.store.fetch(repo, sha, staging / "skill", count=False)  # a view, no download
            try:
                (staging / "skill").rename(target)
            except OSError:  # another request fetched it first
                if not target.is_dir():
                    raise
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return target
