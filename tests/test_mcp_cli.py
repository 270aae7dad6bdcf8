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
