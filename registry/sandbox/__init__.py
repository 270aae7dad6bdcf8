"""Everything that runs code a skill or a model supplied goes through a `Sandbox`.

    sandbox = get_sandbox("auto", settings)      # bwrap where it works, else SandboxUnavailable
    result = await sandbox.run(["python3", "-c", "print(1)"], workspace, timeout=10,
                               limits=Limits(memory_bytes=1 << 30))
    async with open_session(sandbox, workspace, limits=Limits(wall_s=120)) as session:
        result = await session.run(["/bin/sh", "-c", "make"], timeout=60)   # many commands


Backends (registered by name in `BACKENDS`; a container or a remote one is one more factory):
`bwrap` (bubblewrap, Linux: no network, no host files but the workspace, no secrets, every
process gone at the end) and `none` (no isolation; only by explicit choice for a folder the
user owns). `choose` is the one policy that decides which runs a suite's code checks. A session
(an agent sample's commands) is one bwrap for all its commands; other backends run each command
on its own (`CommandSession`).
"""

from registry.sandbox.base import Limits, Mounts, Sandbox, SandboxResult, SandboxUnavailable
from registry.sandbox.bwrap import BwrapSandbox
from registry.sandbox.check_env import run_check
from registry.sandbox.direct import DirectSandbox
from registry.sandbox.policy import (
    BACKENDS,
    SKIPPED_BY_USER,
    Choice,
    CodeChecks,
    backend,
    choose,
    get_sandbox,
    is_pulled,
    sandbox_report,
)
from registry.sandbox.session import (
    CommandSession,
    SandboxSession,
    SessionEnded,
    SessionNotStarted,
    open_session,
)

__all__ = [
    "BACKENDS", "SKIPPED_BY_USER", "BwrapSandbox", "Choice", "CodeChecks", "CommandSession",
    "DirectSandbox", "Limits", "Mounts", "Sandbox", "SandboxResult", "SandboxSession",
    "SandboxUnavailable", "SessionEnded", "SessionNotStarted", "backend", "choose",
    "get_sandbox", "is_pulled", "open_session", "run_check", "sandbox_report",
]
