"""Check a skill folder against its `skill.oms.sig` (OpenSSF Model Signing) before install.

`model_signing` does the cryptography and the comparison (`verifying.Config.verify`, configured
as its own command-line tool configures it); on top, we refuse what it lets through for models
but an installer must not: files it ignores (`.git*`, paths the signer listed as ignored) that
would still be installed, a signature whose subject names another skill, and a signer no anchor
the user trusts vouches for. The library checks a certificate chain as of the signing
certificate's own start date; an installer refuses a chain with a certificate expired or not yet
valid today, or one that loops (`_chain`), before the library verifies it.

A certificate chain is checked against each trusted anchor alone (`_vouching_anchor`), and the
library then verifies it against the first one that holds it, alone: so the anchor a signature
is said to be trusted by is the one that verified it, and the signer `skills.lock` pins is the
signing certificate's subject *and* that anchor's certificate (`CN=…; root sha256:…`), which a
certificate with the same subject issued under another trusted root does not match.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from registry.errors import UnsafeSkill, hint_command
from registry.signing._chain import ChainProblem, check_chain, fingerprint
from registry.signing._oms import SIGNATURE_FILE, oms, read_bundle
from registry.signing.trust import Anchor

MAX_SIGNATURE_BYTES = 1024 * 1024
_TRUST_HINT = ("hubskills trust add NAME ROOT-CERT.pem  # the publisher's root certificate or "
               "public key, once you have it from them")


class SignatureRefused(UnsafeSkill):
    """A present signature does not vouch for these exact bytes, or no trusted anchor for it."""


#: What separates a certificate's subject from its root's fingerprint in a pinned signer
#: (a subject, written as RFC 4514 does, escapes every `;` it holds).
ROOT_MARK = "; root sha256:"


@dataclass(frozen=True)
class Signed:
    """Who signed a folder that verified: the signer's identity and the anchor that vouched."""

    signer: str  # what skills.lock pins: `certificate_signer(...)`, or the key's fingerprint
    anchor: str  # the trust name
    mode: str  # "certificate" | "key"
    unsigned: tuple[str, ...] = ()  # git metadata files the signer excluded (installed, unsigned)

    @property
    def subject(self) -> str:
        """Who, as `info` shows it: the certificate's subject, or the key's fingerprint."""
        return signer_subject(self.signer)


def certificate_signer(subject: str, root: bytes) -> str:
    """The signer pinned for a certificate: its subject and the sha256 of the trusted
    certificate its chain was verified to (`CN=Acme,O=Acme; root sha256:<64 hex>`)."""
    return f"{subject}{ROOT_MARK}{root.hex()}"


def signer_subject(signer: str) -> str:
    """The subject of a pinned certificate signer (`signer` itself for a key's fingerprint or a
    subject pinned alone, as hubskills wrote it before the root was pinned with it)."""
    head, mark, tail = signer.rpartition(ROOT_MARK)
    return head if mark and len(tail) == 64 and all(c in "0123456789abcdef" for c in tail) \
        else signer


def same_signer(found: str | None, pinned: str) -> str | None:
    """How `found` (a signer just verified) matches the `pinned` one: `"same"`; `"subject"`
    when `pinned` is a certificate subject alone (a lock written before roots were pinned) and
    `found` has that subject; None when it is someone else (or nobody)."""
    if found is None:
        return None
    if found == pinned:
        return "same"
    if signer_subject(pinned) == pinned and signer_subject(found) == pinned != found:
        return "subject"
    return None


def verify_folder(folder: Path, trusted: Sequence[Anchor], *, name: str,
                  where: str | None = None, source_folder: str | None = None) -> Signed | None:
    """`_verify_folder`; with `source_folder` (a pull from a folder on this machine) a refusal
    that would say "get NAME again from its publisher" says to sign or copy that folder again.
    """
    try:
        return _verify_folder(folder, trusted, name=name, where=where)
    except SignatureRefused as refused:
        if source_folder is not None and refused.hint == _hint(name):
            refused.hint = (f"{hint_command('sign', source_folder, '--key', 'KEY')}  # if you "
                            "signed it (add --certificate and --chain as you did); else copy "
                            "the folder again from whoever signed it. Nothing was installed")
        raise


