"""What the MCP server serves, read from one store: skill entries, files, directories, search.

A `Catalog` knows nothing of MCP's transport: it turns the store's latest versions into the
Skills extension's entries (`uri`, verbatim `frontmatter`, `resources` with `sha256:` digests
and sizes) plus hubskills' own `_meta`, and answers reads by `SkillUri`. Files are fetched once
per (repo, revision) and kept in memory: a revision is immutable, so they never go stale.
What can change (new versions, new runs) is read again when the store's change token moves.
A revision's frontmatter and scan summary are kept by the content key of the bytes just read
(`facts.FactsCache`, on disk when given a folder): a fresh server's first walk reads them
instead of parsing and scanning every skill, and digests are always of the bytes served.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import tempfile
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import replace
from pathlib import Path
from typing import Any

from registry.errors import HubskillsError, VersionNotFound
from registry.format.skill import parse_frontmatter, split_frontmatter
from registry.mcp.facts import FactsCache, content_key
from registry.mcp.meta import Figures, empty_figures, is_verified
from registry.mcp.reads import Reads, StoreReads
from registry.mcp.revision import Revision, ServedFiles, mime_type, read_folder, scan_summary
from registry.mcp.uris import BadSkillUri, SkillUri, parse, servable
from registry.stores.base import SkillInfo, SkillStore, lift_order

logger = logging.getLogger(__name__)

#: the `_meta` key of hubskills' annotations (the extension leaves provenance to intermediaries
#: under their own reverse-domain prefix)
META_KEY = "io.hubskills/registry"
LISTINGS = ("latest", "verified")  # which version of each skill `skills/list` lists
RECHECK_S = 5.0  # seconds between two looks at the store's change token (lists say ttlMs 60 s)
MAX_REVISIONS = 4096  # fetched revisions kept in memory (a revision never changes)


class NotServed(LookupError):
    """The URI names nothing this server serves (the message says what is missing)."""


class Catalog:
    """The skills of `store` as MCP serves them; thread-safe, one per server.

    `listing` says which version of each skill is listed: "latest", or "verified" (the newest
    whose best leaderboard entry is replayed or spot-checked; a skill with none is not listed,
    yet `skills/get` and reads still answer for every revision). `facts` is the folder that
    keeps each revision's frontmatter and scan summary by content (`facts.FactsCache`; memory
    alone without it).
    """

    def __init__(self, store: SkillStore, *, listing: str = "latest",
                 reads: Reads | None = None, recheck_s: float = RECHECK_S,
                 facts: Path | None = None) -> None:
        if listing not in LISTINGS:
            raise ValueError(f"listing must be one of {LISTINGS}, not {listing!r}")
        self.recheck_s = recheck_s
        self._checked_at = -float("inf")
        self.store = store
        self.listing = listing
        self.reads = reads or StoreReads(store)
        self._lock = threading.Lock()
        self._revisions: OrderedDict[tuple[str, str], Revision] = OrderedDict()
        self._token: Hashable | None = None
        self._latest: list[tuple[SkillInfo, str | None]] = []  # sha None: resolved on use
        self._shas: dict[tuple[str, str | None], str] = {}
        self._versions: dict[tuple[str, str], str | None] = {}  # revisions the store named
        self._entries: OrderedDict[tuple[str, str], tuple[Hashable, dict[str, Any]]] = \
            OrderedDict()
        self._mirror: Path | None = None
        self._figures: Figures = {}
        self._licenses: dict[str, str | None] = {}
        self._results_error: str | None = None
        self._scans: dict[tuple[str, str], dict[str, Any]] = {}
        self.facts = FactsCache(facts)
        #: (bytes, MIME type) of each file of the revisions in memory that a parsed URI named,
        #: by its exact URI (`_serve`): a read of one is a lookup, as a bare server's is; any
        #: other URI goes through `parse` and `read`
        self.served = ServedFiles()

    def listed(self, start: int = 0, stop: int | None = None) -> list[Revision]:
        """The listed version of every skill, by repo id (those in `start:stop`: only they
        are resolved and fetched)."""
        self._refresh()
        chosen = self._latest[start:stop]
        return [self.revision(info.repo, self._sha(info, sha), info.version, checked=True)
                for info, sha in chosen]

    def count(self) -> int:
        """How many skills are listed."""
        self._refresh()
        return len(self._latest)

    def _sha(self, info: SkillInfo, sha: str | None) -> str:
        """The revision `info`'s version names (a tag is resolved once: it never moves)."""
        if sha is not None:
            return sha
        key = (info.repo, info.version)
        with self._lock:
            if key in self._shas:
                return self._shas[key]
        try:
            found = self.store.resolve(info.repo, info.version or None).sha
        except HubskillsError as err:
            raise NotServed(f"{info.repo} cannot be resolved now: {err}") from err
        with self._lock:
            self._versions[(info.repo, found)] = info.version
            return self._shas.setdefault(key, found)

    def figures(self, rev: Revision) -> dict[str, Any]:
        """What the results say about `rev`'s version (`meta.version_figures`)."""
        return self._figures.get((rev.repo, rev.version)) or empty_figures()

    def entry(self, rev: Revision) -> dict[str, Any]:
        """The extension's `Skill` entry of `rev`, with hubskills' `_meta` (built once per
        revision and listing: its figures move with the store's change token)."""
        if self._token is None:  # a skills/get before any listing: read the figures once
            self._refresh()
        key, token = (rev.repo, rev.sha), self._token
        with self._lock:
            kept = self._entries.get(key)
            if kept is not None and kept[0] == token:
                return kept[1]
        built = self._entry(rev)
        with self._lock:
            self._entries[key] = (token, built)
            self._entries.move_to_end(key)
            while len(self._entries) > MAX_REVISIONS:
                self._entries.popitem(last=False)
        return built

    def _entry(self, rev: Revision) -> dict[str, Any]:
        root, digests, files = rev.uri(""), rev.digests, rev.files
        resources = [{"uri": root + path, "digest": digests[path], "size": len(files[path])}
                     for path in sorted(files)]
        meta: dict[str, Any] = {
            "repo": rev.repo, "revision": rev.sha, "version": rev.version,
            "license": self._licenses.get(rev.repo), **self.figures(rev),
            "scan": self._scan(rev), "executable": sorted(rev.executable)}
        if self._results_error:
            meta["results_error"] = self._results_error
        return {"uri": rev.uri(), "frontmatter": rev.frontmatter, "resources": resources,
                "_meta": {META_KEY: meta}}

    def revision(self, repo: str, sha: str, version: str | None = None, *,
                 checked: bool = False) -> Revision:
        """The files and frontmatter of `repo` at `sha`, fetched once (the `MAX_REVISIONS`
        most recently read are kept); `checked`: `sha` came from the store's own resolve.

        Raises:
            NotServed: no such skill or revision in the store.
        """
        key = (repo, sha)
        with self._lock:
            if key in self._revisions:
                self._revisions.move_to_end(key)
                return self._revisions[key]
            if checked:
                self._versions[key] = version
            elif key in self._versions:  # a listing resolved this very revision: no need to
                checked, version = True, version or self._versions[key]  # ask the store again
        if not checked:
            try:
                resolved = self.store.resolve(repo, sha)
            except HubskillsError as err:
                raise NotServed(f"no revision {sha} of {repo} is served here: {err}") from err
            if resolved.sha != sha:
                raise NotServed(f"no revision {sha} of {repo} is served here")
            version = version or resolved.version
        try:
            rev = self._fetch(repo, sha, version)
        except VersionNotFound as err:  # removed from the store since it was listed
            raise NotServed(f"no revision {sha} of {repo} is served here: {err}") from err
        with self._lock:
            rev = self._revisions.setdefault(key, rev)
            while len(self._revisions) > MAX_REVISIONS:
                self.served.drop(self._revisions.popitem(last=False)[1])
            return rev

    def forget(self, repo: str, sha: str) -> None:
        """Drop a revision from memory (files, scan, entry) as if never read: its next read is
        a first read, from the store (its facts stay kept by content, `facts`)."""
        key = (repo, sha)
        with self._lock:
            if (rev := self._revisions.pop(key, None)) is not None:
                self.served.drop(rev)
            self._scans.pop(key, None)
            self._entries.pop(key, None)

    def _serve(self, rev: Revision) -> None:
        """`rev`'s files into `served`, once a URI that parsed named it (so its root parses
        back to it), if every path of it parses back too (`uris.servable`) and it is still
        in memory (a listing alone puts nothing there: a walk pays nothing for it)."""
        if rev.uri() not in self.served and servable(rev.files):
            with self._lock:
                if self._revisions.get((rev.repo, rev.sha)) is rev:
                    self.served.add(rev)

    def in_memory(self, uri: str | SkillUri) -> bool:
        """Whether everything `uri` names is in memory (its revision, the listing, the scan):
        an answer that never waits on the store."""
        try:
            parsed = parse(uri) if isinstance(uri, str) else uri
        except BadSkillUri:
            return True  # refused at once
        key = (parsed.repo, parsed.revision)
        with self._lock:
            return key in self._revisions and self._token is not None and key in self._scans

    @property
    def reads_inline(self) -> bool:
        """Whether a revision is read where the request is answered, not in a worker thread:
        the local registry's revisions, read from this machine's disk (a revision's bytes
        within the size caps, checked as they are read), cost about what a thread hop does.
        A Hub store's reads wait on the network, and a subclass's (the Space's) may fetch:
        they go to a worker."""
        return type(self).files is Catalog.files and getattr(self.store, "kind", "") == "local"

    def lookup(self, uri: SkillUri) -> Revision:
        """The revision `uri` names, checking that its name is that revision's own.

        Raises:
            NotServed: unknown repo or revision, or the name of another skill.
        """
        rev = self.revision(uri.repo, uri.revision)
        if rev.name != uri.name:
            raise NotServed(f"{uri.repo}@{uri.revision} is the skill {rev.name!r}, "
                            f"not {uri.name!r}")
        self._serve(rev)
        return rev

    def answer(self, uri: SkillUri) -> dict[str, Any]:
        """The entry of the revision `uri` names (`skills/get`).

        Raises:
            NotServed: as for `lookup`.
        """
        return self.entry(self.lookup(uri))

    def read(self, uri: SkillUri) -> tuple[bytes, str]:
        """The bytes and MIME type of the file `uri` names (only a file of its manifest).

        Raises:
            NotServed: not a file of that revision.
        """
        key = (uri.repo, uri.revision)
        with self._lock:  # a revision in memory, as `revision` finds it, with no call more:
            rev = self._revisions.get(key)  # a skill's reads are most of its requests
            if rev is not None:
                self._revisions.move_to_end(key)
        if rev is None or rev.name != uri.name:
            rev = self.lookup(uri)  # from the store, or the error naming what is wrong
        else:
            self._serve(rev)
        data = rev.files.get(uri.path)
        if data is None:
            raise NotServed(f"{uri.path!r} is not a file of {rev.repo}@{rev.sha}")
        return data, mime_type(uri.path)

    def directory(self, uri: SkillUri) -> list[tuple[str, str, str]]:
        """(uri, name, mimeType) of each direct child of the directory `uri` names.

        Raises:
            NotServed: not a directory of that revision.
        """
        rev = self.lookup(uri)
        prefix = f"{uri.path}/" if uri.path else ""
        children: dict[str, str] = {}
        for path in rev.files:
            if path.startswith(prefix):
                head, sep, _ = path[len(prefix):].partition("/")
                children[head] = "inode/directory" if sep else mime_type(head)
        if not children:
            raise NotServed(f"{uri.root}/{uri.path} is not a directory resource")
        return [(rev.uri(prefix + child), child, kind) for child, kind in sorted(children.items())]

    def search(self, query: str, limit: int) -> list[tuple[SkillInfo, Revision]]:
        """Skills for a task in words: every word found first, then the most of them, then
        by the listed version's lift as `search --sort lift` orders (`base.lift_order`)."""
        self._refresh()
        words = [w for w in query.lower().split() if len(w) > 2] or query.lower().split()
        scored = []
        for info, sha in self._latest:
            text = f"{info.repo} {info.name} {info.description} {' '.join(info.tags)}".lower()
            hits = sum(word in text for word in words)
            if hits or not words:
                lift = self._figures.get((info.repo, info.version), {}).get("best_lift_lo")
                scored.append((-hits, *lift_order(lift, info.repo), info, sha))
        scored.sort(key=lambda item: item[:3])
        return [(info, self.revision(info.repo, self._sha(info, sha), info.version,
                                     checked=True)) for *_, info, sha in scored[:limit]]

    def _refresh(self) -> None:
        """Read the listing again when the change token moved; the token itself is asked at
        most every `recheck_s` seconds (a local store's walks every skill's refs: on 10,000
        skills, more than a page's whole answer)."""
        now = time.monotonic()
        with self._lock:
            if self._token is not None and now - self._checked_at < self.recheck_s:
                return
        token = self.reads.token()
        with self._lock:
            self._checked_at = now
            if token == self._token:
                return
        infos, figures, error = self.reads.load()
        listed = []
        for info in sorted(infos, key=lambda info: info.repo):
            chosen = self._chosen(info, figures)
            if chosen is not None:
                listed.append(chosen)
        with self._lock:
            self._token, self._latest, self._figures = token, listed, figures
            self._licenses = {info.repo: info.license for info in infos}
            self._results_error = error
            self._shas = {key: sha for key, sha in self._shas.items() if key[1]}

    def _chosen(self, info: SkillInfo, figures: Figures) -> tuple[SkillInfo, str | None] | None:
        """(info, revision or None to resolve on use) of the version of `info` the listing
        names, None for none."""
        if self.listing == "latest":
            return info, None
        for version in self.store.versions(info.repo):  # newest first
            if is_verified(figures.get((info.repo, version.version), {})):
                return replace(info, version=version.version), version.sha
        return None

    def files(self, repo: str, sha: str) -> tuple[dict[str, bytes], frozenset[str]]:
        """The bytes of every file of `repo` at `sha`, and the paths with an exec bit (a
        subclass may read them from elsewhere: the Space, from its own fetched folders)."""
        read_files = getattr(self.store, "read_files", None)  # local and Hub: no folder
        if read_files is not None:
            files, executable = read_files(repo, sha)
            return dict(files), frozenset(executable)
        if self._mirror is None:  # one folder for the catalog's life: removing a fetched
            # folder costs more than fetching it, so each revision stays where it was fetched
            self._mirror = Path(tempfile.mkdtemp(prefix="hubskills-mcp-"))
            weakref.finalize(self, shutil.rmtree, self._mirror, True)
        dest = Path(tempfile.mkdtemp(prefix=f"{sha[:12]}-", dir=self._mirror)) / "skill"
        fetched = self.store.fetch(repo, sha, dest, count=False)
        return read_folder(dest, fetched.files)

    def _checked(self, repo: str, sha: str) -> tuple[dict[str, bytes], frozenset[str],
                                                      dict[str, str]]:
        """`files(repo, sha)` with the `sha256:` digest of every file's bytes: the local
        store's own (its read checks each file against the digest it recorded and hands that
        digest out: hashing the bytes again would cost a first read 5 us), else hashed here."""
        known: dict[str, str] = {}
        if self.reads_inline:  # a local store, read by this class's own `files`
            read = self.store.read_files  # type: ignore[attr-defined]  # LocalStore's
            files, executable = read(repo, sha, digests=known)
        else:
            files, executable = self.files(repo, sha)
        return files, executable, {
            path: "sha256:" + (known.get(path) or hashlib.sha256(data).hexdigest())
            for path, data in files.items()}  # of the bytes served, every time

    def _fetch(self, repo: str, sha: str, version: str | None) -> Revision:
        files, executable, digests = self._checked(repo, sha)
        if "SKILL.md" not in files:
            raise NotServed(f"{repo}@{sha} has no SKILL.md")
        key = content_key(digests, executable)
        facts = self.facts.get(key)
        if isinstance(kept := facts.get("scan"), dict):  # `_scan` finds it at once
            self._scans[(repo, sha)] = kept
        frontmatter = facts.get("frontmatter")
        if not isinstance(frontmatter, dict):
            yaml_text, _, _ = split_frontmatter(files["SKILL.md"].decode("utf-8"))
            parsed, _ = parse_frontmatter(yaml_text)
            frontmatter = json.loads(json.dumps(parsed, default=str))  # YAML dates -> strings
            # on disk with the scan (`_scan`): one write per revision
            self.facts.put(key, {**facts, "frontmatter": frontmatter}, disk=False)
        return Revision(repo, sha, version, str(frontmatter.get("name", "")), frontmatter, files,
                        executable, digests, key)

    def _scan(self, rev: Revision) -> dict[str, Any]:
        """The scan's findings on `rev`, by severity (what `hubskills scan` would say)."""
        key = (rev.repo, rev.sha)
        if key in self._scans:
            return self._scans[key]
        facts = self.facts.get(rev.key)
        if isinstance(kept := facts.get("scan"), dict):
            self._scans[key] = kept
            return kept
        self._scans[key] = scan_summary(rev)
        self.facts.put(rev.key, {**facts, "scan": self._scans[key]})
        return self._scans[key]
