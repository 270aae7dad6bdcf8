"""Sandbox sessions: one bubblewrap per agent sample, whose supervisor runs every command.

Real bubblewrap (skipped without it; failed under HUBSKILLS_REQUIRE_SANDBOX=1, as CI runs it).
The sandbox rules of the per-command sandbox must hold for a session's commands too: no secret
in any environment, no network, nothing written outside the workspace, no process outliving
the session. A command may kill or confuse the supervisor (it runs as the same user): that may
end its own session, cleanly, and nothing else.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import time
import uuid
from pathlib import Path

import pytest
from cli_process import start
from fakes.openai_server import FakeOpenAIServer
from sandbox_required import bwrap_sandbox, eventually
from test_agent_loop import model_complete
from test_sandbox_escapes import survivors

from registry.agent import AgentOutcome, AgentTask, Budget, ToolLoopRunner, WorkspaceTools
from registry.providers import ToolCall
from registry.sandbox import (
    BwrapSandbox,
    CommandSession,
    DirectSandbox,
    Limits,
    SessionEnded,
    bwrap_session,
    open_session,
)
from registry.sandbox.base import OUTPUT_TAIL
from registry.sandbox.bwrap_launch import Launch
from registry.sandbox.namespace import SANDBOX_UID, as_root, give_to_sandbox_user


class Supervised(BwrapSandbox):
    """bwrap whose sessions use the `kind` supervisor (Perl's or Python's)."""

    def __init__(self, binary: str, kind: str) -> None:
        super().__init__(binary)
        self.kind = kind

    def session(self, workspace, *, limits=Limits(), env=None, supervisor=None):  # noqa: B008
        return super().session(workspace, limits=limits, env=env, supervisor=self.kind)


@pytest.fixture(params=["perl", "python"])
def sandbox(request) -> BwrapSandbox:
    """Each session test runs with both supervisors."""
    found = bwrap_sandbox()
    if request.param == "perl" and found.which("perl") is None:
        pytest.skip("no perl in the sandbox: sessions use the Python supervisor")
    return Supervised(found.binary, request.param)


def seen_inside(marker: str) -> str:
    """A command counting the sandbox's processes whose command line holds `marker` (its
    pattern does not match its own command line)."""
    return f"grep -l '[{marker[0]}]{marker[1:]}' /proc/[0-9]*/cmdline 2>/dev/null | wc -l"


def in_session(sandbox, workspace: Path, *commands: str, timeout: float = 20,
               limits: Limits | None = None) -> list:
    """Each command's result (or the `SessionEnded` it raised), all in one session."""
    async def main() -> list:
        results: list = []
        async with open_session(sandbox, workspace,
                                limits=limits or Limits(wall_s=20)) as session:
            for command in commands:
                try:
                    results.append(await session.run(["/bin/sh", "-c", command],
                                                     timeout=timeout))
                except SessionEnded as exc:
                    results.append(exc)
        return results
    return asyncio.run(main())


def test_commands_share_the_workspace_and_tmp(sandbox, tmp_path):
    first, second, third = in_session(
        sandbox, tmp_path, "echo one > a.txt; echo scratch > /tmp/s.txt; echo $$ > pid",
        "cat a.txt /tmp/s.txt; pwd; echo $HOME", "cat pid; echo $$")
    assert (first.exit_code, second.exit_code) == (0, 0) and first.backend == "bwrap"
    assert second.stdout.split() == ["one", "scratch", "/workspace", "/workspace"]
    assert (tmp_path / "a.txt").read_text() == "one\n"
    assert not Path("/tmp/s.txt").exists()  # the session's /tmp is its own
    before, now = third.stdout.split()
    assert before != now  # a new process per command, in the same environment


