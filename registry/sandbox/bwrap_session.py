"""`BwrapSession`: one bubblewrap sandbox that runs every command of a session.

bwrap starts once, built exactly as for a single command (`BwrapSandbox.command`: the same
namespaces, binds, empty environment, rlimits, process limit and, as root, uid drop), with
`supervisor.py` as its command. Each `run` is one request to the supervisor's stdin and one
answer back (their format is in `supervisor`), so a command costs a fork and an exec, not a new
sandbox.

bwrap is spawned directly (`subprocess.Popen`, which uses vfork here, in a worker thread that
also waits until bwrap named the sandbox's pid 1: see `bwrap_launch` for why) and its pipes
and exit are watched with the event loop's readers on non-blocking descriptors and a
pidfd: asyncio's subprocess transport would take several loop round trips and a watcher thread
per start, which a loop busy with 16 samples turns into ~100 ms before the first command.

The supervisor runs as the same user as the commands, so a command can kill, stop or confuse
it. The host trusts none of its answers beyond their shape: an answer that is missing, late
(the command's timeout plus `GRACE_S`), too long or malformed ends the session (bwrap is
killed, and with its pid namespace every process in it) and raises `SessionEnded` for that
command and every later one. A confused supervisor can only lie about its own session's
commands, which only the same agent sees; grading never runs in a session.

While it lives, the workspace is walked and the processes' memory sampled (`guard`), and the
session ended once either is past its bound (`limits.workspace`, `limits.memory_total_bytes`):
a writer, or a process holding memory, that the agent left in the background is stopped too.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO

from registry.sandbox import guard
from registry.sandbox.base import OUTPUT_TAIL, Limits, SandboxResult
from registry.sandbox.bwrap_launch import Launch
from registry.sandbox.namespace import (
    as_root,
    give_to_sandbox_user,
    namespace_gone,
    namespace_gone_now,
)
from registry.sandbox.session import SessionContext, SessionEnded, SessionNotStarted

SUPERVISOR = Path(__file__).with_name("supervisor.py").read_text(encoding="utf-8")
GRACE_S = 5.0  # how long past a command's timeout the supervisor may take to answer
CAP_BYTES = OUTPUT_TAIL * 4  # of each output: enough for `OUTPUT_TAIL` characters of UTF-8
HEADER_BYTES = 128  # longest answer header
_ENDED_HINT = "the agent's later commands in this sample fail; rerun the sample to retry"
Answer = tuple[int | None, bool, bytes, bytes]  # exit code, timed out, stdout, stderr


class BwrapSession(SessionContext):
    """One bwrap running `supervisor.py` in `workspace`; see the module docstring.

    `build(launch)` is the full command line that starts bwrap (`prlimit` and its rlimits,
    bwrap, the supervisor) with `launch`'s descriptors and uid."""

    backend = "bwrap"

    def __init__(self, build: Callable[[Launch], list[str]], workspace: Path, *,
                 limits: Limits) -> None:
        self.build = build
        self.workspace, self.limits = workspace, limits
        self._proc: subprocess.Popen[bytes] | None = None
        self._launch: Launch | None = None  # its pipes and, as root, the session's own uid
        self._cancelled_spawn: asyncio.Future[tuple[subprocess.Popen[bytes], int] | None] \
            | None = None
        self._pidfd = -1  # bwrap's: readable once it exited; signals never reach a reused pid
        self._stderr: IO[bytes] | None = None
        self._pending = bytearray()  # what the supervisor sent beyond the last answer
        self._sent = 0
        self._ended: str | None = None
        self._guard: asyncio.Task[None] | None = None  # stops it past `limits.workspace`

    async def start(self) -> None:
        """Start bwrap and its supervisor (a no-op once started or ended).

        The spawn runs in a worker thread: on a busy machine it waits until the child is
        scheduled to exec (vfork), which in the loop's thread would hold up every sample."""
        if self._proc is not None or self._ended is not None:
            return
        self._launch = launch = Launch(root=as_root())
        if launch.uid is not None:
            give_to_sandbox_user(self.workspace, launch.uid)
        self._stderr = tempfile.TemporaryFile(prefix="hubskills-session-")
        spawning = _Spawning(self.build(launch), self._stderr, launch)
        spawn = asyncio.get_running_loop().run_in_executor(None, spawning.run)
        try:
            spawned = await asyncio.shield(spawn)
        except asyncio.CancelledError:
            self._launch = None
            spawning.cancel()  # kills what was spawned, now or as soon as it is
            self._cancelled_spawn = spawn  # `aclose` waits until that is done
            raise
        except OSError as exc:
            self._launch = None
            launch.close()
            self._ended = f"the sandbox session could not start: {exc}"
            raise SessionNotStarted(self._ended, hint=_ENDED_HINT) from exc
        assert spawned is not None  # None only for a cancelled start
        self._proc, self._pidfd = spawned
        if self.limits.workspace is not None or self.limits.memory_total_bytes is not None:
            self._guard = asyncio.ensure_future(self._watch(launch))
        for pipe in (self._proc.stdin, self._proc.stdout):
            assert pipe is not None
            os.set_blocking(pipe.fileno(), False)

    async def run(self, argv: Sequence[str], *, timeout: float | None = None) -> SandboxResult:
        """Run `argv` in `/workspace` through the supervisor; see the module docstring.

        Raises:
            SessionEnded: the session is over (or ends now: no valid answer came).
        """
        if self._proc is None and self._ended is None:
            await self.start()
        if self._ended is not None or self._proc is None:
            raise SessionEnded(f"sandbox session ended: {self._ended}", hint=_ENDED_HINT)
        wall_s = self.limits.wall_s if timeout is None else timeout
        if any("\0" in arg for arg in argv):
            raise ValueError("embedded null byte")  # as any exec would say
        if self._launch is not None and self._launch.uid is not None:
            give_to_sandbox_user(self.workspace, self._launch.uid)  # files the host wrote since
        self._sent += 1
        payload = b"\0".join(os.fsencode(arg) for arg in argv)
        started = time.monotonic()
        try:
            await self._send(b"%d %r %d %d\n" % (self._sent, wall_s, CAP_BYTES, len(payload))
                             + payload)
            code, timed_out, out, err = await asyncio.wait_for(self._receive(),
                                                               wall_s + GRACE_S)
        except (OSError, ValueError, TimeoutError) as exc:
            why = "no answer in time" if isinstance(exc, TimeoutError) else str(exc)
            launch = self._launch
            await self._end(f"its supervisor failed ({why}); a command may have killed it")
            if launch is not None and not launch.started():
                raise SessionNotStarted(f"the sandbox session did not start: {self._ended}",
                                        hint=_ENDED_HINT) from exc
            raise SessionEnded(f"sandbox session ended: {self._ended}",
                               hint=_ENDED_HINT) from exc
        return SandboxResult(code, _text(out), _text(err), timed_out,
                             time.monotonic() - started, self.backend)

    async def aclose(self) -> None:
        """Kill bwrap and wait until its pid namespace, and every process in it, is gone."""
        await self._end("the session was closed")

    async def _watch(self, launch: Launch) -> None:
        """Kill bwrap once the workspace is past `limits.workspace` or the processes past
        `limits.memory_total_bytes`, between commands too (a writer or a process the agent left
        in the background); the command running gets no answer and ends the session."""
        reason = await guard.watch({"workspace": self.workspace}, self.limits.workspace,
                                   pid_one=launch.pid_one,
                                   memory_bytes=self.limits.memory_total_bytes)
        if self._ended is None:
            self._ended = f"hubskills stopped it, over its bounds: {reason}"
        if self._pidfd >= 0 and self._launch is not None:
            self._launch.kill(self._pidfd)

    async def _send(self, data: bytes) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        fd, view = self._proc.stdin.fileno(), memoryview(data)
        while view:
            try:
                view = view[os.write(fd, view):]
            except BlockingIOError:
                await _ready(fd, write=True)

    async def _receive(self) -> Answer:
        assert self._proc is not None and self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        while (parsed := parse_answer(self._pending, self._sent)) is None:
            try:
                data = os.read(fd, 1 << 16)
            except BlockingIOError:
                await _ready(fd)
                continue
            if not data:
                raise ValueError("the supervisor exited")
            self._pending += data
        answer, used = parsed
        del self._pending[:used]
        return answer

    async def _end(self, reason: str) -> None:
        if self._ended is None:
            self._ended = reason
            if self._stderr is not None and (said := _last_line(self._stderr)):
                self._ended += f" [bwrap: {said}]"
        if self._guard is not None and self._guard is not asyncio.current_task():
            self._guard.cancel()
        if (spawn := self._cancelled_spawn) is not None:  # its thread kills what it spawned
            self._cancelled_spawn = None
            with contextlib.suppress(Exception):
                await asyncio.shield(spawn)
        proc, self._proc = self._proc, None
        launch, self._launch = self._launch, None
        pidfd, self._pidfd = self._pidfd, -1
        try:
            if pidfd >= 0 and launch is not None:  # first, and at once: the awaits below
                launch.kill(pidfd)  # may be cut short by a cancel
                await asyncio.wait_for(_ready(pidfd), 10.0)  # exited (killed: at once)
                if proc is not None:
                    proc.wait()  # it has exited: this only reaps it
                    await namespace_gone(launch.pid_one())
        finally:
            if pidfd >= 0:
                os.close(pidfd)
            if launch is not None:
                launch.close()
            if proc is not None:
                proc.poll()  # reaped, unless a cancel came first (a later poll does it)
                for pipe in (proc.stdin, proc.stdout):
                    if pipe is not None:
                        with contextlib.suppress(OSError):
                            pipe.close()
            if self._stderr is not None:
                self._stderr.close()
                self._stderr = None


