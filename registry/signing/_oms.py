"""The one door to `model_signing` (OpenSSF Model Signing): imported lazily, so an install
without the `sign` extra works until a signature has to be checked or written."""

from __future__ import annotations

from types import ModuleType
from typing import Any

from registry._install import add_extra
from registry.errors import HubskillsError

SIGNATURE_FILE = "skill.oms.sig"


def oms() -> ModuleType:
    """`model_signing`, with its certificate mode's `OpenSSL` checked too.

    Raises:
        HubskillsError: the `sign` extra is not installed (the hint names the command).
    """
    try:
        import model_signing
        import model_signing.hashing
        import model_signing.signing
        import model_signing.verifying
        import OpenSSL  # noqa: F401  (certificate mode imports it; fail here, not mid-check)
    except ImportError as err:
        raise HubskillsError(f"checking or writing a {SIGNATURE_FILE} needs model-signing "
                             f"({err.name or err} is not installed)",
                             hint=add_extra("sign")) from err
    return model_signing


def read_bundle(path: Any) -> Any:
    """The signature's Sigstore bundle, read by `model_signing` itself (`ValueError` and
    others when malformed)."""
    oms()
    from model_signing._signing import sign_sigstore_pb

    return sign_sigstore_pb.Signature.read(path)
