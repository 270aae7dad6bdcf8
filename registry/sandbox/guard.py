"""Bounds that hold while commands run: the bwrap backend watches a sandbox's writable folders
(the workspace; an agent CLI's HOME) and the memory its processes hold together, and stops the
sandbox once one is past its bounds: a single command is killed (`SandboxResult.stopped` says
why), a session ends with every process in it (each later command raises `SessionEnded` with
the reason).

**Folders.** The file-size rlimit (`Limits.file_bytes`) bounds each file a process writes, a
sparse one included: `truncate -s 1T` fails at once (SIGXFSZ, "File size limit exceeded"; EFBIG
for a process that ignores the signal). It cannot bound the totals: a loop writing file after
file, in the foreground or left in the background, would fill the disk until the command's time
limit or the session's end. So while the sandbox lives its folders are walked every
`INTERVAL_S` (`TreeWalk`, which stops at the bounds, so one walk costs at most
`WorkspaceBounds.entries` stats), and the first walk past a bound stops it.

What this does not do: between two walks a command can write whatever the disk takes in that
time, in files of up to `Limits.file_bytes` each, so the overshoot is bounded by write speed
times the interval, not by a byte count; the same holds for the file count (measured: a loop
making empty files was stopped at 35,000-53,000 of a 20,000 bound, on ext4 and on a tmpfs
alike). A kernel-enforced total (a size-limited filesystem for the workspace, or disk quotas)
would close that; the workspace is a host folder, whose filesystem this backend does not choose.
The sandbox's own tmpfs mounts (`/tmp`, `/dev/shm`) are bounded by the kernel instead, in bytes
and in files (`bwrap` module docstring), and are not walked.

**Memory.** The address-space rlimit (`Limits.memory_bytes`) bounds each process, and
`Limits.processes` their number, so a sandbox as a whole could hold their product (128 GiB by
default): a check forking 30 children that each touch 900 MB takes a 24 GiB machine down, and
the kernel's OOM killer may pick the user's own work. A cgroup would bound the total, but a
user's machine cannot be relied on to delegate one. So every `INTERVAL_S` the sandbox's
processes (its pid 1 and every descendant, found from the host) are sampled (`resident`: their
`Pss` summed, shared pages counted once, read only when the sum of their `VmRSS` is past the
bound), and the first sample past `Limits.memory_total_bytes` stops it ("the sandbox's
processes held 4.3 GiB together, over its 4 GiB bound"). One sample costs ~2 ms for 100
processes within the bound (their `VmRSS`, and the parent of each of the host's ~240
processes where the kernel does not list children) and ~20-40 ms for 100 past it, plus ~12 ms
per GiB they hold (their page tables walked for `Pss`); measured on 2 loaded cores, in a worker
thread, never on the event loop.

What this does not do: between two samples a burst can go past the bound (a process that
touches 1 GiB does so in well under `INTERVAL_S`; `Limits.memory_bytes` caps each process, so
the overshoot is at most what the processes can touch in that time, not a byte count), and the
kernel's OOM killer stays the last resort for a burst the host cannot hold. Memory that is no
process's is not counted: the private tmpfs mounts' files (bounded in bytes by the kernel:
`Limits.file_bytes`, `Limits.shm_bytes`) and kernel memory (page tables, sockets, inodes).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping
from pathlib import Path

from registry.sandbox.namespace import pid_of, readable
from registry.sandbox.resident import sample
from registry.sandbox.tree import TreeWalk, WorkspaceBounds

INTERVAL_S = 0.25  # between two walks of the watched folders, and two samples of the memory


def over_bounds(folder: Path, bounds: WorkspaceBounds) -> str | None:
    """Why `folder` is past `bounds` now, or None (also when it is gone)."""
    walk = TreeWalk(folder, bounds)
    try:
        with contextlib.closing(iter(walk)) as entries:
            for _ in entries:
                if walk.over():
                    break
    except OSError:
        return None
    return walk.over()


def over_memory(root: int, bound: int) -> str | None:
    """Why the process `root` (a sandbox's pid 1) and its descendants hold more than `bound`
    bytes together now, or None (also when they are gone)."""
    now = sample(root, bound)
    if now.held <= bound:
        return None
    held, most = _size(now.held), _size(bound)
    if held == most or held == f"{bound / 2**30:.1f} GiB":
        held, most = f"{now.held / 2**20:,.0f} MiB", f"{bound / 2**20:,.0f} MiB"
    return (f"the sandbox's processes held {held} together, over its {most} bound "
            f"({now.count} processes, shared pages counted once)")


async def watch(folders: Mapping[str, Path], bounds: WorkspaceBounds | None, *,
                pid_one: Callable[[], int | None] | None = None,
                memory_bytes: int | None = None) -> str:
    """Return once one of `folders` (named for the reason) is past `bounds`, or the sandbox's
    processes hold more than `memory_bytes` together: why. `pid_one()` is a pidfd of the
    sandbox's pid 1, or None while it is not known yet. None: that is not watched."""
    root = 0
    while True:
        if bounds is not None:
            for name, folder in folders.items():
                reason = await asyncio.to_thread(over_bounds, folder, bounds)
                if reason:
                    return f"{reason} (the {name}, seen while a command ran)"
        pidfd = pid_one() if pid_one is not None else None
        if pidfd is not None and memory_bytes is not None:
            root = root or pid_of(pidfd)
            if root > 0:
                reason = await asyncio.to_thread(over_memory, root, memory_bytes)
                if reason and not readable([pidfd], 0):  # pid 1 runs: `root` is still its pid
                    return f"{reason}, seen while a command ran"
        await asyncio.sleep(INTERVAL_S)


def _size(n: int) -> str:
    if n < 1 << 30:
        return f"{n / 2**20:,.0f} MiB"
    return f"{n >> 30} GiB" if n % (1 << 30) == 0 else f"{n / 2**30:.1f} GiB"
