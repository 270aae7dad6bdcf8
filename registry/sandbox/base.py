"""The sandbox interface: `Limits`, `SandboxResult`, the `Sandbox` protocol, and running a
process under a wall clock with its output captured to files.

Output goes to files outside the workspace (never into memory through a pipe), so a command
that prints gigabytes is stopped by the file-size limit instead of filling the parent's memory;
only the last `OUTPUT_TAIL` characters come back.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import shutil
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol

from registry.errors import HubskillsError
from registry.sandbox.tree import DEFAULT_BOUNDS, WorkspaceBounds

OUTPUT_TAIL = 64 * 1024  # characters of stdout/stderr kept in a result


class SandboxUnavailable(HubskillsError):
    """No sandbox can run code here; `reason` says why (a missing tool, no user namespaces)."""

    def __init__(self, message: str, *, reason: str, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.reason = reason


@dataclass(frozen=True)
class Limits:
    """What one command may use. CPU time defaults to the wall time plus a second."""

    wall_s: float = 60.0
    cpu_s: int | None = None
    memory_bytes: int = 1 << 30  # address space per process
    file_bytes: int = 256 << 20  # largest file a process may write (stdout included)
    processes: int = 128  # processes of the sandbox at once (bwrap only)
    tmp_files: int = 20_000  # files and folders in each private tmpfs: /tmp, /dev/shm (bwrap)
    shm_bytes: int = 64 << 20  # the private /dev/shm's size (bwrap; /tmp's is `file_bytes`)
    memory_total_bytes: int | None = 4 << 30
    """What the sandbox's processes may hold in memory together (resident, a page they share
    counted once; bwrap only): past it the sandbox is stopped (`registry.sandbox.guard`). An
    agent CLI on Node holds 300-500 MB, a test run or a build beside it a few hundred more.
    None: not watched."""
    workspace: WorkspaceBounds | None = DEFAULT_BOUNDS
    """What the workspace (and any writable mount) may hold while the sandbox runs; past it
    the bwrap backend stops the sandbox (`registry.sandbox.guard`). None: not watched."""

    def cpu_seconds(self, wall_s: float) -> int:
        """The CPU-time limit for a run bounded by `wall_s` seconds."""
        return self.cpu_s if self.cpu_s is not None else math.ceil(wall_s) + 1


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True)
class Mounts:
    """Extra folders a command sees besides the workspace (bwrap only): `read_only` host paths
    at the same path, `writable` (host path, path inside) pairs, such as an agent CLI's install
    and its fresh HOME. A folder bound here is visible to untrusted code: never a secret's."""

    read_only: tuple[str, ...] = ()
    writable: tuple[tuple[str, str], ...] = ()
    private: tuple[str, ...] = ()
    """Host folders bound read-only at the same path and handed to this sandbox's own user
    (as root, each sandbox runs as a uid of its own): a folder mode 0700 here is reachable by
    the sandbox and by hubskills' user only (e.g. the model proxy's socket folder)."""


@dataclass(frozen=True)
class SandboxResult:
    """How a command ended: `exit_code` None when it was killed at the time limit."""

    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool
    duration_s: float
    backend: str
    notes: list[str] = field(default_factory=list)
    launch_error: str | None = None
    """Why the sandbox could not start the command (bwrap failed, its namespaces could not be
    made, the launcher could not run): set only before anything the caller supplied ran, so no
    command or model output can set it. None when the command started (whatever it did)."""
    stopped: str | None = None
    """Why hubskills stopped the command before it ended, other than its time limit (its
    workspace went past `Limits.workspace`, its processes past `Limits.memory_total_bytes`);
    `exit_code` is None then."""


class Sandbox(Protocol):
    """Runs a command with only `workspace` writable; see `registry.sandbox` for backends.

    A backend may also offer `session(workspace, *, limits, env)`: one environment for many
    commands (`registry.sandbox.session.open_session` falls back to one `run` per command)."""

    name: ClassVar[str]
    isolating: ClassVar[bool]  # False only for `none`: auto-selection never picks it

    def probe(self) -> tuple[bool, str]:
        """(works here, why or why not); cheap to call again (cached per process)."""
        ...

    def which(self, tool: str) -> str | None:
        """Where the command would find `tool` inside the sandbox, or None."""
        ...

    async def run(self, argv: Sequence[str], workspace: Path, *, timeout: float | None = None,
                  limits: Limits = DEFAULT_LIMITS, stdin: bytes = b"",
                  env: Mapping[str, str] | None = None) -> SandboxResult:
        """Run `argv` with `workspace` as its working folder (writable, and HOME).

        `env` adds variables; it is visible inside, so never pass a secret in it.
        """
        ...


def _tail(path: Path) -> str:
    if not path.exists():
        return ""
    with open(path, "rb") as handle:
        handle.seek(0, 2)
        size = handle.tell()
        handle.seek(max(0, size - OUTPUT_TAIL * 4))
        text = handle.read().decode("utf-8", errors="replace")
    return text if len(text) <= OUTPUT_TAIL else text[-OUTPUT_TAIL:]


async def run_process(argv: Sequence[str], *, backend: str, wall_s: float, stdin: bytes,
                      kill: Any, watch: Callable[[], Awaitable[str]] | None = None,
                      spawned: Callable[[Any], Awaitable[None]] | None = None,
                      **popen: Any) -> SandboxResult:
    """Start `argv`, wait at most `wall_s` (or until `watch()` returns why it must stop), then
    `kill(proc)`; stdout/stderr via temp files.

    `kill` is called in every case (a command that exited may have left children); `spawned`,
    when given, is awaited with the process as soon as it exists (it must return soon); `popen`
    goes to `asyncio.create_subprocess_exec` (env, cwd, pass_fds, preexec_fn...).
    """
    scratch = Path(tempfile.mkdtemp(prefix="hubskills-io-"))
    started = time.monotonic()
    try:
        (scratch / "stdin").write_bytes(stdin)
        with (open(scratch / "stdin", "rb") as i, open(scratch / "stdout", "wb") as o,
              open(scratch / "stderr", "wb") as e):
            proc = await asyncio.create_subprocess_exec(*argv, stdin=i, stdout=o, stderr=e,
                                                        **popen)
        try:
            if spawned is not None:
                await spawned(proc)
            code, stopped = await _wait(proc, wall_s, watch)
        finally:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                kill(proc)
            await proc.wait()
        stderr = _tail(scratch / "stderr")
        if stopped not in (None, _TIMED_OUT):
            stderr += f"\nhubskills: stopped: {stopped}"
        return SandboxResult(code, _tail(scratch / "stdout"), stderr, stopped == _TIMED_OUT,
                             time.monotonic() - started, backend,
                             stopped=None if stopped == _TIMED_OUT else stopped)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


_TIMED_OUT = "timed out"


async def _wait(proc: asyncio.subprocess.Process, wall_s: float,
                watch: Callable[[], Awaitable[str]] | None) -> tuple[int | None, str | None]:
    """(its exit code, None) when `proc` exits first; (None, why) when the time limit
    (`_TIMED_OUT`) or `watch` comes first."""
    exiting = asyncio.ensure_future(proc.wait())
    watching = asyncio.ensure_future(watch()) if watch is not None else None
    try:
        await asyncio.wait([t for t in (exiting, watching) if t is not None], timeout=wall_s,
                           return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (exiting, watching):
            if task is not None and not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
    if exiting.done() and not exiting.cancelled():
        return exiting.result(), None
    if watching is not None and watching.done() and not watching.cancelled():
        return None, watching.result()
    return None, _TIMED_OUT
