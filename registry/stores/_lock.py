"""A cross-process lock on a lock file that one thread may re-enter (portable: `filelock`)."""

from __future__ import annotations

import threading
from pathlib import Path

from filelock import FileLock


class StoreLock:
    """Exclusive lock over a store folder: threads of one process and other processes wait.

    Re-entrant within a thread, so a locked operation may call another (seeding publishes).
    Threads of this process wait on an `RLock` (handed over at once); other processes wait on
    the file lock, which the OS releases if the holder dies, so a crash never leaves it held.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._thread_lock = threading.RLock()
        self._depth = 0
        self._file_lock = FileLock(path, thread_local=False, preserve_lock_file=True)

    def __enter__(self) -> StoreLock:
        self._thread_lock.acquire()
        try:
            if self._depth == 0:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._file_lock.acquire()
            self._depth += 1
        except BaseException:
            self._thread_lock.release()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._depth -= 1
        try:
            if self._depth == 0:
                self._file_lock.release()
        finally:
            self._thread_lock.release()
