"""The Space's data in memory: one snapshot of the results and the skill list, kept fresh.

The results are kept aggregated, not as rows: a load reads the results frame, builds its
`Board` (every leaderboard entry and run point, grouped a slice of skills at a time) and drops
the frame, so the process holds the board (tens of MB for 2,000,000 rows) and every view is a
filter over it. Every read is served from the current `Snapshot`; no visitor waits on the
store, except the very first read of a process. `Snapshots.refresh` (on a timer in a
background thread, and at once after the Space itself writes) asks the store what changed,
reloads only that, and swaps the snapshot in one assignment, so a reader sees the old data or
the new, never a mix. Every store answers what changed cheaply with `change_token()` (the
local registry: file listings; the Hub: the results dataset's head and the listing), so the
board and the listing are rebuilt only when their token moves. A refresh that fails keeps the
last good snapshot and records the error for the page to say.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from registry import Board, SkillInfo, SkillStore, verification_badges

from .cache import release_memory, settle_heap
from .messages import describe

log = logging.getLogger(__name__)
SKILL_LIMIT = 5000  # skills listed (their tags filter the leaderboard)
PICKER_LIMIT = 1000  # offered by the skill pickers; every visitor's page and session holds them


@dataclass(frozen=True, eq=False)
class Snapshot:
    """The results (aggregated) and the listed skills as of one load; never changed once made."""

    results: str
    skills_token: str
    board: Board
    skills: tuple[SkillInfo, ...]

    @property
    def key(self) -> tuple[str, str]:
        """What views built on this snapshot are keyed by."""
        return self.results, self.skills_token

    @functools.cached_property
    def skill_ids(self) -> list[str]:
        """Repo ids the skill pickers offer: the `PICKER_LIMIT` most downloaded, by repo id
        (any other can be typed)."""
        ranked = sorted(self.skills, key=lambda info: -info.downloads)[:PICKER_LIMIT]
        return sorted(info.repo for info in ranked)

    @functools.cached_property
    def tags(self) -> dict[str, list[str]]:
        """repo and name -> tags, for the leaderboard's tag filter."""
        mapping: dict[str, list[str]] = {}
        for info in self.skills:
            mapping[info.repo] = list(info.tags)
            mapping.setdefault(info.name, list(info.tags))
        return mapping

    @functools.cached_property
    def counts(self) -> dict[str, int]:
        """Skills listed, evaluation runs and models in the results (for the header)."""
        return {"skills": len(self.skills), "runs": self.board.runs,
                "models": len(self.board.models)}


def clock(stamp: float | None) -> str:
    """`HH:MM:SS UTC` of a `time.time()` stamp."""
    if stamp is None:
        return "never"
    return datetime.fromtimestamp(stamp, UTC).strftime("%H:%M:%S UTC")


REFRESH_THREAD = "space-refresh"  # the background refresher's name (`Snapshots.start`)