class _Spawning:
    """One spawn of bwrap in a worker thread that a cancel can overtake: whichever of `run`
    (in the thread) and `cancel` (in the loop) comes second kills and reaps what was spawned,
    and closes `launch`. Neither waits for the event loop, which may be gone by then."""

    def __init__(self, cmd: list[str], stderr: IO[bytes], launch: Launch) -> None:
        self.cmd, self.stderr, self.launch = cmd, stderr, launch
        self._lock = threading.Lock()
        self._cancelled = False
        self._spawned: tuple[subprocess.Popen[bytes], int] | None = None

    def run(self) -> tuple[subprocess.Popen[bytes], int] | None:
        """Popen bwrap with a session's pipes, close the pipe ends only the child needs, and
        wait until bwrap named its pid 1 (`Launch`: only then may it be killed); bwrap and a
        pidfd of it (safe: only this object reaps it)."""
        try:
            # env={} : bwrap's own environment is what /proc/1/environ shows inside
            proc = subprocess.Popen(self.cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=self.stderr, env={}, cwd="/",
                                    pass_fds=self.launch.pass_fds)
        except BaseException:
            with self._lock:
                if self._cancelled:
                    self.launch.close()
                else:
                    self.launch.spawned()
            raise
        pidfd = os.pidfd_open(proc.pid)
        self.launch.spawned()  # nothing else touches `launch` until `_spawned` is set
        self.launch.pid_one(pidfd)
        self.launch.admit(pidfd)  # as a normal user: bwrap waits for its user namespace map
        with self._lock:
            self._spawned = (proc, pidfd)
            if not self._cancelled:
                return proc, pidfd
        _kill(proc, pidfd, self.launch)
        return None

    def cancel(self) -> None:
        """The start was cancelled: kill what was spawned (or have `run` do it)."""
        with self._lock:
            self._cancelled = True
            spawned, self._spawned = self._spawned, None
        if spawned is not None:
            _kill(*spawned, self.launch)


