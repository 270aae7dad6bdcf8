"""Threads that take turns with the CPU and overlap only their waits on the network.

`install` fetches up to 16 skills at once so that their round trips to the Hub overlap. The
rest of a fetch (size and blob checks, hashing, cache and staging writes, the scan) is Python
under the GIL, and with 16 threads doing it at once every short system call hands the GIL to
another thread: the same cold install cost 9.4 ms of CPU per skill on 16 threads against 5.3
on one (`bench/pull.py`, a Hub answering at once). So each worker holds one lock while it
computes (`taking_turns`) and lets go of it only while it waits for the Hub (`waiting`, around
every request in `registry/hub/`): the waits overlap, the work runs one worker at a time.

Outside `taking_turns`, `waiting` does nothing. Hold no other lock across `waiting()`: a worker
that waits holding one while another takes its turn and blocks on it would never get its turn
back (the HTTP client's own locks are taken and let go inside the wait).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_turn: ContextVar[threading.Lock | None] = ContextVar("hubskills_turn", default=None)


@contextmanager
def taking_turns(lock: threading.Lock) -> Iterator[None]:
    """Run the block holding `lock` (shared by the workers), except inside `waiting()`."""
    token = _turn.set(lock)
    try:
        with lock:
            yield
    finally:
        _turn.reset(token)


@contextmanager
def waiting() -> Iterator[None]:
    """Let another worker have its turn while this one waits (for a network answer)."""
    lock = _turn.get()
    if lock is None:
        yield
        return
    lock.release()
    try:
        yield
    finally:
        lock.acquire()
