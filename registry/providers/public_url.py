"""Whether a model server URL that someone else chose may be called from this machine.

A Space calls model servers on its visitors' behalf; a URL a visitor typed must not turn the
Space into a proxy to addresses only the Space can reach (SSRF). `check_public_url` allows only
`https` URLs whose host resolves, every address of it, to the public internet: no loopback,
private, link-local (the cloud metadata service at 169.254.169.254 included), shared/CGNAT
(100.64.0.0/10), multicast, reserved or unspecified addresses, in IPv4 or IPv6, nor IPv6 forms
that carry such an IPv4 address (mapped, NAT64, 6to4, Teredo). The providers' HTTP clients do
not follow redirects (`providers._sdk`), so an allowed host cannot bounce a request elsewhere.

A check alone is not enough: the HTTP client resolves the name again when it connects, and a
name can answer a public address to the check and 127.0.0.1 a moment later (DNS rebinding).
`PinnedTransport` closes that: each new connection resolves its host once, checks every
address, and connects to a checked address only; TLS still names the host (SNI and the
certificate check), as does the Host header. Any connection it opens, to a redirect's target
too, goes through the same check.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Iterable, Sequence
from typing import Any
from urllib.parse import urlsplit

import httpcore
import httpx

from registry.errors import HubskillsError

HINT = "use a model server on the public internet over https, or run hubskills on your machine"
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], Sequence[str]]
"""(host, port) -> its addresses, as text: `system_resolver`, or a test's own."""


def system_resolver(host: str, port: int) -> list[str]:
    """The addresses the system resolves `host` to (TCP)."""
    found = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    return [str(sockaddr[0]).split("%", 1)[0] for *_, sockaddr in found]


def public_addresses(host: str, port: int, resolver: Resolver = system_resolver,
                     is_allowed: Callable[[Address], bool] | None = None) -> list[Address]:
    """`host` resolved once, every address checked (`is_public` unless `is_allowed`).

    Raises:
        HubskillsError: the host does not resolve, or one of its addresses is not allowed.
    """
    allowed = is_allowed or is_public
    try:
        addresses = [ipaddress.ip_address(a) for a in resolver(host, port)]
    except (OSError, ValueError) as err:
        raise HubskillsError(f"refusing {host}: it does not resolve", hint=HINT) from err
    if not addresses:
        raise HubskillsError(f"refusing {host}: it does not resolve", hint=HINT)
    for address in addresses:
        if not allowed(address):
            where = host if host == str(address) else f"{host} ({address})"
            raise HubskillsError(f"refusing {where}: not a public address", hint=HINT)
    return addresses


def check_public_url(url: str, resolver: Resolver = system_resolver) -> None:
    """Refuse `url` unless it is `https` and its host resolves only to public addresses
    (then call it through `PinnedTransport`, which checks again at each connection).

    Raises:
        HubskillsError: not https, no host, the host does not resolve, or it resolves to an
            address that is not public (the message names it).
    """
    parts = urlsplit(url.strip())
    if parts.scheme.lower() != "https" or not parts.hostname:
        raise HubskillsError(f"refusing the model server URL {url!r}: only https URLs of public "
                             "hosts are allowed here", hint=HINT)
    try:
        port = parts.port or 443
    except ValueError as err:
        raise HubskillsError(f"refusing the model server URL {url!r}: its host does not "
                             "resolve", hint=HINT) from err
    try:
        public_addresses(parts.hostname, port, resolver)
    except HubskillsError as err:
        raise HubskillsError(f"refusing the model server URL {url!r}: "
                             f"{str(err).removeprefix('refusing ')}", hint=HINT) from err


class _PinnedBackend(httpcore.AsyncNetworkBackend):
    """Connects to a checked address of the host, never to a name (see the module)."""

    def __init__(self, inner: httpcore.AsyncNetworkBackend, resolver: Resolver,
                 is_allowed: Callable[[Address], bool] | None,
                 connect_error: type[Exception] = httpcore.ConnectError) -> None:
        self.inner, self.resolver, self.is_allowed = inner, resolver, is_allowed
        self.connect_error = connect_error  # the one the transport's httpcore maps

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                          local_address: str | None = None,
                          socket_options: Iterable[Any] | None = None
                          ) -> httpcore.AsyncNetworkStream:
        import anyio.to_thread

        try:
            addresses = await anyio.to_thread.run_sync(
                public_addresses, host, port, self.resolver, self.is_allowed)
        except HubskillsError as err:
            raise self.connect_error(str(err)) from err
        return await self.inner.connect_tcp(str(addresses[0]), port, timeout=timeout,
                                            local_address=local_address,
                                            socket_options=socket_options)

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: Iterable[Any] | None = None
                                  ) -> httpcore.AsyncNetworkStream:
        raise self.connect_error("refusing a Unix socket: only public hosts are allowed")

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


class PinnedTransport(httpx.AsyncHTTPTransport):
    """An httpx transport whose every connection goes to a checked public address of its
    host (see the module docstring); `resolver` and `is_allowed` are for tests.

        httpx.AsyncClient(transport=PinnedTransport(verify=ctx), follow_redirects=False)
    """

    def __init__(self, *, resolver: Resolver = system_resolver,
                 is_allowed: Callable[[Address], bool] | None = None, **options: Any) -> None:
        super().__init__(**options)
        pin(self, httpcore, resolver=resolver, is_allowed=is_allowed)


def pin(transport: Any, core: Any, *, resolver: Resolver = system_resolver,
        is_allowed: Callable[[Address], bool] | None = None) -> Any:
    """``transport`` (an `AsyncHTTPTransport` of httpx, or of httpx2, the stack the official
    SDKs use), its connections pinned as `PinnedTransport`'s; ``core``: the httpcore module
    it is built on (`httpcore` or `httpcore2`), whose `ConnectError` it maps."""
    # the transport builds its pool with httpcore's default network backend; wrap that one
    pool = transport._pool
    pool._network_backend = _PinnedBackend(pool._network_backend, resolver, is_allowed,
                                           core.ConnectError)
    return transport


def is_public(address: Address) -> bool:
    """Whether `address`, and any IPv4 address it carries, is on the public internet."""
    if not address.is_global or address.is_multicast:
        return False
    if isinstance(address, ipaddress.IPv4Address):
        return True
    carried = [address.ipv4_mapped, address.sixtofour,
               *(address.teredo or ()),
               ipaddress.IPv4Address(int(address) & 0xFFFFFFFF) if address in _NAT64 else None]
    return all(is_public(inner) for inner in carried if inner is not None)
