"""What the bwrap backend does around a sandbox's processes on the host: hand the workspace to
the sandbox user (as root), and wait until a sandbox's pid namespace is gone.

Handing over walks the workspace through directory descriptors opened with `O_NOFOLLOW`, one
level at a time, and changes owners relative to them without following links: processes of a
sandbox session may still be running while it walks (they can swap a folder for a symlink at
any moment), and a path-based walk would then chown host files through their link.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import stat

SANDBOX_UID = 65534  # "nobody": the uid a command runs as when hubskills runs as root
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
log = logging.getLogger(__name__)


def as_root() -> bool:
    """Whether hubskills runs as root (then commands drop to `SANDBOX_UID`)."""
    return hasattr(os, "geteuid") and os.geteuid() == 0


def give_to_sandbox_user(folder: os.PathLike[str] | str) -> None:
    """Make `folder` and everything under it owned by `SANDBOX_UID` (links are changed, never
    followed; entries already owned are left alone)."""
    fd = os.open(folder, _DIR_FLAGS)
    try:
        if os.fstat(fd).st_uid != SANDBOX_UID:
            os.fchown(fd, SANDBOX_UID, SANDBOX_UID)
        _hand_over(fd)
    finally:
        os.close(fd)


def _hand_over(fd: int) -> None:
    for entry in os.scandir(fd):
        try:
            info = entry.stat(follow_symlinks=False)
            if info.st_uid != SANDBOX_UID:
                os.chown(entry.name, SANDBOX_UID, SANDBOX_UID, dir_fd=fd, follow_symlinks=False)
            if not stat.S_ISDIR(info.st_mode):
                continue
            child = os.open(entry.name, _DIR_FLAGS, dir_fd=fd)
        except OSError:  # gone, or swapped for a link, since it was listed: nothing to do
            continue
        try:
            _hand_over(child)
        finally:
            os.close(child)


async def namespace_gone(info: int, limit_s: float = 10.0) -> None:
    """Wait until the sandbox's pid 1 (named on bwrap's `--info-fd`, read end `info`) has
    exited, which the kernel allows only once every process of its namespace is gone (bwrap
    itself may exit a moment before: it returns as soon as the command's exit status is known).
    """
    os.set_blocking(info, False)
    try:
        text = os.read(info, 65536).decode("utf-8", "replace")
        pid = int(json.loads(text)["child-pid"])
        pidfd = os.pidfd_open(pid)
    except (OSError, ValueError, KeyError, TypeError):
        return  # never started, or already gone
    loop = asyncio.get_running_loop()
    gone = loop.create_future()
    loop.add_reader(pidfd, lambda: gone.done() or gone.set_result(None))
    try:
        await asyncio.wait_for(gone, limit_s)
    except TimeoutError:
        log.warning("the sandbox's pid %d was still running %ss after its command", pid,
                    limit_s)
    finally:
        loop.remove_reader(pidfd)
        os.close(pidfd)
