"""Signatures on skill folders in the OpenSSF Model Signing format (`skill.oms.sig`): verify
one before install, trust anchors, sign a folder, make a key pair. `model_signing` is the only
cryptography used, imported when a signature is met (the `sign` extra)."""

from registry.signing._oms import SIGNATURE_FILE
from registry.signing.policy import SignaturePolicy
from registry.signing.sign import KeyPair, new_key_pair, sign_folder
from registry.signing.trust import Anchor, add_anchor, anchors, remove_anchor, trust_dir
from registry.signing.verify import SignatureRefused, Signed, verify_folder

__all__ = [
    "SIGNATURE_FILE", "Anchor", "KeyPair", "SignaturePolicy",
    "SignatureRefused", "Signed", "add_anchor", "anchors", "new_key_pair", "remove_anchor",
    "sign_folder", "trust_dir", "verify_folder",
]