def test_no_secret_in_any_environment_inside(sandbox, tmp_path, monkeypatch):
    secret = "hubskills-session-" + uuid.uuid4().hex
    for name in ("HF_TOKEN", "ANTHROPIC_API_KEY", "HUBSKILLS_SESSION_SECRET"):
        monkeypatch.setenv(name, secret)
    [result] = in_session(sandbox, tmp_path, "env; for f in /proc/1/environ /proc/$PPID/environ "
                          "/proc/self/environ /proc/*/environ; do cat $f 2>/dev/null "
                          "| tr '\\0' '\\n'; done")
    assert result.exit_code == 0 and "PATH=" in result.stdout
    assert secret not in result.stdout + result.stderr
    names = {line.split("=", 1)[0] for line in result.stdout.splitlines() if "=" in line}
    assert names <= {"PATH", "HOME", "TMPDIR", "LANG", "PWD", "SHLVL", "_", "OLDPWD"}, names


def test_no_network_not_even_the_hosts_loopback(sandbox, tmp_path):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.5)
    port = listener.getsockname()[1]
    try:
        [result] = in_session(sandbox, tmp_path, "python3 -c \"import socket; socket."
                              f"create_connection(('127.0.0.1', {port}), timeout=3)\"")
        with pytest.raises(TimeoutError):
            listener.accept()
    finally:
        listener.close()
    assert result.exit_code == 1 and "ConnectionRefusedError" in result.stderr


def test_a_timeout_kills_the_commands_group_and_the_next_command_works(sandbox, tmp_path):
    marker = f"hubskills-session-{uuid.uuid4().hex}"
    slow = f"(sleep 600; : {marker}) & sleep 600; : {marker}"
    timed_out, after, check = in_session(
        sandbox, tmp_path, slow, "echo still here", seen_inside(marker), timeout=1)
    assert timed_out.timed_out and timed_out.exit_code is None
    assert (after.exit_code, after.stdout, after.timed_out) == (0, "still here\n", False)
    assert check.stdout.strip() == "0"  # the background job died with the command


def test_left_behind_processes_live_until_the_session_ends(sandbox, tmp_path):
    marker = f"hubskills-session-{uuid.uuid4().hex}"
    # the first child waits for the second, so only the grandchild is left when it returns
    double_fork = ("python3 -c \"import os\nchild = os.fork()\nif child == 0:\n    os.setsid()\n"
                   "    if os.fork() == 0:\n        os.execv('/bin/sh', ['sh', '-c', "
                   f"'sleep 600; echo late > late.txt # {marker}'])\n    os._exit(0)\n"
                   "os.waitpid(child, 0)\"")
    left, seen = in_session(sandbox, tmp_path, double_fork, seen_inside(marker))
    # alive while the session is (the shell, and for a moment its child forked for `sleep`
    # that has not yet exec'd: both carry the marker, so count at least one)
    assert left.exit_code == 0 and int(seen.stdout.strip()) >= 1
    assert survivors(marker) == []  # gone with the session
    assert not (tmp_path / "late.txt").exists()


@pytest.mark.parametrize("attack", ["kill -9 $PPID", "kill -9 -1", "kill -STOP $PPID"])
def test_a_command_that_kills_the_supervisor_ends_only_its_session(
        sandbox, tmp_path, monkeypatch, attack):
    monkeypatch.setattr(bwrap_session, "GRACE_S", 0.5)  # a stopped supervisor: answer late
    marker = f"hubskills-session-{uuid.uuid4().hex}"
    outside = tmp_path / "outside.txt"
    outside.write_text("untouched")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    results = in_session(sandbox, workspace, f"(sleep 60; : {marker}) & echo started",
                         attack, "echo after", "echo again", timeout=2)
    assert results[0].stdout == "started\n"
    ended = [r for r in results[1:] if isinstance(r, SessionEnded)]
    assert ended and all(isinstance(r, SessionEnded) for r in results[results.index(ended[0]):])
    assert "sandbox session ended" in str(ended[0])
    assert outside.read_text() == "untouched" and survivors(marker) == []
    [fresh] = in_session(sandbox, workspace, "echo a new sample")  # nothing else is hurt
    assert fresh.stdout == "a new sample\n"


