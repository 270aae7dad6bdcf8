"""Stopping a run early and cleanly: a `StopSignal` any thread (or a signal handler) can raise,
and the event loop runner that honours it.

`StopSignal.request` only records the request and calls the subscribers; the engine subscribes
a callback that hops onto its event loop (`call_soon_threadsafe`, safe from a signal handler),
marks the run `interrupted` on disk at once and cancels the in-flight model calls, so every
finished row is kept and nothing half-done is written. A second signal may end the process
before the loop gets to it: `quit_now` (called by that signal's handler) runs the same marking
at once, from the handler, so the run on disk never stays `running`.

`gather_until_stopped` is that subscription around `asyncio.gather`, for the engine and the
trigger evals alike. `run_until_stopped` is `asyncio.run` except for one thing: after a stop it
does not wait for worker threads still busy with a call that cannot be cancelled (the embedded
model generating in llama.cpp), so the caller gets control back within moments instead of after
that answer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from typing import Any, TypeVar

T = TypeVar("T")


class StopSignal:
    """A request to stop a run, settable once from any thread or a signal handler."""

    def __init__(self) -> None:
        self.reason: str | None = None
        self._subscribers: list[Callable[[], object]] = []  # what they return is ignored
        self._at_quit: list[Callable[[], None]] = []

    def request(self, reason: str = "stop requested") -> None:
        """Ask the run to stop; `reason` (e.g. "SIGINT") goes into the run's note. Idempotent.

        Runs in a signal handler: it takes no lock and only calls the subscribers, which must
        be as careful (hand the work to an event loop, nothing more).
        """
        if self.reason is not None:
            return
        self.reason = reason
        for callback in list(self._subscribers):
            callback()

    def is_set(self) -> bool:
        """Whether a stop was requested."""
        return self.reason is not None

    def subscribe(self, callback: Callable[[], object]) -> Callable[[], None]:
        """Call `callback` on the request (at once if it already happened); returns the
        function that unsubscribes it."""
        self._subscribers.append(callback)
        if self.reason is not None:
            callback()
        return lambda: self._subscribers.remove(callback)

    def at_quit(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call `callback` from `quit_now`, when the process is about to end without unwinding;
        returns the function that removes it."""
        self._at_quit.append(callback)
        return lambda: self._at_quit.remove(callback)

    def quit_now(self) -> None:
        """The process ends now (a second Ctrl-C): run what must be on disk before it does.
        A callback that fails is skipped: quitting must not wait on it."""
        for callback in list(self._at_quit):
            try:
                callback()
            except Exception:  # noqa: BLE001, S112 - the process is ending either way
                continue


async def gather_until_stopped(aws: Iterable[Awaitable[Any]], stop: StopSignal | None, *,
                               before_cancel: Callable[[], None] | None = None) -> bool:
    """Await `aws` together; a `stop` cancels them, calling `before_cancel` first (from the
    event loop) when they are not done yet. True when they all finished, False when a stop
    cut them short; any other cancellation propagates."""
    gathered = asyncio.gather(*aws)
    marked = False

    def mark() -> None:
        """`before_cancel`, once, from the loop or from a second signal's handler (`quit_now`).
        Marked only once it has run: a handler that interrupts the loop's own call, after which
        the process ends, runs it again whole (it writes the same state twice)."""
        nonlocal marked
        if before_cancel and not marked and not gathered.done():
            before_cancel()
            marked = True

    def cancel() -> None:
        if gathered.done():
            return
        mark()
        gathered.cancel()

    loop = asyncio.get_running_loop()
    unsubscribe = stop.subscribe(lambda: loop.call_soon_threadsafe(cancel)) if stop else None
    forget = stop.at_quit(mark) if stop else None
    try:
        await gathered
    except asyncio.CancelledError:
        if stop is None or not stop.is_set():
            raise
        return False
    finally:
        if unsubscribe:
            unsubscribe()
        if forget:
            forget()
    return True


def run_until_stopped(main: Coroutine[Any, Any, T], stop: StopSignal | None) -> T:
    """Run `main` in a new event loop and close the loop, like `asyncio.run`; after a stop,
    worker threads still running an uncancellable call are left to finish on their own."""
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(main)
    finally:
        try:
            _cancel_remaining(loop)
            loop.run_until_complete(loop.shutdown_asyncgens())
            if stop is None or not stop.is_set():
                loop.run_until_complete(loop.shutdown_default_executor())
        finally:
            loop.close()  # shuts the default executor down without waiting


def _cancel_remaining(loop: asyncio.AbstractEventLoop) -> None:
    pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
