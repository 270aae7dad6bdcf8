"""What a registry says about a skill's signature: signed (by whom), unsigned, or invalid.

`verify_folder` is the install gate (it refuses); this is the display: it never raises for a
bad signature, it says so. The order:

1. No `skill.oms.sig`: unsigned.
2. It verifies against an anchor the reader trusts (`hubskills trust add`): signed, and by
   which anchor.
3. Certificate mode, no trusted anchor vouches: the signature is checked against the chain it
   carries (its top certificate as the root). Passing, it is signed by the certificate's
   subject, *not trusted here*: the bytes are what that certificate signed, but nothing says
   the certificate is who it claims. Failing (a changed byte, a file added after signing, a
   chain that does not hold), it is invalid, with the reason naming the files.
4. Key mode, no trusted key matches: the signature names only a hash of its key, so it cannot
   be checked here: signed, `checked` false.

A malformed signature, or one made for another skill, is invalid.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from registry.errors import HubskillsError
from registry.signing._oms import SIGNATURE_FILE, read_bundle
from registry.signing.trust import Anchor
from registry.signing.verify import SignatureRefused, verify_folder

State = Literal["signed", "unsigned", "invalid"]
NOT_INSTALLED = "model-signing is not installed"


@dataclass(frozen=True)
class SignatureStatus:
    """A skill folder's signature as shown by `info`, `search --json` and the Space."""

    status: State
    signer: str | None = None  # certificate subject; key fingerprint (`keys new`'s sha256:),
    # or, for a key no anchor here holds, the hint the signature carries (pem-sha256: of it)
    mode: str | None = None  # "certificate" | "key"
    root: str | None = None  # certificate mode: the subject at the top of the carried chain
    trusted_by: str | None = None  # the reader's trust anchor that vouched, if any
    checked: bool = False  # the signature was checked against these exact bytes
    reason: str | None = None  # why invalid, or why not checked

    def label(self) -> str:
        """One line: `signed by CN=… (trusted: nvidia)`, `unsigned`, `signature invalid: …`."""
        if self.status == "unsigned":
            return "unsigned"
        if self.status == "invalid":
            return f"signature invalid: {self.reason}"
        who = f"signed by {self.signer}" if self.mode == "certificate" else \
            f"signed with key {self.signer}" if self.mode == "key" else "signed"
        if self.trusted_by:
            return f"{who} (trusted: {self.trusted_by})"
        if not self.checked:
            return f"{who} (not checked: {self.reason})"
        root = f"; root {self.root}" if self.root and self.root != self.signer else ""
        return f"{who} (not trusted here{root})"

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (every field, `label` added)."""
        return {**asdict(self), "label": self.label()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SignatureStatus:
        """The status `to_dict` wrote (extra keys ignored)."""
        status = data.get("status")
        if status not in ("signed", "unsigned", "invalid"):
            raise TypeError(f"not a signature status: {status!r}")
        text = {k: str(data[k]) if data.get(k) is not None else None
                for k in ("signer", "mode", "root", "trusted_by", "reason")}
        return cls(status, checked=bool(data.get("checked")), **text)


def signature_status(folder: Path, trusted: Sequence[Anchor], *, name: str) -> SignatureStatus:
    """The signature of the skill `folder` (named `name`), as the module docstring describes.

    Without `model-signing` (the `sign` extra) a present signature is `signed`, not checked,
    and the reason says what to install (`NOT_INSTALLED` starts it).
    """
    sig = folder / SIGNATURE_FILE
    if not (sig.exists() or sig.is_symlink()):
        return SignatureStatus("unsigned")
    try:
        signed = verify_folder(folder, trusted, name=name, where=name)
        if signed is None:  # removed meanwhile
            return SignatureStatus("unsigned")
        return SignatureStatus("signed", signed.subject, signed.mode, trusted_by=signed.anchor,
                               checked=True, root=_root(sig))
    except SignatureRefused as refused:
        first = refused
    except HubskillsError as missing:  # no `sign` extra
        return SignatureStatus("signed", reason=f"{NOT_INSTALLED}: {missing.hint}")
    try:
        bundle = read_bundle(sig).bundle
    except Exception:  # noqa: BLE001  a malformed file: verify_folder said so already
        return SignatureStatus("invalid", reason=_reason(first, name))
    chain = getattr(bundle.verification_material, "x509_certificate_chain", None)
    if chain is None or not chain.certificates:
        hint = getattr(bundle.verification_material.public_key, "hint", "") or "?"
        if "with a key no anchor here trusts" not in first.message:
            return SignatureStatus("invalid", f"pem-sha256:{hint}", "key",
                                   reason=_reason(first, name))
        return SignatureStatus("signed", f"pem-sha256:{hint}", "key", reason="no trusted key "
                               "matches it (hubskills trust add NAME KEY.pub)")
    return _self_contained(folder, chain, name, first)


def _self_contained(folder: Path, chain: Any, name: str,
                    first: SignatureRefused) -> SignatureStatus:
    """Certificate mode: check against the chain the signature carries, its top as root."""
    from cryptography import x509

    try:
        certs = [x509.load_der_x509_certificate(c.raw_bytes) for c in chain.certificates]
    except ValueError:
        return SignatureStatus("invalid", mode="certificate", reason=_reason(first, name))
    from cryptography.hazmat.primitives.serialization import Encoding

    subject, root = certs[0].subject.rfc4514_string(), certs[-1].subject.rfc4514_string()
    with tempfile.TemporaryDirectory(prefix="hubskills-chain-") as scratch:
        pem = Path(scratch) / "root.pem"
        pem.write_bytes(certs[-1].public_bytes(Encoding.PEM))
        try:
            verify_folder(folder, [Anchor("carried", pem, "certificate", root)], name=name,
                          where=name)
        except SignatureRefused as err:
            return SignatureStatus("invalid", subject, "certificate", root,
                                   reason=_reason(err, name))
    return SignatureStatus("signed", subject, "certificate", root, checked=True)


def _root(sig: Path) -> str | None:
    from cryptography import x509

    try:
        chain = read_bundle(sig).bundle.verification_material.x509_certificate_chain
        return x509.load_der_x509_certificate(
            chain.certificates[-1].raw_bytes).subject.rfc4514_string() if chain else None
    except Exception:  # noqa: BLE001  only a label
        return None


def sign_options(folder: Path) -> str:
    """The `--sign` options that make a signature like `folder`'s again: `--key KEY`, and for
    one made with a certificate its `--certificate` and `--chain` too (a walk: the stale
    signature's note named `--key KEY` alone for a certificate-signed skill)."""
    return "--key KEY --certificate CERT.pem --chain CA.pem" \
        if _root(folder / SIGNATURE_FILE) is not None else "--key KEY"


def _reason(err: HubskillsError, name: str) -> str:
    return err.message.removeprefix(f"{name}: ").removeprefix(name + " ")