def _kill(proc: subprocess.Popen[bytes], pidfd: int, launch: Launch) -> None:
    """Kill a bwrap whose start was cancelled and its pid 1, reap bwrap, and wait until pid 1
    is gone too."""
    try:
        launch.kill(pidfd)
        proc.wait()
        namespace_gone_now(launch.pid_one())
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                pipe.close()
    finally:
        os.close(pidfd)
        launch.close()


async def _ready(fd: int, *, write: bool = False) -> None:
    """Wait until `fd` is readable (or writable)."""
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()
    watch, unwatch = (loop.add_writer, loop.remove_writer) if write \
        else (loop.add_reader, loop.remove_reader)

    def resolve() -> None:
        if not ready.done():
            ready.set_result(None)

    watch(fd, resolve)
    try:
        await ready
    finally:
        unwatch(fd)


def parse_answer(data: bytes | bytearray, expected: int) -> tuple[Answer, int] | None:
    """The supervisor's answer to request `expected` at the start of `data` and the bytes it
    took, or None while incomplete; ValueError when it has not the shape of one."""
    end = data.find(b"\n", 0, HEADER_BYTES)
    if end < 0:
        if len(data) >= HEADER_BYTES:
            raise ValueError(f"a malformed answer {bytes(data[:40])!r}")
        return None
    fields = bytes(data[:end]).split()
    if len(fields) != 5 or fields[0] != b"%d" % expected or fields[2] not in (b"0", b"1") \
            or not (fields[1] == b"-" or fields[1].lstrip(b"-").isdigit()) \
            or not all(f.isdigit() and int(f) <= CAP_BYTES for f in fields[3:]):
        raise ValueError(f"a malformed answer {bytes(data[:40])!r}")
    out_at, err_at = end + 1, end + 1 + int(fields[3])
    done = err_at + int(fields[4])
    if len(data) < done:
        return None
    code = None if fields[1] == b"-" else int(fields[1])
    return (code, fields[2] == b"1", bytes(data[out_at:err_at]), bytes(data[err_at:done])), done


def _text(data: bytes) -> str:
    """Output bytes as text: at most `OUTPUT_TAIL` characters, the last ones."""
    text = data.decode("utf-8", errors="replace")
    return text[-OUTPUT_TAIL:] if len(text) > OUTPUT_TAIL else text


def _last_line(handle: IO[bytes]) -> str:
    """The last line bwrap (or the supervisor) wrote to stderr, at most 300 characters."""
    handle.seek(0, 2)
    handle.seek(max(0, handle.tell() - 4096))
    lines = handle.read().decode("utf-8", "replace").strip().splitlines()
    return lines[-1][-300:] if lines else ""
