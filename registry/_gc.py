"""The cyclic garbage collector, held back where a block builds many objects it keeps.

`collector(paused=True)` pauses it while a block lasts (a replay, the leaderboard building
100,000 entries: acyclic objects all kept to the end, so each collection they set off freed
nothing while walking them and everything the process holds); `paused=False` runs it inside
such a block for work that makes cycles (an event loop). `frozen()` leaves alone what existed
before the block (the SDKs' modules and types) for a block that should still collect its own
garbage (a trigger run: a full collection over ~100,000 frozen objects stopped every call in
flight for 30-100 ms). Each leaves the collector as it found it.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


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
