"""What a sample's workspace may hold, and the walks, copies and removals that respect it.

An agent's commands write the workspace, so hubskills reads it back as hostile input: every
walk is iterative (an explicit stack, never recursion), goes through directory descriptors
opened with `O_NOFOLLOW`, and stops at `WorkspaceBounds`: files and folders counted, total size
both apparent (`st_size`, what a sparse file claims) and allocated (`st_blocks`, the disk it
uses), depth and path length. A workspace past a bound fails its sample as the arm's failure
(`WorkspaceOverLimit`); listings and copies stop at the bound and say what they left out.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

from registry._docs import doc
from registry.errors import HubskillsError
from registry.sandbox.tree import (
    DEFAULT_BOUNDS,
    DIR_FLAGS,
    TreeEntry,
    TreeWalk,
    WorkspaceBounds,
    open_folder,
)

__all__ = ["CHUNK", "DEFAULT_BOUNDS", "DIR_FLAGS", "FILE_FLAGS", "TreeEntry", "TreeWalk",
           "WorkspaceBounds", "WorkspaceOverLimit", "check_bounds", "copy_file_sparse",
           "copy_tree", "measure", "open_folder", "remove_tree"]

FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
CHUNK = 1 << 20  # bytes read or written at once


class WorkspaceOverLimit(HubskillsError):
    """A workspace past its bounds, or (`sandbox`: the sandbox stopped an agent CLI, over
    any of its bounds) its processes' memory: the sample fails in its arm, the run goes on."""

    def __init__(self, reason: str, *, sandbox: bool = False) -> None:
        what = ("hubskills stopped the agent's sandbox, over its bounds" if sandbox
                else "the agent's workspace is over hubskills' bounds")
        super().__init__(f"{what}: {reason}; the sample fails in this arm",
                         hint=f"see 'What a workspace may hold' and 'What a sandbox's "
                              f"processes may hold' in "
                              f"{doc('security')}")
        self.reason = reason


def measure(top: int, bounds: WorkspaceBounds = DEFAULT_BOUNDS) -> Iterator[TreeEntry]:
    """The entries of `TreeWalk(top, bounds)`, raising as soon as the tree is over a bound.

    Raises:
        WorkspaceOverLimit: the first bound met, by the walk or by the totals.
    """
    walk = TreeWalk(top, bounds)
    with contextlib.closing(iter(walk)) as entries:  # its descriptors closed now, not at GC
        for entry in entries:
            reason = walk.over()
            if reason:
                raise WorkspaceOverLimit(reason)
            yield entry
    reason = walk.over()
    if reason:
        raise WorkspaceOverLimit(reason)


def check_bounds(root: Path | str, bounds: WorkspaceBounds = DEFAULT_BOUNDS) -> None:
    """Walk the workspace at `root` and raise if it is past `bounds` (after an agent's command:
    a workspace that grows past them ends its sample then, not when the sample is over).

    Raises:
        WorkspaceOverLimit: the first bound met.
    """
    fd = open_folder(root)
    try:
        for _ in measure(fd, bounds):
            pass
    finally:
        os.close(fd)


def copy_file_sparse(source: int, target: int, size: int, budget: int) -> int:
    """Copy the regular file `source` into `target` (both descriptors) without inflating
    holes: the target gets the same size and only the source's data is written, in chunks.
    Stops after `budget` bytes of data; returns the data bytes written."""
    os.ftruncate(target, size)
    written, pos = 0, 0
    while pos < size and written < budget:
        try:
            start = os.lseek(source, pos, os.SEEK_DATA)
            end = os.lseek(source, start, os.SEEK_HOLE)
        except OSError as err:
            if err.errno == errno.ENXIO:  # nothing but a hole from `pos` on
                break
            start, end = pos, size  # no hole support: zero chunks are skipped below
        pos = start
        while pos < min(end, size) and written < budget:
            chunk = os.pread(source, min(CHUNK, end - pos, budget - written), pos)
            if not chunk:
                return written
            if chunk.count(0) != len(chunk):
                os.pwrite(target, chunk, pos)
                written += len(chunk)
            pos += len(chunk)
    return written


