"""A signature's certificate chain, checked before `model_signing` sees it, for what the library
lets through: it checks a chain as of the signing certificate's own start date (a bundle carries
no trusted timestamp), so an expired or not-yet-valid certificate verifies, and a chain that
loops only fails as "unable to get issuer certificate". An installer refuses both, saying so.

The path is followed as a verifier builds it, from the signing certificate to the certificate
that issued it (`cryptography`'s `verify_directly_issued_by` checks each link's signature),
among the bundle's certificates and the trusted ones, until a self-signed or unknown issuer.
Each certificate on it must be valid now. The library still verifies the chain itself.

`check_signing_path` is the signer's side (`hubskills sign`, `publish --sign`): the chain a
signature will carry must build, in the order given, from the signing certificate to a
self-signed root, each issuer a CA that may sign certificates, each certificate valid now; the
library writes any chain it is given, and every pull would refuse the result.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from typing import Any

#: More certificates than any real chain holds (NVIDIA's has 3; the web's rarely more than 4).
MAX_CHAIN = 10


def _now() -> datetime.datetime:
    """The time certificates are checked against: the current time, UTC (one place, so the
    tests can hold the clock where their fixed certificates are valid)."""
    return datetime.datetime.now(datetime.UTC)


class ChainProblem(Exception):
    """What is wrong with the chain, in words; `trusted`: the trusted certificate at fault;
    `short`: the chain stops before a root (the certificates above are missing)."""

    def __init__(self, message: str, *, trusted: Any = None, short: bool = False) -> None:
        super().__init__(message)
        self.trusted = trusted
        self.short = short


def check_chain(chain: Sequence[Any], trusted: Sequence[Any],
                now: datetime.datetime | None = None) -> None:
    """Refuse a chain that is too long, loops, or holds a certificate not valid `now`.

    Args:
        chain: the bundle's `x509.Certificate`s, signing certificate first.
        trusted: the trusted `x509.Certificate`s (the anchors' files).
        now: the time to check against (default: the current time, UTC).

    Raises:
        ChainProblem: the first problem found, naming the certificate.
    """
    if len(chain) > MAX_CHAIN:
        raise ChainProblem(f"its certificate chain holds {len(chain)} certificates (at most "
                           f"{MAX_CHAIN} are read)")
    now = now or _now()
    trusted_fps = {fingerprint(c) for c in trusted}
    pool = {fingerprint(c): c for c in [*chain, *trusted]}
    path = [chain[0]]
    while not _self_signed(path[-1]):
        issuers = [c for c in pool.values() if _issued(path[-1], c)]
        if not issuers:
            break  # unknown issuer: the library refuses it ("unable to get issuer")
        seen = {fingerprint(c) for c in path}
        fresh = [c for c in issuers if fingerprint(c) not in seen]
        if not fresh:
            names = " → ".join(_subject(c) for c in [*path, issuers[0]])
            raise ChainProblem(f"its certificate chain loops ({names})")
        fresh.sort(key=lambda c: (fingerprint(c) not in trusted_fps, not _valid(c, now)))
        path.append(fresh[0])
    for index, cert in enumerate(path):
        if _valid(cert, now):
            continue
        if fingerprint(cert) in trusted_fps:
            raise ChainProblem(f"it chains to the trusted certificate {_subject(cert)}, which "
                               f"{_when(cert, now)}", trusted=cert)
        role = "signing certificate" if index == 0 else "certificate"
        raise ChainProblem(f"its {role} {_subject(cert)} {_when(cert, now)}")


def check_signing_path(cert: Any, chain: Sequence[Any], origins: Sequence[str] = (),
                       now: datetime.datetime | None = None) -> None:
    """Refuse a signing certificate and chain (`--chain`, in order) that a verifier cannot
    build from the certificate to a root: an issuer that is not the next certificate (or whose
    key did not sign it), one that is not a CA (`CA:FALSE`), may not sign certificates
    (`keyCertSign`) or is past its path length, a certificate not valid `now`, a signing
    certificate not for signing, or a chain that stops short of a self-signed root.

    Args:
        cert: the signing certificate.
        chain: the certificates above it, its issuer first, the root last.
        origins: the file each of `chain` came from (named in the problem).
        now: the time to check against (default: the current time, UTC).

    Raises:
        ChainProblem: the first problem found, naming the certificate and its file.
    """
    now = now or _now()
    if _self_signed(cert):  # passed again as its own chain (the library reads no empty one)
        kept = [i for i, c in enumerate(chain) if fingerprint(c) != fingerprint(cert)]
        chain, origins = [chain[i] for i in kept], [origins[i] for i in kept if i < len(origins)]
    path = [cert, *chain]
    named = ["the signing certificate " + _subject(cert)] + [
        f"{_subject(c)}" + (f" ({origins[i]})" if i < len(origins) else "")
        for i, c in enumerate(chain)]
    if len(path) > MAX_CHAIN:
        raise ChainProblem(f"the certificate chain holds {len(path)} certificates (a pull "
                           f"reads at most {MAX_CHAIN})")
    for index, each in enumerate(path):
        if not _valid(each, now):
            raise ChainProblem(f"{named[index]} {_when(each, now)}")
    if not _signs(cert):
        raise ChainProblem(f"{named[0]} is not for signing (its key usage has no "
                           "digitalSignature, nor its extended key usage codeSigning)")
    for index, (child, issuer) in enumerate(zip(path, path[1:], strict=False), start=1):
        if child.issuer != issuer.subject:
            raise ChainProblem(f"{named[index - 1]} was issued by "
                               f"{child.issuer.rfc4514_string()}, not by the next certificate "
                               f"in the chain, {named[index]}")
        if not _issued(child, issuer):
            raise ChainProblem(f"{named[index - 1]} is not signed by the key of {named[index]}")
        if not is_ca(issuer):
            raise ChainProblem(f"{named[index]} is not a CA certificate (CA:FALSE), so it "
                               f"cannot issue {_subject(child)}")
        if not _may_sign_certificates(issuer):
            raise ChainProblem(f"{named[index]} may not sign certificates (its key usage has "
                               "no keyCertSign)")
        limit = _path_length(issuer)
        if limit is not None and index - 1 > limit:
            raise ChainProblem(f"{named[index]} allows {limit} CA certificate"
                               f"{'' if limit == 1 else 's'} below it (pathlen), and the chain "
                               f"has {index - 1}")
    if not _self_signed(path[-1]):
        raise ChainProblem(f"the chain stops at {named[-1]}, which was issued by "
                           f"{path[-1].issuer.rfc4514_string()}: the certificates up to the "
                           "root must follow it, the root last", short=True)


def _basic(cert: Any) -> Any:
    from cryptography import x509

    try:
        return cert.extensions.get_extension_for_class(x509.BasicConstraints).value
    except x509.ExtensionNotFound:
        return None


def is_ca(cert: Any) -> bool:
    """A CA certificate, as OpenSSL reads it: `CA:TRUE`, or a self-signed version 1 one."""
    from cryptography import x509

    basic = _basic(cert)
    if basic is not None:
        return bool(basic.ca)
    return cert.version == x509.Version.v1 and _self_signed(cert)


def _path_length(cert: Any) -> int | None:
    basic = _basic(cert)
    return None if basic is None else basic.path_length


def _may_sign_certificates(cert: Any) -> bool:
    from cryptography import x509

    try:
        return bool(cert.extensions.get_extension_for_class(x509.KeyUsage).value.key_cert_sign)
    except x509.ExtensionNotFound:
        return True


def _signs(cert: Any) -> bool:
    """Whether `model_signing` takes `cert` as a signing certificate: digitalSignature in its
    key usage, or codeSigning in its extended key usage."""
    from cryptography import x509
    from cryptography.x509.oid import ExtendedKeyUsageOID

    try:
        if cert.extensions.get_extension_for_class(x509.KeyUsage).value.digital_signature:
            return True
    except x509.ExtensionNotFound:
        pass
    try:
        usage = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    except x509.ExtensionNotFound:
        return False
    return ExtendedKeyUsageOID.CODE_SIGNING in usage


def _issued(cert: Any, issuer: Any) -> bool:
    """Whether `issuer`'s key signed `cert` (and names match); never raises."""
    if cert.issuer != issuer.subject:
        return False
    try:
        cert.verify_directly_issued_by(issuer)
    except Exception:  # noqa: BLE001  a bad signature, an unknown key type: not its issuer
        return False
    return True


def _self_signed(cert: Any) -> bool:
    return bool(cert.issuer == cert.subject and _issued(cert, cert))


def _valid(cert: Any, now: datetime.datetime) -> bool:
    return bool(cert.not_valid_before_utc <= now <= cert.not_valid_after_utc)


def _when(cert: Any, now: datetime.datetime) -> str:
    if cert.not_valid_after_utc < now:
        return f"expired on {cert.not_valid_after_utc:%Y-%m-%d %H:%M} UTC"
    return f"is not valid before {cert.not_valid_before_utc:%Y-%m-%d %H:%M} UTC"


def _subject(cert: Any) -> str:
    return str(cert.subject.rfc4514_string()) or "(no subject)"


def fingerprint(cert: Any) -> bytes:
    """SHA-256 of the certificate's DER."""
    from cryptography.hazmat.primitives import hashes

    return bytes(cert.fingerprint(hashes.SHA256()))


def can_anchor(cert: Any) -> bool:
    """Whether a trusted `cert` can vouch for a signature: a CA certificate (a root or an
    intermediate), or a self-signed one, which OpenSSL takes as the whole chain of a signature
    made with that certificate itself (a pinned certificate). A certificate a CA issued with
    `CA:FALSE` issues nothing, and alone never ends a chain OpenSSL builds (it looks on for
    its issuer)."""
    return is_ca(cert) or _self_signed(cert)
