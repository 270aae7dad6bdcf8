"""An MCP server asked as a registry, for `pull mcp+...` (see `mcp_source` for the grammar
and what is checked).

`McpStore.resolve` names a skill's revision by its manifest's digests, `skills` lists the
names a server serves, `fetch` writes every file into an empty staging folder, each checked
against its digest and size before it is written. The manifest is checked first: every file a
URI under the skill's own root naming a plain relative path, a `sha256:` digest, a size within
the caps; `skills/list` is read to its end, but never past `max_pages` pages, a repeated
cursor or `MAX_LISTING_BYTES` in all (each page is counted as it arrives; of its entries only
those named as skills are kept, and of each only what a pull reads: `_kept`).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import shlex
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

from registry.errors import HubskillsError, UnsafeSkill, VersionNotFound
from registry.format.skill import NAME_RE
from registry.install import mcp_source
from registry.install.mcp_session import (
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    RESOURCE_NOT_FOUND,
    McpServerError,
    McpSession,
    cap_of,
)
from registry.install.mcp_source import (
    DIGEST,
    MAX_LISTED,
    MAX_PAGES,
    META_KEY,
    PREFIX,
    TIMEOUT_S,
    Manifest,
    ambiguous,
    entry_ids,
    entry_name,
    lying,
    manifest_hash,
    manifest_revision,
    parse_mcp,
    picks,
    publisher,
    uri_id,
)
from registry.scan import STORE_LIMITS, SizeLimits, check_relpath, write_file
from registry.stores.base import Fetched, Resolved


class McpStore:
    """One MCP server, asked as a registry (one session, opened on first use; `close`)."""

    kind = "mcp"

    def __init__(self, server: str, *, timeout: float | None = None,
                 limits: SizeLimits = STORE_LIMITS, max_pages: int = MAX_PAGES,
                 typed: str = "") -> None:
        """`server` as the lock records it, with no credential; `typed`: its URL as the user
        typed it, credential included (else the one kept for it is used: `connect_url`)."""
        self.source = replace(parse_mcp(PREFIX + server), typed=typed)
        env = os.environ.get("HUBSKILLS_MCP_TIMEOUT")
        self.timeout = timeout or (float(env) if env else TIMEOUT_S)
        self.limits, self.max_pages = limits, max_pages
        self.session = McpSession(self.source, timeout=self.timeout, cap=cap_of(limits))
        self._lock = threading.Lock()
        self._listing: list[dict[str, Any]] | None = None
        self._followed: dict[str, str] = {}  # a lock's pick -> the URI it pinned

    @property
    def name(self) -> str:
        """The server as messages name it."""
        return self.source.server

    # --- what pull asks -------------------------------------------------------------------

    def resolve(self, repo: str, ref: str | None = None) -> Resolved:
        """The skill's revision: its manifest's digests, hashed (the server listed, for a
        source naming no skill).

        Raises:
            VersionNotFound: the server lists no such skill; UnsafeSkill: a lying manifest.
        """
        source = parse_mcp(repo)
        if not source.skill:
            names = self.skills(source, "")
            return Resolved(repo, hashlib.sha256("\n".join(names).encode()).hexdigest()[:40],
                            None, "listing", registry="mcp")
        manifest = self.manifest(source.skill)
        if all(manifest.digests.values()):  # what the lock records, even when nothing is
            with self._lock:                # fetched again (the install is up to date)
                mcp_source.FETCHED[manifest.uri] = dict(manifest.digests)
        return Resolved(repo, manifest_revision(manifest.digests), manifest.version,
                        manifest.uri, registry="mcp")

    def skills(self, source: Any, sha: str) -> list[str]:
        """The names of the skills the server lists (`[""]` for a source naming one); a name
        several entries go by is listed as each one's `NS/NAME` (`entry_ids`), never merged."""
        if source.skill:
            return [""]
        named = [(name, entry) for entry in self._list()
                 if (name := entry_name(entry)) and NAME_RE.match(name)]
        counts: dict[str, int] = {}
        for name, _ in named:
            counts[name] = counts.get(name, 0) + 1
        return sorted({name if counts[name] == 1 else entry_ids(entry)[0]
                       for name, entry in named})

    def follow(self, pick: str, uri: str) -> None:
        """Take the skill `pick` from the repo `uri` names (a lock's pin) when several repos
        serve that name: the user chose that one when they pulled it."""
        with self._lock:
            self._followed[pick] = uri

    def fetch(self, repo: str, sha: str, dest: Path, *, limits: SizeLimits = STORE_LIMITS,
              pinned_hash: str | None = None, count: bool = True,
              uri: str | None = None) -> Fetched:
        """Read every file of the skill into the empty folder `dest`, each checked against
        its digest and size; `sha` must be the manifest's revision. With `uri` (the lock's
        pinned URI) the entry is asked of `skills/get` by that URI, so a revision the server
        still serves installs after a newer one is listed; else the listing's entry.

        Raises:
            VersionNotFound: the server serves other digests than `sha` pins.
            UnsafeSkill: a byte that does not match its digest, a file over the caps.
        """
        source = parse_mcp(repo)
        self.session.cap = cap_of(limits)
        manifest = self._pinned(source.skill, uri, limits) if uri else None
        listed = manifest is None
        if manifest is None:
            manifest = self.manifest(source.skill, limits)
        if manifest_revision(manifest.digests) != sha:
            now = (f"the server now lists other digests ({manifest.uri})" if listed or
                   manifest.uri != uri else f"the server now serves other digests for {uri}")
            gone = f"; it no longer serves {uri}" if listed and uri and uri != manifest.uri else ""
            raise VersionNotFound(
                f"{source.skill} from {self.name} changed since it was pinned at {sha[:12]}: "
                f"{now}{gone}",
                hint=f"hubskills update {source.skill}  # installs what the server serves now "
                     "and re-pins it")
        budget = limits.budget(hint=lying(self.name))
        notes = []
        for path, (uri, digest, size) in sorted(manifest.files.items()):
            data = self._read(uri, path)
            try:
                budget.take(path, len(data))
            except UnsafeSkill as err:
                raise UnsafeSkill(f"{self.name} sent {source.skill}: {err.message}",
                                  hint=lying(self.name)) from err
            if size is not None and len(data) != size:
                raise UnsafeSkill(f"{self.name} sent {len(data)} bytes for {path} of "
                                  f"{source.skill}; its manifest lists {size}",
                                  hint=lying(self.name))
            got = "sha256:" + hashlib.sha256(data).hexdigest()
            if digest and got != digest:
                raise UnsafeSkill(f"{self.name} sent bytes for {path} of {source.skill} that "
                                  f"hash to {got[:19]}, its manifest lists {digest[:19]}; "
                                  "refusing a tampered or damaged download",
                                  hint=lying(self.name))
            if not digest:
                notes.append(f"{self.name} lists no digest for {path}; computed {got[:19]}")
            target = write_file(dest, path, data)
            if path in manifest.executable:
                target.chmod(0o755)
        digests = {p: d or "sha256:" + hashlib.sha256((dest / p).read_bytes()).hexdigest()
                   for p, (_, d, _) in manifest.files.items()}
        with self._lock:
            mcp_source.FETCHED[manifest.uri] = digests
        return Fetched(dest, sorted(manifest.files), manifest_hash(digests), tuple(notes))

    # --- the skill's entry ----------------------------------------------------------------

    def manifest(self, name: str, limits: SizeLimits | None = None) -> Manifest:
        """The checked entry of the skill `name` (`NAME` or `NS/NAME`: `mcp_source.picks`).

        Raises:
            VersionNotFound: no such skill listed; UnsafeSkill: a manifest that lies.
            HubskillsError: several repos serve the name (`mcp_source.ambiguous`), none of
                them the one a lock followed names.
        """
        found = [entry for entry in self._list() if picks(entry, name)]
        if len(found) > 1 and name in self._followed:
            repo = uri_id(self._followed[name])
            found = [entry for entry in found if entry_ids(entry)[-1] == repo] or found
        if len(found) > 1:
            ids = [entry_ids(entry)[0] for entry in found]
            if len(set(ids)) < len(ids):  # a server filing two under one repo: their URIs
                ids = [str(entry.get("uri"))[:200] for entry in found]
            raise ambiguous(self.name, self.source.key, name.rsplit("/", 1)[-1], sorted(ids))
        if found:
            return self._checked(found[0], name, limits or self.limits)
        raise VersionNotFound(f"{self.name} lists no skill '{name}'",
                              hint=f"hubskills pull {shlex.quote(self.source.key)}  "
                                   "# names the skills it serves")

    def _pinned(self, name: str, uri: str, limits: SizeLimits) -> Manifest | None:
        """The checked entry `skills/get` answers for the pinned `uri`; None when the server
        has no `skills/get` or no longer serves that URI (-32602, as the extension says, or
        -32002, older MCP's "resource not found"): the listing decides then, and a revision
        gone is `fetch`'s `VersionNotFound` naming `hubskills update`, not the server's error.

        Raises:
            UnsafeSkill: an entry for another URI or skill, or a manifest that lies.
        """
        try:
            got = self.session.call("skills/get", {"uri": uri})
        except McpServerError as err:
            if err.code in (METHOD_NOT_FOUND, INVALID_PARAMS, RESOURCE_NOT_FOUND):
                return None
            raise
        entry = got.get("skill")
        if not isinstance(entry, dict) or entry.get("uri") != uri or not picks(entry, name):
            raise UnsafeSkill(f"{self.name} answered skills/get of {uri} with another entry",
                              hint=lying(self.name))
        return self._checked(entry, name, limits)

    def _checked(self, entry: dict[str, Any], name: str, limits: SizeLimits) -> Manifest:
        where = f"{self.name}: the skill {name}"
        uri = str(entry.get("uri"))
        root = uri.removesuffix("SKILL.md")
        resources = entry.get("resources")
        if resources == "dynamic":
            raise UnsafeSkill(f"{where} has a dynamic manifest (no files and digests listed): "
                              "nothing to check the bytes against or to pin",
                              hint="read it through the server instead; hubskills installs "
                                   "only skills whose files are listed with digests")
        if not isinstance(resources, list) or not resources:
            raise UnsafeSkill(f"{where} lists no files (no `resources` manifest)",
                              hint=lying(self.name))
        files: dict[str, tuple[str, str, int | None]] = {}
        for item in resources:
            if not isinstance(item, dict) or not isinstance(item.get("uri"), str):
                raise UnsafeSkill(f"{where}: a manifest entry {str(item)[:80]!r} has no URI",
                                  hint=lying(self.name))
            file_uri = item["uri"]
            path = file_uri[len(root):] if file_uri.startswith(root) else ""
            if not path or any(c in path for c in "%\\?#") or path.startswith("/"):
                raise UnsafeSkill(f"{where}: the manifest names {file_uri[:200]!r}, which is "
                                  f"not a file inside the skill ({root})", hint=lying(self.name))
            try:
                check_relpath(path)
            except HubskillsError as err:
                raise UnsafeSkill(f"{where}: the manifest names {path[:200]!r}, a path outside "
                                  f"the skill ({err.message})", hint=lying(self.name)) from err
            digest, size = item.get("digest"), item.get("size")
            if digest is not None and (not isinstance(digest, str)
                                       or not DIGEST.fullmatch(digest)):
                raise UnsafeSkill(f"{where}: {path} has the digest {str(digest)[:80]!r}, not "
                                  "sha256:<64 hex>", hint=lying(self.name))
            if size is not None and (not isinstance(size, int) or isinstance(size, bool)
                                     or size < 0):
                raise UnsafeSkill(f"{where}: {path} has the size {size!r}",
                                  hint=lying(self.name))
            if path in files:
                raise UnsafeSkill(f"{where}: the manifest lists {path} twice",
                                  hint=lying(self.name))
            files[path] = (file_uri, digest or "", size)
        if "SKILL.md" not in files:
            raise UnsafeSkill(f"{where}: the manifest holds no SKILL.md", hint=lying(self.name))
        try:
            limits.check([(p, s or 0) for p, (_, _, s) in files.items()])
        except UnsafeSkill as err:
            raise UnsafeSkill(f"{where}: {err.message}", hint=lying(self.name)) from err
        meta = entry.get("_meta")
        if not isinstance(meta, dict):
            meta = {}
        ours = meta.get(META_KEY)
        if not isinstance(ours, dict):
            ours = {}
        self._check_claim(where, uri, ours.get("repo"))
        executable = ours.get("executable")
        if not isinstance(executable, list):
            executable = []
        version = ours.get("version") if isinstance(ours.get("version"), str) else None
        return Manifest(uri, files, frozenset(p for p in executable if p in files), version)

    def _check_claim(self, where: str, uri: str, claimed: Any) -> None:
        """Refuse a `_meta` repo of another namespace than the URI files the skill under:
        the signer is pinned per publisher (`signers.namespace_of`), so the two must name
        one.

        Raises:
            UnsafeSkill: a claim that is no string, or names another namespace.
        """
        if claimed is None:
            return
        named = publisher(uri)
        if isinstance(claimed, str) and named is not None \
                and claimed.split("/")[0] == named.split("/")[0]:
            return
        raise UnsafeSkill(f"{where}: its _meta names the repo {str(claimed)[:100]!r}, but its "
                          f"URI files it under {named or 'no namespace'} ({uri[:200]}); "
                          "refusing a skill that claims another publisher",
                          hint=lying(self.name))

    # --- the listing and the files ----------------------------------------------------------

    def _list(self) -> list[dict[str, Any]]:
        """Every entry of `skills/list`, every page (read once per store)."""
        with self._lock:
            if self._listing is not None:
                return self._listing
        entries: list[dict[str, Any]] = []
        cursor, listed, received = None, 0, 0
        seen: set[str] = set()
        for _ in range(self.max_pages):
            page = self.session.call("skills/list", {"cursor": cursor} if cursor else {})
            received += _size(page)
            if received > mcp_source.MAX_LISTING_BYTES:
                raise UnsafeSkill(f"{self.name} sent over {mcp_source.MAX_LISTING_BYTES} bytes "
                                  f"of skills/list in {len(seen) + 1} pages, more than any "
                                  "listing needs (a flood)", hint=lying(self.name))
            skills = page.get("skills")
            if not isinstance(skills, list):
                raise UnsafeSkill(f"{self.name} answered skills/list without a `skills` list",
                                  hint=lying(self.name))
            listed += len(skills)
            entries += [kept for s in skills if (kept := _kept(s)) is not None]
            cursor = page.get("nextCursor")
            del page, skills  # what is not kept is let go before the next page comes
            if not cursor:
                break
            if not isinstance(cursor, str) or cursor in seen or listed > MAX_LISTED:
                raise UnsafeSkill(f"{self.name} pages skills/list without end (a cursor "
                                  f"repeated or over {MAX_LISTED} skills)",
                                  hint=lying(self.name))
            seen.add(cursor)
        else:
            raise UnsafeSkill(f"{self.name} pages skills/list without end ({self.max_pages} "
                              "pages and still a nextCursor)", hint=lying(self.name))
        with self._lock:
            self._listing = entries
        return entries

    def _read(self, uri: str, path: str) -> bytes:
        result = self.session.call("resources/read", {"uri": uri})
        contents = result.get("contents")
        if not isinstance(contents, list) or len(contents) != 1 \
                or not isinstance(contents[0], dict):
            raise UnsafeSkill(f"{self.name} answered resources/read of {path} with "
                              f"{len(contents) if isinstance(contents, list) else 'no'} "
                              "contents, not one", hint=lying(self.name))
        content = contents[0]
        if isinstance(content.get("text"), str):
            return str(content["text"]).encode("utf-8")
        try:
            return base64.b64decode(str(content.get("blob")), validate=True)
        except (binascii.Error, ValueError) as err:
            raise UnsafeSkill(f"{self.name} sent {path} as neither text nor base64",
                              hint=lying(self.name)) from err

    def close(self) -> None:
        """End the session (and a stdio server's process)."""
        self.session.close()


def _size(page: dict[str, Any]) -> int:
    """A page's bytes as compact JSON: what it brought, near enough (escapes aside)."""
    try:
        return len(json.dumps(page, separators=(",", ":"), ensure_ascii=False))
    except (ValueError, TypeError, RecursionError):
        return mcp_source.MAX_LISTING_BYTES + 1  # what parsed but cannot be measured: refused


def _kept(entry: Any) -> dict[str, Any] | None:
    """What a pull reads of a listed skill: its URI, its manifest and hubskills' `_meta`
    (`repo`, `executable`, `version`); None for an entry named as no skill, which nothing
    reads (`skills` and `manifest` pick by a name that passes `NAME_RE`)."""
    if not isinstance(entry, dict):
        return None
    name = entry_name(entry)
    if not name or not NAME_RE.match(name):
        return None
    kept = {key: entry[key] for key in ("uri", "resources") if key in entry}
    meta = entry.get("_meta")
    ours = meta.get(META_KEY) if isinstance(meta, dict) else None
    if isinstance(ours, dict):
        kept["_meta"] = {META_KEY: {key: ours[key] for key in ("repo", "executable", "version")
                                    if key in ours}}
    return kept
