"""What a check's command finds around it: the environment and mounts that keep the files an
agent left from changing what the check runs.

A `command` or `exec` check runs in a copy of what the agent (or model) wrote, so the copy is
its working folder. Nothing else of the agent's is trusted: HOME is a fresh empty folder in the
sandbox's private `/tmp` (an agent's `~/.local/…/usercustomize.py`, `.bashrc` or tool config
is not read), Python's user site is off, and Python searches the working folder and a script's
folder after its own modules, never before (`check_site/sitecustomize.py`). PATH holds only
absolute folders the sandbox sees (the backend drops relative entries). A `conftest.py`,
`Makefile` or `package.json` is part of the project the agent was asked to write, and a test
runner reads it: a check that must not trust one says so in its command.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from registry.sandbox.base import Limits, Mounts, Sandbox, SandboxResult

CHECK_HOME = "/tmp/home"
SITE = str(Path(__file__).with_name("check_site"))
CHECK_ENV = {"HOME": CHECK_HOME, "PYTHONNOUSERSITE": "1", "PYTHONSAFEPATH": "1",
             "PYTHONPATH": SITE, "PYTHONDONTWRITEBYTECODE": "1"}


async def run_check(sandbox: Sandbox, argv: list[str], work: Path, *, timeout: float,
                    stdin: bytes = b"") -> SandboxResult:
    """Run a check's `argv` in `work` (a copy of what was graded) with the environment above.

    Without isolation (`--sandbox none`, a folder of the user's own) only the Python settings
    apply: HOME stays the folder, as there is no private `/tmp` to put one in."""
    options: dict[str, Any] = {"timeout": timeout, "limits": Limits(wall_s=timeout),
                               "stdin": stdin}
    if not sandbox.isolating:
        return await sandbox.run(argv, work, env={k: v for k, v in CHECK_ENV.items()
                                                  if k != "HOME"}, **options)
    return await sandbox.run(argv, work, env=CHECK_ENV, mounts=Mounts(read_only=(SITE,)),
                             **options)  # type: ignore[call-arg]  # bwrap takes mounts
