"""Views computed once and served from memory, and what keeps serving them cheap.

A public leaderboard is read by many visitors at once, mostly with the same filters, while the
results change rarely. `Memo` keeps each view (a filter combination, a skill page, a model
view) keyed by the data's version, so it is computed once per change of the data: 100
visitors asking for the same view at the same moment wait on one computation instead of
running 100. It keeps the most recently used entries up to a count, so free-text filters
cannot grow it without bound, and misses of CPU-heavy views take one of a few shared slots,
so a flood of new filter combinations never holds every core while cached reads wait.

Around it: `wire_table`/`wire_plot` keep views in the form Gradio sends (no pandas work per
response), `release_memory` gives back what a load or a miss freed, and `settle_heap` keeps
the long-lived data out of the garbage collector's full passes.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import re
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from registry import named_bidi

if TYPE_CHECKING:
    import gradio as gr
    import pandas as pd


def _malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None


_TRIM = _malloc_trim()


def release_memory() -> None:
    """Give back to the system what a load or a large view freed. Over 2,000,000 result rows
    either frees hundreds of MB, which pyarrow's pool and glibc's per-thread arenas would
    otherwise keep for reuse: the process would stay at its peak."""
    arrow = sys.modules.get("pyarrow")
    if arrow is not None:
        arrow.default_memory_pool().release_unused()
    if _TRIM is not None:
        _TRIM(0)


class Memo:
    """An LRU of computed views with at most one computation per key at a time (thread-safe).

    Args:
        size: entries kept; the least recently used is dropped past it.
        slots: shared by the memos whose misses may run only a few at a time (None: no limit).
    """

    def __init__(self, size: int, slots: threading.Semaphore | None = None) -> None:
        self.size = size
        self.slots = slots
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()
        self._done: OrderedDict[Hashable, Any] = OrderedDict()
        self._running: dict[Hashable, Future] = {}

    def __len__(self) -> int:
        return len(self._done)

    def get(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        """The value for `key`: kept, being computed by another request (then awaited), or
        computed now. An error is raised to every waiter and not kept."""
        with self._lock:
            if key in self._done:
                self.hits += 1
                self._done.move_to_end(key)
                return self._done[key]
            running = self._running.get(key)
            if running is None:
                self.misses += 1
                running = self._running[key] = Future()
                owner = True
            else:
                self.hits += 1
                owner = False
        if not owner:
            return running.result()
        try:
            value = self.run(compute)
        except BaseException as err:
            with self._lock:
                del self._running[key]
            running.set_exception(err)
            raise
        with self._lock:
            del self._running[key]
            self._done[key] = value
            while len(self._done) > self.size:
                self._done.popitem(last=False)
        running.set_result(value)
        return value

    def run(self, compute: Callable[[], Any]) -> Any:
        """`compute()` in one of the slots (then `release_memory`), without keeping its
        value."""
        if self.slots is None:
            return compute()
        with self.slots:
            try:
                return compute()
            finally:
                release_memory()

    def clear(self, keep: Callable[[Hashable], bool] | None = None) -> None:
        """Forget every kept value, or each one whose key `keep` does not accept
        (computations under way finish and are kept)."""
        with self._lock:
            if keep is None:
                self._done.clear()
            else:
                for key in [key for key in self._done if not keep(key)]:
                    del self._done[key]


def settle_heap() -> None:
    """After new data are in: collect what the old data left, then keep the objects that
    remain (the data, the views just built, Gradio's own) out of later collections. A full
    collection walks every tracked object: with 10,000 skills that is a pause of ~0.3 s in the
    middle of a burst of requests; frozen, they are not walked again until the next change."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()


def wire_table(frame: pd.DataFrame) -> dict[str, Any]:
    """A table in the form `gr.Dataframe` sends (its `postprocess` of this dict is the dict
    itself), for keeping in a view: Gradio passes it on without pandas work, scrubbing lists
    of strings costs a fraction of scrubbing a DataFrame, and a read event may skip
    postprocessing altogether (`postprocess=False`)."""
    split = frame.to_dict(orient="split")
    headers = [str(c) for c in split["columns"]]
    return {"headers": headers, "data": split["data"],
            "metadata": _breakable(headers, split["data"])}


#: Columns of identifiers (markdown cells: `columns.datatypes`): a model id
#: `Qwen/Qwen2.5-Coder-32B-Instruct`, a skill's link `[hubskills/agent-skill-md@1.1.0](?skill=…)`.
BREAKABLE = ("model", "skill@version")
_SEPARATOR = re.compile(r"([/\-_:@]|\.(?!\d))(?=\w)")  # "1.1.0" stays whole
# A skill's link as `leaderboard_view.skill_link` writes it: its target a skill id, nothing more
_LINK_TEXT = re.compile(r"^\[([^\]]*)\](\(\?skill=[A-Za-z0-9][A-Za-z0-9._-]*/"
                        r"[A-Za-z0-9][A-Za-z0-9._-]*\))$")
_MD_SPECIAL = str.maketrans({c: f"\\{c}" for c in "[]()*_`<>!#|~\\"})


def _break_points(text: str) -> str:
    """`text` as a markdown cell, with a `<wbr>` after each separator: a line may break there,
    and copied text leaves it out (a zero-width space would stay in a pasted model id). A
    link (already escaped by `leaderboard_view.skill_link`) gets them in its text only; any
    other id is escaped first (a model id comes from untrusted results)."""
    link = _LINK_TEXT.match(text)
    shown, target = (link.group(1), link.group(2)) if link else (text.translate(_MD_SPECIAL), "")
    shown = named_bidi(shown)  # a model id or repo is the submitter's: never reordered
    shown = _SEPARATOR.sub("\\1<wbr>", shown)
    return f"[{shown}]{target}" if link else shown


def _breakable(headers: list[str], data: list[list[Any]]) -> dict[str, Any] | None:
    """What the browser shows of the `BREAKABLE` columns: each id with a `<wbr>` after its
    separators, where a line may then break, so that a narrow column never splits one of
    its words ("Instr/uct": chromium breaks after "-" but not after "/" nor before a digit,
    and a part too wide then breaks anywhere). The values stay as they are, for the table's
    search, copy and select; rows list display values only up to the last such column (the
    rest show their values)."""
    found = [i for i, header in enumerate(headers) if header in BREAKABLE]
    if not found or not data:
        return None
    last = found[-1]
    shown = [[_break_points(str(row[i])) if i in found else None
              for i in range(last + 1)] for row in data]
    return {"display_value": shown, "styling": None}


def wire_plot(plot: gr.components.NativePlot, frame: pd.DataFrame) -> dict[str, Any]:
    """A plot's points as `plot` sends them (its own `postprocess`), for keeping in a view."""
    data = plot.postprocess(frame)
    assert data is not None  # None only for a None value
    return data.model_dump()
