"""A sandbox session: one isolated environment that runs many commands, as an agent's shell does.

    async with open_session(sandbox, workspace, limits=Limits(wall_s=120)) as session:
        result = await session.run(["/bin/sh", "-c", "make test"], timeout=60)

A backend with sessions of its own (`BwrapSandbox.session`: one bwrap per session) keeps the
environment between commands: files in its private `/tmp`, processes a command left behind,
until the session ends. Any other backend gets a `CommandSession`, which starts a fresh sandbox
per command through its `run`, so callers never have to care which they got.

A session whose environment died (a command killed its supervisor, it stopped answering, it
could not start) raises `SessionEnded` from that command on, and never starts another.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import Protocol, Self

from registry.errors import HubskillsError
from registry.sandbox.base import DEFAULT_LIMITS, Limits, Sandbox, SandboxResult


class SessionEnded(HubskillsError):
    """The session's environment is gone; no command runs in it any more."""


class SessionNotStarted(SessionEnded):
    """The session's environment never came up: none of the commands sent to it ran (the
    sandbox's failure, not the caller's: no command could have caused it)."""


class SandboxSession(Protocol):
    """Runs commands in one workspace until `aclose`; `start` before the first (or use
    `async with`, which does both)."""

    async def start(self) -> None:
        """Bring the environment up (raises `SessionEnded` when it cannot start)."""
        ...

    async def run(self, argv: Sequence[str], *, timeout: float | None = None) -> SandboxResult:
        """Run `argv` in the workspace, at most `timeout` seconds (the limits' wall time by
        default); raises `SessionEnded` once the environment is gone."""
        ...

    async def aclose(self) -> None:
        """End the session: every process it started is gone when this returns."""
        ...

    async def __aenter__(self) -> Self:
        """`start`, then the session."""
        ...

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        trace: TracebackType | None) -> None:
        """`aclose`."""
        ...


class SessionContext:
    """`async with` for a session class with `start` and `aclose`."""

    async def start(self) -> None:
        """Nothing to start unless a subclass says otherwise."""

    async def aclose(self) -> None:
        """Nothing to release unless a subclass says otherwise."""

    async def __aenter__(self) -> Self:
        """`start`, then the session."""
        await self.start()
        return self

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        trace: TracebackType | None) -> None:
        """`aclose`, whatever happened inside."""
        await self.aclose()


class CommandSession(SessionContext):
    """The session of a backend without sessions: every command is one `sandbox.run`."""

    def __init__(self, sandbox: Sandbox, workspace: Path, *, limits: Limits = DEFAULT_LIMITS,
                 env: Mapping[str, str] | None = None) -> None:
        self.sandbox, self.workspace, self.limits, self.env = sandbox, workspace, limits, env

    async def run(self, argv: Sequence[str], *, timeout: float | None = None) -> SandboxResult:
        """`sandbox.run(argv)` in the workspace, limited to `timeout` like a single command."""
        wall_s = self.limits.wall_s if timeout is None else timeout
        return await self.sandbox.run(argv, self.workspace, timeout=wall_s,
                                      limits=replace(self.limits, wall_s=wall_s), env=self.env)


def open_session(sandbox: Sandbox, workspace: Path, *, limits: Limits = DEFAULT_LIMITS,
                 env: Mapping[str, str] | None = None) -> SandboxSession:
    """A session of `sandbox` in `workspace` (not started yet): the backend's own when it has
    one (`sandbox.session(workspace, limits=..., env=...)`), else a `CommandSession`.

    `limits` hold for every command (`wall_s`: a command's default timeout); `env` is visible
    inside, so never a secret.
    """
    factory = getattr(sandbox, "session", None)
    if callable(factory):
        session: SandboxSession = factory(workspace, limits=limits, env=env)
        return session
    return CommandSession(sandbox, workspace, limits=limits, env=env)