@pytest.mark.parametrize("attack", ["head -c 100000 /dev/urandom > /proc/$PPID/fd/1",
                                    "printf '2 0 0 0 0\\n' > /proc/$PPID/fd/1; sleep 1"])
def test_a_command_that_writes_into_the_supervisors_answers_fools_only_itself(
        sandbox, tmp_path, attack):
    # As root the supervisor's pipes are root's and the write is refused; as a normal user it
    # lands, and then the session ends, or answers that one command wrongly: only this sample
    # sees either.
    marker = f"hubskills-session-{uuid.uuid4().hex}"
    results = in_session(sandbox, tmp_path, f"(sleep 60; : {marker}) & echo started", attack,
                         "echo after", "echo again")
    if not any(isinstance(r, SessionEnded) for r in results):
        assert [r.stdout for r in results[2:]] == ["after\n", "again\n"]
    assert survivors(marker) == []


@pytest.mark.parametrize("sent", [
    b"2 0 0 0 0\n",  # the answer to another request
    b"1 0 2 0 0\n", b"1 zero 0 0 0\n", b"1 0 0 0\n", b"\xff" * 100 + b"\n",
    b"1 0 0 999999999 0\n",  # more than any clipped output
    b"1" * 200,  # a header that never ends
])
def test_an_answer_of_the_wrong_shape_is_refused(sent):
    with pytest.raises(ValueError, match="a malformed answer"):
        bwrap_session.parse_answer(sent, 1)


def test_answers_are_parsed_once_complete():
    parse = bwrap_session.parse_answer
    assert [parse(part, 1) for part in (b"", b"1 0 0 3", b"1 0 0 5 0\nabc")] == [None] * 3
    assert parse(b"1 - 1 2 3\nokerrNEXT", 1) == ((None, True, b"ok", b"err"), 15)
    assert parse(b"1 -9 0 0 0\n", 1) == ((-9, False, b"", b""), 11)


def test_outputs_are_clipped_and_file_sizes_capped(sandbox, tmp_path):
    big, capped = in_session(
        sandbox, tmp_path, "python3 -c \"import sys; print('a' * 300000 + 'END'); "
        "sys.stderr.write('e' * 300000)\"", "head -c 3000000 /dev/zero > big.bin; echo $?",
        limits=Limits(wall_s=20, file_bytes=1 << 20))
    assert len(big.stdout) == OUTPUT_TAIL and big.stdout.endswith("aEND\n")
    assert len(big.stderr) == OUTPUT_TAIL and set(big.stderr) == {"e"}
    assert (tmp_path / "big.bin").stat().st_size <= 1 << 20 and capped.stdout.strip() != "0"


def test_commands_can_change_files_the_host_wrote_after_the_session_started(sandbox, tmp_path):
    async def main() -> tuple:
        async with open_session(sandbox, tmp_path, limits=Limits(wall_s=20)) as session:
            await session.run(["/bin/true"])
            (tmp_path / "sub").mkdir()
            (tmp_path / "sub" / "host.txt").write_text("host\n")  # as the tools write
            return await session.run(["/bin/sh", "-c", "echo agent >> sub/host.txt && "
                                      "touch sub/new"])
    result = asyncio.run(main())
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "sub" / "host.txt").read_text() == "host\nagent\n"


@pytest.mark.skipif(not as_root(), reason="hand-over to the sandbox user happens as root")
def test_handing_the_workspace_over_never_follows_a_link(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "host.txt").write_text("root's")
    workspace = tmp_path / "ws"
    (workspace / "real").mkdir(parents=True)
    (workspace / "real" / "f").write_text("x")
    os.symlink(outside, workspace / "link")
    os.symlink(outside / "host.txt", workspace / "real" / "file-link")
    give_to_sandbox_user(workspace)
    assert (workspace / "real" / "f").stat().st_uid == SANDBOX_UID
    assert os.lstat(workspace / "link").st_uid == SANDBOX_UID
    assert outside.stat().st_uid == 0 and (outside / "host.txt").stat().st_uid == 0


