"""`BwrapSession`: one bubblewrap sandbox that runs every command of a session.

bwrap starts once, built exactly as for a single command (`BwrapSandbox.command`: the same
namespaces, binds, empty environment, rlimits, process limit and, as root, uid drop), with
`supervisor.py` as its command. Each `run` is one request to the supervisor's stdin and one
answer back (their format is in `supervisor`), so a command costs a fork and an exec, not a new
sandbox.

The supervisor runs as the same user as the commands, so a command can kill, stop or confuse
it. The host trusts none of its answers beyond their shape: an answer that is missing, late
(the command's timeout plus `GRACE_S`), too long or malformed ends the session (bwrap is
killed, and with its pid namespace every process in it) and raises `SessionEnded` for that
command and every later one. A confused supervisor can only lie about its own session's
commands, which only the same agent sees; grading never runs in a session.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from registry.sandbox.base import OUTPUT_TAIL, Limits, SandboxResult
from registry.sandbox.namespace import as_root, give_to_sandbox_user, namespace_gone
from registry.sandbox.session import SessionContext, SessionEnded

SUPERVISOR = Path(__file__).with_name("supervisor.py").read_text(encoding="utf-8")
GRACE_S = 5.0  # how long past a command's timeout the supervisor may take to answer
CAP_BYTES = OUTPUT_TAIL * 4  # of each output: enough for `OUTPUT_TAIL` characters of UTF-8
_ENDED_HINT = "the agent's later commands in this sample fail; rerun the sample to retry"


class BwrapSession(SessionContext):
    """One bwrap running `supervisor.py` in `workspace`; see the module docstring.

    `bwrap` is bwrap's full command line (supervisor included), `launcher` what starts it
    (`prlimit` and its rlimits)."""

    backend = "bwrap"

    def __init__(self, launcher: Sequence[str], bwrap: Sequence[str], workspace: Path, *,
                 limits: Limits) -> None:
        self.launcher, self.bwrap = list(launcher), list(bwrap)
        self.workspace, self.limits = workspace, limits
        self._proc: asyncio.subprocess.Process | None = None
        self._info = -1  # read end of bwrap's --info-fd: names the sandbox's pid 1
        self._pidfd = -1  # bwrap's: a signal through it never reaches a reused pid
        self._stderr: IO[bytes] | None = None
        self._sent = 0
        self._ended: str | None = None

    async def start(self) -> None:
        """Start bwrap and its supervisor (a no-op once started or ended)."""
        if self._proc is not None or self._ended is not None:
            return
        if as_root():
            give_to_sandbox_user(self.workspace)
        info_read, info_write = os.pipe()
        cmd = [*self.launcher, self.bwrap[0], "--info-fd", str(info_write), *self.bwrap[1:]]
        self._stderr = tempfile.TemporaryFile(prefix="hubskills-session-")
        try:
            # env={} : bwrap's own environment is what /proc/1/environ shows inside
            self._proc = await asyncio.create_subprocess_exec(
                *cmd, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=self._stderr, env={}, cwd="/", pass_fds=(info_write,))
        except OSError as exc:
            os.close(info_read)
            self._ended = f"the sandbox session could not start: {exc}"
            raise SessionEnded(self._ended, hint=_ENDED_HINT) from exc
        finally:
            os.close(info_write)
        self._info = info_read
        with contextlib.suppress(OSError):  # gone already: nothing left to kill
            self._pidfd = os.pidfd_open(self._proc.pid)

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
        if as_root():  # files the host's tools wrote since the last command are root's
            give_to_sandbox_user(self.workspace)
        self._sent += 1
        if any("\0" in arg for arg in argv):
            raise ValueError("embedded null byte")  # as any exec would say
        payload = b"\0".join(os.fsencode(arg) for arg in argv)
        started = time.monotonic()
        try:
            assert self._proc.stdin is not None and self._proc.stdout is not None
            self._proc.stdin.write(b"%d %r %d %d\n" % (self._sent, wall_s, CAP_BYTES,
                                                       len(payload)) + payload)
            await self._proc.stdin.drain()
            code, timed_out, out, err = await asyncio.wait_for(
                _answer(self._proc.stdout, self._sent), wall_s + GRACE_S)
        except (OSError, ValueError, TimeoutError, asyncio.IncompleteReadError) as exc:
            why = "no answer in time" if isinstance(exc, TimeoutError) else str(exc)
            await self._end(f"its supervisor failed ({why}); a command may have killed it")
            raise SessionEnded(f"sandbox session ended: {self._ended}",
                               hint=_ENDED_HINT) from exc
        return SandboxResult(code, _text(out), _text(err), timed_out,
                             time.monotonic() - started, self.backend)

    async def aclose(self) -> None:
        """Kill bwrap and wait until its pid namespace, and every process in it, is gone."""
        await self._end("the session was closed")

    async def _end(self, reason: str) -> None:
        if self._ended is None:
            self._ended = reason
            if self._stderr is not None and (said := _last_line(self._stderr)):
                self._ended += f" [bwrap: {said}]"
        proc, self._proc = self._proc, None
        info, self._info = self._info, -1
        pidfd, self._pidfd = self._pidfd, -1
        try:
            if pidfd >= 0:  # first, and at once: the awaits below may be cut short by a cancel
                with contextlib.suppress(ProcessLookupError):
                    signal.pidfd_send_signal(pidfd, signal.SIGKILL)
            if proc is not None:
                await proc.wait()
                if info >= 0:
                    await namespace_gone(info)
        finally:
            for fd in (info, pidfd):
                if fd >= 0:
                    os.close(fd)
            if self._stderr is not None:
                self._stderr.close()
                self._stderr = None


async def _answer(stream: asyncio.StreamReader,
                  expected: int) -> tuple[int | None, bool, bytes, bytes]:
    """The supervisor's answer to request `expected`, checked for shape (ValueError if not)."""
    header = await stream.readline()
    if not header.endswith(b"\n"):
        raise ValueError("the supervisor exited" if not header else "a cut-off answer")
    fields = header.split()
    if len(fields) != 5 or fields[0] != b"%d" % expected or fields[2] not in (b"0", b"1") \
            or not (fields[1] == b"-" or fields[1].lstrip(b"-").isdigit()) \
            or not all(f.isdigit() and int(f) <= CAP_BYTES for f in fields[3:]):
        raise ValueError(f"a malformed answer {header[:80]!r}")
    out = await stream.readexactly(int(fields[3]))
    err = await stream.readexactly(int(fields[4]))
    code = None if fields[1] == b"-" else int(fields[1])
    return code, fields[2] == b"1", out, err


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
