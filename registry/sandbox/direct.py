"""The `none` backend: runs a command directly, as the user, with no isolation.

Only for a skill folder the user owns and names it for (`--sandbox none`): the command gets a
cleared environment, its own session, per-process limits (memory, CPU time, file size) and the
wall clock, but it can read what the user can read, reach the network and leave processes
behind that escape its session. `WARNING` says so and the CLI prints it.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import ClassVar

from registry.sandbox.base import DEFAULT_LIMITS, Limits, SandboxResult, run_process

if sys.platform != "win32":
    import resource

WARNING = (
    "--sandbox none: the skill's python and exec checks run directly on this machine as you. "
    "They can read every file you can (~/.ssh, ~/.cache/huggingface/token, other projects), "
    "reach the network, and leave processes running; only their environment is cleared. "
    "Use it only for a skill whose code you have read."
)


class DirectSandbox:
    """No isolation: the user's explicit choice for a folder of their own."""

    name: ClassVar[str] = "none"
    isolating: ClassVar[bool] = False
    warning: ClassVar[str] = WARNING

    def __repr__(self) -> str:
        return "DirectSandbox()"

    def probe(self) -> tuple[bool, str]:
        """Always works: nothing is isolated."""
        return True, "no isolation: only when named (--sandbox none), for a folder of your own"

    def which(self, tool: str) -> str | None:
        """`tool` on the user's PATH (or the path itself when it names one)."""
        if "/" in tool:
            return tool if os.path.isfile(tool) and os.access(tool, os.X_OK) else None
        return shutil.which(tool)

    async def run(self, argv: Sequence[str], workspace: Path, *, timeout: float | None = None,
                  limits: Limits = DEFAULT_LIMITS, stdin: bytes = b"",
                  env: Mapping[str, str] | None = None) -> SandboxResult:
        """Run `argv` in `workspace` with a cleared environment; its session is killed after."""
        wall_s = limits.wall_s if timeout is None else timeout
        variables = {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(workspace),
                     "TMPDIR": str(workspace), "LANG": "C.UTF-8", "no_proxy": "*",
                     "NO_PROXY": "*", **(env or {})}

        def limit() -> None:  # runs in the child between fork and exec
            cpu = limits.cpu_seconds(wall_s)
            for kind, value in ((resource.RLIMIT_AS, limits.memory_bytes),
                                (resource.RLIMIT_CPU, cpu),
                                (resource.RLIMIT_FSIZE, limits.file_bytes)):
                resource.setrlimit(kind, (value, value))

        def kill(proc: asyncio.subprocess.Process) -> None:
            os.killpg(proc.pid, signal.SIGKILL)

        return await run_process(argv, backend=self.name, wall_s=wall_s, stdin=stdin, kill=kill,
                                 env=variables, cwd=workspace, start_new_session=True,
                                 preexec_fn=limit)
