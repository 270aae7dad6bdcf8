"""Writes are bounded while a command runs, not only in the walk after it: a file past the
file-size limit fails at once, and a command (or a writer left in the background) that keeps
adding files is stopped as soon as the workspace is past its bounds, with the reason."""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path

import pytest
from fakes.openai_server import FakeOpenAIServer
from sandbox_required import bwrap_sandbox

from registry.agent import WorkspaceBounds
from registry.config import Settings
from registry.evaluation.config import EvalConfig
from registry.evaluation.engine import run_evaluation
from registry.providers import RetryPolicy
from registry.sandbox import Limits, SessionEnded

MIB = 2**20
SMALL = WorkspaceBounds(apparent_bytes=64 * MIB, allocated_bytes=16 * MIB)
# Sparse files of 1 MiB, one after another: with no bound on the total it never stops (the
# bound on the loop only keeps a broken run finite).
SPARSE_FOREVER = ("i=0; while [ $i -lt 1000000 ]; do truncate -s 1M s$i; i=$((i+1)); done; "
                  "echo finished")
# Real bytes in the background: 2,000 files of 1 MiB if nothing stops it.
WRITER = ("(i=0; while [ $i -lt 2000 ]; do head -c 1048576 /dev/zero > w$i; i=$((i+1)); done; "
          ": > finished) >/dev/null 2>&1 &")


def allocated(root: Path) -> int:
    return sum(p.lstat().st_blocks * 512 for p in root.rglob("*"))


def test_a_sparse_terabyte_fails_at_once_and_the_session_goes_on(tmp_path):
    sandbox = bwrap_sandbox()

    async def go():
        async with sandbox.session(tmp_path, limits=Limits(wall_s=120)) as session:
            big = await session.run(["/bin/sh", "-c", "truncate -s 1T big"])
            after = await session.run(["/bin/sh", "-c", "echo still here"])
        return big, after

    big, after = asyncio.run(go())
    assert big.exit_code != 0 and "File size limit exceeded" in big.stderr, big  # SIGXFSZ
    assert (tmp_path / "big").stat().st_size <= Limits().file_bytes
    assert after.stdout == "still here\n"


def test_a_command_adding_files_forever_ends_its_session_with_the_reason(tmp_path):
    sandbox = bwrap_sandbox()

    async def go():
        async with sandbox.session(tmp_path, limits=Limits(wall_s=600, workspace=SMALL)) \
                as session:
            await session.run(["/bin/sh", "-c", SPARSE_FOREVER])

    with pytest.raises(SessionEnded, match="add up to more than 64 MiB") as ended:
        asyncio.run(go())
    assert "seen while a command ran" in str(ended.value)
    assert len(list(tmp_path.iterdir())) < 1_000_000


def test_a_writer_left_in_the_background_is_stopped_between_commands(tmp_path):
    sandbox = bwrap_sandbox()

    async def go() -> str:
        async with sandbox.session(tmp_path, limits=Limits(wall_s=120, workspace=SMALL)) \
                as session:
            started = await session.run(["/bin/sh", "-c", WRITER])
            assert started.exit_code == 0
            for _ in range(6000):  # until the session is stopped (a bound for a broken run)
                try:
                    await session.run(["/bin/sh", "-c", "sleep 0.05"])
                except SessionEnded as exc:
                    return str(exc)
        return "never stopped"

    reason = asyncio.run(go())
    assert "uses more than 16 MiB of disk" in reason, reason
    assert not (tmp_path / "finished").exists()  # its loop never got to the end
    assert allocated(tmp_path) < 1024 * MIB


def test_a_single_command_is_stopped_and_says_why(tmp_path):
    sandbox = bwrap_sandbox()
    result = asyncio.run(sandbox.run(["/bin/sh", "-c", SPARSE_FOREVER], tmp_path,
                                     limits=Limits(wall_s=600, workspace=SMALL)))
    assert result.stopped and "add up to more than 64 MiB" in result.stopped
    assert (result.exit_code, result.timed_out) == (None, False)
    assert "finished" not in result.stdout and "hubskills: stopped:" in result.stderr


def test_without_bounds_nothing_is_watched(tmp_path):
    sandbox = bwrap_sandbox()
    result = asyncio.run(sandbox.run(
        ["/bin/sh", "-c", "for i in 1 2 3; do truncate -s 30M s$i; done; echo finished"],
        tmp_path, limits=Limits(wall_s=600, workspace=None)))
    assert (result.exit_code, result.stopped, result.stdout) == (0, None, "finished\n")


# --- the sample fails in its arm and the run goes on -------------------------------------------

FOREVER = "i=0; while [ $i -lt 1000000 ]; do truncate -s 200M s$i; i=$((i+1)); done"


def hostile_agent(body: dict) -> dict:
    """Task [forever] runs a command that adds sparse files without end; [fine] writes notes."""
    turn = sum(m.get("role") == "assistant" for m in body["messages"])
    task = next(m["content"] for m in body["messages"] if m["role"] == "user")
    step = {"name": "run", "arguments": {"command": FOREVER}} if "[forever]" in task \
        else {"name": "write_file", "arguments": {"path": "notes.txt", "content": "ok\n"}}
    return {"text": "", "tool_calls": [step]} if turn == 0 else {"text": "done"}


def test_a_sample_whose_command_writes_forever_fails_in_its_arm_and_the_run_goes_on(
        tmp_path, monkeypatch):
    bwrap_sandbox()
    folder = tmp_path / "skill"
    (folder / "evals").mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: cap-skill\ndescription: \"Notes. Use when "
                                     "writing notes.\"\n---\n\nWrite notes.txt.\n")
    cases = [{"id": kind, "prompt": f"Task [{kind}]: write notes.txt.",
              "checks": [{"type": "file_exists", "path": "notes.txt"}]}
             for kind in ("forever", "fine")]
    (folder / "evals" / "agent.json").write_text(json.dumps({"cases": cases}))
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    with FakeOpenAIServer(responder=hostile_agent) as server:
        settings = Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "home"),
                                      "HUBSKILLS_BASE_URL": server.url})
        config = EvalConfig(models=["local/fake-agent"], runs=1, mode="agent",
                            retry=RetryPolicy(attempts=1))
        run = run_evaluation(folder, config, settings)
    assert run.manifest.status == "complete" and len(run.rows) == 4
    for row in run.rows:
        if row.case_id == "fine":
            assert row.passed and row.error is None, row
            continue
        assert (row.error_kind, row.passed) == ("arm", False)
        assert row.error.startswith("the agent's workspace is over hubskills' bounds: ")
        assert "add up to more than 512 MiB" in row.error