def _verify_folder(folder: Path, trusted: Sequence[Anchor], *, name: str,
                   where: str | None = None) -> Signed | None:
    """Verify `folder/skill.oms.sig` over every file of `folder`; None when there is none.

    Args:
        folder: the staged skill (no links: the staging check refused them).
        trusted: the anchors the user trusts.
        name: the skill's name; the signature must have been made for a folder of that name.
        where: how errors name the skill (default: the folder).

    Raises:
        SignatureRefused: malformed, untrusted, or not matching the files (naming them).
    """
    sig = folder / SIGNATURE_FILE
    if not (sig.exists() or sig.is_symlink()):
        return None
    where = where or str(folder)
    if not sig.is_file() or sig.stat().st_size > MAX_SIGNATURE_BYTES:
        raise SignatureRefused(f"{where}: {SIGNATURE_FILE} is not a file under "
                               f"{MAX_SIGNATURE_BYTES // 1024} KiB", hint=_hint(name))
    model_signing = oms()
    try:
        signature = read_bundle(sig)
        bundle = signature.bundle
    except Exception as err:  # noqa: BLE001  any parse failure of the library is "malformed"
        raise SignatureRefused(f"{where}: {SIGNATURE_FILE} is malformed ({_short(err)})",
                               hint=_hint(name)) from err
    config, signed = _configure(model_signing, bundle, trusted, where, name)
    try:  # the signature and its certificate chain; gives the signed file list (no public getter)
        manifest = config._verifier.verify(signature)
    except Exception as err:  # noqa: BLE001  any failure of the library is a refusal
        raise SignatureRefused(f"{where}: {SIGNATURE_FILE} does not verify: {_reason(err)}",
                               hint=_hint(name)) from err
    config.set_hashing_config(model_signing.hashing.Config().set_ignored_paths(
        paths=[SIGNATURE_FILE], ignore_git_paths=False))
    try:  # the library's own comparison of the files with the signed list
        config.verify(folder, sig)
    except Exception as err:  # noqa: BLE001
        diff = _diff(model_signing, folder, manifest)
        raise SignatureRefused(f"{where}: the files do not match {SIGNATURE_FILE}: "
                               f"{diff or _short(err)}", hint=_hint(name)) from err
    unsigned = _check_covered(folder, manifest, where, name)
    return Signed(signed.signer, signed.anchor, signed.mode, unsigned)


def _configure(model_signing: Any, bundle: Any, trusted: Sequence[Anchor],
               where: str, name: str) -> tuple[Any, Signed]:
    """The verifying config for the bundle's mode, with the anchors that may vouch for it."""
    material = bundle.verification_material
    chain = getattr(material, "x509_certificate_chain", None)
    config = model_signing.verifying.Config()
    if chain is not None and chain.certificates:
        from cryptography import x509

        try:
            carried = [x509.load_der_x509_certificate(c.raw_bytes) for c in chain.certificates]
        except ValueError as err:
            raise SignatureRefused(f"{where}: a certificate in {SIGNATURE_FILE} is malformed",
                                   hint=_hint(name)) from err
        subject = carried[0].subject.rfc4514_string()
        certs = [a for a in trusted if a.kind == "certificate"]
        if not certs:  # never an empty chain: the library would fall back to the system roots
            keys = [a.name for a in trusted if a.kind == "key"]
            issuer = carried[-1].issuer.rfc4514_string()
            raise SignatureRefused(
                f"{where} is signed by {subject}, and no certificate is "
                "trusted here" + (f" (only public keys: {', '.join(keys)}; a key vouches only "
                                  "for key signatures)" if keys else ""),
                hint=f"hubskills trust add NAME ROOT.pem  # the root certificate of {issuer}, "
                     "from the publisher")
        _check_dates_and_loops(carried, certs, where, name)
        anchor, root = _vouching_anchor(carried, certs, where, name)
        config.use_certificate_verifier(certificate_chain=[anchor.path])  # that anchor alone
        return config, Signed(certificate_signer(subject, root), anchor.name, "certificate")
    hint = getattr(getattr(material, "public_key", None), "hint", None)
    for anchor in (a for a in trusted if a.kind == "key"):
        if hint and _key_hint(anchor) == hint:
            config.use_elliptic_key_verifier(public_key=anchor.path)
            return config, Signed(anchor.identity, anchor.name, "key")
    raise SignatureRefused(f"{where} is signed with a key no anchor here trusts",
                           hint=_TRUST_HINT)