def copy_tree(source: Path, target: Path, bounds: WorkspaceBounds = DEFAULT_BOUNDS, *,
              skip: Callable[[str], bool] | None = None) -> list[str]:
    """Copy folders, regular files and symlinks (as links, never followed) from `source` into
    the new folder `target` within `bounds`; special files and what `skip` names are left out.

    A sparse file stays sparse (only its data is written, in chunks); a file that would take
    the copy past the total size or disk bound is left out, as is what the walk's bounds cut.
    Returns what was left out and why (empty for a tree within its bounds).
    """
    target.mkdir()
    left_out: list[str] = []
    apparent = allocated = 0
    walk = TreeWalk(source, bounds, skip=skip)
    for entry in walk:
        info = entry.info
        room = (bounds.apparent_bytes - apparent, bounds.allocated_bytes - allocated)
        if entry.is_file and (info.st_size > room[0] or info.st_blocks * 512 > room[1]):
            left_out.append(f"{entry.rel} ({info.st_size:,} bytes: over the copy's bounds)")
            continue
        try:
            allocated += _copy_entry(entry, target / entry.rel, room[1])
        except OSError as exc:
            left_out.append(f"{entry.rel} ({exc.strerror})")
            continue
        apparent += info.st_size if entry.is_file else 0
    return left_out + walk.cut


def _copy_entry(entry: TreeEntry, copy: Path, budget: int) -> int:
    """Make `copy` like `entry` (a folder, a link as a link, a regular file's data); the data
    bytes written."""
    if entry.is_link:
        copy.symlink_to(os.readlink(entry.name, dir_fd=entry.dir_fd))
    elif entry.is_dir:
        copy.mkdir()
    elif entry.is_file:
        fd = os.open(entry.name, FILE_FLAGS, dir_fd=entry.dir_fd)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return 0  # replaced meanwhile
            out = os.open(copy, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
            try:
                os.fchmod(out, entry.info.st_mode & 0o755 | 0o600)  # whatever the umask
                return copy_file_sparse(fd, out, entry.info.st_size, budget)
            finally:
                os.close(out)
        finally:
            os.close(fd)
    return 0


def remove_tree(path: Path | str) -> None:
    """Remove the folder `path` and everything in it, however deep, never following a link.

    Iterative, holding two descriptors at most (a folder is reopened from its child with
    `..` and checked to be the same one), so neither recursion nor open files limit the depth.
    Errors are ignored, as `shutil.rmtree(ignore_errors=True)` would.
    """
    try:
        fd = os.open(path, DIR_FLAGS)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(path)  # a link or a file: removed itself, never followed
        return
    # each level: (its name in its parent, its identity, subfolders still to remove)
    levels: list[tuple[str, tuple[int, int], list[str]]] = [("", _identity(fd), _empty(fd))]
    try:
        while levels:
            name, identity, subfolders = levels[-1]
            if subfolders:
                fd = _descend(fd, subfolders.pop(), levels)
                continue
            levels.pop()
            if not levels:
                break
            parent = os.open("..", DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = parent
            if _identity(fd) != levels[-1][1]:
                return  # moved under us: stop rather than remove elsewhere
            with contextlib.suppress(OSError):
                os.rmdir(name, dir_fd=fd)
    finally:
        os.close(fd)
    with contextlib.suppress(OSError):
        os.rmdir(path)


def _descend(fd: int, name: str, levels: list[tuple[str, tuple[int, int], list[str]]]) -> int:
    try:
        child = os.open(name, DIR_FLAGS, dir_fd=fd)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(name, dir_fd=fd)  # became a link or a file meanwhile
        return fd
    os.close(fd)
    levels.append((name, _identity(child), _empty(child)))
    return child


def _identity(fd: int) -> tuple[int, int]:
    info = os.fstat(fd)
    return info.st_dev, info.st_ino


def _empty(fd: int) -> list[str]:
    """Unlink everything in the folder `fd` but its subfolders; their names."""
    subfolders: list[str] = []
    others: list[str] = []
    with contextlib.suppress(OSError), os.scandir(fd) as listing:
        for item in listing:
            (subfolders if item.is_dir(follow_symlinks=False) else others).append(item.name)
    for name in others:  # after the listing: unlinking while reading it may skip entries
        with contextlib.suppress(OSError):
            os.unlink(name, dir_fd=fd)
    return subfolders
