"""Run the MCP server over stdio or streamable HTTP (the SDK's transports)."""

from __future__ import annotations

from typing import Any

import anyio
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server


def serve_stdio(server: Server[Any]) -> None:
    """Serve one client on stdin/stdout until it closes them."""

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(run)


def http_app(server: Server[Any], host: str = "127.0.0.1") -> Any:
    """The Starlette app serving streamable HTTP at `/mcp` (DNS-rebinding protection on for
    a loopback `host`, as the SDK sets it)."""
    return server.streamable_http_app(host=host)


def serve_http(server: Server[Any], host: str, port: int) -> None:
    """Serve streamable HTTP at `http://HOST:PORT/mcp` until interrupted."""
    import uvicorn

    uvicorn.run(http_app(server, host), host=host, port=port, log_level="warning")