def _check_dates_and_loops(carried: Sequence[Any], certs: Sequence[Anchor], where: str,
                           name: str) -> None:
    """`_chain.check_chain` over the bundle's chain and the trusted certificates, as a refusal."""
    from cryptography import x509

    anchors: list[Any] = []  # the trusted certificates
    held: dict[bytes, str] = {}  # a trusted certificate's fingerprint -> its trust name
    for anchor in certs:
        try:
            loaded = x509.load_pem_x509_certificates(anchor.path.read_bytes())
        except (OSError, ValueError) as err:
            raise SignatureRefused(f"the trusted certificate '{anchor.name}' ({anchor.path}) "
                                   f"cannot be read: {_short(err)}", hint=_TRUST_HINT) from err
        anchors += loaded
        held.update((fingerprint(c), anchor.name) for c in loaded)
    try:
        check_chain(carried, anchors)
    except ChainProblem as problem:
        hint = (f"hubskills trust add {held[fingerprint(problem.trusted)]} ROOT-CERT.pem  # a "
                "current root certificate from the publisher, in place of this one"
                if problem.trusted is not None else
                f"nothing was installed; ask the publisher of {name} to re-sign it with a "
                "valid certificate chain")
        raise SignatureRefused(f"{where}: {SIGNATURE_FILE} is refused: {problem}",
                               hint=hint) from problem


def _key_hint(anchor: Anchor) -> str:
    return key_hint(anchor.path)


def key_hint(public_key: Path) -> str:
    """The key hint `model_signing` writes in a key-mode bundle: sha256 of the key's PEM (what
    `info` shows, `pem-sha256:` first, for a key no anchor here holds)."""
    import hashlib

    from cryptography.hazmat.primitives import serialization

    key = serialization.load_pem_public_key(public_key.read_bytes())
    return hashlib.sha256(key.public_bytes(serialization.Encoding.PEM,
                                           serialization.PublicFormat.SubjectPublicKeyInfo)
                          ).hexdigest()


def _vouching_anchor(carried: Sequence[Any], certs: Sequence[Anchor], where: str,
                     name: str) -> tuple[Anchor, bytes]:
    """The first trusted anchor (by name) whose certificates alone verify the bundle's chain,
    as the library verifies it (OpenSSL, as of the signing certificate's start date), and the
    fingerprint of the trusted certificate the verified chain ends at.

    Raises:
        SignatureRefused: no anchor alone holds the chain (the reason OpenSSL gives against all
            of them together; or, where only several together would, that).
    """
    from cryptography import x509

    loaded = {a.name: x509.load_pem_x509_certificates(a.path.read_bytes()) for a in certs}
    for anchor in certs:
        try:
            top = _verified_top(carried, loaded[anchor.name])
        except Exception:  # noqa: BLE001  not this anchor's chain: the next one may hold it
            continue
        return anchor, fingerprint(top)
    try:
        _verified_top(carried, [c for found in loaded.values() for c in found])
    except Exception as err:  # noqa: BLE001  the library's own error type, said as it says it
        raise SignatureRefused(f"{where}: {SIGNATURE_FILE} does not verify: {_reason(err)}",
                               hint=_hint(name)) from err
    raise SignatureRefused(f"{where}: {SIGNATURE_FILE} chains to a trusted certificate only "
                           "through certificates trusted under different names; one trust "
                           "name must hold the whole chain above the signing certificate",
                           hint="hubskills trust add NAME CHAIN.pem  # the intermediate and "
                                "root certificates in one file")


def _verified_top(carried: Sequence[Any], trusted: Sequence[Any]) -> Any:
    """The last certificate of the chain OpenSSL verifies from `carried` (signing certificate
    first) to `trusted`, with the store `model_signing` builds (its time: the signing
    certificate's start; dates today are `_chain`'s check)."""
    from OpenSSL import crypto

    store = crypto.X509Store()
    for cert in trusted:
        store.add_cert(crypto.X509.from_cryptography(cert))
    store.set_time(carried[0].not_valid_before_utc)
    context = crypto.X509StoreContext(store, crypto.X509.from_cryptography(carried[0]),
                                      [crypto.X509.from_cryptography(c) for c in carried[1:]])
    return context.get_verified_chain()[-1].to_cryptography()


#: Files a signer may leave out (model_signing's CLI does, by default) that no agent reads as
#: instructions; installed with a warning when the signature itself declares them ignored.
_GIT_METADATA = {".gitignore", ".gitattributes"}


