"""What the bwrap backend does around a sandbox's processes on the host: give each sandbox a
user of its own (as root), hand the workspace to that user, and wait until a sandbox's pid
namespace is gone.

As root, every sandbox (a check's, a sample's session) runs as a uid of its own, taken from a
range no account uses: the kernel's process limit counts processes per uid, so with one shared
uid an agent that leaves processes behind would make another sample's commands fail to fork.
A uid is in use from `lease_uid` to `release_uid`; only this process hands them out, and the
range is large enough that two hubskills processes picking the same one is negligible (and
harmless beyond sharing that limit).

Handing over walks the workspace through directory descriptors opened with `O_NOFOLLOW`, one
level at a time, and changes owners relative to them without following links: processes of a
sandbox session may still be running while it walks (they can swap a folder for a symlink at
any moment), and a path-based walk would then chown host files through their link. The walk
keeps its own stack: a workspace may nest folders deeper than Python's recursion limit.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import re
import select
import stat
import threading

SANDBOX_UID = 65534  # "nobody": the uid commands ran as before each sandbox had its own
UID_BASE, UID_SPAN = 2_000_000_000, 1 << 20  # unused by accounts and by /etc/subuid ranges
HAND_OVER_DEPTH = 256
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_CHILD_PID = re.compile(rb'"child-pid": *([0-9]+)')  # as bwrap writes it on --info-fd
_leased: set[int] = set()
_lease_lock = threading.Lock()
log = logging.getLogger(__name__)


def as_root() -> bool:
    """Whether hubskills runs as root (then each sandbox runs as a uid of its own)."""
    return hasattr(os, "geteuid") and os.geteuid() == 0


def lease_uid() -> int:
    """A uid no other sandbox of this process holds; give it back with `release_uid`."""
    with _lease_lock:
        while (uid := UID_BASE + random.randrange(UID_SPAN)) in _leased:
            pass
        _leased.add(uid)
        return uid


def release_uid(uid: int) -> None:
    """Give back a uid from `lease_uid` (once its sandbox's processes are all gone)."""
    with _lease_lock:
        _leased.discard(uid)


def passwd_entry(uid: int) -> bytes:
    """The `/etc/passwd` a sandbox of `uid` sees: root, nobody and its own user (tools such as
    git and whoami look the current user up)."""
    return (b"root:x:0:0:root:/root:/bin/sh\n"
            b"nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
            b"sandbox:x:%d:%d:sandbox:/workspace:/bin/sh\n" % (uid, uid))


def give_to_sandbox_user(folder: os.PathLike[str] | str, uid: int = SANDBOX_UID) -> None:
    """Make `folder` and everything under it owned by `uid` (links are changed, never
    followed; entries already owned are left alone), down to `HAND_OVER_DEPTH` levels: what
    the host writes lies far above that, and what lies deeper the sandbox made itself."""
    fd = os.open(folder, _DIR_FLAGS)
    stack: list[tuple[int, list[str]]] = [(fd, [])]  # open folders, sub-folders left in each
    try:
        if os.fstat(fd).st_uid != uid:
            os.fchown(fd, uid, uid)
        stack[-1] = (fd, _hand_over(fd, uid))
        while stack:
            top, folders = stack[-1]
            if not folders or len(stack) >= HAND_OVER_DEPTH:
                os.close(stack.pop()[0])
                continue
            try:
                child = os.open(folders.pop(), _DIR_FLAGS, dir_fd=top)
            except OSError:  # gone, or swapped for a link, since it was listed
                continue
            stack.append((child, []))
            stack[-1] = (child, _hand_over(child, uid))
    finally:
        for left, _ in stack:
            os.close(left)


def _hand_over(fd: int, uid: int) -> list[str]:
    """Hand the entries of folder `fd` to `uid`; the names of its sub-folders."""
    folders: list[str] = []
    for entry in os.scandir(fd):
        try:
            info = entry.stat(follow_symlinks=False)
            if info.st_uid != uid:
                os.chown(entry.name, uid, uid, dir_fd=fd, follow_symlinks=False)
        except OSError:  # gone since it was listed: nothing to do
            continue
        if stat.S_ISDIR(info.st_mode):
            folders.append(entry.name)
    return folders


def read_pid_one(info: int) -> int | None:
    """A pidfd of the sandbox's pid 1 as bwrap named it on `info`, or None (not named yet,
    never started, or already gone). It reads what is there without waiting: bwrap names the
    pid in its first write (atomic on a pipe), the namespace ids after it."""
    os.set_blocking(info, False)
    try:
        named = _CHILD_PID.search(os.read(info, 65536))
        return os.pidfd_open(int(named[1])) if named else None
    except OSError:
        return None


def map_own_ids(pid_one: int) -> None:
    """Map the user namespace of a sandbox's pid 1 (the pidfd `pid_one`, still waiting on
    bwrap's `--userns-block-fd`) to hubskills' own uid and gid, one each: the one mapping an
    unprivileged user may write, and what bwrap itself would write. Raises OSError when pid 1
    is gone (its number may be another process's by now: nothing is written then)."""
    pid = pid_of(pid_one)
    folder = os.open(f"/proc/{pid}", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        if pid < 1 or readable([pid_one], 0):  # exited: the folder may be another process's
            raise ProcessLookupError(f"the sandbox's pid 1 ({pid}) is gone")
        uid, gid = os.getuid(), os.getgid()
        for name, text in (("uid_map", f"{uid} {uid} 1\n"), ("setgroups", "deny"),
                           ("gid_map", f"{gid} {gid} 1\n")):
            fd = os.open(name, os.O_WRONLY | os.O_CLOEXEC, dir_fd=folder)
            try:
                os.write(fd, text.encode())
            finally:
                os.close(fd)
    finally:
        os.close(folder)


def pid_of(pidfd: int) -> int:
    """The pid (in hubskills' pid namespace) of the process behind `pidfd`; below 1 once it
    has exited (the kernel writes -1)."""
    with open(f"/proc/self/fdinfo/{pidfd}", encoding="ascii") as info:
        return next(int(line.split()[1]) for line in info if line.startswith("Pid:"))


def namespace_gone_now(pid_one: int | None, limit_s: float = 10.0) -> None:
    """`namespace_gone` for a thread without an event loop (blocks)."""
    if pid_one is not None and not readable([pid_one], limit_s):
        log.warning("a sandbox's pid 1 was still running %ss after bwrap", limit_s)


def readable(fds: list[int], limit_s: float) -> bool:
    """Whether one of `fds` became readable within `limit_s` (blocks; poll, as a descriptor
    may be past select's 1024)."""
    poller = select.poll()
    for fd in fds:
        poller.register(fd, select.POLLIN)
    return bool(poller.poll(limit_s * 1000))


async def namespace_gone(pid_one: int | None, limit_s: float = 10.0) -> None:
    """Wait until the sandbox's pid 1 (the pidfd `pid_one`, from `read_pid_one`; None: never
    started, or already gone) has exited, which the kernel allows only once every process of
    its namespace is gone (bwrap itself may exit a moment before: it returns as soon as the
    command's exit status is known). The pidfd stays open."""
    if pid_one is None:
        return
    loop = asyncio.get_running_loop()
    gone: asyncio.Future[None] = loop.create_future()

    def resolve() -> None:
        if not gone.done():
            gone.set_result(None)

    loop.add_reader(pid_one, resolve)
    try:
        await asyncio.wait_for(gone, limit_s)
    except TimeoutError:
        log.warning("a sandbox's pid 1 was still running %ss after its command", limit_s)
    finally:
        loop.remove_reader(pid_one)
