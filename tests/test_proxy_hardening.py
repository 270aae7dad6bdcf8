"""The agent-CLI harness's model proxy against what a sandboxed CLI may send: paths that climb
out of the model endpoint, chunked bodies of absurd sizes, and other local users."""

from __future__ import annotations

import asyncio
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from fakes.openai_server import FakeOpenAIServer

from registry.agent.harness.base import _read_events, _unlink_skill
from registry.agent.harness.proxy import ModelProxy

SEND = """import socket, sys
client = socket.socket(socket.AF_UNIX)
client.connect(sys.argv[1])
client.sendall(sys.stdin.buffer.read())
client.shutdown(socket.SHUT_WR)
sys.stdout.buffer.write(b"".join(iter(lambda: client.recv(65536), b"")))
"""


def send(path: Path, raw: bytes) -> bytes:
    """Send `raw` over the proxy's socket from another process (as a sandboxed CLI does);
    what comes back until it closes."""
    done = subprocess.run([sys.executable, "-c", SEND, str(path)], input=raw,
                          capture_output=True, check=True)
    return done.stdout


async def through_proxy(upstream: str, folder: Path, *requests: bytes) -> list[bytes]:
    async with ModelProxy(upstream=upstream, key="sk-real-key", wire="openai",
                          folder=folder) as proxy:
        return [await asyncio.to_thread(send, proxy.socket_path, raw) for raw in requests]


CLIMBS = ["/v1/../admin", "/v1/./../../x", "/v1/%2e%2e/admin", "/v1/%2E%2E/%2e%2e/x",
          "/v1/..%2Fadmin", "/v1/%252e%252e/admin", "/v1/..\\admin", "/v1/./models"]


@pytest.mark.parametrize("target", CLIMBS)
def test_a_path_that_climbs_out_is_refused_and_never_forwarded(tmp_path, target):
    with FakeOpenAIServer() as upstream:
        [reply] = asyncio.run(through_proxy(
            upstream.url, tmp_path, f"POST {target} HTTP/1.1\r\nHost: x\r\n\r\n".encode()))
        assert reply.startswith(b"HTTP/1.1 403"), reply[:80]
        assert upstream.requests == []


# Issue 37, hole 13: what servers upstream resolve that httpx passes as it is.
PATH_TRICKS = ["/v1/..;/admin", "/v1/models;jsessionid=1", "/v1/%3B/models", "/v1/.;/admin",
               "/v1/%2e%2e;/admin", "/v1/%2e/models", "/v1/models%2F..%2Fadmin",
               "/v1/models%5c..%5cadmin", "/v1/models\\x", "/v1/models/.", "/v1/a/..",
               "/v1/models%09", "/v1/mod\x7fels"]


GOOD = (b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\ncontent-length: 15\r\n\r\n"
        b'{"model": "m"}\n')


@pytest.mark.parametrize("target", PATH_TRICKS)
def test_path_parameters_and_encoded_separators_never_reach_upstream(tmp_path, target):
    with FakeOpenAIServer(api_key="sk-real-key") as upstream:
        refused, passed = asyncio.run(through_proxy(
            upstream.url, tmp_path, f"POST {target} HTTP/1.1\r\nHost: x\r\n\r\n".encode(),
            GOOD))
        assert refused.startswith(b"HTTP/1.1 403"), refused[:80]
        assert passed.startswith(b"HTTP/1.1 200"), passed[:80]  # upstream took the real key
        assert [(r["method"], r["path"]) for r in upstream.requests] == \
            [("POST", "/v1/chat/completions")]


def test_the_endpoints_own_paths_still_pass(tmp_path):
    with FakeOpenAIServer() as upstream:
        [reply] = asyncio.run(through_proxy(upstream.url, tmp_path, GOOD))
        assert reply.startswith(b"HTTP/1.1 200"), reply[:80]
        assert [r["path"] for r in upstream.requests] == ["/v1/chat/completions"]


