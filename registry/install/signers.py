"""Trust on first use: the signer first seen per namespace, pinned in `skills.lock`.

As SSH pins a host's key, the first signed skill pulled from a namespace (`acme` of
`acme/x`, `github:OWNER` of a GitHub source, `HOST/OWNER` of another git URL) pins its signer
(certificate subject or key fingerprint) in the lock's `signers` map. A later skill from that
namespace signed by someone else, or not signed at all, is refused unless the user accepts the
change (`--accept-new-signer`, which re-pins). A folder has no namespace: its own lock entry's
signer is the pin. The signature itself is checked before this (`registry/signing`): the pin
only says whether this trusted signer is the one this project has seen for the namespace.

A certificate signer is its subject and the trusted root its chain was verified to
(`CN=…; root sha256:…`). A lock written before that pinned the subject alone: a signer with that
subject still matches it (under any trusted root, as then), and the pin is rewritten with the
root the next time the lock is written, with a note saying so.

The lock is its committer's word, so its own fields are checked against each other too: an
entry of a namespace with a pinned signer that names no signer is a signature problem
(`check_namespace_pin`), unless it was accepted unsigned (`--accept-new-signer`) or installed
before the namespace's first pin, which the entry then says (`accepted_unsigned`).
"""

from __future__ import annotations

import re
from dataclasses import replace

from registry.errors import UnsafeSkill, hint_command
from registry.install.lockfile import LockEntry, Lockfile
from registry.install.sources import FolderSource, is_source, parse_source
from registry.signing.verify import same_signer


class SignerChanged(UnsafeSkill):
    """A namespace's skill is signed by another signer than the pinned one (or unsigned)."""


def namespace_of(repo: str) -> str | None:
    """The namespace a signer is pinned for; None for a folder on this machine."""
    if not is_source(repo):
        return repo.split("/")[0]
    source = parse_source(repo)
    if isinstance(source, FolderSource):
        return None
    if source.github:
        return "github:" + source.url.split("/")[0]
    parts = [p for p in re.split(r"[/:]+", source.url.split("://")[-1]) if p]
    return "/".join(parts[:2]).removeprefix("git@")


def namespace_pin(lock: Lockfile, repo: str, name: str) -> str | None:
    """The signer `lock` pins for `repo`'s namespace: its `signers` map or, a lock from before
    those pins, the signer of its first signed entry of the namespace but `name`; None for a
    folder, or a namespace with no signer pinned."""
    namespace = namespace_of(repo)
    if namespace is None:
        return None
    return lock.signers.get(namespace) or next(
        (e.signer for e in sorted(lock.entries.values(), key=lambda e: e.name)
         if e.signer and e.name != name and namespace_of(e.repo) == namespace), None)


def check_namespace_pin(lock: Lockfile, entry: LockEntry) -> None:
    """An entry that names no signer, in a namespace the lock pins one for, is refused unless
    it says it was accepted unsigned: a lock edit that strips `signer` (with the folder's
    `skill.oms.sig` removed and `content_hash` re-pinned) would otherwise pass as unsigned.

    Raises:
        SignerChanged: no signer where the namespace pins one.
    """
    if entry.signer is not None or entry.accepted_unsigned:
        return
    pinned = namespace_pin(lock, entry.repo, entry.name)
    if pinned is None:
        return
    raise SignerChanged(f"skills.lock pins {pinned} as the signer of the namespace "
                        f"'{namespace_of(entry.repo)}', but its entry for {entry.name} names "
                        "no signer (nor that it was accepted unsigned)",
                        hint=hint_command("pull", entry.repo, "--force")
                        + "  # places the signed files again (add --accept-new-signer only to "
                          "accept it unsigned)")


def pin_signer(lock: Lockfile, repo: str, name: str, signer: str | None, *,
               accept_new: bool = False) -> str | None:
    """Check `signer` of `repo` against the lock's pin and pin it when first seen; returns a
    note to show (first pin, accepted change), None when nothing changed.

    Raises:
        SignerChanged: another signer, or none, than the one pinned, without `accept_new`.
    """
    namespace = namespace_of(repo)
    entry = lock.entries.get(name)
    if namespace is None:  # a folder: its previous install's signer, if any, is the pin
        pinned, what = (entry.signer if entry and entry.repo == repo else None), name
    else:
        pinned, what = namespace_pin(lock, repo, name), f"the namespace '{namespace}'"
        if pinned is not None:  # a lock from before these pins: now in its map
            lock.signers[namespace] = pinned
    if pinned is None:
        if signer is not None and namespace is not None:
            lock.signers[namespace] = signer
            before = _accept_unsigned(lock, namespace, name)
            return f"first signer of {what} pinned in skills.lock: {signer}" + (
                f" (installed unsigned before it, and so accepted: {', '.join(before)})"
                if before else "")
        return None
    match = same_signer(signer, pinned)
    if match == "same":
        return None
    if match == "subject":  # an older lock's pin: the subject alone; now with its root
        if namespace is not None:
            lock.signers[namespace] = str(signer)
        return (f"skills.lock pinned the signer of {what} by its subject alone ({pinned}); "
                f"now pinned with the root that verified it: {signer}")
    now = f"signed by {signer}" if signer else "not signed"
    if not accept_new:
        raise SignerChanged(f"{repo} is {now}, but skills.lock pins {pinned} as the signer of "
                            f"{what} (first seen there); refusing a changed signer",
                            hint=hint_command("pull", repo, "--accept-new-signer")
                                 + "  # only once you know why the publisher's signer changed")
    if signer is not None and namespace is not None:
        lock.signers[namespace] = signer
        return f"{what}: accepted the new signer {signer} (was {pinned}); re-pinned"
    return f"{repo} is not signed; {what} stays pinned to {pinned} (accepted)"


def _accept_unsigned(lock: Lockfile, namespace: str, name: str) -> list[str]:
    """Mark the unsigned entries of `namespace` (but `name`) as accepted unsigned: they were
    installed before its first signer was pinned."""
    marked = []
    for other, entry in sorted(lock.entries.items()):
        if other != name and entry.signer is None and not entry.accepted_unsigned \
                and namespace_of(entry.repo) == namespace:
            lock.entries[other] = replace(entry, accepted_unsigned=True)
            marked.append(other)
    return marked
