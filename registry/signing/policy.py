"""What a pull does about signatures: verify a present one against the trusted anchors, and,
with `require_signed`, refuse a skill that has none."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from registry.signing._oms import SIGNATURE_FILE
from registry.signing.trust import anchors
from registry.signing.verify import SignatureRefused, Signed, verify_folder


@dataclass(frozen=True)
class SignaturePolicy:
    """The trust store (`<home>/trust`) and whether an unsigned skill is refused."""

    home: Path
    require_signed: bool = False

    def check(self, folder: Path, *, name: str, where: str,
              source_folder: str | None = None) -> Signed | None:
        """The signer of the staged `folder`, None when unsigned (and allowed);
        `source_folder`: the folder on this machine it was copied from, if so (hints name it).

        Raises:
            SignatureRefused: the signature fails, or none and one is required.
        """
        present = (folder / SIGNATURE_FILE).exists() or (folder / SIGNATURE_FILE).is_symlink()
        signed = verify_folder(folder, anchors(self.home), name=name, where=where,
                              source_folder=source_folder) \
            if present else None  # an unsigned pull never reads the trust store
        if signed is None and self.require_signed:
            raise SignatureRefused(f"{where} is not signed (no {SIGNATURE_FILE}) and "
                                   "--require-signed is set; nothing was installed",
                                   hint="pull it without --require-signed if you trust its "
                                        "source, or ask the publisher to sign it")
        return signed
