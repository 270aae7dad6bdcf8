"""Run the MCP server over stdio or streamable HTTP (the SDK's transports)."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import socket
from collections.abc import Callable, Sequence
from typing import Any

import anyio
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import TransportSecuritySettings

from registry.errors import HubskillsError


def serve_stdio(server: Server[Any]) -> None:
    """Serve one client on stdin/stdout until it closes them."""

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(run)


MAX_BODY = 1 << 20  # bytes of one request: this server's JSON-RPC messages are a few KiB


LOOPBACK = ("127.0.0.1", "localhost", "[::1]")
ANY = ("0.0.0.0", "::", "")  # every interface


def http_app(server: Server[Any], host: str = "127.0.0.1", port: int | None = None,
             allow_hosts: Sequence[str] = ()) -> Any:
    """The Starlette app serving streamable HTTP at `/mcp`, its request bodies capped
    (`limit_body`), with DNS-rebinding protection on whatever `host` is (`security`)."""
    return limit_body(server.streamable_http_app(
        host=host, transport_security=security(host, port, allow_hosts)))


def security(host: str, port: int | None = None,
             allow_hosts: Sequence[str] = ()) -> TransportSecuritySettings:
    """The SDK's Host and Origin check, on for every address: a request is answered only when
    its Host is the address bound, a loopback name, (bound to every interface) this machine's
    name or primary addresses, each at the port bound, or one of `allow_hosts` (`HOST`: any
    port, or `HOST:PORT`); and its Origin, if any, a page of one of those names (http, any
    port; https too for `allow_hosts`). The SDK turns the check on only for exactly 127.0.0.1,
    localhost or ::1, so a page whose name was rebound to 127.0.0.2, or to a server on
    0.0.0.0, could read every skill (a red-team finding). `port` None: any port."""
    names = list(dict.fromkeys([*([_bracketed(host)] if host not in ANY else []), *LOOPBACK,
                                *(own_names(host) if host in ANY else [])]))
    suffixes = [":*"] if port is None else [f":{port}"] + ([""] if port == 80 else [])
    hosts = [name + suffix for name in names for suffix in suffixes]
    origins = [f"http://{name}{suffix}" for name in names for suffix in ("", ":*")]
    for allowed in allow_hosts:
        given = [allowed] if _port_of(allowed) else [allowed, allowed + ":*"]
        hosts += given
        origins += [f"{scheme}://{h}" for h in given for scheme in ("http", "https")]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True,
                                     allowed_hosts=list(dict.fromkeys(hosts)),
                                     allowed_origins=list(dict.fromkeys(origins)))


def own_names(host: str) -> list[str]:
    """What a client on the network calls this machine, for a server on every interface: its
    host name, the addresses that name resolves to, and the address the default route leaves
    from (a UDP socket connected to a documentation address: nothing is sent). Others (another
    interface, a DNS name): `--allow-host`."""
    name = socket.gethostname()
    found = [name] if name else []
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        found += [str(info[4][0]) for info in socket.getaddrinfo(name, None, family)]
    except (OSError, UnicodeError):
        pass
    with contextlib.suppress(OSError), socket.socket(family, socket.SOCK_DGRAM) as probe:
        probe.connect(("2001:db8::1" if family == socket.AF_INET6 else "192.0.2.1", 9))
        found.append(str(probe.getsockname()[0]))
    return [_bracketed(n.split("%", 1)[0]) for n in found if n not in ANY]


def check_allowed_host(value: str) -> str:
    """`HOST` or `HOST:PORT` (`[V6]:PORT`) as `--allow-host` takes it, lowercased.

    Raises:
        ValueError: anything else (a URL, a path, a wildcard, a space).
    """
    text = value.strip().lower()
    port = _port_of(text)
    name = text.rsplit(":", 1)[0] if port else text
    if not re.fullmatch(r"[a-z0-9._-]+|\[[0-9a-f:.]+\]", name) or ".." in name \
            or (port and not 0 < int(port) < 65536):
        raise ValueError(f"{value!r} is not HOST or HOST:PORT (e.g. mcp.example.org, "
                         "mcp.example.org:8443)")
    return text


def _port_of(text: str) -> str:
    """The port of `HOST:PORT` or `[V6]:PORT`; "" when none is given."""
    head, sep, port = text.rpartition(":")
    bracketed = head.startswith("[") and head.endswith("]")
    return port if sep and port.isdigit() and (":" not in head or bracketed) else ""


def _bracketed(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


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
               ready: Callable[[str], None] | None = None,
               allow_hosts: Sequence[str] = ()) -> None:
    """Serve streamable HTTP at `http://HOST:PORT/mcp` until interrupted; `ready(url)` is
    called once the address is bound (the CLI says so on stderr), with the port bound: port 0
    asks the system for a free one, and `url` names the one it gave. Requests naming another
    Host than that address, a loopback name or `allow_hosts` are refused (`security`).

    Raises:
        HubskillsError: the address cannot be bound (the port in use, a host not this one's).
    """
    import uvicorn

    sock = bind(host, port)
    port = sock.getsockname()[1]
    config = uvicorn.Config(http_app(server, host, port, allow_hosts), host=host, port=port,
                            log_level="warning")
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