def _check_covered(folder: Path, manifest: Any, where: str, name: str) -> tuple[str, ...]:
    """Every file that would be installed is one the signature lists, for this skill, but for
    git metadata files the signature declares ignored; returns those."""
    signed_for = getattr(manifest, "model_name", name)
    if signed_for != name:
        raise SignatureRefused(f"{where}: {SIGNATURE_FILE} was made for '{signed_for}', not "
                               f"'{name}'", hint=_hint(name))
    listed = {str(rd.identifier) for rd in manifest.resource_descriptors()}
    declared = {str(p) for p in manifest.serialization_type.get("ignore_paths", ())}
    extra = sorted(_present(folder) - listed)
    excused = tuple(p for p in extra if p in declared and p in _GIT_METADATA)
    unsigned = [p for p in extra if p not in excused]
    if unsigned:
        raise SignatureRefused(f"{where}: {', '.join(unsigned[:5])} "
                               f"{'is' if len(unsigned) == 1 else 'are'} not covered by "
                               f"{SIGNATURE_FILE} (added after signing)", hint=_hint(name))
    return excused


def changed_since_signing(folder: Path, files: Sequence[str]) -> str | None:
    """Why `folder`'s `skill.oms.sig` would not verify over its `files` (the ones a publish
    sends): what changed since it was made (`the files changed since skill.oms.sig was made
    (changed: SKILL.md)`), or that it is malformed or over the pulls' size cap; None when it
    has none or nothing changed. Digests against the ones the signature lists, its key unread
    (the publisher's check that a publish will still verify, not a verification)."""
    sig = folder / SIGNATURE_FILE
    if not sig.is_file():
        return None
    if sig.stat().st_size > MAX_SIGNATURE_BYTES:  # the cap every pull applies
        return f"{SIGNATURE_FILE} is over {MAX_SIGNATURE_BYTES // 1024} KiB"
    model_signing = oms()
    from model_signing._signing.signing import dsse_payload_to_manifest

    try:
        payload = read_bundle(sig).bundle.dsse_envelope.payload
        manifest = dsse_payload_to_manifest(json.loads(payload))
    except Exception as err:  # noqa: BLE001  any parse failure of the library is "malformed"
        return f"{SIGNATURE_FILE} is malformed ({_short(err)})"
    left_out = sorted(_present(folder) - set(files))  # what a publish does not send
    changed = _diff(model_signing, folder, manifest, ignored=left_out)
    return f"the files changed since {SIGNATURE_FILE} was made ({changed})" if changed else None


def _present(folder: Path) -> set[str]:
    """Every file's relative path but the signature's."""
    found = set()
    for dirpath, _, filenames in os.walk(folder):
        for item in filenames:
            rel = Path(dirpath, item).relative_to(folder).as_posix()
            if rel != SIGNATURE_FILE:
                found.add(rel)
    return found


def _diff(model_signing: Any, folder: Path, manifest: Any, ignored: Sequence[str] = ()) -> str:
    """`changed: a; added after signing: b; missing: c`, from the library's hashes (of every
    file but the signature and `ignored`)."""
    try:
        actual = model_signing.hashing.Config().set_ignored_paths(
            paths=[SIGNATURE_FILE, *ignored], ignore_git_paths=False).hash(folder)
    except Exception:  # noqa: BLE001  the library's own message says it then
        return ""
    want = {str(rd.identifier): rd.digest for rd in manifest.resource_descriptors()}
    have = {str(rd.identifier): rd.digest for rd in actual.resource_descriptors()}
    gone = want.keys() - have.keys()
    parts = [("changed", sorted(p for p in want.keys() & have.keys() if want[p] != have[p])),
             ("added after signing", sorted(have.keys() - want.keys())),
             ("missing", sorted(gone - set(ignored))),
             ("signed, but never published", sorted(gone & set(ignored)))]
    return "; ".join(f"{label}: {', '.join(paths[:5])}" + (f" (+{len(paths) - 5} more)"
                                                           if len(paths) > 5 else "")
                     for label, paths in parts if paths)


def _reason(err: BaseException) -> str:
    """Why the signature or its chain failed, in words (the library's detail after)."""
    if type(err).__name__ == "X509StoreContextError":
        return f"its certificate does not chain to a trusted certificate ({_short(err)})"
    return _short(err)


def _hint(name: str) -> str:
    return (f"nothing was installed; get {name} again from its publisher, or ask them to "
            "re-sign it")


def _short(err: BaseException) -> str:
    text = " ".join(str(err).split()) or type(err).__name__
    return text if len(text) <= 400 else text[:400] + "…"
