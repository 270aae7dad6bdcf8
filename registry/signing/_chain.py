"""A signature's certificate chain, checked before `model_signing` sees it, for what the library
lets through: it checks a chain as of the signing certificate's own start date (a bundle carries
no trusted timestamp), so an expired or not-yet-valid certificate verifies, and a chain that
loops only fails as "unable to get issuer certificate". An installer refuses both, saying so.

The path is followed as a verifier builds it, from the signing certificate to the certificate
that issued it (`cryptography`'s `verify_directly_issued_by` checks each link's signature),
among the bundle's certificates and the trusted ones, until a self-signed or unknown issuer.
Each certificate on it must be valid now. The library still verifies the chain itself.
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
    """What is wrong with the chain, in words; `trusted`: the trusted certificate at fault."""

    def __init__(self, message: str, *, trusted: Any = None) -> None:
        super().__init__(message)
        self.trusted = trusted


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
