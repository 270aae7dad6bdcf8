"""What a sandbox's workspace may hold (`WorkspaceBounds`) and the one walk that measures it.

The workspace is written by untrusted code, so it is read back as hostile input: the walk is
iterative (an explicit stack, never recursion), goes through directory descriptors opened with
`O_NOFOLLOW`, and stops at the bounds: files and folders counted, total size both apparent
(`st_size`, what a sparse file claims) and allocated (`st_blocks`, the disk it uses), depth and
path length. The bwrap backend walks it while commands run (`guard`); the agent layer walks it
after each command and for diffs and copies (`registry.agent.bounds`).
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from pathlib import Path

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass(frozen=True)
class WorkspaceBounds:
    """What one sample's workspace may hold; a real project fits well inside the defaults."""

    apparent_bytes: int = 512 << 20  # sizes added up, a sparse file at its full size
    allocated_bytes: int = 256 << 20  # disk in use (st_blocks * 512)
    entries: int = 20_000  # files, folders and links
    depth: int = 64  # folders inside folders
    path_bytes: int = 4096  # one path, relative to the workspace
    read_bytes: int = 8 << 20  # a file larger than this is never read for a diff


DEFAULT_BOUNDS = WorkspaceBounds()


@dataclass(frozen=True)
class TreeEntry:
    """One entry met by a walk. `dir_fd` (its folder) is open only while the walk is here."""

    rel: str
    name: str
    dir_fd: int
    info: os.stat_result  # lstat: a link is a link
    depth: int

    @property
    def is_dir(self) -> bool:  # noqa: D102
        return stat.S_ISDIR(self.info.st_mode)

    @property
    def is_file(self) -> bool:  # noqa: D102
        return stat.S_ISREG(self.info.st_mode)

    @property
    def is_link(self) -> bool:  # noqa: D102
        return stat.S_ISLNK(self.info.st_mode)


@dataclass
class _Folder:
    fd: int
    prefix: str
    depth: int
    names: list[tuple[str, os.stat_result]] = field(default_factory=list)


def _mib(n: int) -> str:
    return f"{n / 2**20:,.0f} MiB"


@dataclass
class TreeWalk:
    """Iterate the entries under the folder `top` (a path, or a descriptor not closed here) in
    sorted order, depth first, never following a link, within `bounds`.

    What the bounds kept out is in `cut` (one reason per kind); the totals of what was met are
    in `entries`, `apparent` and `allocated`. An entry for which `skip(rel)` holds is neither
    yielded nor entered.
    """

    top: int | Path
    bounds: WorkspaceBounds = DEFAULT_BOUNDS
    prefix: str = ""
    skip: Callable[[str], bool] | None = None
    cut: list[str] = field(default_factory=list)
    entries: int = 0
    apparent: int = 0
    allocated: int = 0

    def over(self) -> str | None:
        """Why the tree met so far is past its bounds, or None."""
        b = self.bounds
        if self.cut:
            return self.cut[0]
        if self.apparent > b.apparent_bytes:
            return (f"its files add up to more than {_mib(b.apparent_bytes)} (a sparse file "
                    "counts at its full size)")
        if self.allocated > b.allocated_bytes:
            return f"it uses more than {_mib(b.allocated_bytes)} of disk"
        return None

    def __iter__(self) -> Generator[TreeEntry, None, None]:
        first = os.dup(self.top) if isinstance(self.top, int) else open_folder(self.top)
        stack = [self._open(first, self.prefix, 0)]
        try:
            while stack:
                folder = stack[-1]
                if not folder.names:
                    os.close(stack.pop().fd)
                    continue
                name, info = folder.names.pop()
                if self.entries >= self.bounds.entries:
                    self._note(f"it holds more than {self.bounds.entries:,} files and folders")
                    break
                entry = TreeEntry(folder.prefix + name, name, folder.fd, info, folder.depth + 1)
                if len(os.fsencode(entry.rel)) > self.bounds.path_bytes:
                    self._note(f"a path is longer than {self.bounds.path_bytes:,} bytes "
                               f"({entry.rel[:60]}…)")
                    continue
                self.entries += 1
                self.apparent += info.st_size
                self.allocated += info.st_blocks * 512
                yield entry
                if entry.is_dir:
                    child = self._enter(entry)
                    if child is not None:
                        stack.append(child)
        finally:
            for folder in stack:
                os.close(folder.fd)

    def _enter(self, entry: TreeEntry) -> _Folder | None:
        try:
            fd = os.open(entry.name, DIR_FLAGS, dir_fd=entry.dir_fd)
        except OSError:
            return None  # replaced meanwhile, or unreadable: nothing under it is walked
        deepest = entry.depth >= self.bounds.depth
        folder = self._open(fd, entry.rel + "/", entry.depth, room=1 if deepest else None)
        if deepest and folder.names:
            self._note(f"folders are nested more than {self.bounds.depth} deep "
                       f"({entry.rel[:60]}…)")
            os.close(fd)
            return None
        return folder

    def _open(self, fd: int, prefix: str, depth: int, room: int | None = None) -> _Folder:
        """The folder `fd` with its entries read (no more than the bound leaves room for)."""
        room = room or self.bounds.entries - self.entries + 1
        names: list[tuple[str, os.stat_result]] = []
        try:
            with os.scandir(fd) as listing:
                for item in listing:
                    if self.skip and self.skip(prefix + item.name):
                        continue  # before the count: what is skipped takes no room
                    if len(names) >= room:
                        break
                    with contextlib.suppress(FileNotFoundError):
                        names.append((item.name, item.stat(follow_symlinks=False)))
        except OSError:
            names = []
        names.sort(reverse=True)  # popped from the end: walked in name order
        return _Folder(fd, prefix, depth, names)

    def _note(self, reason: str) -> None:
        kind = reason.split(" ", 2)[:2]
        if all(c.split(" ", 2)[:2] != kind for c in self.cut):
            self.cut.append(reason)


def open_folder(path: Path | str) -> int:
    """A descriptor of the folder `path` (not through a link at its last component)."""
    return os.open(path, DIR_FLAGS)
