"""A cross-process lock (`fcntl.flock` on a lock file) that one process may re-enter."""

from __future__ import annotations

import fcntl
import os
import threading
from pathlib import Path


class StoreLock:
    """Exclusive lock over a store folder: threads of one process and other processes wait.

    Re-entrant within a thread, so a locked operation may call another (seeding publishes).
    flock is released by the kernel if the process dies, so a crash never leaves it held.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._thread_lock = threading.RLock()
        self._depth = 0
        self._fd: int | None = None

    def __enter__(self) -> StoreLock:
        self._thread_lock.acquire()
        try:
            if self._depth == 0:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX)
                except BaseException:
                    os.close(fd)
                    raise
                self._fd = fd
            self._depth += 1
        except BaseException:
            self._thread_lock.release()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._depth -= 1
        if self._depth == 0 and self._fd is not None:
            fd, self._fd = self._fd, None
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
        self._thread_lock.release()
