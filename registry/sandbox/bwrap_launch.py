"""`Launch`: what one start of bwrap needs besides its command line, and what it tells back.

- `--info-fd`: bwrap names the sandbox's pid 1 there (`namespace.namespace_gone` waits on it).
  bwrap clones pid 1, names it, and only then lets it go on (an eventfd write it waits on
  forever, not yet set to die with bwrap). So a bwrap killed before it named its pid 1 can
  leave that process behind, out of reach: `pid_one` waits for the name (or bwrap's exit) and
  `kill` kills pid 1 (the kernel then kills its whole namespace) and then bwrap.
- A start marker. bwrap reports its pid 1 before it builds the sandbox's mounts, so a failed
  bind (an interpreter it cannot find, a broken wrapper) looks from outside like a command that
  exited 1. So the first thing run inside, once everything is built, is a trusted shim that
  writes one byte on a pipe and then execs the rest (the uid drop, then the command). No byte:
  the command never ran, and nothing the command or a model does can change that, which is why
  callers may treat it as the sandbox's failure rather than the command's
  (`SandboxResult.launch_error`).
- As root, the sandbox's own uid (`namespace.lease_uid`) and the `/etc/passwd` it sees.
- The system-call filter (`seccomp`: no System V IPC objects), on a pipe bwrap reads.
- As a normal user, the sandbox's user namespace is mapped by hubskills (`admit`), not by bwrap:
  bwrap waits on `--userns-block-fd` until its uid and gid are mapped. Left to itself, bwrap
  nests a second user namespace (its first maps root, to mount `/dev/pts`), and the sandbox's
  processes then hold no capability over the namespace that owns its mounts. Mapped once, by
  hubskills, the start shim can bound the private tmpfs mounts (their inode count: bwrap has no
  option for it) before it drops every capability (`bwrap` module docstring).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal

from registry.sandbox import seccomp
from registry.sandbox.namespace import (
    lease_uid,
    map_own_ids,
    passwd_entry,
    read_pid_one,
    readable,
    release_uid,
)

log = logging.getLogger(__name__)

# Reopened through /proc: dash takes single-digit descriptors only in redirections.
SHIM = 'printf . >/proc/self/fd/"$0" && exec "$@"'


class Launch:
    """The descriptors of one bwrap start (`uid` None when not root). Use as: `argv()` for the
    command line, `pass_fds` to the spawn, `spawned()` once spawned, `close()` at the end."""

    def __init__(self, *, root: bool) -> None:
        self.info_read, self._info_write = os.pipe()
        self._started_read, self._started_write = os.pipe()
        os.set_blocking(self._started_read, False)
        self.uid: int | None = None
        self._passwd = -1
        self._started = False
        self._pid_one = -1  # a pidfd, once bwrap named it
        self._waited = False
        self._userns_read = self._userns_write = -1  # bwrap waits on it for `admit`
        self._seccomp = _pipe_holding(seccomp.program())
        if not root:
            self._userns_read, self._userns_write = os.pipe()
        if root:
            self.uid = lease_uid()
            self._passwd = _pipe_holding(passwd_entry(self.uid))

    @property
    def pass_fds(self) -> tuple[int, ...]:
        """The descriptors bwrap inherits."""
        fds = (self._info_write, self._started_write, self._passwd, self._userns_read,
               self._seccomp)
        return tuple(fd for fd in fds if fd >= 0)

    @property
    def needs_admission(self) -> bool:
        """Whether bwrap waits for `admit` (as a normal user) before it builds the sandbox."""
        return self._userns_write >= 0

    def bwrap_args(self) -> list[str]:
        """Options for bwrap itself."""
        block = ["--userns-block-fd", str(self._userns_read)] if self._userns_read >= 0 else []
        syscalls = ["--seccomp", str(self._seccomp)] if self._seccomp >= 0 else []
        return ["--info-fd", str(self._info_write), *block, *syscalls]

    def mounts(self) -> list[str]:
        """Mounts over the sandbox's others (after them): its own `/etc/passwd`."""
        return ["--perms", "0644", "--ro-bind-data", str(self._passwd), "/etc/passwd"] \
            if self._passwd >= 0 else []

    def shim(self, sh: str, first: str = "") -> list[str]:
        """The argv prefix that runs the shell commands `first` (trusted: before anything of
        the caller's), marks the start, then execs what follows it."""
        return [sh, "-c", f"{first} && {SHIM}" if first else SHIM, str(self._started_write)]

    def admit(self, bwrap: int, limit_s: float = 10.0) -> None:
        """As a normal user, map the sandbox's user namespace to hubskills' own ids and let
        bwrap go on (`bwrap` is its pidfd; blocks at most `limit_s` until bwrap named its
        pid 1). A sandbox that cannot be mapped is killed, never let go on unmapped. Nothing
        to do as root."""
        if self._userns_write < 0:
            return
        admitted = False
        try:
            pid_one = self.pid_one(bwrap, limit_s)
            if pid_one is not None:
                map_own_ids(pid_one)
                admitted = os.write(self._userns_write, b".") == 1
        except OSError as exc:
            log.warning("could not map the sandbox's user namespace: %s", exc)
        finally:
            if not admitted:  # before the pipe closes: bwrap would read its end as a go
                self.kill(bwrap)
            os.close(self._userns_write)
            self._userns_write = -1

    async def admit_spawned(self, proc: asyncio.subprocess.Process) -> None:
        """`admit` for a bwrap spawned on the event loop: wait there until it named its pid 1
        (or exited), so that `admit` no longer blocks."""
        if proc.returncode is not None:
            return  # reaped: it never started, and its pid may be another process's by now
        pidfd = os.pidfd_open(proc.pid)
        loop = asyncio.get_running_loop()
        named: asyncio.Future[None] = loop.create_future()

        def resolve() -> None:
            if not named.done():
                named.set_result(None)

        try:
            for fd in (self.info_read, pidfd):
                loop.add_reader(fd, resolve)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(named, 10.0)  # within milliseconds on a working bwrap
            self.admit(pidfd, limit_s=0)
        finally:
            for fd in (self.info_read, pidfd):
                loop.remove_reader(fd)
            os.close(pidfd)

    def spawned(self) -> None:
        """Close the ends only the child needs (after it was spawned, or failed to be)."""
        for name in ("_info_write", "_started_write", "_passwd", "_userns_read", "_seccomp"):
            fd = getattr(self, name)
            if fd >= 0:
                os.close(fd)
                setattr(self, name, -1)

    def started(self) -> bool:
        """Whether the shim ran: the sandbox was built and its command about to be run."""
        if not self._started and self._started_read >= 0:
            try:
                self._started = bool(os.read(self._started_read, 1))
            except BlockingIOError:
                pass
        return self._started

    def pid_one(self, bwrap: int | None = None, limit_s: float = 10.0) -> int | None:
        """A pidfd of the sandbox's pid 1 (kept open until `close`), or None: not named yet,
        never started, or gone. With `bwrap` (its pidfd), wait until bwrap named it or exited
        (blocks, at most `limit_s`: bwrap names it within milliseconds of its start)."""
        if self._pid_one < 0 and bwrap is not None and self.info_read >= 0 \
                and not self._waited:
            self._waited = True  # once: past a bwrap that named none in time, kill at once
            if not readable([self.info_read, bwrap], limit_s):
                log.warning("bwrap named no sandbox pid 1 within %ss", limit_s)
        if self._pid_one < 0 and self.info_read >= 0:
            named = read_pid_one(self.info_read)
            self._pid_one = -1 if named is None else named
        return self._pid_one if self._pid_one >= 0 else None

    def kill(self, bwrap: int) -> None:
        """SIGKILL the sandbox's pid 1 (every process of its namespace dies with it) and bwrap
        (its pidfd), at any point of bwrap's start: see the module docstring."""
        for pidfd in (self.pid_one(bwrap), bwrap):
            if pidfd is not None:
                try:
                    signal.pidfd_send_signal(pidfd, signal.SIGKILL)
                except ProcessLookupError:
                    pass

    def close(self) -> None:
        """Close every descriptor left and give the uid back (the sandbox must be gone)."""
        self.started()  # remember it before the pipe closes
        self.spawned()
        if self._pid_one >= 0:
            os.close(self._pid_one)
            self._pid_one = -1
        for name in ("info_read", "_started_read", "_userns_write"):
            fd = getattr(self, name)
            if fd >= 0:
                os.close(fd)
                setattr(self, name, -1)
        if self.uid is not None:
            release_uid(self.uid)


def _pipe_holding(data: bytes | None) -> int:
    """The read end of a pipe holding `data` (far below a pipe's buffer), or -1 for None."""
    if data is None:
        return -1
    read, write = os.pipe()
    try:
        os.write(write, data)
    finally:
        os.close(write)
    return read
