"""Which sandbox runs a suite's code checks, or why none does: one policy for every caller.

`auto` takes the first isolating backend whose probe works (bwrap today; a container or a
remote backend registers the same way). `none` is honoured only for a folder on disk that was
not pulled (no install marker): never for a pulled, registry or uploaded skill, never on a
Space. Without a sandbox, a suite with code checks is refused, unless the caller asked to leave
them out (`skip`) or to leave them out when nothing isolates (`if_sandboxed`, used by generate).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from registry.config import Settings
from registry.errors import HubskillsError
from registry.format.skill import MARKER_FILES
from registry.sandbox.base import Sandbox, SandboxUnavailable
from registry.sandbox.bwrap import BwrapSandbox
from registry.sandbox.direct import DirectSandbox

CodeChecks = Literal["require", "skip", "if_sandboxed"]
BACKENDS: dict[str, Callable[[Settings], Sandbox]] = {}
INSTALL_HINT = "apt-get install bubblewrap"
SKIPPED_BY_USER = "skipped: --skip-code-checks"


def backend(name: str) -> Callable[[Callable[[Settings], Sandbox]], Callable[[Settings], Sandbox]]:
    """Register a backend factory under `name` (the order of registration is auto's order)."""
    def register(factory: Callable[[Settings], Sandbox]) -> Callable[[Settings], Sandbox]:
        BACKENDS[name] = factory
        return factory
    return register


@backend("bwrap")
def _bwrap(settings: Settings) -> Sandbox:
    return BwrapSandbox(settings.bwrap_path)


@backend("none")
def _none(settings: Settings) -> Sandbox:
    return DirectSandbox()


@dataclass(frozen=True)
class Choice:
    """The sandbox for a run's code checks (None: they are left out) and what to record."""

    sandbox: Sandbox | None
    status: str  # recorded in the run manifest: "bwrap", "skipped: ...", "none in the suite"
    warning: str | None = None

    @property
    def sandbox_name(self) -> str | None:
        """The sandbox's backend name, as the run manifest records it (None: no sandbox)."""
        return self.sandbox.name if self.sandbox is not None else None


def sandbox_report(settings: Settings) -> list[tuple[str, bool, str]]:
    """(backend, works here, why) for every registered backend."""
    return [(name, *factory(settings).probe()) for name, factory in BACKENDS.items()]


def get_sandbox(name: str, settings: Settings) -> Sandbox:
    """The working backend called `name` ("auto": the first isolating one that works).

    Raises:
        SandboxUnavailable: no such backend works here (the reason says why).
        HubskillsError: an unknown backend name.
    """
    if name != "auto" and name not in BACKENDS:
        raise HubskillsError(f"unknown sandbox '{name}'",
                             hint=f"use --sandbox {' or '.join(['auto', *BACKENDS])}")
    reasons = []
    for candidate in [name] if name != "auto" else list(BACKENDS):
        sandbox = BACKENDS[candidate](settings)
        if name == "auto" and not sandbox.isolating:
            continue
        works, why = sandbox.probe()
        if works:
            return sandbox
        reasons.append(why)
    reason = "; ".join(reasons) or "no isolating backend is registered"
    raise SandboxUnavailable(f"no sandbox works here: {reason}", reason=reason,
                             hint=INSTALL_HINT)


def is_pulled(folder: Path) -> bool:
    """Whether `folder` was installed from a registry (it holds an install marker)."""
    return any((folder / marker).exists() or (folder / marker).is_symlink()
               for marker in MARKER_FILES)


def choose(requested: str, settings: Settings, *, has_code: bool, code_checks: CodeChecks,
           folder: Path | None) -> Choice:
    """The sandbox for a suite's code checks; `folder` None means not the user's own folder.

    Raises:
        HubskillsError: `none` for a pulled (or unknown) folder, an unknown backend, or
            code checks required and no sandbox works here (the hint names the fix).
    """
    target = str(folder) if folder is not None else "SKILL"
    if not has_code:
        return Choice(None, "none in the suite")
    if code_checks == "skip":
        return Choice(None, SKIPPED_BY_USER)
    if requested == "none":
        if folder is None or is_pulled(folder):
            raise HubskillsError(
                f"--sandbox none is refused for {target}: it was pulled from a registry, and "
                "code from someone else runs only in a sandbox",
                hint=f"{INSTALL_HINT}, then hubskills eval {target}; or add --skip-code-checks")
        return Choice(DirectSandbox(), "none", warning=DirectSandbox.warning)
    try:
        sandbox = get_sandbox(requested, settings)
    except SandboxUnavailable as err:
        if code_checks == "if_sandboxed" and requested == "auto":
            return Choice(None, f"skipped: no sandbox ({err.reason})")
        raise SandboxUnavailable(
            f"this suite has code-running checks (python, exec) and no sandbox works here: "
            f"{err.reason}", reason=err.reason,
            hint=f"{INSTALL_HINT}, or leave them out: hubskills eval {target} "
                 "--skip-code-checks") from err
    return Choice(sandbox, sandbox.name)