def test_backends_without_sessions_run_each_command_alone(tmp_path):
    session = open_session(DirectSandbox(), tmp_path, limits=Limits(wall_s=5))
    assert isinstance(session, CommandSession)

    async def main() -> list:
        async with session:
            return [await session.run(["/bin/sh", "-c", "echo $$ > pid; echo x"]),
                    await session.run(["/bin/sh", "-c", "cat pid"], timeout=0.5),
                    await session.run(["sleep", "5"], timeout=0.3)]
    made, read, slow = asyncio.run(main())
    assert (made.stdout, read.exit_code, made.backend) == ("x\n", 0, "none")
    assert slow.timed_out


class CountingBwrap(BwrapSandbox):
    """bwrap, counting the sessions it opens."""

    def __init__(self, binary: str | None = None) -> None:
        super().__init__(binary)
        self.sessions = 0

    def session(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        self.sessions += 1
        return super().session(*args, **kwargs)


def steps(*turns: list[dict]) -> object:
    """A responder: the n-th assistant turn makes the n-th list of tool calls, then answers."""
    def reply(body: dict) -> dict:
        turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
        if turn < len(turns):
            return {"text": "", "tool_calls": turns[turn]}
        return {"text": "done"}
    return reply


def run(command: str) -> dict:
    return {"name": "run", "arguments": {"command": command}}


def agent(responder, tmp_path: Path, sandbox) -> AgentOutcome:
    workspace = tmp_path / f"ws-{uuid.uuid4().hex[:8]}"
    workspace.mkdir()
    with FakeOpenAIServer(responder=responder) as server:
        runner = ToolLoopRunner(model_complete(server.url, tmp_path), sandbox)
        return asyncio.run(runner.run(AgentTask("Do it.", workspace)))


def test_a_sample_uses_one_session_and_only_when_it_calls_a_tool(tmp_path):
    sandbox = CountingBwrap(bwrap_sandbox().binary)
    marker = f"hubskills-session-{uuid.uuid4().hex}"
    outcome = agent(steps([run("echo 1 > n")], [run("echo $(($(cat n) + 1)) > n; cat n")],
                          [run(f"(sleep 600; echo late > late.txt; : {marker}) & echo bg")]),
                    tmp_path, sandbox)
    results = [e.text for e in outcome.transcript if e.kind == "tool_result"]
    assert results == ["exit code 0", "exit code 0\n2", "exit code 0\nbg"]
    assert sandbox.sessions == 1  # and what the agent left behind is gone with it:
    assert survivors(marker) == [] and not list(tmp_path.glob("ws-*/late.txt"))
    agent(steps(), tmp_path, sandbox)
    assert sandbox.sessions == 1  # a sample that calls no tool starts no bwrap
    listing = {"name": "list_files", "arguments": {}}
    agent(steps([listing], [listing]), tmp_path, sandbox)
    assert sandbox.sessions == 2  # the first tool call starts it, ready for a first command
    assert survivors(str(tmp_path)) == []


def test_after_the_supervisor_dies_the_samples_commands_fail_cleanly(tmp_path):
    sandbox = bwrap_sandbox()
    write = {"name": "write_file", "arguments": {"path": "a.txt", "content": "kept"}}
    read = {"name": "read_file", "arguments": {"path": "a.txt"}}
    outcome = agent(steps([run("kill -9 $PPID")], [run("echo hi")], [write, read]), tmp_path,
                    sandbox)
    results = [(e.text, e.is_error) for e in outcome.transcript if e.kind == "tool_result"]
    assert results[0][1] and results[0][0].startswith("error: sandbox session ended")
    assert results[1][1] and "sandbox session ended" in results[1][0]
    assert results[2:] == [("wrote a.txt (4 bytes)", False), ("kept", False)]
    assert outcome.stop_reason == "answered"


def test_a_cancelled_sample_leaves_no_process(tmp_path):
    sandbox = bwrap_sandbox()
    marker = f"hubskills-session-{uuid.uuid4().hex}"
    workspace = tmp_path / "ws"
    workspace.mkdir()

    async def main() -> None:
        with FakeOpenAIServer(responder=steps([run(f"sleep 60; : {marker}")])) as server:
            runner = ToolLoopRunner(model_complete(server.url, tmp_path), sandbox)
            task = asyncio.create_task(runner.run(AgentTask("Do it.", workspace)))
            for _ in range(200):
                if survivors(marker):
                    break
                await asyncio.sleep(0.05)
            assert survivors(marker), "the command never started"
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
    asyncio.run(main())
    assert survivors(marker) == [] and survivors(str(workspace)) == []


def test_a_start_cancelled_while_bwrap_spawns_leaves_no_process(tmp_path):
    """The spawn runs in a worker thread; a cancel that comes before it is done still kills
    what it started (the workspace path names the session's bwrap)."""
    workspace = tmp_path / f"ws-{uuid.uuid4().hex}"
    workspace.mkdir()

    async def main() -> bool:
        session = bwrap_sandbox().session(workspace)
        task = asyncio.create_task(session.start())
        await asyncio.sleep(0)  # start() has handed the spawn to its thread
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await session.aclose()
        return task.cancelled()

    assert asyncio.run(main())
    assert eventually(lambda: survivors(str(workspace)) == [])


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL])
def test_ctrl_c_or_a_killed_eval_leaves_no_sandbox_behind(tmp_path, sig):
    bwrap_sandbox()
    marker = f"hubskills-session-{uuid.uuid4().hex}"
    skill = tmp_path / "sleepy"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: sleepy\ndescription: \"Sleeps. Use when "
                                    "tired.\"\n---\n\nSleep.\n")
    (skill / "evals" / "agent.json").write_text(
        '{"cases": [{"id": "c1", "prompt": "Sleep.", "checks": [{"type": "contains", '
        '"value": ["x"]}]}]}')
    scratch = tmp_path / "scratch"  # the workspaces, so bwrap's command line names it
    scratch.mkdir()
    with FakeOpenAIServer(responder=steps([run(f"sleep 60; : {marker}")])) as server:
        process = start("eval", skill, "-m", "local/fake", "--base-url", server.url,
                        "--mode", "agent", "--runs", "1", TMPDIR=str(scratch))
        deadline = time.monotonic() + 60
        while not survivors(marker) and time.monotonic() < deadline:
            assert process.poll() is None, process.communicate()
            time.sleep(0.05)
        assert survivors(marker), "the agent's command never started"
        process.send_signal(sig)
        process.communicate(timeout=30)
    # SIGKILL: the kernel ends bwrap (--die-with-parent) a moment later
    assert eventually(lambda: survivors(marker) == [] and survivors(str(scratch)) == [])


def test_the_tools_outside_a_sample_run_each_command_in_a_fresh_sandbox(tmp_path):
    sandbox = CountingBwrap(bwrap_sandbox().binary)
    tools = WorkspaceTools(tmp_path, sandbox, Budget(), AgentOutcome())
    text, failed = asyncio.run(tools.call(ToolCall("c1", "run", {"command": "echo $$"})))
    assert not failed and text.startswith("exit code 0") and sandbox.sessions == 0


def test_sessions_take_perls_supervisor_where_the_sandbox_has_perl(tmp_path):
    found = bwrap_sandbox()
    launch = Launch(root=as_root())
    try:
        argv = found.session(tmp_path).build(launch)
        if found.which("perl") is None:
            assert "-S" in argv and "-e" not in argv
        else:
            assert argv[argv.index("-e") - 1] == found.which("perl")
        assert "-S" in found.session(tmp_path, supervisor="python").build(launch)
    finally:
        launch.close()
