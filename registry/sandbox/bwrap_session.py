"""`BwrapSession`: one bubblewrap sandbox that runs every command of a session.

bwrap starts once, built exactly as for a single command (`BwrapSandbox.command`: the same
namespaces, binds, empty environment, rlimits, process limit and, as root, uid drop), with
`supervisor.py` as its command. Each `run` is one JSON line to the supervisor's stdin and one
answer line back, so a command costs a fork and an exec, not a new sandbox.

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
import json
import os
import signal
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

from registry.sandbox.base import OUTPUT_TAIL, Limits, SandboxResult
from registry.sandbox.namespace import as_root, give_to_sandbox_user, namespace_gone
from registry.sandbox.session import SessionContext, SessionEnded

SUPERVISOR = Path(__file__).with_name("supervisor.py").read_text(encoding="utf-8")
GRACE_S = 5.0  # how long past a command's timeout the supervisor may take to answer
ANSWER_BYTES = 4 << 20  # longest answer line: two clipped outputs, JSON-escaped
_ENDED_HINT = "the agent's later commands in this sample fail; rerun the sample to retry"


class BwrapSession(SessionContext):
    """One bwrap running `supervisor.py` in `workspace`; see the module docstring.

    `command` is bwrap's full command line (supervisor included), `preexec` what bwrap's
    child runs before exec (the rlimits)."""

    backend = "bwrap"

    def __init__(self, command: Sequence[str], workspace: Path, *, limits: Limits,
                 preexec: Callable[[], None]) -> None:
        self.command, self.workspace, self.limits = list(command), workspace, limits
        self.preexec = preexec
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
        cmd = [self.command[0], "--info-fd", str(info_write), *self.command[1:]]
        self._stderr = tempfile.TemporaryFile(prefix="hubskills-session-")
        try:
            # env={} : bwrap's own environment is what /proc/1/environ shows inside
            self._proc = await asyncio.create_subprocess_exec(
                *cmd, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=self._stderr, env={}, cwd="/", pass_fds=(info_write,),
                preexec_fn=self.preexec, limit=ANSWER_BYTES)
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
        await self.start()
        if self._ended is not None or self._proc is None:
            raise SessionEnded(f"sandbox session ended: {self._ended}", hint=_ENDED_HINT)
        wall_s = self.limits.wall_s if timeout is None else timeout
        if as_root():  # files the host's tools wrote since the last command are root's
            give_to_sandbox_user(self.workspace)
        self._sent += 1
        request = {"id": self._sent, "argv": list(argv), "timeout": wall_s, "cap": OUTPUT_TAIL}
        started = time.monotonic()
        try:
            assert self._proc.stdin is not None and self._proc.stdout is not None
            self._proc.stdin.write(json.dumps(request).encode("utf-8") + b"\n")
            await self._proc.stdin.drain()
            line = await asyncio.wait_for(self._proc.stdout.readline(), wall_s + GRACE_S)
            answer = _answer(line, self._sent)
        except (OSError, ValueError, TimeoutError) as exc:
            why = "no answer in time" if isinstance(exc, TimeoutError) else str(exc)
            await self._end(f"its supervisor failed ({why}); a command may have killed it")
            raise SessionEnded(f"sandbox session ended: {self._ended}",
                               hint=_ENDED_HINT) from exc
        return SandboxResult(answer["exit"], answer["out"], answer["err"], answer["timed_out"],
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


def _answer(line: bytes, expected: int) -> dict[str, Any]:
    """The supervisor's answer to request `expected`, checked for shape (ValueError if not)."""
    if not line.endswith(b"\n"):
        raise ValueError("the supervisor exited" if not line else "a cut-off answer")
    answer = json.loads(line)
    if not isinstance(answer, dict) or answer.get("id") != expected:
        raise ValueError("an answer to another request")
    code, out, err, timed_out = (answer.get(k) for k in ("exit", "out", "err", "timed_out"))
    if not (code is None or type(code) is int) or not isinstance(out, str) \
            or not isinstance(err, str) or type(timed_out) is not bool:
        raise ValueError("a malformed answer")
    return answer


def _last_line(handle: IO[bytes]) -> str:
    """The last line bwrap (or the supervisor) wrote to stderr, at most 300 characters."""
    handle.seek(0, 2)
    handle.seek(max(0, handle.tell() - 4096))
    lines = handle.read().decode("utf-8", "replace").strip().splitlines()
    return lines[-1][-300:] if lines else ""
