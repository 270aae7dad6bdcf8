"""The cyclic garbage collector, held back where a block builds many objects it keeps.

`collector(paused=True)` pauses it while a block lasts (a replay, the leaderboard building
100,000 entries: acyclic objects all kept to the end, so each collection they set off freed
nothing while walking them and everything the process holds); `paused=False` runs it inside
such a block for work that makes cycles (an event loop). `frozen()` leaves alone what existed
before the block (the SDKs' modules and types) for a block that should still collect its own
garbage (a trigger run: a full collection over ~100,000 frozen objects stopped every call in
flight for 30-100 ms). Each leaves the collector as it found it.

`import_kept` imports a module with the collector paused, in a command-line process (after
`pause_for_imports()`): an import builds objects that live as long as the process, so the
collections it sets off free nothing (`import openai`, the command's own modules and, in the
thread that loads them during the first network wait, numpy and the report: ~0.15 s of a short
eval's CPU). Imports on several threads hold one shared pause, taken by the first and ended by
the last. Elsewhere (the Space) it is a plain import: there a worker thread's pause could
interleave with another's `collector` block.
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
_IMPORTS = threading.Lock()
_importing = 0  # imports in progress under the shared pause
_resume_after_imports = False


@contextlib.contextmanager
def collector(*, paused: bool) -> Iterator[None]:
    """The collector paused (or running) while the block lasts, then as it was."""
    was_enabled = gc.isenabled()
    (gc.disable if paused else gc.enable)()
    try:
        yield
    finally:
        (gc.enable if was_enabled else gc.disable)()


@contextlib.contextmanager
def frozen() -> Iterator[None]:
    """What exists now is left out of collections while the block lasts, then taken back."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def pause_for_imports() -> None:
    """Let `import_kept` pause the collector in this process (the command line's entry)."""
    global _PAUSE_FOR_IMPORTS
    _PAUSE_FOR_IMPORTS = True


def import_kept(name: str) -> ModuleType:
    """`importlib.import_module(name)`, with the collector paused while it runs where
    `pause_for_imports` allowed it (module docstring)."""
    module = sys.modules.get(name)
    if module is not None:
        return module
    if not _PAUSE_FOR_IMPORTS:
        return importlib.import_module(name)
    with _paused_for_imports():
        return importlib.import_module(name)


@contextlib.contextmanager
def _paused_for_imports() -> Iterator[None]:
    global _importing, _resume_after_imports
    with _IMPORTS:
        if not _importing:
            _resume_after_imports = gc.isenabled()
            gc.disable()
        _importing += 1
    try:
        yield
    finally:
        with _IMPORTS:
            _importing -= 1
            if not _importing and _resume_after_imports:
                gc.enable()