class Snapshots:
    """The current snapshot of one store, its refreshes, and how fresh it is (thread-safe).

    Args:
        store: returns the store to read (created on first use).
        interval: seconds between background refreshes (`start`).
    """

    def __init__(self, store: Callable[[], SkillStore], interval: float) -> None:
        self._store = store
        self.interval = interval
        self._current: Snapshot | None = None
        self._refreshing = threading.Lock()
        self._listeners: list[Callable[[Snapshot], None]] = []
        self._on_stop: list[Callable[[], None]] = []
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self.checked_at: float | None = None
        self.failed_at: float | None = None
        self.error: str | None = None

    def current(self) -> Snapshot:
        """The snapshot to read; the first call loads it (others wait for that load).

        Raises:
            HubskillsError: the first load failed (a later call tries again).
        """
        snapshot = self._current
        if snapshot is None:
            self.refresh(raise_first=True)
            snapshot = self._current
            assert snapshot is not None  # noqa: S101 - refresh raised otherwise
        return snapshot

    def on_change(self, listener: Callable[[Snapshot], None]) -> None:
        """Call `listener(snapshot)` after each swap (in the refreshing thread)."""
        self._listeners.append(listener)

    def refresh(self, *, raise_first: bool = False) -> bool:
        """Reload what changed and swap it in; returns whether the snapshot changed.

        A failure is recorded (see `note`) and the last good snapshot kept. With no snapshot
        yet and `raise_first`, the error is raised instead.
        """
        with self._refreshing:
            previous = self._current
            if previous is not None and raise_first:
                return False  # another request loaded it while this one waited
            try:
                fresh = self._load(previous)
            except Exception as err:
                self.failed_at, self.error = time.time(), describe(err)[0]
                log.warning("refreshing the Space's data failed: %s", self.error)
                if previous is None and raise_first:
                    raise
                return False
            self.checked_at, self.failed_at, self.error = time.time(), None, None
            if fresh is previous:
                return False
            self._current = fresh
        del previous  # the old board goes once the views built on it are forgotten
        release_memory()  # what the load freed (pyarrow's tables), before views are built
        for listener in list(self._listeners):
            try:
                listener(fresh)
            except Exception as err:  # noqa: BLE001 - a warm-up failing must not stop refreshes
                log.warning("building views after a refresh failed: %s", describe(err)[0])
        settle_heap()
        release_memory()  # and what building them freed
        return True

    def _load(self, previous: Snapshot | None) -> Snapshot:
        """The snapshot now: `previous` itself when nothing changed."""
        store = self._store()
        results, skills_token = store.change_token()
        if previous is not None and (results, skills_token) == previous.key:
            return previous
        if previous is not None and results == previous.results:
            board = previous.board
        else:
            board = _board(store)
        if previous is not None and skills_token == previous.skills_token:
            skills = previous.skills
        else:
            skills = tuple(sorted(store.search("", limit=SKILL_LIMIT), key=lambda info: info.repo))
        return Snapshot(results, skills_token, board, skills)

    def note(self) -> str:
        """How fresh the data are, for the page (markdown, one line)."""
        if self.error:
            return (f"⚠️ The last refresh ({clock(self.failed_at)}) failed: {self.error}. "
                    f"Showing the results as of {clock(self.checked_at)}.")
        return (f"Results as of {clock(self.checked_at)}, checked for updates every "
                f"{self.interval:g} s.")

    def start(self) -> None:
        """Refresh every `interval` seconds in a daemon thread (once; it ends with `self`)."""
        if self._thread is None:
            self._thread = threading.Thread(target=_refresh_loop, name=REFRESH_THREAD,
                                            args=(weakref.ref(self), self._wake), daemon=True)
            _STARTED.add(self)
            self._thread.start()

    def on_stop(self, wake: Callable[[], None]) -> None:
        """Call `wake()` when `stop` is called: a worker that waits out the refresh interval
        (the pending replays) learns at once that the refreshes ended."""
        self._on_stop.append(wake)

    def stop(self) -> None:
        """End the background thread, and the workers that follow it (`on_stop`)."""
        self.interval = 0.0
        self._wake.set()
        for wake in self._on_stop:
            wake()


#: Every `Snapshots` whose refresher was started in this process, while it lives.
_STARTED: weakref.WeakSet[Snapshots] = weakref.WeakSet()


def stop_all() -> None:
    """Stop every background refresher this process started (`Snapshots.stop`): for a
    process done with the Spaces it built, such as a test module, whose Spaces would otherwise
    go on refreshing (reading their stores, collecting and freezing the heap: `settle_heap`)
    in the background of whatever runs after them."""
    for snapshots in list(_STARTED):
        snapshots.stop()


def _board(store: SkillStore) -> Board:
    """Every leaderboard entry and run point of ``store``'s results, with their badges.

    The frame lives only here: what its load freed is given back before the board is built,
    so the process peaks at the frame plus one slice, not at the frame plus its copies."""
    frame = store.results_frame()
    found = verification_badges(store)
    release_memory()
    return Board.build(frame, badges=found)


def _refresh_loop(ref: weakref.ref[Snapshots], wake: threading.Event) -> None:
    """The background refresher; holds its `Snapshots` only while refreshing, so it stops
    once they are gone (or stopped)."""
    while True:
        owner: Any = ref()
        if owner is None or owner.interval <= 0:
            return
        interval = owner.interval
        del owner
        wake.wait(interval)
        owner = ref()
        if owner is None or owner.interval <= 0:
            return
        owner.refresh()
        del owner
