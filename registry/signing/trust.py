"""Trust anchors: certificates (a root or intermediate a signing certificate must chain to)
and public keys the user added with `hubskills trust add NAME FILE`.

A certificate a CA issued with `CA:FALSE` is refused as an anchor: OpenSSL never ends a chain
at it (it looks on for the issuer), so it could never vouch. A self-signed certificate, CA or
not, is kept: OpenSSL takes it as the whole chain of a signature made with it, so it is a
pinned certificate, vouching for its own signatures alone (`is_pinned`).

They are stored as `<HUBSKILLS_HOME>/trust/<NAME>.pem`, beside the config, one PEM file each,
so the store is readable and easy to audit (`ls`, `openssl x509 -in`).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from registry._io import atomic_write_bytes
from registry.errors import HubskillsError
from registry.signing._chain import can_anchor, is_ca
from registry.signing._oms import oms

_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
_MAX_PEM = 256 * 1024


@dataclass(frozen=True)
class Anchor:
    """One trusted certificate bundle or public key."""

    name: str
    path: Path
    kind: str  # "certificate" | "key"
    identity: str  # the certificate's subject, or the key's fingerprint


def trust_dir(home: Path) -> Path:
    """Where the anchors live: `<HUBSKILLS_HOME>/trust`."""
    return home / "trust"


def key_fingerprint(public_key: object) -> str:
    """`sha256:<hex>` of a public key's DER SubjectPublicKeyInfo (what `keys new` prints)."""
    from cryptography.hazmat.primitives import serialization

    der = public_key.public_bytes(  # type: ignore[attr-defined]  # any cryptography public key
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return "sha256:" + hashlib.sha256(der).hexdigest()


def parse_anchor(name: str, data: bytes, path: Path, shown: Path | None = None) -> Anchor:
    """The anchor a PEM file holds: certificates (the first names it) or one public key;
    `shown`: the file errors name (default `path`).

    Raises:
        HubskillsError: not a PEM certificate or public key (a private key: its `.pub` named),
            or the `sign` extra is missing.
    """
    shown = shown or path
    if b"PRIVATE KEY-----" in data:  # never stored, never echoed
        public = Path(f"{shown}.pub")
        raise HubskillsError(f"{shown} is a private key: trust the public key, which is the "
                             "one to share", hint=f"hubskills trust add {name} {public}"
                             if public.is_file() else "ask its owner for the public key "
                             "(hubskills keys new writes it beside the private one, .pub)")
    oms()  # cryptography comes with the `sign` extra, not with hubskills itself
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    try:
        certs = x509.load_pem_x509_certificates(data)
        return Anchor(name, path, "certificate", certs[0].subject.rfc4514_string())
    except ValueError:
        pass
    try:
        key = serialization.load_pem_public_key(data)
    except (ValueError, TypeError) as err:
        raise HubskillsError(f"{shown} holds no PEM certificate or public key",
                             hint="pass the publisher's root certificate (.pem) or public key "
                                  "(hubskills keys new writes one)") from err
    return Anchor(name, path, "key", key_fingerprint(key))


def add_anchor(home: Path, name: str, source: Path) -> Anchor:
    """Trust the certificate(s) or public key in `source` under `name` (replacing it).

    Raises:
        HubskillsError: a bad name, an unreadable or oversized file, no PEM in it, or
            certificates none of which can vouch (`_chain.can_anchor`: a leaf a CA issued).
    """
    if not _NAME.match(name):
        raise HubskillsError(f"'{name}' is not a trust name (lowercase letters, digits, '.', "
                             "'_', '-')", hint="hubskills trust add nvidia nv-agent-root-cert.pem")
    try:
        if source.stat().st_size > _MAX_PEM:
            raise HubskillsError(f"{source} is over {_MAX_PEM // 1024} KiB; not a certificate "
                                 "or key", hint="pass the PEM file itself")
        data = source.read_bytes()
    except OSError as err:
        raise HubskillsError(f"cannot read {source}: {err.strerror}",
                             hint=f"ls {source.parent}  # the .pem or .pub file you were "
                                  "given") from err
    target = trust_dir(home) / f"{name}.pem"
    anchor = parse_anchor(name, data, target, shown=source)
    if anchor.kind == "certificate":
        _refuse_leaf_alone(name, data, source)
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(target, data)
    return anchor


def _refuse_leaf_alone(name: str, data: bytes, source: Path) -> None:
    """Refuse a file whose certificates are all leaves a CA issued (`CA:FALSE`, not
    self-signed): no chain OpenSSL builds ends at one, so it would never vouch for a signer."""
    from cryptography import x509

    certs = x509.load_pem_x509_certificates(data)
    if any(can_anchor(cert) for cert in certs):
        return
    first = certs[0]
    raise HubskillsError(f"{source}: {first.subject.rfc4514_string()} is not a CA certificate "
                         "(CA:FALSE) and not self-signed, so it can never vouch for a signer "
                         "(a chain is verified up to the root that issued it)",
                         hint=f"hubskills trust add {name} ROOT.pem  # the certificate of "
                              f"{first.issuer.rfc4514_string()}, from the publisher")


def is_pinned(anchor: Anchor) -> bool:
    """A certificate anchor that holds no CA certificate: a self-signed one, which vouches only
    for signatures made with that certificate itself."""
    if anchor.kind != "certificate":
        return False
    from cryptography import x509

    try:
        certs = x509.load_pem_x509_certificates(anchor.path.read_bytes())
    except (OSError, ValueError):
        return False
    return not any(is_ca(cert) for cert in certs)


def anchors(home: Path) -> list[Anchor]:
    """Every trusted anchor, by name (files that are not valid anchors are skipped)."""
    found = []
    folder = trust_dir(home)
    for path in sorted(folder.glob("*.pem")) if folder.is_dir() else []:
        try:
            if path.is_file() and path.stat().st_size <= _MAX_PEM:
                found.append(parse_anchor(path.stem, path.read_bytes(), path))
        except (OSError, HubskillsError):
            continue
    return found


def remove_anchor(home: Path, name: str) -> bool:
    """Stop trusting `name`; returns whether it was trusted."""
    path = trust_dir(home) / f"{name}.pem"
    if _NAME.match(name) and path.is_file():
        path.unlink()
        return True
    return False
