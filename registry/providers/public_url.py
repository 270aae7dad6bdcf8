"""Whether a model server URL that someone else chose may be called from this machine.

A Space calls model servers on its visitors' behalf; a URL a visitor typed must not turn the
Space into a proxy to addresses only the Space can reach (SSRF). `check_public_url` allows only
`https` URLs whose host resolves, every address of it, to the public internet: no loopback,
private, link-local (the cloud metadata service at 169.254.169.254 included), shared/CGNAT
(100.64.0.0/10), multicast, reserved or unspecified addresses, in IPv4 or IPv6, nor IPv6 forms
that carry such an IPv4 address (mapped, NAT64, 6to4, Teredo). The providers' HTTP clients do
not follow redirects (`providers._sdk`), so an allowed host cannot bounce a request elsewhere.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

from registry.errors import HubskillsError

HINT = "use a model server on the public internet over https, or run hubskills on your machine"
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def check_public_url(url: str) -> None:
    """Refuse `url` unless it is `https` and its host resolves only to public addresses.

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
        found = socket.getaddrinfo(parts.hostname, port, proto=socket.IPPROTO_TCP)
    except (OSError, ValueError) as err:
        raise HubskillsError(f"refusing the model server URL {url!r}: its host does not "
                             "resolve", hint=HINT) from err
    for *_, sockaddr in found:
        address = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
        if not is_public(address):
            where = parts.hostname if parts.hostname == str(address) else \
                f"{parts.hostname} ({address})"
            raise HubskillsError(f"refusing the model server URL {url!r}: {where} is not a "
                                 "public address", hint=HINT)


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
