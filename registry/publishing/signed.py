"""`publish --sign`: the revision a publish writes carries a `skill.oms.sig` over exactly the
files it publishes (OpenSSF Model Signing, key or certificate mode, offline).

The files `publish` would send (noise such as `.DS_Store` and `__pycache__` left out) are
copied into a scratch folder named after the skill, since the signature names the folder it was
made for and `pull` checks it against the skill's name; `model_signing` signs that copy; the
signature is checked there (certificate mode against the chain it carries, key mode against the
public key of the private key used) and only then written into the skill folder, replacing an
older one, so the folder is the revision that gets published.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

from registry.errors import HubskillsError
from registry.format.folder_names import folder_name
from registry.format.skill import Skill
from registry.signing import SIGNATURE_FILE, sign_folder
from registry.signing.status import SignatureStatus, signature_status
from registry.signing.trust import Anchor, key_fingerprint
from registry.stores.files import skill_files


@dataclass(frozen=True)
class SignWith:
    """The key that signs a publish, and in certificate mode its certificate and chain."""

    key: Path
    certificate: Path | None = None
    chain: tuple[Path, ...] = field(default_factory=tuple)


def sign_for_publish(skill: Skill, how: SignWith) -> SignatureStatus:
    """Sign the files `publish` sends and write `skill.oms.sig` into the skill folder.

    Raises:
        HubskillsError: a key or certificate the library refuses, or a signature that does not
            verify once written (nothing is written into the folder then).
    """
    with tempfile.TemporaryDirectory(prefix="hubskills-sign-") as scratch:
        staged = Path(scratch) / folder_name(skill)  # `../../home/me` copied out there
        for rel, full in skill_files(skill):
            if rel == SIGNATURE_FILE:
                continue
            target = staged / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(full, target)
        sign_folder(staged, key=how.key, certificate=how.certificate, chain=how.chain)
        status = _check(staged, skill.name, how, Path(scratch))
        data = (staged / SIGNATURE_FILE).read_bytes()
    from registry._io import atomic_write_bytes

    atomic_write_bytes(skill.path / SIGNATURE_FILE, data)
    return status


def _check(staged: Path, name: str, how: SignWith, scratch: Path) -> SignatureStatus:
    trusted: list[Anchor] = []
    if how.certificate is None:
        from cryptography.hazmat.primitives import serialization

        private = serialization.load_pem_private_key(how.key.read_bytes(), password=None)
        public = private.public_key()
        pem = scratch / "public.pem"
        pem.write_bytes(public.public_bytes(serialization.Encoding.PEM,
                                            serialization.PublicFormat.SubjectPublicKeyInfo))
        trusted = [Anchor("your key", pem, "key", key_fingerprint(public))]
    status = signature_status(staged, trusted, name=name)
    if status.status != "signed" or not status.checked:
        raise HubskillsError(f"the signature just made over {name} does not verify: "
                             f"{status.reason or status.label()}; nothing was published",
                             hint="hubskills sign FOLDER --key KEY  # to see the error alone")
    return replace(status, trusted_by=None)  # checked against the signer's own key or chain
