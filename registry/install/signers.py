"""Trust on first use: the signer first seen per namespace, pinned in `skills.lock`.

As SSH pins a host's key, the first signed skill pulled from a namespace (`acme` of `acme/x`,
`github:OWNER` of a GitHub source, `HOST/OWNER` of another git URL, and `acme` of a skill an MCP
server files under `acme/…`) pins its signer (certificate subject or key fingerprint) in the
lock's `signers` map. A later skill from that namespace signed by someone else, or not signed at
all, is refused unless the user accepts the change (`--accept-new-signer`, which re-pins). A
folder has no namespace: its own lock entry's signer is the pin. The signature itself is checked
before this (`registry/signing`): the pin only says whether this trusted signer is the one this
project has seen for the namespace.

An MCP skill's namespace is its publisher's: the first segment of the repo its URI files it
under (`mcp_source.publisher`; a `_meta` repo of another namespace is refused as the manifest is
checked). The server is left out of the key, so it is the same pin as `pull acme/x` from the
registry. Why: one server relays many publishers (`hubskills mcp` serves every namespace of its
registry), and anyone can run one, on any port. Keyed by the server, the first signer seen there
stood for every publisher it served (bob's skill refused as a change of acme's signer, or
accepted and re-pinning acme), and a restarted server's new port, or an attacker's own server,
started a fresh pin: a key trusted for another publisher then passed as acme's unchallenged.
Keyed by the publisher, a server may claim any namespace but must show the signer pinned for
it, whoever relayed it first; the most a hostile server reached first can do is pin its
signer for a namespace, and the real publisher's skills are then refused, loudly, naming both
signers. A signed skill whose URI names no namespace has no publisher to pin its signer for,
and is refused.

A certificate signer is its subject and the trusted root its chain was verified to
(`CN=…; root sha256:…`). A lock written before that pinned the subject alone: a signer with that
subject still matches it (under any trusted root, as then), and the pin is rewritten with the
root the next time the lock is written, with a note saying so. Older locks keep working the
same way for MCP pins keyed by the server (`127.0.0.1/8765`, `stdio/COMMAND`): those entries'
publishers are read from their URIs, and the server's pin gives way to its signed entries'
per-publisher pins the next time the lock is written (`_server_pins`), with a note.

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
from registry.install.mcp_source import is_mcp, parse_mcp, publisher
from registry.install.sources import FolderSource, is_source, parse_source
from registry.signing.verify import same_signer


class SignerChanged(UnsafeSkill):
    """A namespace's skill is signed by another signer than the pinned one (or unsigned)."""


def namespace_of(repo: str, ref: str | None = None) -> str | None:
    """The namespace a signer is pinned for; None for a folder on this machine, and for an MCP
    skill whose URI (`ref`) names no publisher."""
    if not is_source(repo):
        return repo.split("/")[0]
    if is_mcp(repo):
        return (publisher(ref or "") or "").split("/")[0] or None
    source = parse_source(repo)
    if isinstance(source, FolderSource):
        return None
    if source.github:
        return "github:" + source.url.split("/")[0]
    return _host_and_owner(source.url)


def _host_and_owner(url: str) -> str:
    """The first two parts of `url` past its scheme (`gitlab.com/team`, `127.0.0.1/8765`)."""
    parts = [p for p in re.split(r"[/:]+", url.split("://")[-1]) if p]
    return "/".join(parts[:2]).removeprefix("git@")


def _namespace(entry: LockEntry) -> str | None:
    """The namespace of a lock entry (an MCP skill's from its pinned URI)."""
    return namespace_of(entry.repo, str((entry.source or {}).get("uri") or ""))


def namespace_pin(lock: Lockfile, repo: str, name: str, ref: str | None = None) -> str | None:
    """The signer `lock` pins for `repo`'s namespace (`ref`: an MCP skill's URI): its `signers`
    map or, a lock from before those pins, the signer of its first signed entry of the
    namespace but `name`; None for a folder, or a namespace with no signer pinned."""
    namespace = namespace_of(repo, ref)
    return None if namespace is None else _pinned(lock, namespace, name)


def _pinned(lock: Lockfile, namespace: str, name: str) -> str | None:
    """`namespace_pin` of a namespace."""
    return lock.signers.get(namespace) or next(
        (e.signer for e in sorted(lock.entries.values(), key=lambda e: e.name)
         if e.signer and e.name != name and _namespace(e) == namespace), None)


