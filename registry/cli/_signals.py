"""Ctrl-C and SIGTERM during a long command: stop cleanly the first time, at once the second.

The first SIGINT or SIGTERM prints "stopping…" and requests a `StopSignal` (the engine then
marks the run `interrupted`, cancels the calls in flight and keeps every finished row); the
command ends with `exit_code`: 130 for SIGINT, 143 (128 + 15, what CI runners and container
managers expect of a terminated process) for SIGTERM. A second signal ends the process at once
with its own code.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

from registry.cli import _output as out
from registry.evaluation.stopping import StopSignal

EXIT_CODES = {signal.SIGINT: 130, signal.SIGTERM: 143}
#: what must still happen when a second signal quits at once (e.g. removing a fetched skill)
ON_QUIT: list[Callable[[], None]] = []


class Interrupts:
    """What the handlers saw: the stop they requested and the exit code it calls for."""

    def __init__(self) -> None:
        self.stop = StopSignal()
        self.exit_code = 0

    def handle(self, signum: int, _frame: FrameType | None) -> None:
        """The signal handler (main thread, between two bytecodes)."""
        code = EXIT_CODES.get(signal.Signals(signum), 128 + signum)
        name = signal.Signals(signum).name
        if self.stop.is_set():
            out.notice_now(f"{name} again: quitting now")
            out.flush()
            self.stop.quit_now()  # e.g. the run marked `interrupted`, if the loop has not yet
            for cleanup in list(ON_QUIT):  # `os._exit` runs no `finally`: temp folders first
                cleanup()
            os._exit(code)
        self.exit_code = code
        out.notice_now(f"{name}: stopping… finished answers are kept "
                       "(press Ctrl-C again to quit at once)")
        self.stop.request(name)


@contextmanager
def interrupts() -> Iterator[Interrupts]:
    """Handle SIGINT and SIGTERM as described above while the block runs (main thread only;
    elsewhere, as under a test runner's thread, the signals keep their handlers)."""
    caught = Interrupts()
    if threading.current_thread() is not threading.main_thread():
        yield caught
        return
    previous = {sig: signal.signal(sig, caught.handle) for sig in EXIT_CODES}
    try:
        yield caught
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def exit_now(code: int) -> None:
    """End the process with `code` after an interrupt. Output is flushed first; when a worker
    thread is still busy with a call that cannot be cancelled (the embedded model), the process
    ends without waiting for it: every row and the manifest are already written."""
    out.flush()
    busy = [t for t in threading.enumerate()
            if t is not threading.main_thread() and not t.daemon and t.is_alive()]
    if busy:
        os._exit(code)
    raise SystemExit(code)
