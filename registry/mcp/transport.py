"""Run the MCP server over stdio or streamable HTTP (the SDK's transports)."""

from __future__ import annotations

import errno
import json
import os
import socket
from collections.abc import Callable
from typing import Any

import anyio
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from registry.errors import HubskillsError


def serve_stdio(server: Server[Any]) -> None:
    """Serve one client on stdin/stdout until it closes them."""

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(run)


MAX_BODY = 1 << 20  # bytes of one request: this server's JSON-RPC messages are a few KiB


def http_app(server: Server[Any], host: str = "127.0.0.1") -> Any:
    """The Starlette app serving streamable HTTP at `/mcp` (DNS-rebinding protection on for
    a loopback `host`, as the SDK sets it), its request bodies capped (`limit_body`)."""
    return limit_body(server.streamable_http_app(host=host))


def limit_body(app: Any, max_bytes: int = MAX_BODY) -> Any:
    """`app` (ASGI) with each HTTP request's body read first, up to `max_bytes`: a larger one
    (declared or sent) is answered 413 and never reaches it. The SDK reads a body whole, with
    no cap, so any client could make the server hold as much as it sends."""

    async def limited(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length", b"0")
        if not declared.isdigit() or int(declared) > max_bytes:
            await too_large(send, max_bytes)
            return
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > max_bytes:
                await too_large(send, max_bytes)
                return
            if not message.get("more_body"):
                break
        first: list[dict[str, Any]] = [{"type": "http.request", "body": b"".join(chunks),
                                        "more_body": False}]

        async def replay() -> dict[str, Any]:
            return first.pop() if first else await receive()

        await app(scope, replay, send)

    return limited


async def too_large(send: Any, max_bytes: int) -> None:
    """Answer 413 with a JSON-RPC error naming the cap."""
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {
        "code": -32600, "message": f"request body over {max_bytes} bytes"}}).encode()
    await send({"type": "http.response.start", "status": 413, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def serve_http(server: Server[Any], host: str, port: int,
               ready: Callable[[str], None] | None = None) -> None:
    """Serve streamable HTTP at `http://HOST:PORT/mcp` until interrupted; `ready(url)` is
    called once the address is bound (the CLI says so on stderr), with the port bound: port 0
    asks the system for a free one, and `url` names the one it gave.

    Raises:
        HubskillsError: the address cannot be bound (the port in use, a host not this one's).
    """
    import uvicorn

    sock = bind(host, port)
    port = sock.getsockname()[1]
    config = uvicorn.Config(http_app(server, host), host=host, port=port, log_level="warning")
    if ready is not None:
        ready(f"http://{_address(host, port)}/mcp")
    with sock:
        uvicorn.Server(config).run(sockets=[sock])


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on HOST:PORT, as uvicorn would bind it.

    Raises:
        HubskillsError: the port is in use, or the address cannot be bound here.
    """
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)
    except OSError as err:
        sock.close()
        where, other = _address(host, port), _address(host, port + 1 if port < 65535 else 8765)
        if err.errno == errno.EADDRINUSE:
            raise HubskillsError(f"{where} is in use (another server listens there)",
                                 hint=f"hubskills mcp --http {other}  # another port") from err
        why = os.strerror(err.errno) if err.errno else str(err)
        raise HubskillsError(f"cannot serve MCP at {where}: {why}",
                             hint="hubskills mcp --http 127.0.0.1:8765  # this machine only"
                             ) from err
    sock.set_inheritable(True)
    return sock


def _address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