def check_namespace_pin(lock: Lockfile, entry: LockEntry) -> None:
    """An entry that names no signer, in a namespace the lock pins one for, is refused unless
    it says it was accepted unsigned: a lock edit that strips `signer` (with the folder's
    `skill.oms.sig` removed and `content_hash` re-pinned) would otherwise pass as unsigned.

    Raises:
        SignerChanged: no signer where the namespace pins one.
    """
    if entry.signer is not None or entry.accepted_unsigned:
        return
    uri = str((entry.source or {}).get("uri") or "")
    pinned = namespace_pin(lock, entry.repo, entry.name, uri)
    if pinned is None:
        return
    raise SignerChanged(f"skills.lock pins {pinned} as the signer of the namespace "
                        f"'{_namespace(entry)}', but its entry for {entry.name} names "
                        "no signer (nor that it was accepted unsigned)",
                        hint=hint_command("pull", entry.repo, "--force")
                        + "  # places the signed files again (add --accept-new-signer only to "
                          "accept it unsigned)")


def pin_signer(lock: Lockfile, repo: str, name: str, signer: str | None, *,
               ref: str | None = None, accept_new: bool = False) -> str | None:
    """Check `signer` of `repo` (`ref`: an MCP skill's URI, which names its publisher) against
    the lock's pin and pin it when first seen; returns a note to show (first pin, accepted
    change, an older lock's pins upgraded), None when nothing changed.

    Raises:
        SignerChanged: another signer, or none, than the one pinned, without `accept_new`.
        UnsafeSkill: a signed MCP skill whose URI names no publisher to pin its signer for.
    """
    namespace = namespace_of(repo, ref)
    if namespace is None and signer is not None and is_mcp(repo):
        raise UnsafeSkill(f"{repo} is signed by {signer}, but its server files it under no "
                          f"publisher ({ref}: no NS/ before its name), so there is no namespace "
                          "to pin its signer for; nothing was installed",
                          hint=f"hubskills pull NS/{name}  # from its publisher's registry, "
                               "or ask the server to file it as skill://NS/…/SKILL.md")
    notes = [_server_pins(lock), _pin(lock, repo, name, signer, namespace, accept_new)]
    return "; ".join(note for note in notes if note) or None


def _pin(lock: Lockfile, repo: str, name: str, signer: str | None, namespace: str | None,
         accept_new: bool) -> str | None:
    """`pin_signer` for the namespace `namespace` (None: a folder's own entry is the pin)."""
    entry = lock.entries.get(name)
    if namespace is None:  # a folder: its previous install's signer, if any, is the pin
        pinned, what = (entry.signer if entry and entry.repo == repo else None), name
    else:
        pinned, what = _pinned(lock, namespace, name), f"the namespace '{namespace}'"
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


def _server_key(repo: str) -> str:
    """The namespace an MCP source had before its signers were pinned per publisher: the
    server's host and port (`127.0.0.1/8765`), or `stdio/` and the command."""
    return _host_and_owner(parse_mcp(repo).server)


def _server_pins(lock: Lockfile) -> str | None:
    """Upgrade the pins an older lock keyed by an MCP server (see the module docstring): each
    gives way to its server's signed entries' pins, per publisher (the first by name, as
    `namespace_pin` reads them, where the namespace has none yet); a note, None when there were
    none."""
    mcp = sorted((e for e in lock.entries.values() if is_mcp(e.repo)), key=lambda e: e.name)
    old = sorted({_server_key(e.repo) for e in mcp} & set(lock.signers))
    if not old:
        return None
    for key in old:
        del lock.signers[key]
    for entry in mcp:
        namespace = _namespace(entry)
        if entry.signer and namespace and _server_key(entry.repo) in old:
            lock.signers.setdefault(namespace, entry.signer)
    return (f"skills.lock pinned MCP signers per server ({', '.join(old)}); now per publisher, "
            "from the signed skills installed from there")


def _accept_unsigned(lock: Lockfile, namespace: str, name: str) -> list[str]:
    """Mark the unsigned entries of `namespace` (but `name`) as accepted unsigned: they were
    installed before its first signer was pinned."""
    marked = []
    for other, entry in sorted(lock.entries.items()):
        if other != name and entry.signer is None and not entry.accepted_unsigned \
                and _namespace(entry) == namespace:
            lock.entries[other] = replace(entry, accepted_unsigned=True)
            marked.append(other)
    return marked