def test_a_huge_chunk_is_refused_before_it_is_read_and_the_proxy_goes_on(tmp_path):
    huge = (b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
            b"\r\nFFFFFFFFFF\r\n" + b"x" * 1024)
    over = (b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
            b"\r\n5000000\r\n" + b"x" * 1024)
    with FakeOpenAIServer() as upstream:
        replies = asyncio.run(through_proxy(upstream.url, tmp_path, huge, over, GOOD))
        assert replies[0].startswith(b"HTTP/1.1 413") and replies[1].startswith(b"HTTP/1.1 413")
        assert replies[2].startswith(b"HTTP/1.1 200")
        assert [r["path"] for r in upstream.requests] == ["/v1/chat/completions"]


def test_the_socket_is_private_to_its_user():
    outer = Path(tempfile.mkdtemp(prefix="hubskills-proxy-test-", dir="/tmp"))
    outer.chmod(0o755)  # another user could reach the folder, were it not private itself
    folder = outer / "socket"
    folder.mkdir(mode=0o700)
    python = shutil.which("python3", path="/usr/bin:/bin")

    async def check() -> tuple[int, subprocess.CompletedProcess[str] | None]:
        async with ModelProxy(upstream="http://127.0.0.1:9/v1", key="k", wire="openai",
                              folder=folder) as proxy:
            mode = stat.S_IMODE(os.stat(proxy.socket_path).st_mode)
            other = None
            if os.geteuid() == 0 and shutil.which("setpriv") and python:
                other = await asyncio.to_thread(subprocess.run, [
                    "setpriv", "--reuid=1000", "--regid=1000", "--clear-groups", python, "-c",
                    "import socket; s = socket.socket(socket.AF_UNIX); "
                    f"s.connect({str(proxy.socket_path)!r})"],
                    capture_output=True, text=True, check=False)
            return mode, other

    try:
        mode, other = asyncio.run(check())
    finally:
        shutil.rmtree(outer)
    assert mode == 0o600
    if other is None:
        pytest.skip("a second uid needs root and a system python3 here")
    assert other.returncode != 0 and "PermissionError" in other.stderr, other.stderr


# --- what the CLI leaves in its HOME and workspace ------------------------------------------


@pytest.mark.parametrize("kind", ["fifo", "folder", "link"])
def test_an_event_file_swapped_for_a_fifo_a_folder_or_a_link_reads_as_no_events(tmp_path, kind):
    events, target = tmp_path / "events.jsonl", tmp_path / "elsewhere.jsonl"
    target.write_text('{"type": "stolen"}\n')
    {"fifo": lambda: os.mkfifo(events), "folder": events.mkdir,
     "link": lambda: events.symlink_to(target)}[kind]()
    assert asyncio.run(asyncio.wait_for(asyncio.to_thread(_read_events, events), 60)) == []


def test_cleanup_never_follows_a_link_the_agent_planted(tmp_path):
    host = tmp_path / "host-claude"
    (host / "skills").mkdir(parents=True)
    (host / "skills" / "my-skill").symlink_to(tmp_path)  # as `pull --global` leaves one
    workspace = tmp_path / "ws"
    (workspace / ".claude" / "skills").mkdir(parents=True)
    link = workspace / ".claude" / "skills" / "my-skill"
    link.symlink_to("../../skill")
    shutil.rmtree(workspace / ".claude")  # the agent swaps the folder for a link to the host's
    (workspace / ".claude").symlink_to(host)
    _unlink_skill(link, workspace)
    assert (host / "skills" / "my-skill").is_symlink()


def test_cleanup_removes_the_link_and_the_folders_made_for_it(tmp_path):
    workspace = tmp_path / "ws"
    (workspace / ".claude" / "skills").mkdir(parents=True)
    link = workspace / ".claude" / "skills" / "my-skill"
    link.symlink_to("../../skill")
    _unlink_skill(link, workspace)
    assert list(workspace.iterdir()) == []
