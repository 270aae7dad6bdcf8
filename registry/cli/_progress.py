"""Progress, on stderr (`--json` or not): an evaluation's, and a long multi-step command's.

On a terminal a rich bar (an evaluation) or a spinner (`generate`); anywhere else (CI logs,
pipes, `> log`) the run id at once and a plain line every few answers or `HEARTBEAT_S` seconds,
whichever comes first, so a long run never looks hung. Both say the time left as
`registry.evaluation.time_left` estimates it.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.markup import escape

from registry.cli import _output as out
from registry.evaluation.time_left import TimeLeft, clock_text

HEARTBEAT_S = 10.0
LINES_PER_RUN = 20  # a plain line at least every 1/20th of the answers


class _Heartbeat:
    """Calls `beat` every `seconds` of silence (nothing said since), from a daemon thread."""

    def __init__(self, beat: Callable[[], None], seconds: float,
                 clock: Callable[[], float]) -> None:
        self.beat, self.seconds, self.clock = beat, seconds, clock
        self.poll = min(1.0, seconds)  # how often the thread looks at the clock
        self.last = clock()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True, name="progress")

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._done.set()

    def said(self) -> None:
        """Something was printed: the next beat is `seconds` from now."""
        self.last = self.clock()

    def _loop(self) -> None:
        while not self._done.wait(self.poll):
            if self.clock() - self.last >= self.seconds:
                self.said()
                self.beat()


def _started(manifest: Any, total: int, estimate: str = "") -> None:
    adaptive = (getattr(manifest, "design", None) or {}).get("kind") == "adaptive"
    said = [escape(estimate)] if estimate else []
    if adaptive:
        said.append("adaptive: it stops once the verdict is decided")
    out.info(f"run {manifest.run_id} ({escape(manifest.skill_name)}): "
             + ("at most " if adaptive else "") + f"{total} answers to get"
             + (f" ({'; '.join(said)})" if said else "")
             + "; Ctrl-C stops and keeps the finished ones")


def _left_text(time_left: TimeLeft, total: int, now: float) -> str:
    """`~2:06 left`, or nothing while too little is known (never `~0:00` with some left)."""
    left = time_left.left(total, now)
    return "" if left is None else f"~{clock_text(math.ceil(left))} left"


class PlainProgress:
    """An evaluation's progress as plain lines (no terminal): see the module's text."""

    def __init__(self, *, seconds: float = HEARTBEAT_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.begun = clock()
        self.run_id, self.done, self.total, self.errors = "", 0, 0, 0
        self.step, self.next_line = 1, 1
        self.time_left = TimeLeft(self.begun)
        self.heartbeat = _Heartbeat(self.line, seconds, clock)

    def __enter__(self) -> PlainProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.heartbeat.stop()

    def start(self, manifest: Any, total: int, estimate: str = "") -> None:
        """The run exists: say its id (and `estimate`, its time and cost) before the first
        model call, then keep talking."""
        self.run_id, self.total = manifest.run_id, total
        self.step = max(1, -(-total // LINES_PER_RUN))
        self.next_line = self.step
        _started(manifest, total, estimate)
        self.heartbeat.start()

    def update(self, done: int, total: int, row: Any) -> None:
        """One more answer; print a line every `step` answers (and the last)."""
        self.done, self.total = done, total
        self.time_left.answered(done, self.clock())
        self.errors += bool(row.is_error)
        if done >= self.next_line or done == total:
            self.next_line = done + self.step
            self.line()

    def line(self) -> None:
        """`run ID: 12/48 answers (25%) · 1 error · 0:42 elapsed · ~2:06 left`."""
        self.heartbeat.said()
        elapsed = self.clock() - self.begun
        parts = [f"run {self.run_id}: {self.done}/{self.total} answers"
                 + (f" ({self.done / self.total:.0%})" if self.total else "")]
        if self.errors:
            parts.append(f"{self.errors} error{'s' if self.errors > 1 else ''}")
        parts.append(f"{clock_text(elapsed)} elapsed")
        if left := _left_text(self.time_left, self.total, self.clock()):
            parts.append(left)
        out.info(" · ".join(parts))


class BarProgress:
    """An evaluation's progress as a rich bar on the terminal (the run id printed above it),
    shown from `start` on: a run refused by its checks never flashes an empty bar. Beside the
    time elapsed, the time left, as the plain lines estimate it (redrawn ten times a second,
    so it counts down between answers)."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic,
                 console: Console | None = None) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
        )

        self.clock = clock
        self.time_left = TimeLeft(clock())
        self.bar = Progress(TextColumn("[bold]evaluating"), BarColumn(), MofNCompleteColumn(),
                            TextColumn("{task.fields[last]}"), _clock_column(self),
                            console=console or out.err,
                            transient=True)
        self.task = self.bar.add_task("eval", total=None, last="")
        self.shown = False

    def __enter__(self) -> BarProgress:
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.shown:
            self.bar.__exit__(*exc)

    def start(self, manifest: Any, total: int, estimate: str = "") -> None:
        """Say the run id (and `estimate`), and show the bar under it counting `total`
        answers."""
        _started(manifest, total, estimate)
        self.bar.update(self.task, total=total)
        if not self.shown:
            self.bar.__enter__()
            self.shown = True

    def update(self, done: int, total: int, row: Any) -> None:
        """One more answer."""
        self.time_left.answered(done, self.clock())
        mark = "error" if row.is_error else ("pass" if row.passed else "fail")
        self.bar.update(self.task, completed=done, total=total,
                        last=escape(out.visible(f"{row.case_id} [{row.arm}] {mark}")))

    def left(self) -> str:
        """The time left now, as the bar says it (`~2:06 left`, or nothing yet)."""
        task = self.bar.tasks[self.task]
        return _left_text(self.time_left, int(task.total or 0), self.clock())

    def clock_cell(self) -> str:
        """`0:42 elapsed · ~2:06 left`, as the plain lines say it."""
        elapsed = f"{clock_text(self.clock() - self.time_left.begun)} elapsed"
        return f"{elapsed} · {left}" if (left := self.left()) else elapsed


