"""Whether the bwrap backend works here, asked the way it will be used: a trivial Python check
run exactly as a code check runs (the interpreter, its prefixes, the uid drop), and one command
through a session's supervisor, as an agent's first tool call. A probe that runs `true` from
`/usr/bin` passes on machines where no check can start (a venv the sandbox cannot see), and
every check would then fail as if the model had.
"""

from __future__ import annotations

import asyncio
import functools
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from registry.sandbox.base import Limits
from registry.sandbox.namespace import give_to_sandbox_user
from registry.sandbox.session import SessionEnded

MARK = "hubskills-probe-ok"
_CHECK = f"import json, sys; print({MARK!r})"
_UTILS = "/usr/bin:/bin:/usr/sbin:/sbin"
_WAIT_S = 60.0  # a bound for a stuck sandbox, never reached on a working one


@functools.cache
def probe(binary: str, as_root: bool, backend: Callable[[str], Any]) -> tuple[bool, str]:
    """(works here, why or why not) for the bwrap at `binary` run through `backend(path)` (a
    `BwrapSandbox`); cached per process."""
    if not sys.platform.startswith("linux"):
        return False, f"bubblewrap runs on Linux only (this is {sys.platform})"
    path = shutil.which(binary)
    if path is None:
        return False, f"bubblewrap is not installed ({binary} not found)"
    for tool in ("setpriv", "prlimit", "sh", "mount"):
        if not shutil.which(tool, path=_UTILS):
            return False, f"{tool} not found in {_UTILS}"
    return _in_thread(_run_both(backend(path), as_root))


async def _run_both(sandbox: Any, as_root: bool) -> tuple[bool, str]:
    with tempfile.TemporaryDirectory(prefix="hubskills-probe-") as folder:
        if as_root:
            give_to_sandbox_user(Path(folder))
        limits = Limits(wall_s=_WAIT_S)
        check = await sandbox.run([sys.executable, "-I", "-c", _CHECK], Path(folder),
                                  limits=limits)
        if check.launch_error:
            return False, (f"bubblewrap fails here ({check.launch_error}): user namespaces "
                           "are probably disabled")
        if check.timed_out or MARK not in check.stdout:
            why = (check.stderr.strip().splitlines() or [f"exit {check.exit_code}"])[-1]
            return False, (f"Python checks cannot run in the sandbox: {sys.executable} "
                           f"did not start there ({why})")
        try:
            async with sandbox.session(Path(folder), limits=limits) as session:
                answer = await session.run(["true"])
        except SessionEnded as exc:
            return False, f"agent sessions cannot run in the sandbox: {exc}"
        if answer.exit_code != 0:
            return False, (f"agent sessions cannot run in the sandbox: `true` exited "
                           f"{answer.exit_code} ({answer.stderr.strip()[-200:]})")
    return True, f"bubblewrap {sandbox.binary} works (Python checks and sessions run there)"


def _in_thread(work: Any) -> tuple[bool, str]:
    """Run coroutine `work` on a loop of its own (the caller may be inside a running loop)."""
    box: list[tuple[bool, str] | BaseException] = []

    def target() -> None:
        try:
            box.append(asyncio.run(work))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            box.append(exc)

    thread = threading.Thread(target=target, name="hubskills-sandbox-probe")
    thread.start()
    thread.join()
    if isinstance(box[0], BaseException):
        return False, f"bubblewrap could not start: {box[0]}"
    return box[0]
