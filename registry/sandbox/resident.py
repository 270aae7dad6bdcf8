"""The processes of a sandbox as the host sees them, and the memory they hold together.

A sandbox's processes are its pid 1 and every descendant of it: in a pid namespace the kernel
gives orphans to pid 1, so a double-forked or `setsid` process stays in the tree. They are
found from the host, through `/proc/<pid>/task/<tid>/children` where the kernel has it
(`CONFIG_PROC_CHILDREN`; cost in proportion to the sandbox), else by one scan of every
`/proc/<pid>/stat` for its parent (cost in proportion to the host's processes).

What they hold together is the sum of their proportional set sizes (`Pss`, from
`/proc/<pid>/smaps_rollup`): a page mapped by n processes counts 1/n in each, so the sum counts
a page the sandbox's processes share once. That matters for the usual shape of a check: forked
children share their parent's interpreter, libraries and copy-on-write heap, and the sum of
their `VmRSS` counts those once per child (measured: 100 Pythons, 1,077 MiB by `VmRSS`, 480 MiB
by `Pss`). Pages shared with processes outside the sandbox (a system library the host has
mapped too) count in part: the sandbox's share. But `Pss` costs a walk of the process's page
tables (~0.17 ms for a small Python, ~12 ms per GiB it holds), where `VmRSS` is a counter
(`/proc/<pid>/statm`, ~5 µs). Since a process's `Pss` is never more than its `VmRSS`, `sample`
sums `VmRSS` first and reads `Pss` only when that sum is past the bound: a sandbox well within
it costs only the cheap reads. A process whose `Pss` may not be read (root without
`CAP_SYS_PTRACE`, as in a default container, reading another uid's; a kernel before 4.14)
counts its `VmRSS`, so the bound only bites sooner.

The sandbox's processes run concurrently with the reading: one that exits in between is
skipped, never an error, and its memory no longer counts.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

_PROC = "/proc"
PAGE = os.sysconf("SC_PAGE_SIZE")


@functools.cache
def has_children_files() -> bool:
    """Whether this kernel lists a task's children (`/proc/<pid>/task/<tid>/children`)."""
    return os.path.exists(f"{_PROC}/self/task/{os.getpid()}/children")


@functools.cache
def _has_rollup() -> bool:
    return os.path.exists(f"{_PROC}/self/smaps_rollup")  # Linux 4.14 and later


def processes(root: int, *, children_files: bool | None = None) -> list[int]:
    """`root` and every process descended from it (the pids of those still running); `[]`
    when `root` is gone. `children_files`: how to find them (None: what the kernel offers)."""
    if children_files is None:
        children_files = has_children_files()
    if not os.path.exists(f"{_PROC}/{root}"):
        return []
    return _descendants(root, _children if children_files else _parents_scan())


def _descendants(root: int, children_of: Callable[[int], Iterable[int]]) -> list[int]:
    """`root` and every process below it, each process's children as `children_of` gives."""
    found, stack = [root], [root]
    while stack:
        for child in children_of(stack.pop()):
            found.append(child)
            stack.append(child)
    return found


def _children(pid: int) -> Iterator[int]:
    """The children of `pid`, forked by any of its threads (nothing once it is gone)."""
    try:
        tasks = os.listdir(f"{_PROC}/{pid}/task")
    except OSError:
        return
    for tid in tasks:
        data = _read(f"{_PROC}/{pid}/task/{tid}/children", 1 << 16)  # 512 pids: < 4 KiB
        if data:
            yield from map(int, data.split())


def _parents_scan() -> Callable[[int], Iterable[int]]:
    """Each process's children, from one scan of every process's parent."""
    children: dict[int, list[int]] = {}
    for name in os.listdir(_PROC):
        if not name.isdigit():
            continue
        data = _read(f"{_PROC}/{name}/stat")
        if data:  # "pid (comm) state ppid ...": comm may hold spaces and parentheses
            fields = data[data.rfind(b")") + 2:].split(None, 2)
            if len(fields) >= 2:
                children.setdefault(int(fields[1]), []).append(int(name))
    return lambda pid: children.get(pid, ())


def rss_bytes(pid: int) -> int:
    """What `pid` has resident (`VmRSS`, from `/proc/<pid>/statm`: cheap); 0 once gone."""
    fields = _read(f"{_PROC}/{pid}/statm").split(None, 2)
    return int(fields[1]) * PAGE if len(fields) >= 2 and fields[1].isdigit() else 0


def pss_bytes(pid: int) -> int | None:
    """The `Pss` of `pid` (its page tables walked); 0 once gone (or a zombie, which holds
    none), None when it may not be read."""
    if not _has_rollup():
        return None
    try:
        fd = os.open(f"{_PROC}/{pid}/smaps_rollup", os.O_RDONLY | os.O_CLOEXEC)
    except (FileNotFoundError, ProcessLookupError):
        return 0
    except OSError:
        return None  # EACCES: another uid's process, read without CAP_SYS_PTRACE
    try:
        data = os.read(fd, 8192)
    except ProcessLookupError:
        return 0
    except OSError:
        return None
    finally:
        os.close(fd)
    at = data.find(b"\nPss:")
    fields = data[at + 5:].split(None, 2) if at >= 0 else []
    if len(fields) >= 2 and fields[0].isdigit() and fields[1] == b"kB":
        return int(fields[0]) * 1024
    return 0 if not data else None


@dataclass(frozen=True)
class Sample:
    """What a sandbox's processes held together at one moment: `held` bytes over `count`
    processes, by `Pss` (`proportional`) or by the cheaper sum of their `VmRSS`."""

    held: int
    count: int
    proportional: bool


def sample(root: int, bound: int, *, children_files: bool | None = None) -> Sample:
    """What `root` and its descendants hold together, as exact as `bound` needs: the sum of
    their `VmRSS` while that is within `bound` (each `Pss` is at most its `VmRSS`, so their
    sum is within it too), else the sum of their `Pss` (a process whose `Pss` may not be read
    counts its `VmRSS`; one that exited meanwhile counts nothing)."""
    pids = processes(root, children_files=children_files)
    rss = {pid: rss_bytes(pid) for pid in pids}
    total = sum(rss.values())
    if total <= bound:
        return Sample(total, len(pids), proportional=False)
    held = 0
    for pid, resident in rss.items():
        pss = pss_bytes(pid)
        held += resident if pss is None else pss
    return Sample(held, len(pids), proportional=True)


def _read(path: str, size: int = 8192) -> bytes:
    """The start of a small `/proc` file; b"" when it cannot be read (the process is gone)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return b""
    try:
        return os.read(fd, size)
    except OSError:
        return b""
    finally:
        os.close(fd)
