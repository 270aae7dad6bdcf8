"""`hubskills mcp --http` as a user starts it: a process of its own, its output a pipe.

It says where it serves on stderr before anything else, and a port already in use is a
HubskillsError naming the address and another port (exit 1), not uvicorn's raw log line.
"""

from __future__ import annotations

import queue
import re
import threading

import httpx
import pytest

from tests.cli_process import hubskills, start
from tests.fakes.mcp_skills_server import _free_port

pytest.importorskip("mcp")
pytestmark = pytest.mark.timeout(180)


def test_http_server_says_where_it_serves_and_a_port_in_use_is_an_error() -> None:
    port = _free_port()
    server = start("mcp", "--http", f"127.0.0.1:{port}")
    try:
        assert server.stderr is not None
        lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=lambda: lines.put(server.stderr.readline()),  # type: ignore[union-attr]
                         daemon=True).start()
        line = lines.get(timeout=60)  # said at once, not after the first request
        url = f"http://127.0.0.1:{port}/mcp"
        assert line == f"serving MCP at {url} (Ctrl-C stops)\n"
        ping = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                          headers={"accept": "application/json, text/event-stream"})
        assert ping.status_code < 500  # it answers there
        again = hubskills("mcp", "--http", f"127.0.0.1:{port}", timeout=60)
        assert again.returncode == 1, again.stderr
        assert again.stderr.splitlines() == [
            f"Error: 127.0.0.1:{port} is in use (another server listens there)",
            f"Hint: hubskills mcp --http 127.0.0.1:{port + 1}  # another port"]
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_port_zero_serves_on_a_free_port_and_says_which() -> None:
    """`--http HOST:0` asks the system for a free port; the line names the port bound (a
    host told `:0` could not connect), and the server answers there."""
    server = start("mcp", "--http", "127.0.0.1:0")
    try:
        assert server.stderr is not None
        lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=lambda: lines.put(server.stderr.readline()),  # type: ignore[union-attr]
                         daemon=True).start()
        line = lines.get(timeout=60)
        match = re.fullmatch(r"serving MCP at http://127\.0\.0\.1:(\d+)/mcp \(Ctrl-C stops\)\n",
                             line)
        assert match, line
        port = int(match.group(1))
        assert port != 0
        ping = httpx.post(f"http://127.0.0.1:{port}/mcp",
                          json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                          headers={"accept": "application/json, text/event-stream"})
        assert ping.status_code < 500
    finally:
        server.terminate()
        server.wait(timeout=30)


INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                         "clientInfo": {"name": "rebinding-test", "version": "1"}}}


def _serving(*args: str) -> tuple[object, int]:
    """`hubskills mcp --http ARGS` started, and the port its first line names."""
    server = start("mcp", "--http", *args)
    assert server.stderr is not None
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: lines.put(server.stderr.readline()),  # type: ignore[union-attr]
                     daemon=True).start()
    line = lines.get(timeout=60)
    match = re.fullmatch(r"serving MCP at http://\S+:(\d+)/mcp \(Ctrl-C stops\)\n", line)
    assert match, line
    return server, int(match.group(1))


def _initialize(address: str, port: int, host: str, origin: str | None = None) -> int:
    headers = {"accept": "application/json, text/event-stream", "host": host}
    if origin:
        headers["origin"] = origin
    return httpx.post(f"http://{address}:{port}/mcp", json=INITIALIZE, headers=headers,
                      timeout=60).status_code


@pytest.mark.allow_hosts(["127.0.0.1", "127.0.0.2", "::1"])  # another loopback address
@pytest.mark.parametrize("bound", ["127.0.0.1", "127.0.0.2", "0.0.0.0"])
def test_a_rebound_host_is_refused_on_every_address(bound: str) -> None:
    """A page of evil.example whose name was rebound to this machine sends its own Host and
    Origin: refused whatever address the server is bound to (the SDK's own check turned it
    off for 127.0.0.2 and 0.0.0.0: a red-team finding); the server's own names answer."""
    server, port = _serving(f"{bound}:0")
    address = "127.0.0.1" if bound == "0.0.0.0" else bound
    try:
        assert _initialize(address, port, "evil.example", "http://evil.example") in (403, 421)
        assert _initialize(address, port, f"evil.example:{port}") == 421
        assert _initialize(address, port, f"{address}:{port}", f"http://{address}:{port}") == 200
        assert _initialize(address, port, f"localhost:{port}") == 200
    finally:
        server.terminate()  # type: ignore[attr-defined]
        server.wait(timeout=30)  # type: ignore[attr-defined]


@pytest.mark.allow_hosts(["127.0.0.1", "127.0.0.2", "::1"])
def test_allow_host_admits_a_proxy_name() -> None:
    server, port = _serving("127.0.0.2:0", "--allow-host", "mcp.example.org",
                            "--allow-host", "other.example:8443")
    try:
        assert _initialize("127.0.0.2", port, "mcp.example.org",
                           "https://mcp.example.org") == 200
        assert _initialize("127.0.0.2", port, "other.example:8443") == 200
        assert _initialize("127.0.0.2", port, "other.example:9999") == 421
        assert _initialize("127.0.0.2", port, "evil.example") == 421
    finally:
        server.terminate()  # type: ignore[attr-defined]
        server.wait(timeout=30)  # type: ignore[attr-defined]


def test_allow_host_refuses_what_is_not_a_host() -> None:
    done = hubskills("mcp", "--http", "127.0.0.1:0", "--allow-host", "http://x/", timeout=60)
    assert done.returncode == 2 and "'http://x/' is not HOST or HOST:PORT" in done.stderr, \
        done.stderr
