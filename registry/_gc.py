"""The cyclic garbage collector, held back where a block builds many objects it keeps.

`collector(paused=True)` pauses it while a block lasts (a replay, the leaderboard building
100,000 entries: acyclic objects all kept to the end, so each collection they set off freed
nothing while walking them and everything the process holds); `paused=False` runs it inside
such a block for work that makes cycles (an event loop). `frozen()` leaves alone what existed
before the block (the SDKs' modules and types) for a block that should still collect its own
garbage (an evaluation or a trigger run: a full collection over the ~100,000 objects that
existed before it stopped every call in flight for 30-100 ms). Each leaves the collector as it
found it.

Pauses on several threads (the Space's visitors building boards at once, an import beside
an event loop) share one pause, taken by the first and ended by the last, which leaves the
collector as the first found it: two threads toggling it each for itself could leave it off
for good (one pausing while the other's pause ran, then restoring "off").

`import_kept` imports a module under such a pause, in a command-line process (after
`pause_for_imports()`): an import builds objects that live as long as the process, so the
collections it sets off free nothing (`import openai`, the command's own modules and, in the
thread that loads them during the first network wait, numpy and the report). It then freezes
what exists (`gc.freeze`): otherwise the first collection after the pause walks every object
the import made, and the one at exit walks them again (together ~0.3 s of CPU in a short eval,
a third of what hubskills spends beyond the raw SDK; bench/startup.py). Cycles that exist at
that moment are never collected: in a command-line process, a bounded few. Elsewhere (the
Space, a long-lived process) it is a plain import.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import sys
import threading
from collections.abc import Iterator
from types import ModuleType

_PAUSE_FOR_IMPORTS = False
_LOCK = threading.Lock()
_pauses = 0  # pauses in force, on every thread
_resume = True  # whether the collector ran before the first of them


@contextlib.contextmanager
def collector(*, paused: bool) -> Iterator[None]:
    """The collector paused (a shared pause: see the module docstring) or running while the
    block lasts; then as the pauses still in force, or the state before the block, want it."""
    if paused:
        _hold(1)
        try:
            yield
        finally:
            _hold(-1)
        return
    with _LOCK:
        ran = _resume if _pauses else gc.isenabled()
        gc.enable()
    try:
        yield
    finally:
        with _LOCK:
            if _pauses or not ran:
                gc.disable()


def _hold(step: int) -> None:
    global _pauses, _resume
    with _LOCK:
        if step > 0 and not _pauses:
            _resume = gc.isenabled()
            gc.disable()
        _pauses += step
        if not _pauses and _resume:
            gc.enable()


@contextlib.contextmanager
def frozen() -> Iterator[None]:
    """What exists now is left out of collections while the block lasts, then taken back;
    a command-line process keeps it frozen, as it keeps its imports (`import_kept`)."""
    gc.freeze()
    try:
        yield
    finally:
        if not _PAUSE_FOR_IMPORTS:
            gc.unfreeze()


def pause_for_imports() -> None:
    """Let `import_kept` pause the collector in this process (the command line's entry)."""
    global _PAUSE_FOR_IMPORTS
    _PAUSE_FOR_IMPORTS = True


def import_kept(name: str) -> ModuleType:
    """`importlib.import_module(name)`, under the shared pause where `pause_for_imports`
    allowed it (module docstring)."""
    module = sys.modules.get(name)
    if module is not None and not getattr(getattr(module, "__spec__", None), "_initializing",
                                          False):
        return module  # whole: one still being imported by another thread is waited for below
    if not _PAUSE_FOR_IMPORTS:
        return importlib.import_module(name)
    with collector(paused=True):
        module = importlib.import_module(name)
        gc.freeze()  # kept for the process's life: later collections need not walk it
    return module