def _clock_column(progress: BarProgress) -> Any:
    """A rich column drawing `progress.clock_cell()` (rich's own time-remaining column
    divides by the average speed, start-up and waves included)."""
    from rich.progress import ProgressColumn
    from rich.text import Text

    class ClockColumn(ProgressColumn):
        def render(self, task: Any) -> Text:
            return Text(progress.clock_cell(), style="progress.elapsed")

    return ClockColumn()


def eval_progress() -> BarProgress | PlainProgress:
    """The progress display for an evaluation: a bar on a terminal, plain lines elsewhere."""
    return BarProgress() if out.err.is_terminal else PlainProgress()


class StepProgress:
    """Progress of a long multi-step command (`generate`): each step's line as it comes, and,
    when nothing was said for `seconds`, a line saying what it is still doing (on a terminal
    a spinner says it instead)."""

    def __init__(self, *, seconds: float = HEARTBEAT_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.clock, self.begun, self.last = clock, clock(), "starting"
        self.said: set[str] = set()  # every line said, so a report does not say it again
        self.heartbeat = _Heartbeat(self._still, seconds, clock)
        self.status = out.err.status("working…") if out.err.is_terminal else None

    def __enter__(self) -> StepProgress:
        if self.status is not None:
            self.status.__enter__()
        else:
            self.heartbeat.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.heartbeat.stop()
        if self.status is not None:
            self.status.__exit__(*exc)

    def say(self, line: str) -> None:
        """Print a step's line (user text is printed literally)."""
        self.heartbeat.said()
        self.last = line
        self.said.add(line)
        out.info(escape(line))
        if self.status is not None:
            self.status.update(escape(out.visible(line)[:70]))

    def _still(self) -> None:
        out.info(escape(f"… still working ({clock_text(self.clock() - self.begun)} elapsed): "
                        f"{self.last[:80]}"))
