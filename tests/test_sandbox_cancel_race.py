"""A bwrap killed inside its start leaves no process behind.

bwrap clones the sandbox's pid 1, names it on `--info-fd`, and only then lets it go on; until
then pid 1 waits on an eventfd and is not yet set to die with bwrap. A bwrap killed in that
window used to leave pid 1 waiting forever (seen under load: a cancelled session start). Real
bubblewrap is parked in the window here: `--userns-block-fd` makes it wait, after naming pid
1, on a FIFO nobody writes to (it needs `--unshare-user`, harmless for a sandbox that never
runs anything).
"""

from __future__ import annotations

import asyncio
import os
import uuid
from pathlib import Path

import pytest
from sandbox_required import bwrap_sandbox, eventually
from test_sandbox_escapes import survivors

from registry.sandbox import BwrapSandbox

PARKED_FD = 9


class Parked(BwrapSandbox):
    """bwrap that stops after naming its pid 1, before it lets pid 1 go on."""

    def __init__(self, binary: str, fifo: Path) -> None:
        super().__init__(binary)
        self.fifo = fifo

    def command(self, argv, limits, wall_s, env, workspace, mounts=None, launch=None):
        cmd = super().command(argv, limits, wall_s, env, workspace, mounts, launch)
        # read-write, so opening the FIFO does not wait for a writer and reading it never ends;
        # after hubskills' own options, as bwrap takes the last `--userns-block-fd` it is given
        # (a normal user's sandbox already waits on one, which hubskills writes to at once)
        at = cmd.index("--die-with-parent")
        return ["/bin/sh", "-c", f'exec {PARKED_FD}<>"$0"; exec "$@"', str(self.fifo),
                *cmd[:at], "--unshare-user", "--userns-block-fd", str(PARKED_FD), *cmd[at:]]


@pytest.fixture
def parked(tmp_path) -> tuple[Parked, Path]:
    fifo = tmp_path / "never-written"
    os.mkfifo(fifo)
    workspace = tmp_path / f"ws-{uuid.uuid4().hex}"  # bwrap's command line names it
    workspace.mkdir()
    return Parked(bwrap_sandbox().binary, fifo), workspace


def in_the_window(workspace: Path) -> bool:
    """bwrap and the pid 1 it cloned (which shows bwrap's command line) both run."""
    return len(survivors(str(workspace))) == 2


def test_a_session_closed_before_bwrap_lets_its_pid_1_go_leaves_no_process(parked):
    sandbox, workspace = parked

    async def main() -> None:
        session = sandbox.session(workspace)
        await session.start()
        assert eventually(lambda: in_the_window(workspace))
        await session.aclose()  # returns once every process of the sandbox is gone

    asyncio.run(main())
    assert survivors(str(workspace)) == []


def test_a_command_cancelled_before_bwrap_lets_its_pid_1_go_leaves_no_process(parked):
    sandbox, workspace = parked

    async def main() -> None:
        task = asyncio.create_task(sandbox.run(["/bin/true"], workspace))
        while not in_the_window(workspace):
            assert not task.done(), task.result()
            await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert eventually(lambda: survivors(str(workspace)) == [])
