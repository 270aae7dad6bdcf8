"""The memory a sandbox's processes hold together is bounded while they run: children that
each stay under the address-space limit but together hold more than `memory_total_bytes` stop
a single command and end a session, with the reason; the same children under a larger bound run
to the end. And how the host counts them: every descendant, a page they share once."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest
from sandbox_required import bwrap_sandbox, eventually

from registry.sandbox import Limits, SessionEnded
from registry.sandbox.resident import processes, pss_bytes, rss_bytes, sample

MIB = 2**20
# argv: MiB each child touches, seconds they hold it once all have. Three forked children
# (each far under the 1 GiB address-space limit) touch their own memory, mark it in the
# workspace, and hold it until every one has, then for the seconds given.
CHILDREN = """
import os, sys, time
mib, hold = int(sys.argv[1]), float(sys.argv[2])
pids = []
for i in range(3):
    pid = os.fork()
    if pid == 0:
        block = bytearray(mib << 20)
        block[::4096] = b"\\1" * len(range(0, len(block), 4096))  # every page written
        open(f"touched-{i}", "w").close()
        while not all(os.path.exists(f"touched-{j}") for j in range(3)):
            time.sleep(0.01)
        time.sleep(hold)
        os._exit(0)
    pids.append(pid)
for pid in pids:
    os.waitpid(pid, 0)
print("finished")
"""


def children(mib: int, hold_s: float) -> list[str]:
    return [sys.executable, "-I", "-c", CHILDREN, str(mib), str(hold_s)]


def test_children_holding_more_than_the_bound_together_stop_the_command(tmp_path):
    sandbox = bwrap_sandbox()
    limits = Limits(wall_s=600, memory_total_bytes=256 * MIB)
    result = asyncio.run(sandbox.run(children(150, 60), tmp_path, limits=limits))
    assert result.stopped, result
    assert "the sandbox's processes held" in result.stopped
    assert "together, over its 256 MiB bound" in result.stopped
    assert (result.exit_code, result.timed_out) == (None, False)
    assert "finished" not in result.stdout and "hubskills: stopped:" in result.stderr


def test_the_same_children_under_a_larger_bound_run_to_the_end(tmp_path):
    sandbox = bwrap_sandbox()
    limits = Limits(wall_s=600, memory_total_bytes=1024 * MIB)
    result = asyncio.run(sandbox.run(children(150, 2), tmp_path, limits=limits))
    assert (result.exit_code, result.stopped, result.stdout) == (0, None, "finished\n"), result
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"touched-{i}" for i in range(3)]


def test_a_session_whose_processes_hold_too_much_ends_with_the_reason(tmp_path):
    sandbox = bwrap_sandbox()

    async def go():
        limits = Limits(wall_s=600, memory_total_bytes=256 * MIB)
        async with sandbox.session(tmp_path, limits=limits) as session:
            await session.run(children(150, 60))

    with pytest.raises(SessionEnded, match="over its 256 MiB bound") as ended:
        asyncio.run(go())
    assert "the sandbox's processes held" in str(ended.value)


# --- counting, from the host -------------------------------------------------------------------

# A parent touches 64 MiB, forks three children that only read it (copy-on-write: shared),
# says "ready" and holds until its stdin closes; so do the children.
SHARED = """
import os, sys
block = bytearray(64 << 20)
block[::4096] = b"\\1" * len(range(0, len(block), 4096))
for _ in range(3):
    if os.fork() == 0:
        sys.stdin.read()
        os._exit(0)
print("ready", flush=True)
sys.stdin.read()
"""


def test_every_descendant_counts_and_a_shared_page_once():
    proc = subprocess.Popen([sys.executable, "-I", "-c", SHARED], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
        found = processes(proc.pid)
        assert found[0] == proc.pid and len(found) == 4, found
        assert sorted(processes(proc.pid, children_files=False)) == sorted(found)
        by_rss = sum(map(rss_bytes, found))
        assert by_rss > 4 * 64 * MIB  # each counts the block it shares
        cheap = sample(proc.pid, by_rss + 1)  # within the bound: no page table walked
        assert (cheap.proportional, cheap.count) == (False, 4)
        exact = sample(proc.pid, 0)
        assert exact.proportional and exact.count == 4
        assert 64 * MIB < exact.held < 2 * 64 * MIB, exact  # the block once, not four times
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait()


def state(pid: int) -> str:
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        return stat.read().rsplit(") ", 1)[1][0]


def test_a_process_gone_counts_nothing_and_is_never_an_error():
    proc = subprocess.Popen([sys.executable, "-I", "-c", "pass"])
    assert eventually(lambda: state(proc.pid) == "Z")  # it exited, not reaped yet
    assert (rss_bytes(proc.pid), pss_bytes(proc.pid)) == (0, 0)
    proc.wait()  # reaped: gone
    assert (rss_bytes(proc.pid), pss_bytes(proc.pid), processes(proc.pid)) == (0, 0, [])
    assert sample(proc.pid, 0).held == 0
