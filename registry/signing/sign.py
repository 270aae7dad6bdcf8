"""Write a `skill.oms.sig` over a skill folder (OpenSSF Model Signing, key or certificate mode,
both offline), and make a key pair for a publisher who has none.

The signature is written by `model_signing` as its command-line tool writes it: every file of
the folder but the signature itself, `.git*` included (a pull installs them, so they are signed).
In certificate mode the library writes whatever chain it is given; a chain a verifier cannot
build (an intermediate that is no CA, an expired certificate, a key that is not the
certificate's) is refused here, before anything is written, rather than at every pull.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from registry.errors import HubskillsError
from registry.signing._chain import ChainProblem, check_signing_path
from registry.signing._oms import SIGNATURE_FILE, oms
from registry.signing.trust import key_fingerprint


@dataclass(frozen=True)
class KeyPair:
    """Where `new_key_pair` wrote the keys, and the public key's fingerprint."""

    private: Path
    public: Path
    fingerprint: str


def new_key_pair(private: Path, *, force: bool = False) -> KeyPair:
    """An ECDSA P-256 key pair: `private` (PEM, mode 600) and `private` + `.pub`.

    Raises:
        HubskillsError: a key file exists already (without `force`), or no `sign` extra.
    """
    oms()  # cryptography comes with the `sign` extra
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    public = private.with_name(private.name + ".pub")
    for path in (private, public):
        if path.exists() and not force:
            raise HubskillsError(f"{path} exists; not overwriting a key",
                                 hint="pass another path, or --force to replace it")
    key = ec.generate_private_key(ec.SECP256R1())
    private.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(private, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(key.private_bytes(serialization.Encoding.PEM,
                                       serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))
    public.write_bytes(key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    return KeyPair(private, public, key_fingerprint(key.public_key()))


def sign_folder(folder: Path, *, key: Path, certificate: Path | None = None,
                chain: Sequence[Path] = ()) -> Path:
    """Sign every file of `folder` into `folder/skill.oms.sig` (replacing an older one).

    With `certificate` (and its `chain` up to the root) the signature carries it (certificate
    mode); without, it names the key (key mode).

    Raises:
        HubskillsError: no SKILL.md there, a link in the folder, a key the library refuses,
            or (certificate mode) a certificate and chain that `check_certificate` refuses.
    """
    model_signing = oms()
    if not (folder / "SKILL.md").is_file():
        raise HubskillsError(f"{folder} holds no SKILL.md", hint="hubskills sign ./skills/NAME")
    for dirpath, dirnames, filenames in os.walk(folder):
        for item in [*dirnames, *filenames]:
            if Path(dirpath, item).is_symlink():
                raise HubskillsError(f"{Path(dirpath, item)} is a link; a pull never installs "
                                     "links, so none is signed", hint="replace it with the file")
    if certificate is not None:
        check_certificate(key, certificate, chain)
    config = model_signing.signing.Config()
    try:
        if certificate is None:
            config.use_elliptic_key_signer(private_key=key)
        else:
            config.use_certificate_signer(private_key=key, signing_certificate=certificate,
                                          certificate_chain=list(chain))
        config.set_hashing_config(model_signing.hashing.Config().set_ignored_paths(
            paths=[SIGNATURE_FILE], ignore_git_paths=False))
        config.sign(folder, folder / SIGNATURE_FILE)
    except (ValueError, TypeError, OSError) as err:
        raise HubskillsError(f"cannot sign {folder}: {err}",
                             hint="hubskills keys new KEY  # an ECDSA P-256 key pair") from err
    return folder / SIGNATURE_FILE


_CHAIN_HINT = ("openssl verify -CAfile ROOT.pem -untrusted INTERMEDIATE.pem CERT.pem  # --chain "
               "takes the certificates that issued CERT, in order, the root last")


def check_certificate(key: Path, certificate: Path, chain: Sequence[Path] = ()) -> None:
    """Refuse a certificate-mode signature no pull would accept: `key` is not the key of
    `certificate`, the chain does not build from it to a root (`_chain.check_signing_path`),
    or there is no `chain` (the refusal names what it needs, `_no_chain`).
    Files that do not parse are left to the library, which says so when it reads them.

    Raises:
        HubskillsError: what is wrong, naming the certificate and its file.
    """
    oms()  # cryptography comes with the `sign` extra
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    try:
        private = serialization.load_pem_private_key(key.read_bytes(), password=None)
        signing = x509.load_pem_x509_certificate(certificate.read_bytes())
        above = [(cert, path) for path in chain
                 for cert in x509.load_pem_x509_certificates(path.read_bytes())]
    except (ValueError, TypeError, OSError):
        return
    spki = (serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    if private.public_key().public_bytes(*spki) != signing.public_key().public_bytes(*spki):
        raise HubskillsError(f"--key {key} is not the key of --certificate {certificate} "
                             f"({signing.subject.rfc4514_string()}); nothing was signed",
                             hint="openssl x509 -noout -pubkey -in CERT.pem  # the public key "
                                  "a certificate was issued for; --key takes its private half")
    try:
        check_signing_path(signing, [cert for cert, _ in above],
                           origins=[str(path) for _, path in above])
    except ChainProblem as problem:
        if problem.short and not chain:
            raise _no_chain(certificate, signing, self_signed=False) from problem
        raise HubskillsError(f"cannot sign with --certificate {certificate}: {problem}; every "
                             "pull would refuse the signature, so nothing was signed",
                             hint=_CHAIN_HINT) from problem
    if not chain:  # so a self-signed certificate (the library reads no empty chain)
        raise _no_chain(certificate, signing, self_signed=True)


def _no_chain(certificate: Path, signing: Any, *, self_signed: bool) -> HubskillsError:
    """The refusal of a `--certificate` without `--chain`, naming what is missing: the root
    (and any intermediates) a CA-issued certificate needs, or, for a self-signed one, itself
    as its own chain (the library signs with no empty chain; a pull takes the certificate as
    the whole chain, once it is trusted), or key mode (`--key` alone)."""
    issuer = signing.issuer.rfc4514_string()
    if not self_signed:
        return HubskillsError(
            f"cannot sign with --certificate {certificate}: {issuer} issued it, and no --chain "
            "names that certificate; every pull would refuse the signature, so nothing was "
            "signed",
            hint=f"add --chain ROOT.pem  # the certificate of {issuer}; an intermediate's "
                 "--chain comes first, the root's last")
    return HubskillsError(
        f"--certificate {certificate} is self-signed ({issuer}) and no --chain was given: "
        "model_signing reads the chain from --chain, and a self-signed certificate is its "
        "own; nothing was signed",
        hint=f"add --chain {certificate}  # users then trust it: hubskills trust add NAME "
             f"{certificate} (or sign with --key alone: key mode)")
