"""Bounds that hold while commands run: the bwrap backend watches a sandbox's writable folders
(the workspace; an agent CLI's HOME) and stops the sandbox once one is past its bounds.

The file-size rlimit (`Limits.file_bytes`) bounds each file a process writes, a sparse one
included: `truncate -s 1T` fails at once (SIGXFSZ, "File size limit exceeded"; EFBIG for a
process that ignores the signal). It cannot bound the
totals: a loop writing file after file, in the foreground or left in the background, would fill
the disk until the command's time limit or the session's end. So while the sandbox lives its
folders are walked every `INTERVAL_S` (`TreeWalk`, which stops at the bounds, so one walk costs
at most `WorkspaceBounds.entries` stats), and the first walk past a bound stops it: a single
command is killed (`SandboxResult.stopped` says why), a session ends with every process in it
(each later command raises `SessionEnded` with the reason).

What this does not do: between two walks a command can write whatever the disk takes in that
time, in files of up to `Limits.file_bytes` each, so the overshoot is bounded by write speed
times the interval, not by a byte count; the same holds for the file count (measured: a loop
making empty files was stopped at 35,000-53,000 of a 20,000 bound, on ext4 and on a tmpfs
alike). A kernel-enforced total (a size-limited filesystem for the workspace, or disk quotas)
would close that; the workspace is a host folder, whose filesystem this backend does not choose.
The sandbox's own tmpfs mounts (`/tmp`, `/dev/shm`) are bounded by the kernel instead, in bytes
and in files (`bwrap` module docstring), and are not walked.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from pathlib import Path

from registry.sandbox.tree import TreeWalk, WorkspaceBounds

INTERVAL_S = 0.25  # between two walks of the watched folders


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


async def watch(folders: Mapping[str, Path], bounds: WorkspaceBounds) -> str:
    """Return once one of `folders` (named for the reason) is past `bounds`: why."""
    while True:
        for name, folder in folders.items():
            reason = await asyncio.to_thread(over_bounds, folder, bounds)
            if reason:
                return f"{reason} (the {name}, seen while a command ran)"
        await asyncio.sleep(INTERVAL_S)
